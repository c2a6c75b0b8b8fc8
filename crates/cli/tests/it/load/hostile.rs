//! The load engine against servers that misbehave on purpose
//! (`stampede_testkit::hostile`): split writes, early answers, silent closes, closes
//! behind pipelined requests, double answers, slow answers, a server
//! that does not speak the protocol asked for, and one that refuses every
//! connection after the pre-flight check. Every count is checked
//! against what the server saw, on both HTTP/1.1 engines, in closed and
//! open loop, pipelined, over HTTPS, and over HTTP/2 and HTTP/3. Each test
//! is named after the defect it guards against.

use stampede_testkit::hostile;
use stampede_testkit::load;
use stampede_testkit::proto;

use hostile::{Hostile, Seen, Trick};
use load::{load_json, load_json_any, stampede};
use proto::h2_server::{Behaviour, H2Server};
use proto::h3_server::{Behaviour as H3Behaviour, H3Server};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const ENGINES: [&str; 2] = ["epoll", "io-uring"];

/// A load on `engine`: its exit status says whether it stalled (checked).
fn load(engine: &str, args: &[&str], url: &str) -> serde_json::Value {
    let mut all = vec!["--engine", engine];
    all.extend_from_slice(args);
    all.push(url);
    load_json_any(&all, DEADLINE)
}

fn errors(r: &serde_json::Value) -> u64 {
    r["errors"].as_object().unwrap().iter().filter(|(k, _)| *k != "status").map(|(_, v)| v.as_u64().unwrap()).sum()
}

/// Regression (epoll): a head split across writes, followed by a read that
/// filled the buffer, was counted as a parse error.
#[test]
fn split_heads_and_split_chunk_lines_are_responses_on_every_engine_and_mode() {
    let gap = Duration::from_millis(20);
    for trick in [Trick::SplitHead { gap }, Trick::SplitChunkLine { gap }] {
        for engine in ENGINES {
            let srv = Hostile::start(trick);
            let r = load(engine, &["-n", "30", "-c", "2"], &srv.url("/"));
            assert_eq!(
                (r["requests"].as_u64(), errors(&r)),
                (Some(30), 0),
                "{trick:?} {engine} closed: {}",
                r["errors"]
            );
            assert_eq!(srv.get(|s: &Seen| &s.responses), 30, "{trick:?} {engine}");

            let srv = Hostile::start(trick);
            let r = load(engine, &["-n", "40", "-c", "1", "--pipeline", "4"], &srv.url("/"));
            assert_eq!(
                (r["requests"].as_u64(), errors(&r)),
                (Some(40), 0),
                "{trick:?} {engine} pipelined: {}",
                r["errors"]
            );

            let srv = Hostile::start(trick);
            let r = load(engine, &["--rate", "20", "-d", "1s", "-c", "2", "--max-connections", "8"], &srv.url("/"));
            assert_eq!(errors(&r), 0, "{trick:?} {engine} open: {}", r["errors"]);
            assert_eq!(r["requests"].as_u64(), Some(srv.get(|s: &Seen| &s.responses)), "{trick:?} {engine} open");
        }
    }
}

/// Regression (io_uring): when a server answered before a large body was
/// written and the connection was replaced, the rest of the old body was
/// sent first on the new connection.
#[test]
fn an_early_answer_never_sends_the_rest_of_the_old_request_on_a_new_connection() {
    let body = std::env::temp_dir().join(format!("stampede-hostile-body-{}", std::process::id()));
    std::fs::write(&body, vec![b'b'; 8 << 20]).unwrap();
    for engine in ENGINES {
        let srv = Hostile::start(Trick::EarlyAnswer);
        let r = load(
            engine,
            &["-m", "POST", "--body-file", body.to_str().unwrap(), "-c", "1", "-d", "1s", "--timeout", "1s"],
            &srv.url("/"),
        );
        let connections = srv.get(|s: &Seen| &s.connections);
        assert!(connections >= 2, "{engine}: {connections} connections");
        assert_eq!(srv.get(|s: &Seen| &s.bad_starts), 0, "{engine}: a connection began with old bytes");
        assert!(r["requests"].as_u64().unwrap() >= 1, "{engine}: {r}");
        assert_eq!(r["status_codes"]["200"], r["requests"], "{engine}");
    }
    let _ = std::fs::remove_file(&body);
}

/// Regression (epoll): a pipelined batch larger than the socket buffers
/// deadlocked (the server stopped reading while its answers went unread).
/// And a batch behind a closing response is sent again, not counted as
/// millions of read errors, and never leaks onto the next connection.
#[test]
fn deep_pipelines_finish_and_requests_behind_a_close_are_sent_again() {
    for engine in ENGINES {
        let srv = Hostile::start(Trick::None);
        let r = load(engine, &["-n", "40000", "-c", "1", "--pipeline", "20000", "--timeout", "20s"], &srv.url("/"));
        assert_eq!((r["requests"].as_u64(), errors(&r)), (Some(40000), 0), "{engine}: {}", r["errors"]);
        assert_eq!(srv.get(|s: &Seen| &s.requests), 40000, "{engine}");

        let srv = Hostile::start(Trick::CloseAfter(100));
        let r = load(engine, &["-n", "3000", "-c", "1", "--pipeline", "1000", "--timeout", "20s"], &srv.url("/"));
        assert_eq!((r["requests"].as_u64(), errors(&r)), (Some(3000), 0), "{engine}: {}", r["errors"]);
        assert_eq!(srv.get(|s: &Seen| &s.responses), 3000, "{engine}: every request was answered once");
        assert_eq!(r["reconnects"], 30, "{engine}");
        assert_eq!(srv.get(|s: &Seen| &s.bad_starts), 0, "{engine}");
    }
}

/// A server that closes after every response without `Connection: close`:
/// the next request, sent before the close was seen, is sent again on a new
/// connection. Reconnects, not read errors.
#[test]
fn a_server_closing_after_every_response_costs_reconnects_not_errors() {
    for engine in ENGINES {
        let srv = Hostile::start(Trick::CloseSilently);
        let r = load(engine, &["-n", "300", "-c", "4"], &srv.url("/"));
        assert_eq!((r["requests"].as_u64(), errors(&r)), (Some(300), 0), "{engine}: {}", r["errors"]);
        assert_eq!(srv.get(|s: &Seen| &s.responses), 300, "{engine}");
        assert!(r["reconnects"].as_u64().unwrap() >= 296, "{engine}: {}", r["reconnects"]);
    }
    // A method that is not idempotent is never sent twice: it is an error.
    let srv = Hostile::start(Trick::CloseSilently);
    let r = load("epoll", &["-m", "POST", "--body", "x", "-n", "50", "-c", "1"], &srv.url("/"));
    assert_eq!(srv.get(|s: &Seen| &s.requests), r["requests"].as_u64().unwrap(), "{r}");
}

/// Connection churn (`--requests-per-connection`, HttpArena's `-r`): each
/// connection serves N responses and is replaced by a new one, on both
/// engines; the replacements are neither reconnects nor errors, and none is
/// opened when nothing is left to send. Without the flag, one connection.
/// The server also counts the one connection the run opens and closes first
/// to check the port (`Target::preflight`).
#[test]
fn requests_per_connection_replaces_each_connection_after_n_responses() {
    for engine in ENGINES {
        let srv = Hostile::start(Trick::None);
        let r = load(engine, &["-n", "100", "-c", "1", "--requests-per-connection", "10"], &srv.url("/"));
        let counts = (r["requests"].as_u64(), errors(&r), r["reconnects"].as_u64());
        assert_eq!(counts, (Some(100), 0, Some(0)), "{engine}: {r}");
        assert_eq!(r["requests_per_connection"], 10, "{engine}: the result says how it was made");
        assert_eq!(srv.get(|s: &Seen| &s.connections), 1 + 10, "{engine}");
        assert_eq!(srv.get(|s: &Seen| &s.responses), 100, "{engine}");
    }
    // Open loop: every 10 responses a new connection, none counted a reconnect.
    let srv = Hostile::start(Trick::None);
    let r = load("epoll", &["-R", "200", "-d", "1s", "-c", "1", "--requests-per-connection", "10"], &srv.url("/"));
    let (requests, connections) = (r["requests"].as_u64().unwrap(), srv.get(|s: &Seen| &s.connections) - 1);
    assert_eq!((errors(&r), r["reconnects"].as_u64()), (0, Some(0)), "{r}");
    assert!(requests >= 100 && connections.abs_diff(requests.div_ceil(10)) <= 1, "{connections} for {requests}");
    let srv = Hostile::start(Trick::None);
    let r = load("epoll", &["-n", "100", "-c", "1"], &srv.url("/"));
    assert_eq!((r["requests"].as_u64(), srv.get(|s: &Seen| &s.connections)), (Some(100), 1 + 1), "{r}");
    let out = stampede(&["load", "--http2", "--requests-per-connection", "5", "-n", "1", &srv.url("/")], DEADLINE);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--requests-per-connection churns HTTP/1.1 connections only"), "{stderr}");
}

/// Regression: two answers to one request made the valid first one a parse
/// error. The first counts; the extra bytes are the error.
#[test]
fn a_second_answer_to_one_request_is_one_parse_error_and_the_first_counts() {
    for engine in ENGINES {
        let srv = Hostile::start(Trick::TwoAnswers);
        let r = load(engine, &["-n", "20", "-c", "1"], &srv.url("/"));
        assert_eq!(r["requests"], 20, "{engine}: {r}");
        assert_eq!(r["status_codes"]["200"], 20, "{engine}");
        assert_eq!(r["errors"]["parse"], 20, "{engine}: {}", r["errors"]);
    }
}

/// Regression (open loop): requests in flight when the duration ended were
/// dropped uncounted, and they are the slowest of the run.
#[test]
fn open_loop_waits_for_the_requests_in_flight_at_the_end() {
    for engine in ENGINES {
        let srv = Hostile::start(Trick::Delay(Duration::from_millis(300)));
        let r = load(
            engine,
            &["--rate", "40", "-d", "1s", "-c", "16", "--max-connections", "64", "--timeout", "3s"],
            &srv.url("/"),
        );
        let answered = srv.get(|s: &Seen| &s.responses);
        assert_eq!(errors(&r), 0, "{engine}: {}", r["errors"]);
        assert_eq!(r["requests"].as_u64(), Some(answered), "{engine}: every answer the server wrote is counted");
        assert_eq!(srv.get(|s: &Seen| &s.requests), answered, "{engine}");
        assert!(r["latency_us"]["max"].as_f64().unwrap() >= 300_000.0, "{engine}: {}", r["latency_us"]);
    }
    // Past --timeout, what is still owed is a timeout, not lost.
    let srv = Hostile::start(Trick::Delay(Duration::from_millis(800)));
    let r = load("io-uring", &["--rate", "20", "-d", "1s", "-c", "32", "--timeout", "300ms"], &srv.url("/"));
    let sent = r["requests"].as_u64().unwrap() + r["errors"]["timeout"].as_u64().unwrap();
    assert!(r["errors"]["timeout"].as_u64().unwrap() >= 15, "{}", r["errors"]);
    assert!((18..=22).contains(&sent), "every scheduled request is a response or a timeout: {sent}");
}

/// An open loop's schedule waits for a connection to open
/// (serial/load/setup.rs), but not for connections refused: the port
/// refuses every one after the pre-flight check, and the schedule begins
/// once they failed, well before its `--timeout` bound; each is a connect
/// error, every request due from then on is counted never sent, and the
/// run ends (at its end plus the `--timeout` drain), on both engines and
/// over HTTPS.
#[test]
fn an_open_loop_against_a_port_that_refuses_its_connections_begins_and_ends() {
    let certs = proto::Certs::generate();
    let tls = Hostile::start_tls(Trick::GoneAfter(1), certs.server_config(&[]));
    let runs = ENGINES.map(|engine| (engine, Hostile::start(Trick::GoneAfter(1))));
    for (engine, srv) in runs.iter().map(|(e, s)| (*e, s)).chain([("epoll", &tls)]) {
        let mut args = vec!["--rate", "100", "-d", "1s", "-c", "2", "--timeout", "3s"];
        if srv.url("/").starts_with("https") {
            args.push("--insecure");
        }
        let r = load(engine, &args, &srv.url_at("127.0.0.1"));
        assert_eq!(r["requests"], 0, "{engine}");
        assert!(r["errors"]["connect"].as_u64().unwrap() > 0, "{engine}: {}", r["errors"]);
        let began = r["schedule_start_ms"].as_f64().unwrap();
        assert!(began < 1500.0, "{engine}: the schedule waited {began} ms for connections refused");
        assert!(r["never_sent"].as_u64().unwrap() > 0, "{engine}: the requests due were counted: {r}");
    }
}

/// Regression: `--http2` against a server that speaks only HTTP/1.1
/// reported success (0 requests, no errors, GOAWAYs never sent), and never
/// ended with `-n`.
#[test]
fn http2_against_an_http1_server_is_one_line_and_exit_2() {
    let srv = Hostile::start(Trick::None);
    for stop in [["-n", "10"], ["-d", "1s"]] {
        let out = stampede(&["load", "--http2", stop[0], stop[1], &srv.url("/")], DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("does not speak HTTP/2") && err.contains("--http2"), "{err}");
    }
}

/// Regression: an HTTP/2 request that timed out left its connection in use,
/// although `--timeout` documents that the connection is reopened.
#[test]
fn an_http2_timeout_reopens_the_connection() {
    let srv = H2Server::start(Behaviour::Silent, None);
    let r = load_json_any(
        &["--http2", "-c", "1", "--streams", "2", "-d", "1s", "--timeout", "200ms", &srv.url("http")],
        DEADLINE,
    );
    let timeouts = r["errors"]["timeout"].as_u64().unwrap();
    let connections = srv.counts.connections.load(std::sync::atomic::Ordering::Relaxed);
    assert!(timeouts >= 4, "{}", r["errors"]);
    assert!(connections >= timeouts / 2, "{connections} connections for {timeouts} timeouts");
    assert_eq!(r["http2"]["goaway"], 0, "no GOAWAY was sent: {}", r["http2"]);
    assert_eq!(r["errors"]["parse"], 0);
}

/// Every request a load sent ended as a response, an error counted against
/// it, or unanswered when the run ended (docs/load.md, "Accounting").
pub fn assert_adds_up(r: &serde_json::Value, what: &str) {
    let e = &r["errors"];
    let per_request = ["read", "write", "timeout", "parse"].iter().map(|k| e[k].as_u64().unwrap()).sum::<u64>();
    let ended = r["requests"].as_u64().unwrap() + per_request + r["unanswered"].as_u64().unwrap();
    assert_eq!(r["sent"].as_u64(), Some(ended), "{what}: sent = answered + errors + unanswered: {r}");
}

/// Regression: a server that answered for a while and then read nothing
/// read as a fast, valid run. In closed loop the requests still unanswered
/// at the end were counted nowhere; in open loop the requests that fell due
/// and were never sent were in no count and not in the latency; no field
/// said the server had stopped answering; and `stampede load` exited 0, so a
/// script checking its status took the hang for a measurement.
#[test]
fn a_server_that_stops_answering_leaves_every_request_counted_and_the_stall_said() {
    for engine in ENGINES {
        let srv = Hostile::start(Trick::HangAfter(Duration::from_millis(300)));
        let r = load(engine, &["-d", "2s", "-c", "4"], &srv.url("/"));
        assert_eq!(r["unanswered"], 4, "{engine} closed: the 4 requests in flight at the end: {r}");
        assert_adds_up(&r, engine);
        assert!(r["stalled"]["for_s"].as_f64().unwrap() >= 1.0, "{engine} closed: {}", r["stalled"]);
        assert!(r["latency_us"]["max"].as_f64().unwrap() >= 1e6, "{engine}: their age is in the latency");

        let srv = Hostile::start(Trick::HangAfter(Duration::from_millis(300)));
        let r = load(engine, &["--rate", "200", "-d", "2s", "-c", "4", "--timeout", "1s"], &srv.url("/"));
        let (sent, never) = (r["sent"].as_u64().unwrap(), r["never_sent"].as_u64().unwrap());
        assert!(never > 0, "{engine} open: {r}");
        let due = load::due(&r, 200.0, 2.0);
        assert!(due.contains(&(sent + never)), "{engine} open: due {due:?} = sent + never sent: {sent} + {never}");
        assert_adds_up(&r, engine);
        assert!(r["stalled"]["for_s"].as_f64().unwrap() >= 1.0, "{engine} open: {}", r["stalled"]);
        assert!(r["latency_us"]["max"].as_f64().unwrap() >= 1e6, "{engine}: never sent, in the latency");
        let out = stampede(&["load", "--engine", engine, "-d", "2s", "-c", "2", &srv.url("/")], DEADLINE);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("STALLED: the server stopped answering") && text.contains("Unanswered"), "{text}");
        assert_eq!(out.status.code(), Some(1), "{engine}: a stalled run exits 1, its text printed");
    }
    // A server that answers: no stall, exit 0, and the counts add up all the same.
    for engine in ENGINES {
        let srv = Hostile::start(Trick::None);
        let r = load(engine, &["-d", "1s", "-c", "4"], &srv.url("/"));
        assert!(r.get("stalled").is_none(), "{engine}: {}", r["stalled"]);
        let out = stampede(&["load", "--engine", engine, "-d", "1s", "-c", "2", &srv.url("/")], DEADLINE);
        assert_eq!(out.status.code(), Some(0), "{engine}: {}", String::from_utf8_lossy(&out.stdout));
        assert!(r["unanswered"].as_u64().unwrap() <= 4, "{engine}: {r}");
        assert_adds_up(&r, engine);
    }
}

/// The same over HTTPS (HTTP/1.1 on TLS, its own engine): a TLS server
/// that answers for 300 ms and then reads nothing leaves its requests
/// counted in closed and open loop, the stall said, and exit 1; a TLS
/// server that answers exits 0 with no stall.
#[test]
fn an_https_server_that_stops_answering_leaves_every_request_counted_and_the_stall_said() {
    let certs = proto::Certs::generate();
    let ca = certs.ca_file("hostile-https");
    let ca = ca.to_str().unwrap();
    let start = |trick| Hostile::start_tls(trick, certs.server_config(&[]));
    let hang = Trick::HangAfter(Duration::from_millis(300));

    let srv = start(hang);
    let r = load_json_any(&["--ca", ca, "-d", "2s", "-c", "4", &srv.url("/")], DEADLINE);
    assert_eq!((r["unanswered"].as_u64(), r["tls"].is_object()), (Some(4), true), "closed: {r}");
    assert_adds_up(&r, "https closed");
    assert!(r["stalled"]["for_s"].as_f64().unwrap() >= 1.0, "closed: {}", r["stalled"]);
    assert!(r["latency_us"]["max"].as_f64().unwrap() >= 1e6, "closed: their age is in the latency");

    let srv = start(hang);
    let open = ["--ca", ca, "--rate", "200", "-d", "2s", "-c", "4", "--timeout", "1s", &srv.url("/")];
    let r = load_json_any(&open, DEADLINE);
    let (sent, never) = (r["sent"].as_u64().unwrap(), r["never_sent"].as_u64().unwrap());
    let due = load::due(&r, 200.0, 2.0);
    assert!(never > 0 && due.contains(&(sent + never)), "open: due {due:?} = sent + never sent: {sent} + {never}: {r}");
    assert_adds_up(&r, "https open");
    assert!(r["stalled"]["for_s"].as_f64().unwrap() >= 1.0, "open: {}", r["stalled"]);
    assert!(r["latency_us"]["max"].as_f64().unwrap() >= 1e6, "open: never sent, in the latency");

    let srv = start(hang);
    let out = stampede(&["load", "--ca", ca, "-d", "2s", "-c", "2", &srv.url("/")], DEADLINE);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("STALLED: the server stopped answering") && text.contains("Unanswered"), "{text}");
    assert_eq!(out.status.code(), Some(1), "a stalled run exits 1, its text printed");

    let srv = start(Trick::None);
    let r = load_json(&["--ca", ca, "-d", "1s", "-c", "4", &srv.url("/")], DEADLINE);
    assert!(r.get("stalled").is_none() && r["requests"].as_u64().unwrap() > 0, "{r}");
    assert_adds_up(&r, "https healthy");
}

/// The same over HTTP/2 (cleartext and TLS): streams the server holds
/// unanswered are counted at the end, never-sent ones in open loop, and
/// the stall is said.
#[test]
fn an_http2_server_that_stops_answering_leaves_every_stream_counted() {
    let certs = proto::Certs::generate();
    let ca = certs.ca_file("hostile-h2");
    for tls in [false, true] {
        let config = tls.then(|| certs.server_config(&[b"h2"]));
        let srv = H2Server::start(Behaviour::SilentAfter(50), config);
        let url = srv.url(if tls { "https" } else { "http" });
        let mut closed = vec!["--http2", "-c", "1", "--streams", "4", "-d", "2s", &url];
        if tls {
            closed.extend(["--ca", ca.to_str().unwrap()]);
        }
        let r = load_json_any(&closed, DEADLINE);
        assert_eq!(r["unanswered"], 4, "tls {tls}: {r}");
        assert_adds_up(&r, "h2 closed");
        assert!(r["stalled"]["for_s"].as_f64().unwrap() >= 1.0, "tls {tls}: {}", r["stalled"]);
        let srv2 = H2Server::start(Behaviour::SilentAfter(50), tls.then(|| certs.server_config(&[b"h2"])));
        let url2 = srv2.url(if tls { "https" } else { "http" });
        let mut open = closed.clone();
        open[7] = &url2;
        open.extend(["--rate", "200", "--timeout", "3s"]);
        let r = load_json_any(&open, DEADLINE);
        let (sent, never) = (r["sent"].as_u64().unwrap(), r["never_sent"].as_u64().unwrap());
        let due = load::due(&r, 200.0, 2.0);
        assert!(never > 0 && due.contains(&(sent + never)), "tls {tls} open: due {due:?}, {sent} + {never}: {r}");
        assert_adds_up(&r, "h2 open");
        assert!(r["stalled"].is_object(), "tls {tls} open: {r}");
    }
}

/// Regression: after a GOAWAY whose last-stream-id covered the streams in
/// flight, the connection's close sent them again, POST included: the
/// server saw more POSTs than Stampede counted, and no error. Streams at or
/// below last-stream-id may have been processed (RFC 9113 §6.8): only an
/// idempotent request is sent again; any other is an error.
#[test]
fn after_a_goaway_only_idempotent_requests_the_server_may_have_processed_are_sent_again() {
    let srv = H2Server::start(Behaviour::DropAfterGoaway(4), None);
    let url = srv.url("http");
    let r =
        load_json(&["--http2", "-c", "1", "--streams", "4", "-n", "40", "-m", "POST", "--body", "x", &url], DEADLINE);
    let seen = srv.counts.requests.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(seen, 40, "no POST was sent twice: {r}");
    assert_eq!((r["requests"].as_u64(), r["errors"]["read"].as_u64()), (Some(36), Some(4)), "{r}");
    assert_adds_up(&r, "POST after GOAWAY");

    let srv = H2Server::start(Behaviour::DropAfterGoaway(4), None);
    let r = load_json(&["--http2", "-c", "1", "--streams", "4", "-n", "40", &srv.url("http")], DEADLINE);
    assert_eq!((r["requests"].as_u64(), errors(&r)), (Some(40), 0), "GETs are sent again: {r}");
    assert_eq!(srv.counts.requests.load(std::sync::atomic::Ordering::Relaxed), 44);
}

/// Regression: endless CONTINUATION frames grew the header block without
/// limit (4.9 GB in 3 s, then an abort and no result). A header block over
/// 64 KiB is a malformed response: counted, the connection closed.
#[test]
fn an_endless_http2_header_block_is_an_error_not_memory() {
    let srv = Hostile::start(Trick::ContinuationFlood);
    let r = load_json(&["--http2", "-c", "2", "-d", "1s", &srv.url("/")], DEADLINE);
    assert!(r["errors"]["parse"].as_u64().unwrap() > 0, "{}", r["errors"]);
    assert_eq!(r["requests"], 0);
}

/// Regression: a server advertising SETTINGS_MAX_CONCURRENT_STREAMS 0
/// stalled the run at a few requests per second with no word, and over TLS
/// it was only a count of parse errors. Cleartext and TLS alike: one line
/// before the run, exit 2; the same server allowing streams runs.
#[test]
fn an_http2_server_that_allows_no_streams_is_said() {
    let certs = proto::Certs::generate();
    let ca = certs.ca_file("no-streams");
    let ca = ca.to_str().unwrap();
    for tls in [false, true] {
        let config = tls.then(|| certs.server_config(&[b"h2"]));
        let (scheme, trust) = if tls { ("https", vec!["--ca", ca]) } else { ("http", vec![]) };
        let srv = H2Server::start(Behaviour::NoStreams, config);
        let url = srv.url(scheme);
        let out = stampede(&[&["load", "--http2", "-d", "1s"][..], &trust, &[&url]].concat(), DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{scheme}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{scheme}: {err}");
        assert!(err.contains("SETTINGS_MAX_CONCURRENT_STREAMS 0"), "{scheme}: {err}");
        assert_eq!(srv.counts.requests.load(std::sync::atomic::Ordering::Relaxed), 0, "{scheme}");

        let config = tls.then(|| certs.server_config(&[b"h2"]));
        let srv = H2Server::start(Behaviour::Ok, config);
        let url = srv.url(scheme);
        let r = load_json(&[&["--http2", "-n", "20"][..], &trust, &[&url]].concat(), DEADLINE);
        assert_eq!(r["requests"], 20, "{scheme}: {}", r["errors"]);
    }
}

/// HTTP/3 load flags against `srv` (trusting any certificate), then `more`.
fn h3_args<'a>(srv: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    [&["--http3", "-k"][..], more, &[srv]].concat()
}

/// Regression: a GOAWAY on an HTTP/3 control stream went unread, so new
/// requests kept going to a server that was leaving, and a connection
/// closed after it lost POSTs the server may have processed or not alike.
/// Requests on streams at or above the GOAWAY's id were never processed:
/// sent again; the others, lost with the close, only when idempotent
/// (RFC 9114 §5.2, the rule HTTP/2 follows).
#[test]
fn after_an_http3_goaway_only_idempotent_requests_the_server_may_have_processed_are_sent_again() {
    let certs = proto::Certs::generate();
    let srv = H3Server::start(H3Behaviour::GoawayAfter(4), certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let post = ["-c", "1", "--streams", "4", "-n", "40", "-m", "POST", "--body", "x"];
    let r = load_json(&h3_args(&url, &post), DEADLINE);
    let processed = srv.counts.requests.load(std::sync::atomic::Ordering::Relaxed)
        + srv.counts.held.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(srv.counts.goaways.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(processed, 40, "no POST was processed twice: {r}");
    assert_eq!((r["requests"].as_u64(), r["errors"]["read"].as_u64()), (Some(38), Some(2)), "{r}");
    assert_eq!(r["http3"]["goaway"], 1, "{r}");
    assert_adds_up(&r, "h3 POST after GOAWAY");

    let srv = H3Server::start(H3Behaviour::GoawayAfter(4), certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let r = load_json(&h3_args(&url, &["-c", "1", "--streams", "4", "-n", "40"]), DEADLINE);
    assert_eq!((r["requests"].as_u64(), errors(&r)), (Some(40), 0), "GETs are sent again: {r}");
    assert_eq!(srv.counts.requests.load(std::sync::atomic::Ordering::Relaxed), 40);
    assert_eq!(srv.counts.held.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(r["http3"]["goaway"], 1, "{r}");
}

/// A graceful GOAWAY every 10 requests, as nginx sends at
/// `keepalive_requests`, with the connection held open: the requests it
/// covers are answered, none goes on that connection after it, and the
/// client reopens it itself. Every request answered once, no error.
#[test]
fn a_graceful_http3_goaway_costs_a_reconnect_not_a_request() {
    let certs = proto::Certs::generate();
    let srv = H3Server::start(H3Behaviour::GracefulGoaway(10), certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let r = load_json(&h3_args(&url, &["-c", "1", "-n", "50"]), DEADLINE);
    assert_eq!((r["requests"].as_u64(), errors(&r)), (Some(50), 0), "{r}");
    assert_eq!(srv.counts.requests.load(std::sync::atomic::Ordering::Relaxed), 50, "each answered once");
    let goaways = r["http3"]["goaway"].as_u64().unwrap();
    assert!((4..=5).contains(&goaways), "the last may come after the last answer: {r}");
    assert!(r["reconnects"].as_u64().unwrap() >= 4, "{r}");
}

/// A HEADERS frame that claims a gigabyte is a malformed response at once
/// (over 64 KiB, the limit of every protocol): counted, the stream given
/// up, no memory spent on it.
#[test]
fn an_endless_http3_header_block_is_an_error_not_memory() {
    let certs = proto::Certs::generate();
    let srv = H3Server::start(H3Behaviour::EndlessHeaders, certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let r = load_json_any(&h3_args(&url, &["-c", "2", "-d", "1s"]), DEADLINE);
    assert!(r["errors"]["parse"].as_u64().unwrap() > 0, "{}", r["errors"]);
    assert_eq!(r["requests"], 0);
}

/// Regression: an HTTP/3 server whose transport parameters allow no
/// bidirectional stream stalled the run with no word. One line before the
/// run, exit 2, as over HTTP/2; the same server allowing streams runs.
#[test]
fn an_http3_server_that_allows_no_streams_is_said() {
    let certs = proto::Certs::generate();
    let srv = H3Server::start(H3Behaviour::NoStreams, certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let out = stampede(&[&["load"][..], &h3_args(&url, &["-d", "1s"])].concat(), DEADLINE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("allows no streams (initial_max_streams_bidi 0)") && err.contains("--http3"), "{err}");

    let srv = H3Server::start(H3Behaviour::Ok, certs.server_config(&[b"h3"]));
    let url = srv.url("/");
    let r = load_json(&h3_args(&url, &["-n", "20"]), DEADLINE);
    assert_eq!(r["requests"], 20, "{}", r["errors"]);
}
