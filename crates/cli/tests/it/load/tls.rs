//! `stampede load https://…` through the real binary against a rustls server
//! whose CA and certificate are generated in the test: exact counts, the
//! handshake timed apart from request latency, sessions resumed on
//! reconnect, an untrusted certificate refused as one clear error, and
//! handshake failures during a run counted in their own category.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load;
use stampede_testkit::proto;

use load::{load_json, stampede};
use proto::Certs;
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn https_with_ca_counts_exactly_and_times_handshakes_apart() {
    let certs = Certs::generate();
    let srv = Hostile::start_tls(Trick::None, certs.server_config(&[b"http/1.1"]));
    let ca = certs.ca_file("exact");
    // By name, so SNI and the name check are exercised.
    let r = load_json(
        &["-n", "3000", "-c", "4", "-t", "2", "--ca", ca.to_str().unwrap(), &srv.url_at("localhost")],
        DEADLINE,
    );
    assert_eq!(r["requests"], 3000, "{}", r["errors"]);
    assert_eq!(srv.requests.load(Ordering::Relaxed), 3000);
    assert_eq!(r["errors"]["tls"], 0);
    // One per connection (a connection still handshaking when -n is used up
    // is not counted); the pre-flight check is never measured.
    let handshakes = r["tls"]["handshakes"].as_u64().unwrap();
    assert!((1..=4).contains(&handshakes), "{handshakes}");
    let server_saw = srv.handshakes.load(Ordering::Relaxed);
    assert!(server_saw > handshakes && server_saw <= 5, "server {server_saw}, client {handshakes}");
    assert_eq!(r["tls"]["alpn"], "http/1.1");
    let hs = &r["tls_handshake_us"];
    assert!(hs["p50"].as_f64().unwrap() > 0.0 && hs["max"].as_f64().unwrap() < 5e6, "{hs}");
    // The bytes counted are the decrypted responses, byte for byte.
    assert_eq!(r["bytes_read"], 3000 * stampede_testkit::hostile::OK.len());
    proto::assert_documented(&r);
    let _ = std::fs::remove_file(ca);
}

#[test]
fn reconnects_resume_the_tls_session() {
    let certs = Certs::generate();
    let srv = Hostile::start_tls(Trick::CloseAfter(10), certs.server_config(&[]));
    let r = load_json(&["-n", "400", "-c", "1", "--insecure", &srv.url_at("127.0.0.1")], DEADLINE);
    assert_eq!(r["requests"], 400);
    assert_eq!(r["reconnects"], 40, "the server closes every 10th response");
    let (handshakes, resumed) = (r["tls"]["handshakes"].as_u64().unwrap(), r["tls"]["resumed"].as_u64().unwrap());
    // The first connection and 39 reconnects; the run ends before the 40th handshakes.
    assert_eq!(handshakes, 40);
    assert!(resumed >= 39, "reconnects resume the session: {resumed} of {handshakes}");
    assert!(srv.resumed.load(Ordering::Relaxed) >= 39, "the server agrees");
    assert_eq!(r["tls"]["alpn"], serde_json::Value::Null, "the server picked no ALPN protocol");
}

#[test]
fn untrusted_certificate_is_one_clear_error_and_insecure_accepts_it() {
    let certs = Certs::generate();
    let srv = Hostile::start_tls(Trick::None, certs.server_config(&[]));
    let url = srv.url_at("127.0.0.1");
    let out = stampede(&["load", "-d", "1s", &url], DEADLINE);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&url) && err.contains("certificate") && err.contains("--insecure") && err.contains("--ca"),
        "{err}"
    );
    assert_eq!(srv.requests.load(Ordering::Relaxed), 0);

    let r = load_json(&["-n", "200", "-c", "2", "--insecure", &url], DEADLINE);
    assert_eq!(r["requests"], 200);
}

#[test]
fn pipelining_over_tls_counts_exactly() {
    let certs = Certs::generate();
    let srv = Hostile::start_tls(Trick::None, certs.server_config(&[]));
    let r = load_json(&["-n", "1600", "-c", "2", "--pipeline", "8", "-k", &srv.url_at("127.0.0.1")], DEADLINE);
    assert_eq!(r["requests"], 1600, "{}", r["errors"]);
    assert_eq!(srv.requests.load(Ordering::Relaxed), 1600);
}

#[test]
fn handshake_failures_during_the_run_are_their_own_error_category() {
    // The pre-flight handshake succeeds; every later connection gets cleartext.
    let certs = Certs::generate();
    let srv = Hostile::start_tls(Trick::PlainAfter(1), certs.server_config(&[]));
    let r = load_json(&["-d", "1s", "-c", "2", "-k", "--timeout", "500ms", &srv.url_at("127.0.0.1")], DEADLINE);
    assert_eq!(r["requests"], 0);
    let tls = r["errors"]["tls"].as_u64().unwrap();
    assert!(tls >= 2, "{}", r["errors"]);
    assert_eq!(r["errors"]["parse"], 0, "not counted as malformed HTTP: {}", r["errors"]);
}

#[test]
fn https_to_a_cleartext_port_is_one_clear_error() {
    let srv = Hostile::start(Trick::None);
    let url = format!("https://{}/", srv.addr);
    let out = stampede(&["load", "-d", "1s", "-k", "--timeout", "500ms", &url], DEADLINE);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&url) && err.contains("use http://"), "{err}");
    assert_eq!(srv.requests.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[test]
fn bad_tls_flags_exit_2_naming_the_flag() {
    let certs = Certs::generate();
    let srv = Hostile::start_tls(Trick::None, certs.server_config(&[]));
    let missing = std::env::temp_dir().join("stampede-no-such-ca.pem");
    let notpem = std::env::temp_dir().join(format!("stampede-test-{}-notpem.pem", std::process::id()));
    std::fs::write(&notpem, "not a certificate").unwrap();
    let url = srv.url_at("127.0.0.1");
    for (args, needle) in [
        (vec!["load", "-d", "1s", "--ca", missing.to_str().unwrap(), url.as_str()], "--ca"),
        (vec!["load", "-d", "1s", "--ca", notpem.to_str().unwrap(), url.as_str()], "--ca"),
        (vec!["load", "-d", "1s", "--insecure", "http://127.0.0.1:1/"], "https://"),
        (vec!["load", "-d", "1s", "-k", "--alpn", "spdy/3", url.as_str()], "--alpn"),
    ] {
        let out = stampede(&args, DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_file(notpem);
}
