//! What a person sees: crank's two tables after each run (the application's
//! cost, then the load's figures) and, at the end, one summary row per app ×
//! knobs × profile with the median over iterations, its spread (min–max), RPS
//! per server core and p99.

use std::collections::BTreeMap;

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, Table};

use stampede_schema::{ErrorCategory, LoadResult};
use crate::record::RunRecord;

fn table(header: [&str; 2]) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    if let Some(col) = t.column_mut(1) {
        col.set_cell_alignment(CellAlignment::Right);
    }
    t
}

fn int(x: f64) -> String {
    let n = x.round() as i64;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

fn ms(us: f64) -> String {
    format!("{:.2}", us / 1000.0)
}

/// The two tables for one run.
pub fn run_tables(run: &RunRecord, runtime_version: &str, cores: usize) -> String {
    let knobs = if run.knobs.is_empty() { String::new() } else { format!(" ({})", label(&run.knobs)) };
    let mut app = table(["application", &format!("{}{knobs}", run.app)]);
    let s = &run.server;
    let rows: Vec<(&str, String)> = vec![
        ("CPU usage (%)", format!("{:.0}", s.cpu_cores_avg / cores.max(1) as f64 * 100.0)),
        ("CPU usage, max (%)", format!("{:.0}", s.cpu_pct_max)),
        ("Cores usage", format!("{:.2}", s.cpu_cores_avg)),
        ("Working set (MiB)", format!("{:.1}", s.rss_max_mib)),
        ("Threads (max)", s.threads_max.to_string()),
        ("Context switches (vol / invol)", format!("{} / {}", int(s.ctx_voluntary as f64), int(s.ctx_involuntary as f64))),
        ("Run-queue wait (ms)", format!("{:.1}", s.runqueue_wait_ms)),
        ("Build time (ms)", int(run.build_time_ms)),
        ("Start time (ms)", int(run.start_time_ms)),
        ("Runtime version", runtime_version.to_string()),
    ];
    for (k, v) in rows {
        app.add_row(vec![k.to_string(), v]);
    }
    let mut load = table(["load", &format!("{} {}", run.profile, run.path)]);
    let f = run.load.clone().unwrap_or_default();
    let l = &f.latency_us;
    let rows: Vec<(&str, String)> = vec![
        ("First request (ms)", format!("{:.1}", run.first_request_ms)),
        ("Requests", int(f.requests as f64)),
        ("Mean RPS", int(f.rps)),
        ("RPS per server core", int(run.rps_per_server_core)),
        ("Mean latency (ms)", ms(l.mean)),
        ("Max latency (ms)", ms(l.max)),
        ("Latency 50th (ms)", ms(l.p50)),
        ("Latency 75th (ms)", ms(l.p75)),
        ("Latency 90th (ms)", ms(l.p90)),
        ("Latency 99th (ms)", ms(l.p99)),
        (ErrorCategory::BadResponses.title(), int(f.bad_responses() as f64)),
        (ErrorCategory::SocketErrors.title(), int(f.socket_errors() as f64)),
        ("Read throughput (MiB/s)", format!("{:.2}", f.read_bytes_per_s() / (1024.0 * 1024.0))),
        ("Load generator CPU (cores)", format!("{:.2}", run.loadgen.cpu_cores_avg.max(f.loadgen.cpu_cores))),
        ("Valid", if run.valid { "yes".into() } else { format!("no: {}", run.invalid_reason.as_deref().unwrap_or("")) }),
    ];
    for (k, v) in rows {
        load.add_row(vec![k.to_string(), v]);
    }
    format!("{app}\n\n{load}\n")
}

pub fn label(knobs: &BTreeMap<String, String>) -> String {
    knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// Median of a non-empty list.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn spread(values: &[f64], fmt: impl Fn(f64) -> String) -> String {
    let mut v = values.to_vec();
    let m = median(&mut v);
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
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(vec!["app", "knobs", "profile", "RPS (min–max)", "RPS / server core", "cores", "p99 ms (min–max)", "valid"]);
    for ((app, knobs, profile), list) in groups {
        let valid: Vec<&&RunRecord> = list.iter().filter(|r| r.valid).collect();
        let figures: Vec<LoadResult> = valid.iter().map(|r| r.load.clone().unwrap_or_default()).collect();
        let rps: Vec<f64> = figures.iter().map(|f| f.rps).collect();
        let per_core: Vec<f64> = valid.iter().map(|r| r.rps_per_server_core).collect();
        let cores: Vec<f64> = valid.iter().map(|r| r.server.cpu_cores_avg).collect();
        let p99: Vec<f64> = figures.iter().map(|f| f.latency_us.p99 / 1000.0).collect();
        let dash = |v: &[f64], f: &dyn Fn(f64) -> String| if v.is_empty() { "-".to_string() } else { spread(v, f) };
        t.add_row(vec![
            app,
            if knobs.is_empty() { "-".into() } else { knobs },
            profile,
            dash(&rps, &int),
            dash(&per_core, &int),
            dash(&cores, &|x| format!("{x:.2}")),
            dash(&p99, &|x| format!("{x:.2}")),
            format!("{}/{}", valid.len(), list.len()),
        ]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::fake_load;

    fn run(rps: f64, valid: bool) -> RunRecord {
        let profile: crate::scenario::Profile = toml::from_str("path = \"/json\"").unwrap();
        let mut r = RunRecord::failed("go", &BTreeMap::from([("gc".to_string(), "off".to_string())]), &profile, 1, 1234.0, String::new());
        r.valid = valid;
        r.invalid_reason = if valid { None } else { Some("crashed".into()) };
        r.load = Some(fake_load(rps, 0));
        r.server.cpu_cores_avg = 0.5;
        r.rps_per_server_core = rps / 0.5;
        r
    }

    #[test]
    fn medians_and_spread() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0]), 2.5);
        let table = summary_table(&[run(1000.0, true), run(3000.0, true), run(2000.0, true), run(9.0, false)]);
        assert!(table.contains("2,000 (1,000–3,000)"), "{table}");
        assert!(table.contains("4,000 (2,000–6,000)"), "{table}");
        assert!(table.contains("3/4"), "{table}");
    }

    #[test]
    fn the_two_run_tables_name_their_figures() {
        let text = run_tables(&run(1500.0, false), "go1.22", 2);
        for needle in ["go (gc=off)", "Build time (ms)", "1,234", "go1.22", "Mean RPS", "1,500", "Latency 99th (ms)", "0.40", "no: crashed"] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
    }
}
