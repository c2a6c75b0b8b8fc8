//! An open loop's schedule begins once the thread has a connection open.
//! It used to begin as they started opening, so over TLS the first
//! requests fell due while every connection was still in its handshake;
//! latency runs from the intended send time, so they carried the
//! generator's own setup (up to 7 ms on a busy 2-core machine, and
//! `explain` named `connection_setup` on a quiet server). Here the server
//! delays every handshake by a known amount: that mistake would show as a
//! latency of at least that much, and as requests due during it.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load::load_json;
use stampede_testkit::proto::h2_server::{Behaviour, H2Server};
use stampede_testkit::proto::Certs;
use std::time::Duration;

const DELAY_MS: f64 = 400.0;
const RATE: f64 = 200.0;
const SECS: f64 = 2.0;

#[test]
fn first_requests_do_not_wait_for_the_tls_handshake_of_their_connection() {
    let _machine = crate::machine();
    let delay = Duration::from_secs_f64(DELAY_MS / 1e3);
    let certs = Certs::generate();
    let h1 = Hostile::start_tls(Trick::SlowStart(delay), certs.server_config(&[b"http/1.1"]));
    let h2 = H2Server::start(Behaviour::SlowStart(delay), Some(certs.server_config(&[b"h2"])));
    for (name, url, more) in [("HTTP/1.1", h1.url_at("127.0.0.1"), None), ("HTTP/2", h2.url("https"), Some("--http2"))]
    {
        // A lenient --max-lag, as in open_loop.rs: the verdict judged here
        // is the rate's, not a busy machine's scheduler.
        let (rate, secs) = (RATE.to_string(), format!("{SECS}s"));
        let mut args = vec!["--rate", &rate, "-d", &secs, "-c", "4", "-t", "2", "--max-lag", "20ms", "--insecure"];
        args.extend(more);
        args.push(&url);
        let r = load_json(&args, Duration::from_secs(60));
        assert_eq!(r["errors"]["tls"], 0, "{name}: {}", r["errors"]);
        assert_eq!(r["errors"]["connect"], 0, "{name}: {}", r["errors"]);
        assert_eq!(r["tls"]["handshakes"], 4, "{name}: one handshake a connection, none during the run");
        no_request_waited_for_its_handshake(name, &r);
    }
}

/// `r` began its schedule after the handshakes (and says so), no request's
/// latency holds one, nothing fell due during them, and the time spent on
/// them is no shortfall of rate. (The schedule begins with the thread's
/// first connection: a request may wait a moment for its second when the
/// first is busy, as `connecting` in the slow log, never for a whole
/// handshake from the start.)
fn no_request_waited_for_its_handshake(name: &str, r: &serde_json::Value) {
    let began = r["schedule_start_ms"].as_f64().unwrap();
    assert!(began >= DELAY_MS, "{name}: schedule began {began} ms in, before the {DELAY_MS} ms handshakes");
    let max_ms = r["latency_us"]["max"].as_f64().unwrap() / 1e3;
    assert!(max_ms < DELAY_MS / 2.0, "{name}: max latency {max_ms:.1} ms: a request waited for a handshake");
    // No burst owed at the start (each thread's schedule may round up by one).
    let requests = r["requests"].as_u64().unwrap() as f64;
    let most = RATE * (SECS - DELAY_MS / 1e3) + 2.0;
    assert!(requests <= most, "{name}: {requests} requests, at most {most} due once the connections were open");
    let achieved = r["achieved_rate"].as_f64().unwrap();
    assert!((achieved - RATE).abs() < RATE * 0.1, "{name}: achieved {achieved} of {RATE} req/s");
    // Not the rate verdict: the time connecting is no shortfall. (A busy
    // machine may still delay sends past --max-lag: true of that run.)
    let reason = r["saturation_reason"].as_str().unwrap_or_default();
    assert!(!reason.contains("req/s asked for"), "{name}: {reason}");
}
