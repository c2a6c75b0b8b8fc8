//! `stampede load --http2` through the real binary against an `h2` server:
//! exact counts with concurrent streams, cleartext (prior knowledge) and TLS
//! (ALPN), a server that sends GOAWAY mid-run (counted and reconnected, no
//! request lost), streams reset by the server (counted), and open-loop mode
//! keeping its rate over HTTP/2 streams, and latencies that end at the
//! kernel's receive time no earlier than the server answered.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load;
use stampede_testkit::proto;

use load::{load_json, stampede};
use proto::h2_server::{Behaviour, H2Server};
use proto::Certs;
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn prior_knowledge_counts_exactly_with_concurrent_streams() {
    let srv = H2Server::start(Behaviour::Ok, None);
    let r = load_json(&["-n", "3000", "-c", "2", "--http2", "--streams", "10", &srv.url("http")], DEADLINE);
    assert_eq!(r["requests"], 3000, "{}", r["errors"]);
    assert_eq!(r["protocol"], "h2");
    assert_eq!(r["http2"]["streams"], 10);
    assert_eq!(r["status_codes"]["200"], 3000);
    assert_eq!(srv.counts.requests.load(Ordering::Relaxed), 3000);
    // The two of -c, and the one the preflight's PING used.
    assert_eq!(srv.counts.connections.load(Ordering::Relaxed), 3);
    let open = srv.counts.max_open_streams.load(Ordering::Relaxed);
    assert!((2..=10).contains(&open), "streams really run concurrently, never more than --streams: {open}");
    assert!(r["bytes_read"].as_u64().unwrap() > 3000 * 13, "frames and bodies are counted");
}

/// Responses read in batches end at the kernel's receive time, placed on the
/// generator's clock: never before the server could have answered. (With 4
/// connections x 8 streams the closed loop lets responses gather before it
/// wakes; a receive time placed on the wrong side of the send, or a clock
/// pair read apart, would show here as latencies under the server's delay.)
#[test]
fn latencies_end_at_receive_times_no_earlier_than_the_server_answered() {
    let delay = Duration::from_millis(3);
    let srv = H2Server::start(Behaviour::Delay(delay), None);
    let r = load_json(&["-n", "3000", "-c", "4", "--http2", "--streams", "8", &srv.url("http")], DEADLINE);
    assert_eq!(r["requests"], 3000, "{}", r["errors"]);
    let min_us = r["latency_us"]["min"].as_f64().unwrap();
    assert!(min_us >= delay.as_micros() as f64, "no response before the server's {delay:?}: min {min_us} us");
}

#[test]
fn alpn_picks_h2_over_tls() {
    let certs = Certs::generate();
    let srv = H2Server::start(Behaviour::Ok, Some(certs.server_config(&[b"h2", b"http/1.1"])));
    let ca = certs.ca_file("h2");
    let url = format!("https://localhost:{}/", srv.addr.port());
    let r = load_json(
        &["-n", "2000", "-c", "2", "--streams", "4", "--alpn", "h2,http/1.1", "--ca", ca.to_str().unwrap(), &url],
        DEADLINE,
    );
    assert_eq!(r["requests"], 2000, "{}", r["errors"]);
    assert_eq!(r["protocol"], "h2");
    assert_eq!(r["tls"]["alpn"], "h2");
    assert_eq!(r["tls"]["handshakes"], 2);
    assert!(r["tls_handshake_us"]["p50"].as_f64().unwrap() > 0.0);
    proto::assert_documented(&r);
    let _ = std::fs::remove_file(ca);
}

#[test]
fn goaway_mid_run_is_counted_and_reconnected_without_losing_requests() {
    // The server says GOAWAY after every 100 requests on a connection.
    let srv = H2Server::start(Behaviour::GoawayAfter(100), None);
    let r = load_json(&["-n", "2000", "-c", "1", "--http2", "--streams", "4", &srv.url("http")], DEADLINE);
    assert_eq!(r["requests"], 2000, "{}", r["errors"]);
    assert_eq!(r["errors"]["read"], 0, "a graceful GOAWAY loses nothing");
    let goaway = r["http2"]["goaway"].as_u64().unwrap();
    let sent = srv.counts.goaways.load(Ordering::Relaxed);
    assert!(goaway >= 19 && goaway <= sent, "{goaway} GOAWAY counted of {sent} sent");
    assert!(r["reconnects"].as_u64().unwrap() >= 19, "{}", r["reconnects"]);
    assert!(srv.counts.connections.load(Ordering::Relaxed) >= 20);
}

#[test]
fn streams_reset_by_the_server_are_counted() {
    // Every 10th stream on a connection is refused with RST_STREAM.
    let srv = H2Server::start(Behaviour::ResetEvery(10), None);
    let r = load_json(&["-n", "1000", "-c", "1", "--http2", "--streams", "4", &srv.url("http")], DEADLINE);
    assert_eq!(r["http2"]["rst_stream"], 100, "{r}");
    assert_eq!(r["errors"]["read"], 100);
    assert_eq!(r["requests"], 900);
    assert_eq!(r["reconnects"], 0, "a reset costs the stream, not the connection");
}

#[test]
fn open_loop_keeps_its_rate_over_http2_streams() {
    let srv = H2Server::start(Behaviour::Ok, None);
    // A generous --max-lag: the machine running the tests is shared.
    let r = load_json(
        &["-d", "2s", "-R", "2000", "--max-lag", "50ms", "-c", "2", "--http2", "--streams", "4", &srv.url("http")],
        DEADLINE,
    );
    assert_eq!(r["mode"], "open");
    let achieved = r["achieved_rate"].as_f64().unwrap();
    assert!((achieved - 2000.0).abs() < 100.0, "achieved {achieved}");
    let requests = r["requests"].as_f64().unwrap();
    assert!((requests - 4000.0).abs() < 200.0, "{requests}");
    assert_eq!(r["saturated"], false, "{}", r["saturation_reason"]);
    assert!(r["service_time_us"]["p50"].as_f64().unwrap() > 0.0);
    proto::assert_documented(&r);
}

#[test]
fn http2_flags_that_cannot_work_exit_2_with_one_line() {
    let certs = Certs::generate();
    let h1 = Hostile::start_tls(Trick::None, certs.server_config(&[b"http/1.1"]));
    let h1_url = h1.url_at("127.0.0.1");
    // Every error is one line, clap's usage errors included.
    for (args, needle, one_line) in [
        (vec!["load", "-d", "1s", "--http2", "-k", h1_url.as_str()], "ALPN", true),
        (vec!["load", "-d", "1s", "--streams", "4", "http://127.0.0.1:1/"], "--streams", true),
        (vec!["load", "-d", "1s", "--streams", "0", "--http2", "http://127.0.0.1:1/"], "--streams", true),
    ] {
        let out = stampede(&args, DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!one_line || err.lines().count() == 1, "{args:?}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(h1.requests.load(Ordering::Relaxed), 0);
}
