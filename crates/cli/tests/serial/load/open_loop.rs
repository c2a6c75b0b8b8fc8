//! Open-loop mode (`--rate`) against a server with known stalls, where the
//! true response-time distribution can be computed by hand, and against a
//! generator deliberately short of CPU. These tests run one at a time: they
//! measure timing, and a neighbouring test's load would be their noise.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load::{load_json, load_json_on, pin_to_cpu, stampede_on};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The true latency percentile for requests arriving uniformly at a server
/// that stalls `stall` of every `period`: a request arriving `phi` into a
/// stall waits `stall - phi`, the others are answered at once, so
/// P(latency > x) = (stall - x) / period for 0 <= x < stall.
pub(crate) fn hiccup_percentile(p: f64, stall_ms: f64, period_ms: f64) -> f64 {
    let tail = 1.0 - p / 100.0;
    (stall_ms - tail * period_ms).max(0.0)
}

#[test]
fn open_loop_sees_the_stall_closed_loop_hides_it() {
    let _machine = crate::machine();
    let (stall, period) = (Duration::from_millis(100), Duration::from_secs(1));
    let srv = Hostile::start(Trick::Hiccup { stall, period });
    let url = srv.url("/");
    let deadline = Duration::from_secs(60);

    let truth_p99 = hiccup_percentile(99.0, 100.0, 1000.0);
    let truth_p999 = hiccup_percentile(99.9, 100.0, 1000.0);
    assert!((truth_p99 - 90.0).abs() < 1e-9 && (truth_p999 - 99.0).abs() < 1e-9);
    let ms = |r: &serde_json::Value, f: &str| r["latency_us"][f].as_f64().unwrap() / 1000.0;
    // Both engines: each wakes at the schedule's times, not per response.
    let engine = ["--engine", "epoll"];
    let open_epoll = load_json(&[&engine[..], &["--rate", "1000", "-d", "10s", "-c", "128", &url]].concat(), deadline);
    let (p99, p999) = (ms(&open_epoll, "p99"), ms(&open_epoll, "p999"));
    assert!((p99 - truth_p99).abs() / truth_p99 < 0.10, "epoll: open-loop p99 {p99:.1} ms vs true {truth_p99} ms");
    assert!((p999 - truth_p999).abs() / truth_p999 < 0.10, "epoll: p99.9 {p999:.1} ms vs true {truth_p999} ms");
    let open = load_json(&["--rate", "1000", "-d", "10s", "-c", "128", "--slow-log", "20", &url], deadline);
    let closed = load_json(&["-d", "5s", "-c", "4", &url], deadline);
    let (p99, p999) = (ms(&open, "p99"), ms(&open, "p999"));
    assert!((p99 - truth_p99).abs() / truth_p99 < 0.10, "open-loop p99 {p99:.1} ms vs true {truth_p99} ms");
    assert!((p999 - truth_p999).abs() / truth_p999 < 0.10, "open-loop p99.9 {p999:.1} ms vs true {truth_p999} ms");
    assert_eq!(open["mode"], "open");
    let achieved = open["achieved_rate"].as_f64().unwrap();
    assert!((achieved - 1000.0).abs() < 50.0, "achieved {achieved}");
    // Service time is measured from the actual send: queued requests look
    // faster there, which is exactly the coordinated-omission error.
    assert!(open["service_time_us"]["p99"].as_f64().unwrap() <= open["latency_us"]["p99"].as_f64().unwrap());
    let slow = open["slow_requests"].as_array().unwrap();
    assert_eq!(slow.len(), 20);
    for s in slow {
        let (i, st, e) = (
            s["intended_mono_ns"].as_u64().unwrap(),
            s["start_mono_ns"].as_u64().unwrap(),
            s["end_mono_ns"].as_u64().unwrap(),
        );
        assert!(i <= st && st <= e, "{s}");
        assert!(s["latency_us"].as_f64().unwrap() > 90_000.0, "the slowest requests are the stalled ones: {s}");
    }

    assert_eq!(closed["mode"], "closed");
    let closed_p99 = ms(&closed, "p99");
    assert!(closed_p99 < truth_p99 / 2.0, "closed loop hides the stall: p99 {closed_p99:.1} ms");
}

#[test]
fn modest_rate_on_a_fast_server_is_not_called_saturated() {
    let _machine = crate::machine();
    let srv = Hostile::start(Trick::None);
    // A lenient --max-lag: this guards against false alarms from the logic,
    // not against a busy CI machine's scheduler.
    let r = load_json(
        &["--rate", "300", "-d", "2s", "-c", "8", "--max-lag", "20ms", &srv.url("/")],
        Duration::from_secs(30),
    );
    assert_eq!(r["saturated"], false, "{}", r["saturation_reason"]);
    assert_eq!(r["saturation_reason"], serde_json::Value::Null);
    let achieved = r["achieved_rate"].as_f64().unwrap();
    assert!((achieved - 300.0).abs() < 15.0, "achieved {achieved}");
    assert!((590..=600).contains(&r["requests"].as_u64().unwrap()), "{}", r["requests"]);
}

#[test]
fn generator_short_of_cpu_says_it_is_saturated() {
    let _machine = crate::machine();
    // The server gets CPU 0 to itself; the generator shares CPU 1 with three
    // busy threads, so it gets about a quarter of a core and cannot keep to
    // a rate far above what it can send. It must say so.
    pin_to_cpu(0);
    let srv = Hostile::start(Trick::None);
    let stop = Arc::new(AtomicBool::new(false));
    let hogs: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                pin_to_cpu(1);
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let url = srv.url("/");
    let args = ["--rate", "2M", "-d", "2s", "-c", "64", &url];
    let mut text_args = vec!["load"];
    text_args.extend_from_slice(&args);
    let out = stampede_on(Some("1"), &text_args, Duration::from_secs(30));
    let json = load_json_on(Some("1"), &args, Duration::from_secs(30));
    // The epoll loop sleeps between its wake-ups as io_uring's does: a
    // starved one must say so too, and not pass its lag off as granularity.
    let epoll = load_json_on(Some("1"), &[&["--engine", "epoll"][..], &args[..]].concat(), Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    hogs.into_iter().for_each(|h| h.join().unwrap());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("SATURATED"), "the human output must say so:\n{text}");
    for json in [json, epoll] {
        assert_eq!(json["saturated"], true, "{json}");
        assert!(json["achieved_rate"].as_f64().unwrap() < 1_000_000.0);
        // Three hogs held its CPU: the reason says so, and does not call it
        // CPU-bound (more threads would not help it).
        let reason = json["saturation_reason"].as_str().unwrap();
        assert!(reason.contains("for a CPU other processes held"), "{reason}");
        assert!(!reason.contains("CPU-bound"), "{reason}");
        assert!(json["generator_cpu_wait"].as_f64().unwrap() >= 0.05, "{json}");
    }
}
