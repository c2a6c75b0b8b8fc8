//! `stampede load` through the real binary against servers that behave and
//! servers that do not. What a user relies on: the counts are right, bad
//! servers are counted rather than crashing or hanging the run, and a target
//! that cannot be reached is one clear error with exit code 2.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load;

use load::{load_json, refused_port, stampede};
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn exact_request_count_with_n() {
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["-n", "5000", "-c", "8", "-t", "2", &srv.url("/plaintext")], DEADLINE);
    assert_eq!(r["requests"], 5000);
    assert_eq!(r["status_codes"]["200"], 5000);
    assert_eq!(srv.requests.load(Ordering::Relaxed), 5000, "the server saw exactly -n requests");
    assert_eq!(r["errors"]["read"], 0);
    // 13-byte body plus the head, for every response.
    let per = r["bytes_read"].as_u64().unwrap() / 5000;
    assert!(per > 13 && per < 200, "{per} bytes per response");
}

#[test]
fn chunked_bodies_are_framed() {
    let srv = Hostile::start(Trick::Chunked);
    let r = load_json(&["-n", "2000", "-c", "4", &srv.url("/")], DEADLINE);
    assert_eq!(r["requests"], 2000);
    assert_eq!(r["errors"]["parse"], 0);
    assert_eq!(r["errors"]["read"], 0);
}

#[test]
fn server_that_closes_after_every_response_is_reconnected_and_counted() {
    let srv = Hostile::start(Trick::CloseAfter(1));
    let r = load_json(&["-n", "300", "-c", "4", &srv.url("/")], DEADLINE);
    assert_eq!(r["requests"], 300);
    assert_eq!(r["reconnects"], 300);
    assert_eq!(r["errors"]["read"], 0);
}

#[test]
fn status_errors_are_counted_with_their_codes() {
    let srv = Hostile::start(Trick::Status500);
    let r = load_json(&["-n", "1000", "-c", "4", &srv.url("/")], DEADLINE);
    assert_eq!(r["requests"], 1000);
    assert_eq!(r["errors"]["status"], 1000);
    assert_eq!(r["status_codes"]["500"], 1000);
}

#[test]
fn malformed_http_is_counted_not_fatal() {
    let srv = Hostile::start(Trick::Malformed);
    let r = load_json(&["-d", "1s", "-c", "2", &srv.url("/")], DEADLINE);
    assert_eq!(r["requests"], 0);
    assert!(r["errors"]["parse"].as_u64().unwrap() > 0, "{}", r["errors"]);
}

#[test]
fn silent_server_times_out_and_the_run_still_ends() {
    let srv = Hostile::start(Trick::Silent);
    let r = load::load_json_any(&["-d", "2s", "-c", "3", "--timeout", "300ms", &srv.url("/")], DEADLINE);
    assert_eq!(r["requests"], 0);
    assert!(r["stalled"].is_object(), "a server that never answers stalled the run: {r}");
    let timeouts = r["errors"]["timeout"].as_u64().unwrap();
    // 3 connections, each timing out every ~300 ms for 2 s.
    assert!((6..=30).contains(&timeouts), "{timeouts} timeouts");
}

#[test]
fn refused_port_is_one_clear_line_and_exit_2() {
    let url = format!("http://127.0.0.1:{}/", refused_port());
    let out = stampede(&["load", "-d", "1s", &url], DEADLINE);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&url) && err.contains("connection refused"), "{err}");
}

#[test]
fn bad_urls_and_flags_exit_2_without_panicking() {
    for args in [
        vec!["load", "not a url"],
        vec!["load", "https://127.0.0.1:1/"],
        vec!["load", "-c", "0", "http://127.0.0.1:1/"],
        vec!["load", "-c", "2", "-t", "4", "http://127.0.0.1:1/"],
        vec!["load", "-d", "10x", "http://127.0.0.1:1/"],
        vec!["load", "-H", "novalue", "http://127.0.0.1:1/"],
        vec!["load", "--rate", "0", "http://127.0.0.1:1/"],
        vec!["load", "-n", "10", "-d", "1s", "http://127.0.0.1:1/"],
        vec!["load", "--engine", "bogus", "http://127.0.0.1:1/"],
        vec!["load", "--no-such-flag", "http://127.0.0.1:1/"],
        vec!["load"],
    ] {
        let out = stampede(&args, DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // One line naming what is wrong, whether clap or Stampede found it.
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("stampede: error: "), "{args:?}: {err}");
    }
}

#[test]
fn human_output_has_wrk_layout_and_the_generators_own_cost() {
    let srv = Hostile::start(Trick::None);
    let out = stampede(&["load", "-d", "1s", "-c", "4", &srv.url("/")], DEADLINE);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Running 1s test @",
        "Latency Distribution",
        "99.99%",
        "Requests/sec:",
        "Transfer/sec:",
        "Load generator CPU:",
        "Load generator peak RSS:",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn json_has_the_documented_fields_and_a_timeline() {
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["-d", "2s", "--warmup", "500ms", "-c", "4", &srv.url("/x")], DEADLINE);
    assert_eq!(r["schema"], "stampede.load/1");
    assert_eq!(r["mode"], "closed");
    for field in ["min", "mean", "stdev", "max", "p50", "p75", "p90", "p99", "p999", "p9999"] {
        assert!(r["latency_us"][field].as_f64().unwrap() > 0.0, "latency_us.{field}");
    }
    let l = &r["latency_us"];
    assert!(l["p50"].as_f64() <= l["p99"].as_f64() && l["p99"].as_f64() <= l["max"].as_f64());
    for field in ["cpu_user_s", "cpu_sys_s", "max_rss_kib"] {
        assert!(r["loadgen"][field].as_f64().is_some(), "loadgen.{field}");
    }
    let timeline = r["timeline"].as_array().unwrap();
    assert_eq!(timeline.len(), 2, "one entry per measured second");
    let sum: u64 = timeline.iter().map(|s| s["requests"].as_u64().unwrap()).sum();
    assert_eq!(sum, r["requests"].as_u64().unwrap(), "the timeline adds up to the total");
    let d = r["duration_s"].as_f64().unwrap();
    assert!((1.9..2.5).contains(&d), "warmup is not in the measured duration: {d}");
    let rps = r["rps"].as_f64().unwrap();
    assert!((rps - r["requests"].as_f64().unwrap() / d).abs() < 1.0);
    assert!(!r["histogram"].as_str().unwrap().is_empty());
}

#[test]
fn thousand_connections_keep_memory_small() {
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["-d", "2s", "-c", "1000", "-t", "2", &srv.url("/")], Duration::from_secs(60));
    assert!(r["requests"].as_u64().unwrap() > 1000);
    assert_eq!(r["errors"]["connect"], 0);
    let rss_mib = r["loadgen"]["max_rss_kib"].as_f64().unwrap() / 1024.0;
    assert!(rss_mib < 32.0, "peak RSS {rss_mib:.1} MiB at 1000 connections");
}
