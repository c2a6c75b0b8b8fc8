//! Results of a bounded size, through the real binary: `stampede run` keeps
//! each phase's slow requests in a `*.slow.gz` file beside results.json
//! (docs/results.md, "Slow-request files"), so results.json and report.html
//! do not grow with the request count, `explain` and `report` read the
//! requests back, and a missing or corrupt file is one line naming it and
//! exit code 2 (but not for `compare`, which needs none). Regression: a 30-run shootout wrote a 149 MB results.json
//! (94% slow requests in JSON) and a 22 MB report.

use std::path::{Path, PathBuf};

use serde_json::Value;
use stampede_testkit::run::{assert_nothing_left, text, Scratch};

/// One open-loop run of the contract server at `rate` requests/s for 2 s,
/// logging every request; returns the results folder.
fn run_at(s: &Scratch, rate: u32) -> PathBuf {
    let app = s.app("slowfiles", "");
    let scenario = s.scenario(&format!(
        r#"
apps = ["{}"]
check = false
[[profiles]]
name = "json"
path = "/json"
connections = 8
duration = "2s"
warmup = "300ms"
rate = {rate}.0
max_lag = "200ms"
slow_log = 100000
"#,
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let results = s.results_path().unwrap_or_else(|| panic!("no results.json: {}", text(&out.stderr)));
    results.parent().unwrap().to_path_buf()
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).len()
}

/// The measured phase's slow-request file, as results.json names it.
fn slow_file(dir: &Path) -> (PathBuf, u64) {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let load = &doc["runs"][0]["load"];
    assert_eq!(load["slow_requests"], serde_json::json!([]), "no slow request inline in results.json");
    let file = &load["slow_log_file"];
    (dir.join(file["name"].as_str().unwrap()), file["requests"].as_u64().unwrap())
}

fn explain(s: &Scratch, dir: &Path) -> std::process::Output {
    s.stampede().args(["explain", "--json"]).arg(dir.join("results.json")).output().unwrap()
}

#[test]
fn results_json_and_the_report_keep_their_size_when_the_requests_grow_tenfold() {
    let (few, many) = (Scratch::new("slowfiles-few"), Scratch::new("slowfiles-many"));
    let (few_dir, many_dir) = (run_at(&few, 60), run_at(&many, 600));
    let ((few_file, few_logged), (many_file, many_logged)) = (slow_file(&few_dir), slow_file(&many_dir));
    assert!(many_logged > 5 * few_logged, "every request logged: {few_logged} then {many_logged}");
    assert!(size(&many_file) > 3 * size(&few_file), "the requests are in the files");

    let (few_json, many_json) = (size(&few_dir.join("results.json")), size(&many_dir.join("results.json")));
    assert!(many_json * 2 < few_json * 3, "results.json grew with the requests: {few_json} then {many_json} bytes");
    let (few_html, many_html) = (size(&few_dir.join("report.html")), size(&many_dir.join("report.html")));
    assert!(many_html * 2 < few_html * 3, "report.html grew with the requests: {few_html} then {many_html} bytes");
    assert!(many_html < 1 << 20, "one short run's report is {many_html} bytes");

    // explain reads the requests back from the file: all of them, the same
    // as results.json says it holds.
    let out = explain(&many, &many_dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let explained: Value = serde_json::from_slice(&out.stdout).unwrap();
    let above_p99 = explained["runs"][0]["slow_requests"].as_u64().unwrap();
    assert!(above_p99 > 0 && above_p99 < many_logged, "{above_p99} above p99 of {many_logged} logged");
    assert_nothing_left(&few);
    assert_nothing_left(&many);
}

#[test]
fn a_missing_or_corrupt_slow_request_file_is_one_line_naming_it_and_exit_2() {
    let s = Scratch::new("slowfiles-broken");
    let dir = run_at(&s, 100);
    let (file, _) = slow_file(&dir);
    let name = file.file_name().unwrap().to_str().unwrap().to_owned();
    let report = |dir: &Path| s.stampede().arg("report").arg(dir.join("results.json")).output().unwrap();
    assert_eq!(explain(&s, &dir).status.code(), Some(0), "intact, it reads");

    let good = std::fs::read(&file).unwrap();
    for (what, broken) in [("corrupt", Some(good[..good.len() / 2].to_vec())), ("missing", None)] {
        match &broken {
            Some(bytes) => std::fs::write(&file, bytes).unwrap(),
            None => std::fs::remove_file(&file).unwrap(),
        }
        for out in [explain(&s, &dir), report(&dir)] {
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: one line: {stderr}");
            assert!(stderr.contains(&name) && stderr.contains("runs[0].load.slow_log_file"), "{what}: {stderr}");
            assert!(out.stdout.is_empty(), "{what}: nothing half-printed");
        }
    }
    // compare uses no slow request: results.json alone compares.
    let results = dir.join("results.json");
    let out = s.stampede().arg("compare").args([&results, &results]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "compare without the slow files: {}", text(&out.stderr));
    assert_nothing_left(&s);
}
