//! `stampede load --grpc` through the real binary against the gRPC test
//! server (crates/testkit/src/proto/grpc_server.rs): exact call counts in closed and
//! open loop, calls failed in HTTP 200 trailers counted per status and
//! never as successes, Trailers-Only errors, a stream of N messages, the
//! deadline and metadata sent, server PINGs answered on every connection
//! in open loop, and bad input (a schema, a method, data, a
//! server that is not gRPC, HTTP/1.1 only or not there) in one line, exit 2.

use super::{proto, refused};
use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load::{load_json, refused_port, stampede};
use stampede_testkit::proto::grpc_server::{GrpcServer, Mode, Version};
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);
const UNARY: &str = "stampede.bench.v1.Bench/Unary";
const STREAM: &str = "stampede.bench.v1.Bench/Stream";

/// `stampede load --json --proto bench.proto --call CALL` with `args`.
fn grpc_load(call: &str, args: &[&str], target: &str) -> serde_json::Value {
    let proto = proto();
    let all = [&["--proto", &proto, "--call", call][..], args, &[target]].concat();
    load_json(&all, DEADLINE)
}

#[test]
fn unary_calls_in_closed_loop_are_counted_exactly_by_status() {
    let srv = GrpcServer::start(Mode::Ok);
    let data = r#"{"text": "hi", "a": 2, "b": 3}"#;
    let r = grpc_load(UNARY, &["-n", "2000", "-c", "2", "--streams", "8", "--data", data], &srv.target());
    assert_eq!(r["requests"], 2000, "{}", r["errors"]);
    assert_eq!(r["protocol"], "h2");
    assert_eq!(r["method"], "POST");
    let g = &r["grpc"];
    assert_eq!(g["call"], UNARY);
    assert_eq!(g["server_streaming"], false);
    assert_eq!(g["calls_by_status"], serde_json::json!({"OK": 2000}));
    assert_eq!(
        (g["messages"].as_u64(), g["not_grpc"].as_u64(), g["no_status"].as_u64()),
        (Some(2000), Some(0), Some(0))
    );
    assert_eq!(r["errors"]["status"], 0);
    // The run's 2000 and the preflight's one call, every one to the method.
    assert_eq!(srv.seen.calls.load(Ordering::Relaxed), 2001);
    assert!(srv.seen.paths.lock().unwrap().iter().all(|p| p == "/stampede.bench.v1.Bench/Unary"));
}

#[test]
fn open_loop_sends_exactly_the_calls_asked_for() {
    let srv = GrpcServer::start(Mode::Ok);
    let r = grpc_load(UNARY, &["--rate", "1000", "-n", "400", "-c", "2", "--streams", "4"], &srv.target());
    assert_eq!(r["mode"], "open");
    assert_eq!(r["requests"], 400, "{}", r["errors"]);
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], 400);
    assert!(r["service_time_us"].is_object(), "latency from the intended send time, service time apart");
}

/// `--max-granularity` is how long a due call may wait for the loop's
/// wake-up: at 1,000 calls/s (8 take 8 ms) the run wakes at the 4 ms asked,
/// not at HTTP/2's default 1 ms, reports it, and still sends every call.
#[test]
fn max_granularity_sets_the_wake_up_granularity_and_loses_no_call() {
    let srv = GrpcServer::start(Mode::Ok);
    let open = ["--rate", "1000", "-n", "200", "-c", "2", "--streams", "4"];
    let asked = grpc_load(UNARY, &[&open[..], &["--max-granularity", "4ms"]].concat(), &srv.target());
    assert_eq!(asked["requests"], 200, "{}", asked["errors"]);
    assert_eq!(asked["grpc"]["calls_by_status"]["OK"], 200);
    assert_eq!(asked["wake_granularity_us"], 4000.0);
    let default = grpc_load(UNARY, &open, &srv.target());
    assert_eq!(default["wake_granularity_us"], 1000.0);
    // It travels in the spec (--spec, --hosts); absent when not asked.
    let proto = proto();
    let spec = |extra: &[&str]| {
        let base = ["load", "--print-spec", "--proto", &proto, "--call", UNARY, "-R", "1000"];
        let out = stampede(&[&base[..], extra, &[&srv.target()]].concat(), DEADLINE);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(spec(&["--max-granularity", "4ms"])["max_granularity"], "4ms");
    assert!(spec(&[]).get("max_granularity").is_none());
}

#[test]
fn calls_failed_in_http_200_trailers_are_counted_per_status_never_as_successes() {
    let srv = GrpcServer::start(Mode::InternalEvery(5));
    let r = grpc_load(UNARY, &["-n", "1000", "-c", "1", "--streams", "4"], &srv.target());
    let g = &r["grpc"];
    let (ok, internal) =
        (g["calls_by_status"]["OK"].as_u64().unwrap(), g["calls_by_status"]["INTERNAL"].as_u64().unwrap());
    assert_eq!(ok + internal, 1000);
    // The preflight took call 1..: every fifth of the server's count failed.
    assert!((199..=201).contains(&internal), "{g}");
    assert_eq!(r["errors"]["status"], internal, "a failed call is an error");
    assert_eq!(r["status_codes"]["200"], 1000, "all were HTTP 200");
    // The same run in text: the statuses by name, the failures said.
    let proto = proto();
    let out = stampede(&["load", "--proto", &proto, "--call", UNARY, "-n", "100", &srv.target()], DEADLINE);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("calls by status: INTERNAL 20, OK 80"), "{text}");
}

#[test]
fn an_ok_server_has_no_failed_calls_in_the_text() {
    let srv = GrpcServer::start(Mode::Ok);
    let proto = proto();
    let out = stampede(&["load", "--proto", &proto, "--call", UNARY, "-n", "50", &srv.target()], DEADLINE);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("calls by status: OK 50"), "{text}");
    assert!(!text.contains("INTERNAL") && !text.contains("Failed calls"), "{text}");
}

#[test]
fn a_trailers_only_error_is_its_status_and_no_message() {
    let srv = GrpcServer::start(Mode::TrailersOnly(7));
    let r = grpc_load(UNARY, &["-n", "300", "-c", "2", "--streams", "4"], &srv.target());
    assert_eq!(r["requests"], 300);
    assert_eq!(r["grpc"]["calls_by_status"], serde_json::json!({"PERMISSION_DENIED": 300}));
    assert_eq!(r["grpc"]["messages"], 0);
    assert_eq!(r["errors"]["status"], 300);
}

#[test]
fn a_stream_of_n_messages_counts_n_per_call_and_times_the_first() {
    let srv = GrpcServer::start(Mode::Ok);
    let data = r#"{"text": "s", "count": 7}"#;
    let r = grpc_load(STREAM, &["-n", "200", "-c", "2", "--streams", "4", "--data", data], &srv.target());
    let g = &r["grpc"];
    assert_eq!(g["server_streaming"], true);
    assert_eq!(g["calls_by_status"]["OK"], 200);
    assert_eq!(g["messages"], 1400);
    let first = g["first_message_us"]["p50"].as_f64().unwrap();
    assert!(first > 0.0 && first <= r["latency_us"]["max"].as_f64().unwrap(), "{g}");
    let none = grpc_load(STREAM, &["-n", "50", "--data", r#"{"count": 0}"#], &srv.target());
    assert_eq!(none["grpc"]["messages"], 0);
    assert!(none["grpc"].get("first_message_us").is_none(), "no message, no time to it");
}

#[test]
fn a_paced_stream_has_its_first_message_and_a_gap_no_sooner_than_the_pause_and_unary_has_neither() {
    let pause = Duration::from_millis(30);
    let srv = GrpcServer::start(Mode::Paced(pause));
    let data = r#"{"text": "p", "count": 4}"#;
    let r = grpc_load(STREAM, &["-n", "6", "-c", "1", "--streams", "2", "--data", data], &srv.target());
    let g = &r["grpc"];
    assert_eq!((g["calls_by_status"]["OK"].as_u64(), g["messages"].as_u64()), (Some(6), Some(24)), "{g}");
    assert!(g["messages_per_s"].as_f64().unwrap() > 0.0, "{g}");
    // The server waits the pause before every reply: each call's first
    // message comes no sooner, and (4 replies a call sent a pause apart) at
    // least one gap is as long.
    let us = pause.as_micros() as f64;
    assert!(g["first_message_us"]["min"].as_f64().unwrap() >= us, "{g}");
    assert!(g["message_gap_us"]["max"].as_f64().unwrap() >= us, "{g}");
    let unary = grpc_load(UNARY, &["-n", "20"], &srv.target());
    assert_eq!(unary["grpc"]["messages"], 20);
    for stream_only in ["first_message_us", "message_gap_us"] {
        assert!(unary["grpc"].get(stream_only).is_none(), "{stream_only}: {}", unary["grpc"]);
    }
}

#[test]
fn the_summary_says_a_streams_messages_per_second_and_first_message_and_a_unary_calls_neither() {
    let srv = GrpcServer::start(Mode::Ok);
    let proto = proto();
    let text = |call: &str, data: &str| {
        let out =
            stampede(&["load", "--proto", &proto, "--call", call, "-n", "40", "--data", data, &srv.target()], DEADLINE);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let stream = text(STREAM, r#"{"count": 3}"#);
    assert!(stream.contains("Stream: 120 messages, "), "{stream}");
    assert!(stream.contains(" messages/s; first message p50 "), "{stream}");
    assert!(stream.contains("; gap between messages p50 "), "{stream}");
    let unary = text(UNARY, r#"{"a": 1}"#);
    assert!(unary.contains("Messages received: 40 ("), "{unary}");
    assert!(!unary.contains("Stream:") && !unary.contains("first message"), "{unary}");
}

/// The open loop reads only the connections in use between its wake-ups
/// and polls the idle ones at its housekeeping tick: a server's PINGs must
/// be answered on every connection, the idle ones too, never starved.
#[test]
fn open_loop_answers_server_pings_on_idle_connections_too() {
    let srv = GrpcServer::start(Mode::Pings);
    let data = r#"{"text": "p", "a": 1, "b": 1}"#;
    let r =
        grpc_load(UNARY, &["--rate", "50", "-d", "2s", "-c", "4", "--streams", "10", "--data", data], &srv.target());
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], r["requests"], "{}", r["grpc"]);
    let pongs: Vec<u64> = srv.seen.pongs.lock().unwrap().iter().map(|p| p.load(Ordering::Relaxed)).collect();
    // The first connection is the preflight's single call; the run's 4 follow.
    assert_eq!(pongs.len(), 5, "{pongs:?}");
    // Pinged every 20 ms for 2 s: dozens each; a connection left unread gets 0.
    assert!(pongs[1..].iter().all(|&n| n >= 5), "PING acknowledgements per connection: {pongs:?}");
}

#[test]
fn the_deadline_goes_out_as_grpc_timeout_and_metadata_as_headers() {
    let srv = GrpcServer::start(Mode::Ok);
    let meta = r#"{"x-tenant": "acme"}"#;
    let r = grpc_load(UNARY, &["-n", "20", "--deadline", "200ms", "--metadata", meta], &srv.target());
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], 20);
    assert_eq!(srv.seen.grpc_timeout.lock().unwrap().as_deref(), Some("200m"));
    assert_eq!(srv.seen.metadata.lock().unwrap().as_deref(), Some("acme"));
    let plain = GrpcServer::start(Mode::Ok);
    grpc_load(UNARY, &["-n", "5"], &plain.target());
    assert_eq!(*plain.seen.grpc_timeout.lock().unwrap(), None, "no --deadline, no grpc-timeout");
}

#[test]
fn a_server_that_is_not_grpc_or_not_http2_or_not_there_is_one_line_exit_2() {
    let proto = proto();
    let base = ["--proto", proto.as_str(), "--call", UNARY, "-n", "10"];
    let page = GrpcServer::start(Mode::NotGrpc);
    let err = refused(&[&base[..], &[&page.target()]].concat());
    assert!(err.contains("is not a gRPC server") && err.contains("content-type application/grpc"), "{err}");
    let http1 = Hostile::start(Trick::None);
    let err = refused(&[&base[..], &[&http1.url("/")]].concat());
    assert!(err.contains("does not speak HTTP/2"), "{err}");
    let closed = format!("127.0.0.1:{}", refused_port());
    let err = refused(&[&base[..], &[&closed]].concat());
    assert!(err.contains(&closed), "names the target: {err}");
    let unimplemented = GrpcServer::start(Mode::TrailersOnly(12));
    let err = refused(&[&base[..], &[&unimplemented.target()]].concat());
    assert!(err.contains("UNIMPLEMENTED") && err.contains(UNARY), "{err}");
}

#[test]
fn a_bad_schema_method_or_request_is_one_line_naming_it_exit_2() {
    let srv = GrpcServer::start(Mode::Ok);
    let t = srv.target();
    let proto = proto();
    let err = refused(&["--proto", "/nonexistent/api.proto", "--call", UNARY, &t]);
    assert!(err.contains("--proto /nonexistent/api.proto"), "{err}");
    let err = refused(&["--proto", &proto, "--call", "stampede.bench.v1.Bench/Nope", &t]);
    assert!(err.contains("no such method") && err.contains(UNARY), "lists what exists: {err}");
    let err = refused(&["--proto", &proto, "--call", UNARY, "--data", r#"{"txt": "x"}"#, &t]);
    assert!(err.contains("stampede.bench.v1.Request") && err.contains("txt"), "{err}");
    let err = refused(&["--grpc", &t]);
    assert!(err.contains("--grpc needs --call"), "{err}");
    let err = refused(&["--call", UNARY, &t]);
    assert!(err.contains("offers no server reflection") && err.contains("--proto"), "{err}");
    let err = refused(&["--proto", &proto, "--call", UNARY, "--metadata", "{\"authorization\": 5}", &t]);
    assert!(err.contains("--metadata") && !err.contains('5'), "the value is not repeated: {err}");
    assert_eq!(srv.seen.calls.load(Ordering::Relaxed), 0, "nothing was sent");
}

/// What `--print-spec` prints is what runs: the schema compiled into it
/// (`grpc.descriptors`), so the spec replays with the `.proto` gone, and
/// still says the schema came from a `.proto`.
#[test]
fn print_spec_carries_the_compiled_proto_and_replays_without_it() {
    let srv = GrpcServer::start(Mode::Ok);
    let dir = std::env::temp_dir().join(format!("stampede-grpc-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("bench.proto");
    std::fs::copy(proto(), &copy).unwrap();
    let copy = copy.to_str().unwrap();
    let out =
        stampede(&["load", "--print-spec", "--proto", copy, "--call", UNARY, "-n", "30", &srv.target()], DEADLINE);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let spec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(spec["grpc"]["call"], UNARY);
    assert!(spec["grpc"]["descriptors"].as_str().is_some_and(|d| d.len() > 100), "{spec}");
    std::fs::remove_file(copy).unwrap();
    let file = dir.join("load.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let r = load_json(&["--spec", file.to_str().unwrap()], DEADLINE);
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], 30);
    assert_eq!(r["grpc"]["schema"], "proto");
    // A spec without its schema still reads the file, and names it when it is gone.
    let mut bare = spec.clone();
    bare["grpc"].as_object_mut().unwrap().remove("descriptors");
    std::fs::write(&file, serde_json::to_vec(&bare).unwrap()).unwrap();
    let err = refused(&["--spec", file.to_str().unwrap()]);
    assert!(err.contains(copy) && err.contains("give the path of an existing .proto file"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A schema asked by reflection is printed too: the spec replays against a
/// server that offers no reflection, and asks none.
#[test]
fn print_spec_carries_the_reflected_schema_to_a_server_without_reflection() {
    let reflecting = GrpcServer::start(Mode::Reflection(Version::V1));
    let out = stampede(&["load", "--print-spec", "--call", UNARY, "-n", "20", &reflecting.target()], DEADLINE);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut spec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(spec["grpc"]["descriptors"].as_str().is_some_and(|d| d.len() > 100), "{spec}");
    assert_eq!((reflecting.seen.reflection_calls.load(Ordering::Relaxed), reflecting.calls()), (1, 0));
    let plain = GrpcServer::start(Mode::Ok);
    spec["urls"] = serde_json::json!([plain.target()]);
    let r = stampede_testkit::Stampede::new()
        .args(["load", "--json", "--spec", "-"])
        .stdin(serde_json::to_vec(&spec).unwrap())
        .deadline(DEADLINE)
        .json();
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], 20);
    assert_eq!(r["grpc"]["schema"], "reflection");
    assert_eq!(plain.seen.reflection_calls.load(Ordering::Relaxed), 0, "the schema came with the spec");
}
