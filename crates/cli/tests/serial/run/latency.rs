//! The main job's two kinds of number, through the real binary: a profile's
//! `latency` phase measures latency in open loop at a share of the closed
//! loop's requests/s, the summary, Markdown and CSV say so and at what rate,
//! every measured phase keeps slow requests for `stampede explain`, and a
//! server that stalls 100 ms of every second shows the stall in the latency
//! column where the closed loop hides it. Small contract servers
//! (crates/testkit/fixtures/contract_server.py); runs of a few seconds each.

use serde_json::Value;
use stampede_testkit::run::{self, assert_nothing_left, text, Scratch};

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Runs the scenario `text` to a successful end; returns its stdout and
/// results.json's path and document.
fn run_ok(s: &Scratch, text: &str) -> (String, std::path::PathBuf, Value) {
    let scenario = s.scenario(text);
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (run::text(&out.stdout), run::text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    (stdout, s.results_path().expect("results.json"), s.results().expect("results.json"))
}

/// `stampede report RESULTS --format FORMAT`'s output.
fn report(s: &Scratch, results: &std::path::Path, format: &str) -> String {
    let out = s.stampede().args(["report", results.to_str().unwrap(), "--format", format]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn a_shootout_like_run_labels_open_loop_latency_and_keeps_slow_requests_for_explain() {
    let _machine = crate::machine();
    let s = Scratch::new("latency");
    let alpha = s.app("alpha", "");
    let beta = s.app("beta", "");
    let (stdout, results, doc) = run_ok(
        &s,
        &format!(
            r#"
apps = ["{}", "{}"]
[[profiles]]
name = "plaintext"
path = "/plaintext"
connections = 4
duration = "1s"
warmup = "500ms"
max_lag = "100ms"
latency = {{ fraction = 0.5, duration = "1s" }}
[[profiles]]
name = "json"
path = "/json"
connections = 4
duration = "1s"
warmup = "500ms"
max_lag = "100ms"
latency = {{ fraction = 0.5 }}
"#,
            alpha.display(),
            beta.display()
        ),
    );
    assert!(stdout.contains("open-loop p99 (ms) @50% of max"), "{stdout}");
    assert!(stdout.contains("open-loop offered (req/s)") && stdout.contains("schedule lag p99 (ms)"), "{stdout}");
    assert!(stdout.contains("(open loop, from intended send times)"), "{stdout}");

    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    // The slow requests are in files beside results.json, read back by the
    // one reader every command uses.
    let read = stampede_schema::document::read(&results).unwrap().into_results();
    for (run, typed) in runs.iter().zip(&read.runs) {
        let (closed, open) = (&run["load"], &run["latency"]);
        assert!(run["valid"].as_bool().unwrap(), "{}", run["invalid_reason"]);
        assert!(closed.get("target_rate").is_none(), "the measured phase is a closed loop");
        let offered = f(&open["target_rate"]);
        assert!((offered / f(&closed["rps"]) - 0.5).abs() < 1e-6, "offered {offered} vs {}", closed["rps"]);
        for (phase, typed) in [(closed, &typed.load), (open, &typed.latency)] {
            assert!(phase["slow_log_file"]["name"].is_string(), "{}", phase["slow_log_file"]);
            let slow = &typed.as_ref().unwrap().slow_requests;
            let requests = f(&phase["requests"]);
            assert!(slow.len() as f64 > 0.01 * requests, "{} slow of {requests}: must reach below p99", slow.len());
            assert!(slow.iter().all(|r| r.end_mono_ns > 0), "timestamped");
        }
    }
    // The phase lasts `latency.duration`, or the profile's when absent.
    let json_run = runs.iter().find(|r| r["profile"] == "json").unwrap();
    assert!(f(&json_run["latency"]["duration_s"]) > 0.5);

    let report = |format: &str| report(&s, &results, format);
    let markdown = report("md");
    assert!(markdown.contains("| open-loop p50 (ms) @50% of max |"), "{markdown}");
    assert!(markdown.contains("open-loop p99.9 (ms) @50% of max"), "{markdown}");
    let csv = report("csv");
    let header = csv.lines().next().unwrap();
    for key in ["latency_offered_rps", "p50_ms", "p99_ms", "p999_ms", "schedule_lag_p99_ms", "rps"] {
        assert!(header.split(',').any(|k| k == key), "{key} missing in {header}");
    }
    let summary: Value = serde_json::from_str(&report("json")).unwrap();
    for row in summary["rows"].as_array().unwrap() {
        assert!((f(&row["latency_fraction"]) - 0.5).abs() < 1e-6, "{row}");
        assert!(f(&row["latency_offered_rps"]) > 0.0 && f(&row["rps"]) > f(&row["latency_offered_rps"]), "{row}");
    }

    let out = s.stampede().args(["explain", "--json", results.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let explained: Value = serde_json::from_slice(&out.stdout).unwrap();
    let explained = explained["runs"].as_array().unwrap();
    assert_eq!(explained.len(), 4);
    for run in explained {
        assert!(run["slow_requests"].as_u64().unwrap() > 0, "explain found no slow request: {run}");
    }
    assert_nothing_left(&s);
}

#[test]
fn open_loop_latency_shows_a_100ms_stall_the_closed_loop_hides() {
    let _machine = crate::machine();
    let s = Scratch::new("stall");
    let app = s.app("stall", "STALL_MS=100 PERIOD_MS=1000");
    // 4 connections: a closed loop has at most 4 requests a second caught in
    // the stall, far under 1% of what it sends; an open loop at 30% of that
    // rate has 10% of its requests arrive during a stall (p99 ≈ 90 ms).
    let (_, results, doc) = run_ok(
        &s,
        &format!(
            r#"
apps = ["{}"]
check = false
[[profiles]]
path = "/plaintext"
connections = 4
duration = "2s"
warmup = "500ms"
max_lag = "100ms"
latency = {{ fraction = 0.3, duration = "3s" }}
"#,
            app.display()
        ),
    );
    let run = &doc["runs"][0];
    let closed_p99_ms = f(&run["load"]["latency_us"]["p99"]) / 1000.0;
    let open_p99_ms = f(&run["latency"]["latency_us"]["p99"]) / 1000.0;
    assert!(open_p99_ms > 50.0, "the open loop must see the stall: p99 {open_p99_ms} ms");
    assert!(closed_p99_ms < open_p99_ms / 2.0, "closed {closed_p99_ms} ms, open {open_p99_ms} ms");

    let summary: Value = serde_json::from_str(&report(&s, &results, "json")).unwrap();
    let p99 = f(&summary["rows"][0]["p99_ms"]);
    assert!((p99 - open_p99_ms).abs() < 1e-9, "the summary's p99 is the open loop's: {p99} vs {open_p99_ms}");
    assert_nothing_left(&s);
}
