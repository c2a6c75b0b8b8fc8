//! What a person sees: crank's two tables after each run (the application's
//! cost, then the load's figures) and, at the end, one summary row per app ×
//! knobs × profile with the median over iterations, its spread (min–max), RPS
//! per server core and p99.

use std::collections::BTreeMap;

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, Table};

use crate::record::RunRecord;
use stampede_report::crank::{load_figures, LoadRow};
use stampede_report::format::{count, num};
use stampede_report::stats::median_of_sorted;
use stampede_schema::LoadResult;

fn table(header: [&str; 2]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    if let Some(col) = t.column_mut(1) {
        col.set_cell_alignment(CellAlignment::Right);
    }
    t
}

/// A figure in the one number format of every table (the report's).
fn fig(x: f64) -> String {
    num(Some(x))
}

/// The two tables for one run.
pub fn run_tables(run: &RunRecord, runtime_version: &str, cores: usize) -> String {
    let knobs = if run.knobs.is_empty() { String::new() } else { format!(" ({})", label(&run.knobs)) };
    let mut app = table(["application", &format!("{}{knobs}", run.app)]);
    let s = &run.server;
    let rows: Vec<(&str, String)> = vec![
        ("CPU usage (%)", fig(s.cpu_cores_avg / cores.max(1) as f64 * 100.0)),
        ("CPU usage, max (%)", fig(s.cpu_pct_max)),
        ("Cores usage", fig(s.cpu_cores_avg)),
        ("Working set (MiB)", fig(s.rss_max_mib)),
        ("Threads (max)", count(Some(s.threads_max))),
        (
            "Context switches (vol / invol)",
            format!("{} / {}", count(Some(s.ctx_voluntary)), count(Some(s.ctx_involuntary))),
        ),
        ("Run-queue wait (ms)", fig(s.runqueue_wait_ms)),
        ("Build time (ms)", fig(run.build_time_ms)),
        ("Start time (ms)", fig(run.start_time_ms)),
        ("Runtime version", runtime_version.to_string()),
    ];
    for (k, v) in rows {
        app.add_row(vec![k.to_string(), v]);
    }
    if let Some(db) = &run.database {
        let or_dash = |x: Option<f64>| x.map_or_else(|| "-".to_string(), fig);
        app.add_row(vec!["Database cores usage".to_string(), or_dash(db.cpu_cores_avg)]);
        app.add_row(vec!["Database working set (MiB)".to_string(), or_dash(db.rss_max_mib)]);
    }
    let mut load = table(["load", &format!("{} {}", run.profile, run.path)]);
    let row = LoadRow {
        load: run.load.as_ref(),
        first_request_ms: Some(run.first_request_ms),
        rps_per_server_core: Some(run.rps_per_server_core),
        loadgen_cores: Some(run.loadgen.cpu_cores_avg.max(run.load.as_ref().map_or(0.0, |l| l.loadgen.cpu_cores))),
    };
    for figure in load_figures(&row) {
        load.add_row(vec![figure.title.to_string(), figure.text]);
    }
    let contract = if run.contract == "none" { "none (not checked)".into() } else { run.contract.clone() };
    if let Some(db) = &run.database {
        load.add_row(vec!["RPS per core (server + database)".to_string(), fig(db.rps_per_core)]);
    }
    load.add_row(vec!["Contract".to_string(), contract]);
    let valid = if run.valid { "yes".into() } else { format!("no: {}", run.invalid_reason.as_deref().unwrap_or("")) };
    load.add_row(vec!["Valid".to_string(), valid]);
    format!("{app}\n\n{load}\n")
}

pub fn label(knobs: &BTreeMap<String, String>) -> String {
    knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// `median (min–max)`, or the one value.
fn spread(values: &[f64], fmt: impl Fn(f64) -> String) -> String {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let m = median_of_sorted(&v);
    if v.len() < 2 {
        fmt(m)
    } else {
        format!("{} ({}–{})", fmt(m), fmt(v[0]), fmt(v[v.len() - 1]))
    }
}

/// One row per app × knobs × profile; medians over the valid iterations.
pub fn summary_table(runs: &[RunRecord]) -> String {
    type Key = (String, String, String);
    let mut groups: Vec<(Key, Vec<&RunRecord>)> = Vec::new();
    for run in runs {
        let key = (run.app.clone(), label(&run.knobs), run.profile.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(run),
            None => groups.push((key, vec![run])),
        }
    }
    // With a database, its cores and requests per core of both come after the server's.
    let with_db = runs.iter().any(|r| r.database.is_some());
    let mut header = vec!["app", "knobs", "profile", "RPS (min–max)", "RPS / server core", "cores"];
    if with_db {
        header.extend(["db cores", "RPS / core (server + db)"]);
    }
    header.extend(["p99 ms (min–max)", "valid"]);
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header);
    for ((app, knobs, profile), list) in groups {
        let valid: Vec<&&RunRecord> = list.iter().filter(|r| r.valid).collect();
        let loads: Vec<&LoadResult> = valid.iter().filter_map(|r| r.load.as_ref()).collect();
        let rps: Vec<f64> = loads.iter().map(|l| l.rps).collect();
        let per_core: Vec<f64> = valid.iter().map(|r| r.rps_per_server_core).collect();
        let cores: Vec<f64> = valid.iter().map(|r| r.server.cpu_cores_avg).collect();
        let p99: Vec<f64> = loads.iter().map(|l| l.latency_us.p99 / 1000.0).collect();
        let dash = |v: &[f64]| if v.is_empty() { "-".to_string() } else { spread(v, fig) };
        let mut row = vec![
            app,
            if knobs.is_empty() { "-".into() } else { knobs },
            profile,
            dash(&rps),
            dash(&per_core),
            dash(&cores),
        ];
        if with_db {
            let db = |r: &&&RunRecord| r.database.clone().unwrap_or_default();
            let db_cores: Vec<f64> = valid.iter().filter_map(|r| db(r).cpu_cores_avg).collect();
            let both: Vec<f64> = valid.iter().map(|r| db(r).rps_per_core).collect();
            row.extend([dash(&db_cores), dash(&both)]);
        }
        row.extend([dash(&p99), format!("{}/{}", valid.len(), list.len())]);
        t.add_row(row);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::fake_load;

    fn run(rps: f64, valid: bool) -> RunRecord {
        let profile: crate::scenario::Profile = toml::from_str("path = \"/json\"").unwrap();
        let mut r = RunRecord::failed(
            "go",
            &BTreeMap::from([("gc".to_string(), "off".to_string())]),
            &profile,
            1,
            1234.0,
            String::new(),
        );
        r.valid = valid;
        r.invalid_reason = if valid { None } else { Some("crashed".into()) };
        r.load = Some(fake_load(rps, 0));
        r.server.cpu_cores_avg = 0.5;
        r.rps_per_server_core = rps / 0.5;
        r
    }

    #[test]
    fn medians_and_spread() {
        let table = summary_table(&[run(1000.0, true), run(3000.0, true), run(2000.0, true), run(9.0, false)]);
        assert!(table.contains("2,000 (1,000–3,000)"), "{table}");
        assert!(table.contains("4,000 (2,000–6,000)"), "{table}");
        assert!(table.contains("3/4"), "{table}");
    }

    #[test]
    fn with_a_database_its_cores_and_requests_per_core_of_both_are_shown() {
        let mut with_db = run(3000.0, true);
        with_db.database = Some(stampede_schema::database::DatabaseUsage {
            database: "private PostgreSQL".into(),
            cpu_cores_avg: Some(0.25),
            rss_max_mib: Some(40.0),
            rps_per_core: 4000.0,
            ..Default::default()
        });
        let table = summary_table(&[with_db.clone()]);
        assert!(table.contains("RPS / core (server + db)") && table.contains("4,000"), "{table}");
        assert!(table.contains("0.25"), "{table}");
        let text = run_tables(&with_db, "go1.22", 2);
        assert!(text.contains("Database cores usage") && text.contains("RPS per core (server + database)"), "{text}");
        assert!(!summary_table(&[run(3000.0, true)]).contains("db cores"));
    }

    #[test]
    fn the_two_run_tables_name_their_figures() {
        let text = run_tables(&run(1500.0, false), "go1.22", 2);
        for needle in [
            "go (gc=off)",
            "Build time (ms)",
            "1,234",
            "go1.22",
            "Mean RPS",
            "1,500",
            "Latency 99th (ms)",
            "0.4",
            "Socket errors",
            "Bad responses",
            "no: crashed",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
    }
}
