//! `stampede load --pipeline N` through the real binary, against a server
//! that checks the client really pipelines (a whole batch arrives before any
//! answer) and never overruns its window, and that answers each batch in order
//! with a different status and framing per position.

use stampede_testkit::load;
use stampede_testkit::proto;

use load::{load_json, stampede};
use proto::pipeline_server::{Behaviour, PipelineServer};
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

#[test]
fn pipelined_batches_are_sent_whole_and_every_response_is_framed_in_order() {
    let srv = PipelineServer::start(8, Behaviour::InOrder);
    // 3 connections × batches of 8; 4,800 is a whole number of batches per connection thread.
    let r = load_json(&["-n", "4800", "-c", "3", "--pipeline", "8", &srv.url()], DEADLINE);
    assert_eq!(r["requests"], 4800, "{}", r["errors"]);
    assert_eq!(r["pipeline"], 8);
    assert_eq!(srv.requests.load(Ordering::Relaxed), 4800);
    assert_eq!(srv.overruns.load(Ordering::Relaxed), 0, "never more than --pipeline requests unanswered");
    assert_eq!(srv.full_batches.load(Ordering::Relaxed), 600, "every batch arrived whole before an answer");
    // Position k of a batch has its own status, so each status counts one per batch.
    for k in 0..8 {
        let code = proto::pipeline_server::status(k).to_string();
        assert_eq!(r["status_codes"][&code], 600, "status {code} in {}", r["status_codes"]);
    }
    assert_eq!(r["errors"]["parse"], 0);
    assert_eq!(r["errors"]["read"], 0);
    // Bytes: one batch's responses, 600 times.
    let batch: usize = (0..8).map(|k| proto::pipeline_server::response(k, false).len()).sum();
    assert_eq!(r["bytes_read"], 600 * batch as u64);
    proto::assert_documented(&r);
}

#[test]
fn each_pipelined_response_gets_its_own_completion_time() {
    // The last response of every batch of 4 comes 30 ms after the other three:
    // three quarters of the latencies are short, one quarter at least 30 ms.
    let srv = PipelineServer::start(4, Behaviour::LastLate(Duration::from_millis(30)));
    let r = load_json(&["-n", "200", "-c", "1", "--pipeline", "4", &srv.url()], DEADLINE);
    assert_eq!(r["requests"], 200);
    let l = &r["latency_us"];
    assert!(l["p50"].as_f64().unwrap() < 15_000.0, "{l}");
    assert!(l["p90"].as_f64().unwrap() >= 30_000.0, "{l}");
}

#[test]
fn a_partial_last_batch_under_n_is_sent_and_counted() {
    let srv = PipelineServer::start(16, Behaviour::InOrder);
    let r = load_json(&["-n", "100", "-c", "1", "--pipeline", "16", &srv.url()], DEADLINE);
    assert_eq!(r["requests"], 100);
    assert_eq!(srv.requests.load(Ordering::Relaxed), 100, "-n is exact even when it is not a multiple of --pipeline");
    assert_eq!(srv.full_batches.load(Ordering::Relaxed), 6);
}

#[test]
fn requests_behind_a_closing_response_are_sent_again_on_a_new_connection() {
    // Batches of 4; the server answers two, the second with Connection: close.
    let srv = PipelineServer::start(4, Behaviour::CloseAfter(2));
    let r = load_json(&["-n", "40", "-c", "1", "--pipeline", "4", &srv.url()], DEADLINE);
    assert_eq!(r["requests"], 40, "{r}");
    assert_eq!(r["errors"]["read"], 0, "the server processed none of them: sent again, not lost");
    assert_eq!(r["reconnects"], 20);
}

#[test]
fn pipelining_is_refused_in_open_loop_with_the_reason() {
    let srv = PipelineServer::start(4, Behaviour::InOrder);
    let out = stampede(&["load", "-d", "1s", "--pipeline", "4", "--rate", "100", &srv.url()], DEADLINE);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--pipeline") && err.contains("--rate") && err.contains("intended send time"), "{err}");
    assert_eq!(srv.requests.load(Ordering::Relaxed), 0, "nothing was sent");
    for bad in [vec!["--pipeline", "0"], vec!["--pipeline", "4", "--http2"]] {
        let mut args = vec!["load", "-d", "1s"];
        args.extend(bad.iter());
        args.push("http://127.0.0.1:1/");
        let out = stampede(&args, DEADLINE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--pipeline") && !err.contains("panicked"), "{args:?}: {err}");
    }
}
