//! The summary of a results file: runs grouped by configuration (app, knobs,
//! load profile) with the median of each headline metric over the valid
//! iterations. [`table`] lays it out once (columns, titles, units, number
//! format) for the terminal at the end of `stampede run`, the Markdown and
//! CSV exporters and the HTML report; the JSON exporter prints the rows, the
//! HTML report charts them, and `compare` pairs configurations by the same key.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::latency;
use crate::schema::{Results, Run};
use crate::stats::median;
use crate::table::{Cell, Column, Row, Table};
use stampede_schema::summary::p99_spread;
pub use stampede_schema::summary::SummaryRow;
use stampede_schema::ErrorCategory;

/// What makes two runs iterations of the same thing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ConfigKey {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: String,
}

impl ConfigKey {
    pub fn of(run: &Run) -> ConfigKey {
        ConfigKey { app: run.app.clone(), knobs: run.knobs.clone(), profile: run.profile.clone() }
    }

    /// `threads=2 gc=server`, or `-` when there are no knobs (as in the terminal).
    pub fn knobs_label(&self) -> String {
        if self.knobs.is_empty() {
            return "-".to_owned();
        }
        self.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }

    /// `go threads=2`, or `go` without knobs.
    pub fn app_knobs(&self) -> String {
        if self.knobs.is_empty() {
            self.app.clone()
        } else {
            format!("{} {}", self.app, self.knobs_label())
        }
    }

    /// `go threads=2 (steady)`; knobs and profile are left out when empty.
    pub fn label(&self) -> String {
        let mut label = self.app_knobs();
        if !self.profile.is_empty() {
            label.push_str(&format!(" ({})", self.profile));
        }
        label
    }
}

/// The runs of one configuration, in file order.
#[derive(Debug, Clone)]
pub struct ConfigRuns<'a> {
    pub key: ConfigKey,
    pub runs: Vec<&'a Run>,
}

impl<'a> ConfigRuns<'a> {
    pub fn valid(&self) -> impl Iterator<Item = &'a Run> + '_ {
        self.runs.iter().copied().filter(|r| r.is_valid())
    }

    /// The iterations whose measured load counts, though their latency phase may not.
    pub fn load_valid(&self) -> impl Iterator<Item = &'a Run> + '_ {
        self.runs.iter().copied().filter(|r| r.load_is_valid())
    }

    /// The values of one metric over the iterations where it is valid
    /// ([`Metric::is_valid_in`]).
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| metric.is_valid_in(r))
            .filter_map(|r| metric.of(r))
            .filter(|v| v.is_finite())
            .collect()
    }

    /// The finite values `of` gives over the valid iterations.
    pub fn values_of(&self, of: impl Fn(&Run) -> Option<f64>) -> Vec<f64> {
        self.valid().filter_map(of).filter(|v| v.is_finite()).collect()
    }
}

/// Groups runs by configuration, in the order configurations first appear.
pub fn group(results: &Results) -> Vec<ConfigRuns<'_>> {
    group_runs(&results.runs)
}

/// [`group`] over a list of runs (`stampede run` has no whole document yet).
pub fn group_runs(runs: &[Run]) -> Vec<ConfigRuns<'_>> {
    let mut groups: Vec<ConfigRuns<'_>> = Vec::new();
    for run in runs {
        let key = ConfigKey::of(run);
        match groups.iter_mut().find(|g| g.key == key) {
            Some(group) => group.runs.push(run),
            None => groups.push(ConfigRuns { key, runs: vec![run] }),
        }
    }
    groups
}

/// The metrics summarised and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Rps,
    RpsPerCore,
    P50,
    P99,
    Cpu,
    Rss,
    LoadgenCpu,
    /// Cores of the scenario's database (runs with `[database]` only).
    DbCpu,
    /// Requests per second per core of server and database together.
    RpsPerCoreWithDb,
}

impl Metric {
    /// The metrics `compare` looks at, in table order.
    pub const COMPARED: [Metric; 6] =
        [Metric::Rps, Metric::RpsPerCore, Metric::P50, Metric::P99, Metric::Cpu, Metric::Rss];

    /// The short name used by `--fail-if` and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Rps => "rps",
            Metric::RpsPerCore => "rps_per_core",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::Cpu => "cpu",
            Metric::Rss => "rss",
            Metric::LoadgenCpu => "loadgen_cpu",
            Metric::DbCpu => "db_cpu",
            Metric::RpsPerCoreWithDb => "rps_per_core_with_db",
        }
    }

    pub fn from_name(name: &str) -> Option<Metric> {
        [Metric::LoadgenCpu, Metric::DbCpu, Metric::RpsPerCoreWithDb]
            .into_iter()
            .chain(Metric::COMPARED)
            .find(|m| m.name() == name)
    }

    /// Human title with unit.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Rps => "requests/s",
            Metric::RpsPerCore => "requests/s per server core",
            Metric::P50 => "p50 latency (ms)",
            Metric::P99 => "p99 latency (ms)",
            Metric::Cpu => "server CPU (cores)",
            Metric::Rss => "server RSS max (MiB)",
            Metric::LoadgenCpu => "load generator CPU (cores)",
            Metric::DbCpu => "database CPU (cores)",
            Metric::RpsPerCoreWithDb => "requests/s per core (server + database)",
        }
    }

    /// Whether the figure comes from the latency phase (the open loop when
    /// the profile has one), not from the measured load.
    pub fn is_latency(self) -> bool {
        matches!(self, Metric::P50 | Metric::P99)
    }

    /// Whether this figure of `run` counts: latency figures need the whole
    /// run valid, the others only its measured load (`Run::load_is_valid`).
    pub fn is_valid_in(self, run: &Run) -> bool {
        if self.is_latency() {
            run.is_valid()
        } else {
            run.load_is_valid()
        }
    }

    /// What a verdict needs more of: "valid iterations", or "iterations with a valid latency phase".
    pub fn valid_iterations_words(self) -> &'static str {
        if self.is_latency() {
            "iterations with a valid latency phase"
        } else {
            "valid iterations"
        }
    }

    /// Whether a larger value is an improvement.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Rps | Metric::RpsPerCore | Metric::RpsPerCoreWithDb)
    }

    /// Words for an improvement and a regression.
    pub fn verdict_words(self) -> (&'static str, &'static str) {
        match self {
            Metric::Rps | Metric::RpsPerCore | Metric::RpsPerCoreWithDb | Metric::P50 | Metric::P99 => {
                ("faster", "slower")
            }
            Metric::Cpu | Metric::Rss | Metric::LoadgenCpu | Metric::DbCpu => ("less", "more"),
        }
    }

    /// The value of this metric for one run, in the unit of `title`: the
    /// latency percentiles from the run's latency phase when it has one
    /// ([`Run::latency_load`]), everything else from the measured load.
    pub fn of(self, run: &Run) -> Option<f64> {
        let load = run.load.as_ref();
        let value = match self {
            Metric::Rps => Some(load?.rps),
            Metric::RpsPerCore => run.rps_per_core(),
            Metric::P50 => Some(run.latency_load()?.latency_us.p50 / 1000.0),
            Metric::P99 => Some(run.latency_load()?.latency_us.p99 / 1000.0),
            Metric::Cpu => Some(run.server.cpu_cores_avg),
            Metric::Rss => Some(run.server.rss_max_mib),
            Metric::LoadgenCpu => {
                Some(load.map(|l| l.loadgen.cpu_cores).filter(|c| *c > 0.0).unwrap_or(run.loadgen.cpu_cores_avg))
            }
            Metric::DbCpu => run.database.as_ref()?.cpu_cores_avg,
            Metric::RpsPerCoreWithDb => Some(run.database.as_ref()?.rps_per_core),
        };
        value.filter(|v| v.is_finite())
    }
}

impl ConfigKey {
    /// The configuration a summary row is the line of.
    pub fn of_row(row: &SummaryRow) -> ConfigKey {
        ConfigKey { app: row.app.clone(), knobs: row.knobs.clone(), profile: row.profile.clone() }
    }
}

/// The summary: one row per configuration, medians over valid iterations.
pub fn summarize(results: &Results) -> Vec<SummaryRow> {
    summarize_runs(&results.runs)
}

/// [`summarize`] over a list of runs.
pub fn summarize_runs(runs: &[Run]) -> Vec<SummaryRow> {
    group_runs(runs)
        .iter()
        .map(|group| {
            let med = |metric| median(&group.values(metric));
            let range = |metric| {
                let values = group.values(metric);
                let min = values.iter().copied().reduce(f64::min)?;
                Some((min, values.iter().copied().fold(min, f64::max)))
            };
            let p99_range = range(Metric::P99);
            let (p99_spread, p99_reproducible) = p99_spread(p99_range, group.values(Metric::P99).len());
            SummaryRow {
                app: group.key.app.clone(),
                knobs: group.key.knobs.clone(),
                profile: group.key.profile.clone(),
                runs: group.runs.len(),
                valid_runs: group.valid().count(),
                load_valid_runs: group.load_valid().count(),
                rps: med(Metric::Rps),
                rps_range: range(Metric::Rps),
                rps_per_core: med(Metric::RpsPerCore),
                messages_per_s: median(&group.load_valid().filter_map(stream_messages_per_s).collect::<Vec<_>>()),
                p50_ms: med(Metric::P50),
                p99_ms: med(Metric::P99),
                p99_ms_range: p99_range,
                p99_spread,
                p99_reproducible,
                p999_ms: median(&group.values_of(|r| Some(r.latency_load()?.latency_us.p999 / 1000.0))),
                latency_offered_rps: median(&group.values_of(latency::offered_rps)),
                latency_fraction: median(&group.values_of(latency::fraction)),
                schedule_lag_p99_ms: median(&group.values_of(latency::schedule_lag_p99_ms)),
                server_cpu_cores: med(Metric::Cpu),
                server_rss_max_mib: med(Metric::Rss),
                loadgen_cpu_cores: med(Metric::LoadgenCpu),
                db_cpu_cores: med(Metric::DbCpu),
                rps_per_core_with_db: med(Metric::RpsPerCoreWithDb),
                socket_errors: group.runs.iter().filter_map(|r| r.load.as_ref()).map(|l| l.socket_errors()).sum(),
                bad_responses: group.runs.iter().filter_map(|r| r.load.as_ref()).map(|l| l.bad_responses()).sum(),
                invalid_reasons: group
                    .runs
                    .iter()
                    .filter(|r| !r.is_valid())
                    .map(|r| {
                        let reason = r.invalid_reason.clone().unwrap_or_else(|| "no reason given".to_owned());
                        format!("iteration {}: {reason}", r.iteration)
                    })
                    .collect(),
            }
        })
        .collect()
}

/// A server-streaming gRPC run's response messages per second (its
/// requests/s are calls/s); `None` for any other run.
fn stream_messages_per_s(run: &Run) -> Option<f64> {
    let grpc = run.load.as_ref()?.grpc.as_ref()?;
    grpc.server_streaming.then_some(grpc.messages_per_s).filter(|v| v.is_finite())
}

/// A median with its spread when the iterations differ: `2,000 (1,000–3,000)`.
fn spread(median: Option<f64>, range: Option<(f64, f64)>) -> Cell {
    let mut cell = Cell::figure(median);
    if let Some((min, max)) = range.filter(|(min, max)| min < max) {
        cell.text = format!("{} ({}–{})", cell.text, crate::format::sig(min), crate::format::sig(max));
    }
    cell
}

/// A row's p99 with its spread, and a warning when the iterations disagree
/// beyond [`stampede_schema::summary::P99_REPRODUCIBLE_FACTOR`]: `58 (34–81, not reproducible)`.
fn p99_cell(row: &SummaryRow) -> Cell {
    let mut cell = spread(row.p99_ms, row.p99_ms_range);
    if row.p99_reproducible == Some(false) {
        cell.text = match cell.text.strip_suffix(')') {
            Some(open) => format!("{open}, not reproducible)"),
            None => format!("{} (not reproducible)", cell.text),
        };
    }
    cell
}

/// `2`, or `0 (closed loop 2)` when some runs are invalid only in their latency phase.
fn valid_runs_cell(row: &SummaryRow) -> Cell {
    let mut cell = Cell::count(row.valid_runs as u64);
    if row.load_valid_runs > row.valid_runs {
        cell.text = format!("{} (closed loop {})", row.valid_runs, row.load_valid_runs);
    }
    cell
}

/// The summary laid out once: every view prints these columns, titles,
/// units and texts.
pub fn table(rows: &[SummaryRow]) -> Table {
    let column = Column::new;
    let metric = |m: Metric, key: &'static str| column(m.title(), key, true);
    // Latency titles say which loop measured it (latency.rs); with an open
    // loop, its offered rate, p99.9 and the generator's lag get columns.
    let latency = latency::titles(rows);
    let mut columns = vec![
        column("app", "app", false),
        column("knobs", "knobs", false),
        column("profile", "profile", false),
        column("runs", "runs", true),
        column("valid runs", "valid_runs", true),
        column("requests/s (min–max)", "rps", true),
        metric(Metric::RpsPerCore, "rps_per_core"),
    ];
    // gRPC server streams: a call is many messages, so their rate too.
    let streams = rows.iter().any(|r| r.messages_per_s.is_some());
    if streams {
        columns.push(column("messages/s (gRPC streams)", "messages_per_s", true));
    }
    if latency.open {
        columns.push(column("open-loop offered (req/s)", "latency_offered_rps", true));
    }
    columns
        .extend([column(&latency.p50, "p50_ms", true), column(&format!("{} (min–max)", latency.p99), "p99_ms", true)]);
    if latency.open {
        columns.extend([
            column(&latency.p999, "p999_ms", true),
            column("schedule lag p99 (ms)", "schedule_lag_p99_ms", true),
        ]);
    }
    columns.extend([
        metric(Metric::Cpu, "server_cpu_cores"),
        metric(Metric::Rss, "server_rss_max_mib"),
        metric(Metric::LoadgenCpu, "loadgen_cpu_cores"),
    ]);
    // With a database, its cores and requests per core of both.
    let with_db = rows.iter().any(|r| r.db_cpu_cores.is_some() || r.rps_per_core_with_db.is_some());
    if with_db {
        columns
            .extend([metric(Metric::DbCpu, "db_cpu_cores"), metric(Metric::RpsPerCoreWithDb, "rps_per_core_with_db")]);
    }
    columns.extend(crate::table::error_columns());
    let rows = rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                Cell::text(row.app.clone()),
                Cell::text(ConfigKey::of_row(row).knobs_label()),
                Cell::text(row.profile.clone()),
                Cell::count(row.runs as u64),
                valid_runs_cell(row),
                spread(row.rps, row.rps_range),
                Cell::figure(row.rps_per_core),
            ];
            if streams {
                cells.push(Cell::figure(row.messages_per_s));
            }
            if latency.open {
                cells.push(Cell::figure(row.latency_offered_rps));
            }
            cells.extend([Cell::figure(row.p50_ms), p99_cell(row)]);
            if latency.open {
                cells.extend([Cell::figure(row.p999_ms), Cell::figure(row.schedule_lag_p99_ms)]);
            }
            cells.extend([
                Cell::figure(row.server_cpu_cores),
                Cell::figure(row.server_rss_max_mib),
                Cell::figure(row.loadgen_cpu_cores),
            ]);
            if with_db {
                cells.extend([Cell::figure(row.db_cpu_cores), Cell::figure(row.rps_per_core_with_db)]);
            }
            cells.extend(ErrorCategory::ALL.map(|c| Cell::count(row.errors(c))));
            Row { cells, invalid: row.load_valid_runs == 0 }
        })
        .collect();
    Table { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_skip_invalid_iterations() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"go","knobs":{"t":"1"},"profile":"p","iteration":1,"valid":true,"load":{"rps":100.0},"server":{"cpu_cores_avg":1.0}},
          {"app":"go","knobs":{"t":"1"},"profile":"p","iteration":2,"valid":true,"load":{"rps":300.0},"server":{"cpu_cores_avg":1.0}},
          {"app":"go","knobs":{"t":"1"},"profile":"p","iteration":3,"valid":false,"invalid_reason":"boom","load":{"rps":9999.0}},
          {"app":"node","knobs":{},"profile":"p","iteration":1,"load":{"rps":50.0}}]}"#;
        let results = crate::schema::parse(text).unwrap();
        let rows = summarize(&results);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].rps, Some(200.0));
        assert_eq!(rows[0].rps_per_core, Some(200.0));
        assert_eq!((rows[0].runs, rows[0].valid_runs), (3, 2));
        assert_eq!(rows[0].invalid_reasons, vec!["iteration 3: boom".to_owned()]);
        assert_eq!(ConfigKey::of_row(&rows[1]).knobs_label(), "-");
    }

    #[test]
    fn the_table_shows_medians_with_their_spread_and_both_error_categories() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"go","profile":"p","iteration":1,"load":{"rps":1000.0,"latency_us":{"p99":400},"errors":{"parse":2,"tls":1,"status":3}},"server":{"cpu_cores_avg":0.5}},
          {"app":"go","profile":"p","iteration":2,"load":{"rps":3000.0,"latency_us":{"p99":600}},"server":{"cpu_cores_avg":0.5}},
          {"app":"go","profile":"p","iteration":3,"load":{"rps":2000.0,"latency_us":{"p99":500}},"server":{"cpu_cores_avg":0.5}},
          {"app":"go","profile":"p","iteration":4,"valid":false,"load":{"rps":9.0}},
          {"app":"node","profile":"p","iteration":1,"valid":false,"load":null}]}"#;
        let table = table(&summarize(&crate::schema::parse(text).unwrap()));
        let cell = |row, title: &str| table.cell(row, title).unwrap().clone();
        assert_eq!(cell(0, "requests/s (min–max)").text, "2,000 (1,000–3,000)");
        assert_eq!(cell(0, "requests/s (min–max)").raw, "2000");
        assert_eq!(cell(0, Metric::RpsPerCore.title()).text, "4,000");
        assert_eq!(cell(0, "p99 latency (ms) (min–max)").text, "0.5 (0.4–0.6)");
        assert_eq!((cell(0, "runs").text, cell(0, "valid runs").text), ("4".into(), "3".into()));
        assert_eq!(cell(0, ErrorCategory::SocketErrors.title()).raw, "3", "malformed and TLS are socket errors");
        assert_eq!(cell(0, ErrorCategory::BadResponses.title()).raw, "3");
        assert_eq!(cell(1, "requests/s (min–max)").text, "–", "no valid iteration, no figure");
        assert!(table.rows[1].invalid && !table.rows[0].invalid);
        let keys: Vec<&str> = table.columns.iter().map(|c| c.key).collect();
        assert_eq!(keys[keys.len() - 2..], ["bad_responses", "socket_errors"]);
        assert!(table.rows.iter().all(|r| r.cells.len() == table.columns.len()));
    }

    #[test]
    fn a_run_invalid_only_in_its_latency_phase_keeps_its_closed_loop_figures() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"go","profile":"p","iteration":1,"valid":false,"load_valid":true,"invalid_reason":"latency phase: late",
           "load":{"rps":1000.0},"latency":{"rps":700.0,"latency_us":{"p99":9000}},"server":{"cpu_cores_avg":0.5}},
          {"app":"go","profile":"p","iteration":2,"valid":false,"load_valid":true,"invalid_reason":"latency phase: late",
           "load":{"rps":1200.0},"latency":{"rps":800.0,"latency_us":{"p99":9000}},"server":{"cpu_cores_avg":0.5}},
          {"app":"node","profile":"p","iteration":1,"valid":false,"invalid_reason":"crashed","load":{"rps":50.0},
           "server":{"cpu_cores_avg":0.5}}]}"#;
        let rows = summarize(&crate::schema::parse(text).unwrap());
        assert_eq!((rows[0].valid_runs, rows[0].load_valid_runs), (0, 2));
        assert_eq!(
            (rows[0].rps, rows[0].rps_per_core, rows[0].server_cpu_cores),
            (Some(1100.0), Some(2200.0), Some(0.5))
        );
        assert_eq!((rows[0].p99_ms, rows[0].p50_ms), (None, None), "the latency figures are not valid");
        assert_eq!(rows[0].invalid_reasons, ["iteration 1: latency phase: late", "iteration 2: latency phase: late"]);
        let table = table(&rows);
        let cell = |row, title: &str| table.cell(row, title).unwrap().text.clone();
        assert_eq!(cell(0, "valid runs"), "0 (closed loop 2)");
        assert_eq!(cell(0, "requests/s (min–max)"), "1,100 (1,000–1,200)");
        assert_eq!(cell(0, "p99 latency (ms) (min–max)"), "–");
        assert!(!table.rows[0].invalid, "a row with valid closed-loop figures is not greyed out");
        // No valid run at all: every figure is a dash, never a zero.
        assert_eq!((rows[1].valid_runs, rows[1].load_valid_runs), (0, 0));
        assert!(table.rows[1].invalid);
        for title in ["requests/s (min–max)", Metric::RpsPerCore.title(), Metric::Cpu.title(), Metric::Rss.title()] {
            assert_eq!(cell(1, title), "–", "{title}");
        }
        assert_eq!(cell(1, "valid runs"), "0");
    }

    #[test]
    fn a_p99_that_varies_more_than_twofold_between_starts_is_marked_not_reproducible() {
        let doc = |p99s: &[f64]| {
            let runs: Vec<String> = p99s
                .iter()
                .enumerate()
                .map(|(i, p99)| {
                    format!(r#"{{"app":"go","profile":"p","iteration":{i},"load":{{"rps":100.0,"latency_us":{{"p99":{p99}}}}}}}"#)
                })
                .collect();
            crate::schema::parse(&format!(r#"{{"schema":"stampede.run/1","runs":[{}]}}"#, runs.join(","))).unwrap()
        };
        let wild = summarize(&doc(&[34_000.0, 81_000.0]));
        assert_eq!(wild[0].p99_reproducible, Some(false));
        assert!((wild[0].p99_spread.unwrap() - 81.0 / 34.0).abs() < 1e-9);
        let text = table(&wild).cell(0, "p99 latency (ms) (min–max)").unwrap().text.clone();
        assert_eq!(text, "57.5 (34–81, not reproducible)");
        let steady = summarize(&doc(&[10_000.0, 12_000.0, 11_000.0]));
        assert_eq!(steady[0].p99_reproducible, Some(true));
        assert_eq!(table(&steady).cell(0, "p99 latency (ms) (min–max)").unwrap().text, "11 (10–12)");
        let one = summarize(&doc(&[10_000.0]));
        assert_eq!((one[0].p99_spread, one[0].p99_reproducible), (None, None), "one start says nothing of its spread");
    }

    #[test]
    fn a_grpc_stream_profile_shows_its_messages_per_second_and_unary_or_http_rows_none() {
        let grpc = |stream: bool, messages_per_s: f64| {
            format!(r#"{{"call":"p.S/M","server_streaming":{stream},"messages_per_s":{messages_per_s}}}"#)
        };
        let text = format!(
            r#"{{"schema":"stampede.run/1","runs":[
          {{"app":"go","profile":"stream","iteration":1,"load":{{"rps":100.0,"grpc":{s1}}}}},
          {{"app":"go","profile":"stream","iteration":2,"load":{{"rps":100.0,"grpc":{s2}}}}},
          {{"app":"go","profile":"unary","iteration":1,"load":{{"rps":900.0,"grpc":{u}}}}}]}}"#,
            s1 = grpc(true, 9000.0),
            s2 = grpc(true, 11000.0),
            u = grpc(false, 900.0)
        );
        let rows = summarize(&crate::schema::parse(&text).unwrap());
        assert_eq!((rows[0].messages_per_s, rows[1].messages_per_s), (Some(10000.0), None));
        let t = table(&rows);
        assert_eq!(t.cell(0, "messages/s (gRPC streams)").unwrap().text, "10,000");
        assert_eq!(t.cell(1, "messages/s (gRPC streams)").unwrap().text, "–", "a unary call's reply is its call");
        let unary_only = table(&rows[1..]);
        assert!(unary_only.columns.iter().all(|c| c.key != "messages_per_s"), "no stream, no column");
        let json = serde_json::to_string(&rows[1]).unwrap();
        assert!(!json.contains("messages_per_s"), "{json}");
    }
}
