//! The contract's checks that take more than one request (`[[probe]]`):
//! what each is called, the path it asks, and what only it takes (the rows
//! of a database check, the size of a `concurrent` phase).

use std::time::Duration;

use serde::Deserialize;

/// A check across requests, and the path it asks.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The result's id; the check's name when absent (set it to run one
    /// check on several paths).
    #[serde(default)]
    pub id: Option<String>,
    pub check: ProbeCheck,
    pub path: String,
    /// For `db-rows` and `db-updates`: how many rows the answer must hold
    /// (the contract's clamping: `/queries?queries=501` must give 500).
    #[serde(default)]
    pub rows: Option<u32>,
    /// For `concurrent`: the database check whose answers it sends at once
    /// (`db-row`, `db-rows`, `db-updates` or `fortunes-complete`).
    #[serde(default)]
    pub of: Option<ProbeCheck>,
    /// For `concurrent`: how many requests in all (512, TechEmpower's).
    #[serde(default)]
    pub requests: Option<u32>,
    /// For `concurrent`: over how many connections at once (each sends its
    /// share of `requests` one after another).
    #[serde(default)]
    pub connections: Option<u32>,
}

impl Probe {
    /// The id its result is reported under.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or(match self.check {
            ProbeCheck::KeepAlive => "keep-alive",
            ProbeCheck::DateTicks => "date-ticks",
            ProbeCheck::SleepConcurrent => "sleep-concurrent",
            ProbeCheck::DbRow => "db-row",
            ProbeCheck::DbRows => "db-rows",
            ProbeCheck::DbUpdates => "db-updates",
            ProbeCheck::FortunesComplete => "fortunes-complete",
            ProbeCheck::FortunesSorted => "fortunes-sorted",
            ProbeCheck::FortunesEscaped => "fortunes-escaped",
            ProbeCheck::FortunesPage => "fortunes-page",
            ProbeCheck::Concurrent => "concurrent",
        })
    }

    /// For `concurrent`: the id of its second result, the database's counts
    /// (`db-concurrent` → `db-counted`).
    pub fn counted_id(&self) -> String {
        let id = self.id();
        format!("{}-counted", id.strip_suffix("-concurrent").unwrap_or(id))
    }
}

/// The ids the every-response checks report under.
pub(crate) const RESPONSE_CHECK_IDS: &[&str] =
    &["header-server", "header-date", "date-clock", "header-content-type", "framing", "http-version"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeCheck {
    /// Two requests on one new connection: the second reuses it.
    KeepAlive,
    /// `Date` moves on across a second boundary.
    DateTicks,
    /// Two sleeps (`/sleep/{ms}`) at once on two connections overlap.
    SleepConcurrent,
    /// One `{"id","randomNumber"}` object equal to that row of `world`.
    DbRow,
    /// A JSON array of `rows` such objects, each equal to its row.
    DbRows,
    /// `rows` objects whose new numbers are in `world` afterwards.
    DbUpdates,
    /// Every `fortune` row and the one added at request time, intact.
    FortunesComplete,
    /// The fortunes ordered by message.
    FortunesSorted,
    /// Every message HTML-escaped: no markup from the `<script>` row.
    FortunesEscaped,
    /// The page around the rows: doctype, title, header row, one table.
    FortunesPage,
    /// `requests` answers of the check `of`, sent over `connections` at once,
    /// each judged by its form; with the database's counts of statements and
    /// rows (the checker's concurrent.rs and counting.rs).
    Concurrent,
}

impl ProbeCheck {
    /// Checks that read the database (`stampede check --database URL`).
    pub fn needs_database(self) -> bool {
        matches!(
            self,
            ProbeCheck::DbRow
                | ProbeCheck::DbRows
                | ProbeCheck::DbUpdates
                | ProbeCheck::FortunesComplete
                | ProbeCheck::FortunesSorted
                | ProbeCheck::FortunesEscaped
                | ProbeCheck::FortunesPage
                | ProbeCheck::Concurrent
        )
    }
}

/// TechEmpower's concurrency level (run-tests.py's default), for both.
pub const DEFAULT_REQUESTS: u32 = 512;
pub const DEFAULT_CONNECTIONS: u32 = 512;
/// The least time one request may take in the phase: 512 requests queued
/// for a pool of a few database connections wait their turn, which a
/// one-at-a-time `--timeout` (5 s) is not meant for; TechEmpower's siege waits
/// 30 s before it counts a failed transaction.
pub const PHASE_TIMEOUT: Duration = Duration::from_secs(30);
/// Beyond this, threads (one per connection) cost more than they show.
const MAX_CONNECTIONS: u32 = 1024;
const MAX_REQUESTS: u32 = 100_000;

/// The fields only `concurrent` takes, and what it needs: `Err((field, reason))`.
pub fn validate_concurrent(probe: &Probe) -> Result<(), (String, String)> {
    let err = |field: &str, reason: String| Err((field.to_string(), reason));
    if probe.check != ProbeCheck::Concurrent {
        for (field, set) in [
            ("of", probe.of.is_some()),
            ("requests", probe.requests.is_some()),
            ("connections", probe.connections.is_some()),
        ] {
            if set {
                return err(field, "only a concurrent probe takes it".into());
            }
        }
        return Ok(());
    }
    match probe.of {
        Some(ProbeCheck::DbRow | ProbeCheck::DbRows | ProbeCheck::DbUpdates | ProbeCheck::FortunesComplete) => {}
        _ => {
            return err(
                "of",
                "name the check whose answers to send at once: db-row, db-rows, db-updates or fortunes-complete".into(),
            )
        }
    }
    let requests = probe.requests.unwrap_or(DEFAULT_REQUESTS);
    let connections = probe.connections.unwrap_or(DEFAULT_CONNECTIONS);
    if !(1..=MAX_REQUESTS).contains(&requests) {
        return err("requests", format!("{requests} is outside 1..{MAX_REQUESTS}"));
    }
    if !(1..=MAX_CONNECTIONS).contains(&connections) || connections > requests {
        return err("connections", format!("{connections} is outside 1..{}", MAX_CONNECTIONS.min(requests)));
    }
    Ok(())
}

/// How long a sleep path asks to sleep: its last segment, in milliseconds
/// (`/sleep/200` → 200 ms); `None` when that is not a number.
pub fn sleep_of(path: &str) -> Option<Duration> {
    let last = path.split('?').next()?.rsplit('/').next()?;
    last.parse::<u64>().ok().filter(|ms| *ms > 0).map(Duration::from_millis)
}
