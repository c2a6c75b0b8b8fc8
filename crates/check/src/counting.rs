//! Counting what the database did while a concurrent phase ran
//! (concurrent.rs), as TechEmpower's verifier does after its 512 concurrent
//! requests (toolset/test_types/verifications.py, `verify_queries_count`): the
//! statements that name a table and the rows they read or updated, from
//! `pg_stat_statements` before and after. An answer can be right while the
//! work behind it is not the work the test prescribes: rows served from a
//! cache, `/queries` answered by one `IN (…)` or `= ANY` statement, an update
//! that writes fewer rows than it answers. Only the counts tell.
//!
//! The margins are TechEmpower's: fewer statements or rows than asked fails
//! (no margin); a bulk update (fewer UPDATE statements than rows) may update
//! 5% fewer rows than asked, as an id drawn twice in one request is written
//! once; more than 1.05 times the expected count is a warning.
//!
//! `pg_stat_statements` counts a statement when it ends, before its answer
//! leaves the database, so the counts need no wait once the phase's answers
//! are back. Deadlocks and rollbacks come from `pg_stat_database`, which a
//! backend flushes when it goes idle, at most once a second (PostgreSQL 15's
//! PGSTAT_MIN_INTERVAL): those are read once they have stopped changing,
//! polled up to [`STATS_FLUSH`], instead of a fixed wait of that length. A
//! backend that flushed less than a second before it went idle keeps its
//! counts for PGSTAT_IDLE_INTERVAL (10 s); neither wait sees those.

use std::time::{Duration, Instant};

use crate::database::{message, Database};
use stampede_contract::{ProbeCheck, STATS_FLUSH};

/// How often the counters are read while waiting for them.
const POLL: Duration = Duration::from_millis(50);
/// Counters unchanged this long have been flushed by the backends that went
/// idle at the phase's end (they flush as they go idle, within milliseconds).
const STILL: Duration = Duration::from_millis(300);

/// Above this many times the expected count, TechEmpower warns ("excessively high").
const EXCESS: f64 = 1.05;
/// The rows a bulk update may miss: an id drawn twice is written once.
const BULK_MARGIN: f64 = 1.05;

/// Statements and rows on one table, summed over every statement text.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub selects: i64,
    pub updates: i64,
    pub rows_read: i64,
    pub rows_updated: i64,
}

impl Tally {
    pub fn minus(self, before: Tally) -> Tally {
        Tally {
            selects: self.selects - before.selects,
            updates: self.updates - before.updates,
            rows_read: self.rows_read - before.rows_read,
            rows_updated: self.rows_updated - before.rows_updated,
        }
    }
}

/// The database's counters at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// `Err` says why statements cannot be counted (no pg_stat_statements).
    pub tally: Result<Tally, String>,
    /// `pg_stat_database`'s deadlocks and xact_rollback, when readable.
    pub transactions: Option<(i64, i64)>,
}

impl Snapshot {
    /// Reads the counters for `table` (`world` also counts `"World"`).
    pub fn take(db: &mut Database, table: &str) -> Snapshot {
        Snapshot { tally: tally(db, table), transactions: transactions(db) }
    }
}

/// Waits, once, until backends busy before the first phase have flushed
/// their statistics, so that the phase's deadlocks are its own.
pub fn settle(db: &mut Database) {
    if db.quiet_since.is_none() {
        wait_still(db);
    }
}

/// Waits after a phase for its statistics, and marks the server quiet.
pub fn flushed(db: &mut Database) {
    wait_still(db);
    db.quiet_since = Some(Instant::now());
}

/// Polls `pg_stat_database`'s transaction counters until they have not
/// changed for [`STILL`], or for at most [`STATS_FLUSH`]. Unreadable
/// counters are not waited for: nothing would be read from them.
fn wait_still(db: &mut Database) {
    let deadline = Instant::now() + STATS_FLUSH;
    let Some(mut last) = activity(db) else { return };
    let mut since = Instant::now();
    while Instant::now() < deadline && since.elapsed() < STILL {
        std::thread::sleep(POLL);
        let now = activity(db);
        if now != Some(last) {
            last = now.unwrap_or(last);
            since = Instant::now();
        }
    }
}

/// Commits, rollbacks and deadlocks of the database: what its backends'
/// flushes change.
fn activity(db: &mut Database) -> Option<(i64, i64, i64)> {
    let sql = "SELECT xact_commit, xact_rollback, deadlocks FROM pg_stat_database WHERE datname = current_database()";
    let row = db.client.query_one(sql, &[]).ok()?;
    Some((row.get(0), row.get(1), row.get(2)))
}

/// `(deadlocks, rolled back)` during the phase, when readable.
pub fn transactions_between(before: &Snapshot, after: &Snapshot) -> Option<(i64, i64)> {
    let ((d0, r0), (d1, r1)) = (before.transactions?, after.transactions?);
    Some((d1 - d0, r1 - r0))
}

fn tally(db: &mut Database, table: &str) -> Result<Tally, String> {
    // A superuser (the private cluster's) can create the extension; it works
    // only when the server preloads it (shared_preload_libraries).
    let _ = db.client.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    let sql = r"SELECT coalesce(sum(calls) FILTER (WHERE query !~* '\mupdate\M'), 0)::bigint,
                       coalesce(sum(calls) FILTER (WHERE query ~* '\mupdate\M'), 0)::bigint,
                       coalesce(sum(rows) FILTER (WHERE query !~* '\mupdate\M'), 0)::bigint,
                       coalesce(sum(rows) FILTER (WHERE query ~* '\mupdate\M'), 0)::bigint
                FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND query ~* $1 AND query !~* 'pg_stat_statements'";
    let pattern = format!(r"\m{table}\M");
    let row = db.client.query_one(sql, &[&pattern]).map_err(|e| {
        format!(
            "cannot read pg_stat_statements ({}): preload it in the server (shared_preload_libraries = 'pg_stat_statements') and CREATE EXTENSION pg_stat_statements",
            message(&e)
        )
    })?;
    Ok(Tally { selects: row.get(0), updates: row.get(1), rows_read: row.get(2), rows_updated: row.get(3) })
}

fn transactions(db: &mut Database) -> Option<(i64, i64)> {
    activity(db).map(|(_, rolled_back, deadlocks)| (deadlocks, rolled_back))
}

/// What a phase asked of the database: `answered` requests that came back
/// right, `sent` in all, each worth `rows` rows of the check `of`.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    pub of: ProbeCheck,
    pub rows: i64,
    pub answered: i64,
    pub sent: i64,
}

/// The verdict on the counts: `Err` fails, `Ok(Some)` warns, `Ok(None)` passes.
pub fn judge(asked: Asked, got: Tally) -> Result<Option<String>, String> {
    let Asked { of, rows, answered, sent } = asked;
    let table = if of == ProbeCheck::FortunesComplete { "fortune" } else { "world" };
    let counted = format!(
        "{} SELECT and {} UPDATE statement(s) on {table}, {} row(s) read and {} updated, for {answered} right answer(s) of {rows} row(s)",
        got.selects, got.updates, got.rows_read, got.rows_updated
    );
    // Each request reads the fortunes once; every other check reads one row
    // per query (TechEmpower: "one query per row").
    let statements = if of == ProbeCheck::FortunesComplete { answered } else { answered * rows };
    let rows_asked = answered * rows;
    if got.selects < statements {
        return Err(if got.rows_read < rows_asked {
            format!("{counted}: fewer reads than answers, so rows come from a cache, not the database")
        } else {
            format!("{counted}: fewer statements than rows, so rows were read in batches (IN (…), = ANY); TechEmpower requires one query per row")
        });
    }
    if got.rows_read < rows_asked {
        return Err(format!("{counted}: fewer rows read than answered"));
    }
    if of == ProbeCheck::DbUpdates {
        let bulk = got.updates < rows_asked;
        let needed = if bulk { (rows_asked as f64 / BULK_MARGIN).ceil() as i64 } else { rows_asked };
        if got.rows_updated < needed {
            let margin = if bulk { " (a bulk update may miss 5% for ids drawn twice)" } else { "" };
            return Err(format!("{counted}: fewer rows updated than asked{margin}"));
        }
    }
    let excess = |count: i64, expected: i64| count as f64 > expected.max(1) as f64 * EXCESS;
    let sent_rows = sent * rows;
    let sent_statements = if of == ProbeCheck::FortunesComplete { sent } else { sent_rows };
    let updates_expected = if of == ProbeCheck::DbUpdates { sent_rows } else { 0 };
    if excess(got.selects, sent_statements)
        || excess(got.rows_read, sent_rows)
        || excess(got.rows_updated, updates_expected)
    {
        return Ok(Some(format!(
            "{counted}: more than {EXCESS} times what {sent} request(s) need (TechEmpower warns: excessively high)"
        )));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(of: ProbeCheck, rows: i64) -> Asked {
        Asked { of, rows, answered: 512, sent: 512 }
    }

    fn tally(selects: i64, updates: i64, rows_read: i64, rows_updated: i64) -> Tally {
        Tally { selects, updates, rows_read, rows_updated }
    }

    #[test]
    fn one_statement_per_row_passes_and_caching_or_batching_fails() {
        assert_eq!(judge(asked(ProbeCheck::DbRow, 1), tally(512, 0, 512, 0)), Ok(None));
        let cached = judge(asked(ProbeCheck::DbRow, 1), tally(3, 0, 3, 0)).unwrap_err();
        assert!(cached.contains("from a cache"), "{cached}");
        let batched = judge(asked(ProbeCheck::DbRows, 20), tally(512, 0, 10_240, 0)).unwrap_err();
        assert!(batched.contains("IN (…)"), "{batched}");
        assert_eq!(judge(asked(ProbeCheck::DbRows, 20), tally(10_240, 0, 10_240, 0)), Ok(None));
        let fortunes = judge(asked(ProbeCheck::FortunesComplete, 12), tally(512, 0, 6_144, 0));
        assert_eq!(fortunes, Ok(None));
    }

    #[test]
    fn updates_follow_techempower_margins() {
        let of = ProbeCheck::DbUpdates;
        // One UPDATE per row: every row must be written.
        assert_eq!(judge(asked(of, 20), tally(10_240, 10_240, 10_240, 10_240)), Ok(None));
        assert!(judge(asked(of, 20), tally(10_240, 10_240, 10_240, 10_239)).is_err());
        // A bulk UPDATE per request: 5% may be ids drawn twice.
        assert_eq!(judge(asked(of, 20), tally(10_240, 512, 10_240, 10_000)), Ok(None));
        let few = judge(asked(of, 20), tally(10_240, 512, 10_240, 512)).unwrap_err();
        assert!(few.contains("fewer rows updated than asked"), "{few}");
    }

    #[test]
    fn far_more_work_than_asked_is_a_warning() {
        let warned = judge(asked(ProbeCheck::DbRow, 1), tally(1_024, 0, 1_024, 0)).unwrap();
        assert!(warned.unwrap().contains("excessively high"));
    }
}
