//! `stampede load --grpc` in open loop against a gRPC server that holds its
//! answers during a known stall of every period, so the true latency
//! distribution is computed by hand (open_loop.rs's formula): the calls'
//! p99 must be near it, measured from the intended send times, with the
//! slowest calls in the slow log. Timing against a computed truth: run alone
//! (tests/serial/).

use super::open_loop::hiccup_percentile;
use stampede_testkit::load::load_json;
use stampede_testkit::proto::grpc_server::{GrpcServer, Mode};
use std::time::Duration;

#[test]
fn open_loop_grpc_calls_see_the_stall_at_its_true_percentiles() {
    let _machine = crate::machine();
    let (stall, period) = (Duration::from_millis(100), Duration::from_secs(1));
    let srv = GrpcServer::start(Mode::Hiccup { stall, period });
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/../../contracts/grpc/bench.proto");
    let args = [
        "--proto",
        proto,
        "--call",
        "stampede.bench.v1.Bench/Unary",
        "--rate",
        "500",
        "-d",
        "8s",
        "-c",
        "2",
        "--streams",
        "64",
        "--slow-log",
        "10",
    ];
    let r = load_json(&[&args[..], &[&srv.target()]].concat(), Duration::from_secs(60));
    let ms = |f: &str| r["latency_us"][f].as_f64().unwrap() / 1000.0;
    let (truth_p99, truth_p999) = (hiccup_percentile(99.0, 100.0, 1000.0), hiccup_percentile(99.9, 100.0, 1000.0));
    assert_eq!(r["mode"], "open");
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], r["requests"], "every call OK: {}", r["grpc"]);
    assert!((ms("p99") - truth_p99).abs() / truth_p99 < 0.10, "p99 {:.1} ms vs true {truth_p99} ms", ms("p99"));
    assert!((ms("p999") - truth_p999).abs() / truth_p999 < 0.10, "p99.9 {:.1} ms vs true {truth_p999} ms", ms("p999"));
    assert!(ms("p50") < truth_p99 / 10.0, "calls outside the stall are answered at once: p50 {:.1} ms", ms("p50"));
    let slow = r["slow_requests"].as_array().unwrap();
    assert_eq!(slow.len(), 10);
    assert!(slow.iter().all(|s| s["latency_us"].as_f64().unwrap() > 90_000.0), "the slowest are the stalled");
}
