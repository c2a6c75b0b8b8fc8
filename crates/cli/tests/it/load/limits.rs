//! Every count, size and duration a user can pass is held to a documented
//! range (docs/load.md "Limits", docs/run.md, docs/compare.md, docs/report.md):
//! outside it, one line naming the flag, field or file, exit 2, never an
//! abort, a panic or unbounded memory. Headers and methods are checked so a
//! flag cannot inject a header. Issue 20, medium 6 and "What to build" 4.

use stampede_testkit::load;
use stampede_testkit::run;

use std::time::Duration;

use load::{refused_port, stampede};
use run::Scratch;

/// `stampede args…` fails with exit 2 and one `stampede: error:` line containing every needle.
fn refused(args: &[&str], needles: &[&str]) {
    let out = stampede(args, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("stampede: error: "), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: one line: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{args:?}: no {needle:?} in {stderr}");
    }
}

fn url() -> String {
    format!("http://127.0.0.1:{}/", refused_port())
}

#[test]
fn durations_past_a_year_are_refused_instead_of_overflowing_the_clock() {
    let url = url();
    refused(&["load", "-d", "9223372036854775807s", &url], &["--duration", "365 days"]);
    refused(&["load", "--warmup", "18446744073709551615s", &url], &["--warmup", "365 days"]);
    refused(&["load", "--timeout", "400d", &url], &["--timeout", "365 days"]);
    refused(&["load", "--max-lag", "400d", &url], &["--max-lag", "365 days"]);
    refused(&["load", "--start-at", "1e300", &url], &["--start-at"]);
    refused(&["check", "--timeout", "9223372036854775807s", &url], &["--timeout", "365 days"]);
    refused(
        &["profile", "--pid", "1", "-d", "9223372036854775807s", "--out", "/nonexistent"],
        &["--duration", "365 days"],
    );
}

#[test]
fn max_granularity_past_a_second_or_without_an_open_loop_is_refused() {
    let url = url();
    refused(&["load", "-R", "100", "--max-granularity", "2s", &url], &["--max-granularity", "1s"]);
    refused(&["load", "--max-granularity", "4ms", &url], &["--max-granularity", "--rate"]);
}

#[test]
fn huge_counts_are_refused_instead_of_aborting() {
    let url = url();
    refused(&["load", "--http2", "--streams", "4294967296", &url], &["--streams", "maximum of 10000"]);
    refused(&["load", "-c", "2000000", &url], &["--connections", "maximum"]);
    refused(&["load", "-t", "5000", "-c", "5000", &url], &["--threads", "maximum"]);
    refused(&["load", "--pipeline", "2000000", &url], &["--pipeline", "maximum"]);
    refused(&["load", "--rate", "1e12", &url], &["--rate", "maximum"]);
    refused(&["load", "-n", "2000000000000", &url], &["--requests", "maximum"]);
    refused(&["load", "--slow-log", "1G", &url], &["--slow-log", "maximum"]);
    refused(&["profile", "--pid", "1", "-F", "4000000000", "--out", "/nonexistent"], &["--frequency"]);
}

#[test]
fn files_read_whole_have_a_cap_so_dev_zero_is_refused() {
    refused(&["load", "--body-file", "/dev/zero", &url()], &["body", "/dev/zero", "64 MiB"]);
    refused(&["report", "/dev/zero"], &["/dev/zero", "512 MiB"]);
    refused(&["compare", "/dev/zero", "/dev/zero"], &["/dev/zero", "512 MiB"]);
    refused(&["explain", "/dev/zero"], &["/dev/zero", "512 MiB"]);
}

#[test]
fn a_header_with_cr_lf_or_a_bad_name_and_an_empty_method_are_refused() {
    let url = url();
    refused(&["load", "-H", "X-A: b\r\nX-Injected: 1", &url], &["--header", "CR, LF"]);
    refused(&["load", "-H", "X(A): b", &url], &["--header", "token"]);
    refused(&["load", "-m", "", &url], &["--method \"\""]);
    refused(&["load", "-m", "GET /evil HTTP/1.1\r\nX:", &url], &["--method"]);
}

#[test]
fn scenario_values_out_of_range_name_the_file_and_the_field_before_any_run() {
    let s = Scratch::new("limits");
    let app = s.app("alpha", "");
    for (profile_line, field) in [
        ("duration = \"9223372036854775807s\"", "duration"),
        ("warmup = \"18446744073709551615s\"", "warmup"),
        ("duration = 1e300", "duration"),
        ("connections = 4000000", "profiles[0].connections"),
        ("rate = 1e12", "profiles[0].rate"),
        ("threads = 4\nconnections = 2", "profiles[0].threads"),
        ("slow_log = 200000", "profiles[0].slow_log"),
    ] {
        let scenario = s.scenario(&format!(
            "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/\"\n{profile_line}\n",
            app.display()
        ));
        let out = s
            .stampede()
            .args(["run", scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{profile_line}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{profile_line}: one line: {stderr}");
        assert!(stderr.contains("scenario.toml") && stderr.contains(field), "{profile_line}: {stderr}");
        assert!(!s.out().exists(), "{profile_line}: nothing is run or written");
    }
    let scenario = s.scenario(&format!("apps = [\"{}\"]\n[[profiles]]\npath = \"/\"\n", app.display()));
    for (flag, value, needles) in [
        ("--duration", "9223372036854775807s", ["--duration", "365 days"]),
        ("--iterations", "100000", ["iterations", "10000"]),
    ] {
        let out = s.stampede().args(["run", scenario.to_str().unwrap(), flag, value]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(needles.iter().all(|n| stderr.contains(n)), "{stderr}");
    }
    run::assert_nothing_left(&s);
}
