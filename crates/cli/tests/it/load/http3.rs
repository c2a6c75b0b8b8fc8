//! `stampede load --http3` through the real binary against a `quinn` + `h3`
//! server: exact counts with concurrent streams in closed and open loop,
//! per-target counts of a mix, a server that resets streams (each a `read`
//! error), one that closes its connections mid-run (in-flight requests
//! counted, connections reopened), and servers without HTTP/3 (nothing on
//! the UDP port, HTTP/2 only, QUIC without `h3` by ALPN): one line, exit 2.

use stampede_testkit::load;
use stampede_testkit::proto;

use load::{load_json, stampede};
use proto::h2_server::{Behaviour as H2Behaviour, H2Server};
use proto::h3_server::{Behaviour, H3Server};
use proto::Certs;
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn server(behaviour: Behaviour) -> (H3Server, Certs) {
    let certs = Certs::generate();
    (H3Server::start(behaviour, certs.server_config(&[b"h3"])), certs)
}

#[test]
fn closed_loop_counts_exactly_with_concurrent_streams() {
    let (srv, certs) = server(Behaviour::Ok);
    let ca = certs.ca_file("h3-closed");
    let url = srv.url("/");
    let r = load_json(
        &["-n", "3000", "-c", "2", "--http3", "--streams", "8", "--ca", ca.to_str().unwrap(), &url],
        DEADLINE,
    );
    assert_eq!(r["requests"], 3000, "{}", r["errors"]);
    assert_eq!(r["protocol"], "h3");
    assert_eq!(r["http3"]["streams"], 8);
    assert_eq!(r["status_codes"]["200"], 3000);
    assert_eq!(r["tls"]["alpn"], "h3");
    assert_eq!(srv.counts.requests.load(Ordering::Relaxed), 3000);
    // The two of -c, and the preflight's handshake.
    assert_eq!(srv.counts.connections.load(Ordering::Relaxed), 3);
    assert!(r["bytes_read"].as_u64().unwrap() > 3000 * 13, "datagrams are counted");
    proto::assert_documented(&r);
}

#[test]
fn open_loop_sends_every_scheduled_request_and_threads_split_the_run() {
    let (srv, _certs) = server(Behaviour::Ok);
    let url = srv.url("/");
    let r = load_json(
        &[
            "-n",
            "600",
            "-R",
            "1000",
            "--max-lag",
            "50ms",
            "-c",
            "2",
            "-t",
            "2",
            "--http3",
            "--streams",
            "4",
            "-k",
            &url,
        ],
        DEADLINE,
    );
    assert_eq!(r["mode"], "open");
    assert_eq!(r["requests"], 600, "{}", r["errors"]);
    assert_eq!(srv.counts.requests.load(Ordering::Relaxed), 600);
    assert!(r["service_time_us"]["p50"].as_f64().unwrap() > 0.0);
    proto::assert_documented(&r);
}

#[test]
fn a_mix_counts_each_target() {
    let (srv, _certs) = server(Behaviour::Ok);
    let urls = [srv.url("/a"), srv.url("/b")];
    let r = load_json(&["-n", "1000", "-c", "2", "--streams", "4", "--http3", "-k", &urls[0], &urls[1]], DEADLINE);
    assert_eq!(r["requests"], 1000, "{}", r["errors"]);
    let per: Vec<u64> = r["targets"].as_array().unwrap().iter().map(|t| t["requests"].as_u64().unwrap()).collect();
    assert_eq!(per, [500, 500]);
    assert_eq!(r["targets"][1]["name"], "GET /b");
    let paths = srv.counts.paths.lock().unwrap().clone();
    assert_eq!(paths.iter().filter(|p| *p == "/a").count(), 500, "the server saw each target's path");
    assert_eq!(paths.iter().filter(|p| *p == "/b").count(), 500);
}

#[test]
fn reset_streams_are_read_errors_and_cost_only_their_request() {
    let (srv, _certs) = server(Behaviour::ResetEvery(10));
    let r = load_json(&["-n", "1000", "-c", "1", "--streams", "4", "--http3", "-k", &srv.url("/")], DEADLINE);
    let resets = srv.counts.resets.load(Ordering::Relaxed);
    assert_eq!(resets, 100);
    assert_eq!(r["errors"]["read"], 100, "{}", r["errors"]);
    assert_eq!(r["http3"]["stream_resets"], 100);
    assert_eq!(r["requests"], 900);
    assert_eq!(r["reconnects"], 0, "a reset costs the stream, not the connection");
}

#[test]
fn connections_closed_mid_run_cost_their_requests_and_are_reopened() {
    let (srv, _certs) = server(Behaviour::CloseAfter(100));
    let r = load_json(&["-n", "1000", "-c", "2", "--streams", "4", "--http3", "-k", &srv.url("/")], DEADLINE);
    let errors = &r["errors"];
    let failed = errors["read"].as_u64().unwrap();
    assert_eq!(r["requests"].as_u64().unwrap() + failed, 1000, "every request answered or counted: {errors}");
    assert_eq!(errors["timeout"], 0, "{errors}");
    let reconnects = r["reconnects"].as_u64().unwrap();
    assert!(reconnects >= 1, "{r}");
    // Every reopening reached the server, plus -c and the preflight (the
    // last reopening may still be in its handshake when the run ends).
    let connections = srv.counts.connections.load(Ordering::Relaxed);
    assert!((2 + reconnects..=3 + reconnects).contains(&connections), "{connections} {reconnects}");
    // A response is counted once, and only if it arrived whole before the close.
    assert!(r["requests"].as_u64().unwrap() <= srv.counts.requests.load(Ordering::Relaxed));
}

#[test]
fn servers_without_http3_are_one_line_and_exit_2() {
    let certs = Certs::generate();
    // HTTP/2 over TLS on TCP, nothing on the UDP port of the same number.
    let h2 = H2Server::start(H2Behaviour::Ok, Some(certs.server_config(&[b"h2"])));
    let h2_url = format!("https://localhost:{}/", h2.addr.port());
    // QUIC, but only h2 offered by ALPN.
    let no_h3 = H3Server::start(Behaviour::Ok, certs.server_config(&[b"h2"]));
    let no_h3_url = no_h3.url("/");
    // Nothing at all on the port.
    let gone = format!("https://127.0.0.1:{}/", load::refused_port());
    for (url, needle) in [(&h2_url, "UDP"), (&no_h3_url, "h3 by ALPN"), (&gone, "UDP")] {
        let out = stampede(&["load", "-d", "1s", "--http3", "-k", url], DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert_eq!(err.lines().count(), 1, "{url}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{url}: {err}");
    }
    assert_eq!(h2.counts.requests.load(Ordering::Relaxed), 0);
    assert_eq!(no_h3.counts.requests.load(Ordering::Relaxed), 0);
}

#[test]
fn an_untrusted_certificate_or_a_cleartext_url_is_one_line_and_exit_2() {
    let (srv, _certs) = server(Behaviour::Ok);
    let url = srv.url("/");
    for (args, needle) in [
        (vec!["load", "-d", "1s", "--http3", url.as_str()], "--insecure"),
        (vec!["load", "-d", "1s", "--http3", "http://127.0.0.1:1/"], "https://"),
        (vec!["load", "-d", "1s", "--http3", "--http2", "https://127.0.0.1:1/"], "--http2"),
    ] {
        let out = stampede(&args, DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && !err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(srv.counts.requests.load(Ordering::Relaxed), 0);
}

/// Regression: requests a server held unanswered at the end of a run were
/// counted nowhere, due requests never sent were timeouts outside the
/// latency, and nothing said the server had stopped answering.
#[test]
fn an_http3_server_that_stops_answering_leaves_every_request_counted() {
    let (srv, certs) = server(Behaviour::SilentAfter(50));
    let ca = certs.ca_file("h3-silent");
    let url = srv.url("/");
    let closed = ["--http3", "-c", "1", "--streams", "4", "-d", "2s", "--ca", ca.to_str().unwrap(), &url];
    let r = load::load_json_any(&closed, DEADLINE);
    assert_eq!(r["unanswered"], 4, "{r}");
    super::hostile::assert_adds_up(&r, "h3 closed");
    assert!(r["stalled"]["for_s"].as_f64().unwrap() >= 1.0, "{}", r["stalled"]);
    proto::assert_documented(&r);

    let srv = H3Server::start(Behaviour::SilentAfter(50), certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let open = [&closed[..7], &["--rate", "200", "--timeout", "3s", "--ca", ca.to_str().unwrap(), &url]].concat();
    let r = load::load_json_any(&open, DEADLINE);
    let (sent, never) = (r["sent"].as_u64().unwrap(), r["never_sent"].as_u64().unwrap());
    let due = load::due(&r, 200.0, 2.0);
    assert!(never > 0 && due.contains(&(sent + never)), "due {due:?} = sent + never sent: {sent} + {never}: {r}");
    super::hostile::assert_adds_up(&r, "h3 open");
    assert!(r["stalled"].is_object(), "{r}");
}
