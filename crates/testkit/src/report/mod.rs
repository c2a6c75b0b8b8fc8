//! Helpers for the `report` and `compare` CLI tests: running the real
//! binary, scratch directories, small results files built in code, and
//! headless Chromium for checking that the HTML report really draws.

pub mod chromium;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::Stampede;

/// The `stampede` binary built for these tests.
pub fn stampede() -> Command {
    Stampede::new().command()
}

/// Runs `stampede` with arguments and returns its output.
pub fn run(args: &[&str]) -> Output {
    Stampede::new().args(args).output()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh, empty directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = crate::tmp_dir().join("stampede-report-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes JSON to `dir/name` and returns the path as a string.
pub fn write_json(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// One valid run with the given requests per second; other metrics fixed.
pub fn run_json(app: &str, threads: &str, iteration: u64, rps: f64) -> Value {
    json!({
        "app": app, "knobs": {"threads": threads}, "profile": "steady", "path": "/json",
        "iteration": iteration, "valid": true, "invalid_reason": null,
        "build_time_ms": 1000.0, "start_time_ms": 5.0, "first_request_ms": 0.5,
        "warmup": null,
        "load": {
            "schema": "stampede.load/1", "mode": "closed", "connections": 64, "threads": 2,
            "duration_s": 10.0, "warmup_s": 2.0, "requests": (rps * 10.0) as u64, "rps": rps,
            "bytes_read": (rps * 1500.0) as u64,
            "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0, "parse": 0},
            "status_codes": {"200": (rps * 10.0) as u64},
            "latency_us": {"min": 200.0, "mean": 1500.0, "stdev": 300.0, "max": 9000.0, "p50": 1400.0,
                           "p75": 1700.0, "p90": 2100.0, "p99": 3100.0, "p999": 5000.0, "p9999": 8000.0},
            "latency_spectrum": [{"percentile": 0.0, "us": 200.0}, {"percentile": 50.0, "us": 1400.0},
                                 {"percentile": 90.0, "us": 2100.0}, {"percentile": 99.0, "us": 3100.0},
                                 {"percentile": 99.9, "us": 5000.0}],
            "loadgen": {"cpu_user_s": 3.0, "cpu_sys_s": 4.0, "cpu_cores": 0.7, "max_rss_kib": 9000},
            "timeline": [{"t_s": 0, "requests": rps as u64, "errors": 0, "p99_us": 3100.0},
                         {"t_s": 1, "requests": rps as u64, "errors": 0, "p99_us": 3000.0}]
        },
        "server": {"cpu_cores_avg": 1.0, "cpu_pct_max": 100.0, "rss_max_mib": 20.0, "threads_max": 6,
                   "samples": [{"t_s": 0.1, "cpu_cores": 1.0, "rss_mib": 20.0},
                               {"t_s": 0.2, "cpu_cores": 1.0, "rss_mib": 20.0}],
                   "threads_table": []},
        "rps_per_server_core": rps
    })
}

/// A results file with one configuration per entry, one run per RPS value.
pub fn results_json(configs: &[(&str, &str, &[f64])]) -> Value {
    let runs: Vec<Value> = configs
        .iter()
        .flat_map(|(app, threads, values)| {
            values.iter().enumerate().map(move |(i, rps)| run_json(app, threads, i as u64 + 1, *rps))
        })
        .collect();
    json!({
        "schema": "stampede.run/1",
        "environment": {"tool_version": "0.1.0", "git_commit": "abc123", "command_line": "stampede run s.toml",
                        "cpu_model": "Test CPU", "kernel": "6.1", "cores": 2,
                        "pinning": {"server": "1", "loadgen": "0"}, "runtimes": {}, "started_unix_s": 1.7e9},
        "scenario": {"name": "test"},
        "runs": runs
    })
}

/// The value of `name="…"` on the element with `id="selftest"` in a DOM dump.
pub fn selftest_attr(dom: &str, name: &str) -> String {
    let start = dom.find(r#"id="selftest""#).expect("the page has a #selftest element");
    let tag_start = dom[..start].rfind('<').unwrap();
    let tag_end = start + dom[start..].find('>').unwrap();
    let tag = &dom[tag_start..tag_end];
    let key = format!(r#"{name}=""#);
    let at = tag.find(&key).unwrap_or_else(|| panic!("#selftest has no {name}: {tag}"));
    let rest = &tag[at + key.len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// Width and height from a PNG's IHDR chunk.
pub fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (width, height)
}

/// Field names in the first column of the table under `heading` in a page of
/// `docs/` (a cell may name several: "`a`, `b`").
pub fn documented_fields(doc: &str, heading: &str) -> Vec<String> {
    let path = crate::repo_root().join("docs").join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(heading).unwrap_or_else(|| panic!("{heading} not in {doc}"));
    let mut fields = Vec::new();
    for line in text[start..].lines().skip(1) {
        if line.starts_with('#') {
            break;
        }
        let Some(cell) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        for name in cell.split(',') {
            let name = name.trim().trim_matches('`');
            if !name.is_empty() && !name.starts_with("--") && name != "field" {
                fields.push(name.to_owned());
            }
        }
    }
    fields
}

/// The keys of a JSON object, sorted.
pub fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}
