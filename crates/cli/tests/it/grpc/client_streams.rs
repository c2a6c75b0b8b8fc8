//! Client-streaming and bidirectional calls through the real binary against
//! the gRPC test server's `Collect` and `Echo`
//! (crates/testkit/fixtures/grpc/streams.proto): `--data`'s array is what
//! each call sends, counted exactly by the server; a bidi call's replies
//! are read and timed as a server stream's; an array for a call that takes
//! one message is one line, exit 2.

use stampede_testkit::load::{load_json, stampede};
use stampede_testkit::proto::grpc_server::{GrpcServer, Mode};
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);
const COLLECT: &str = "stampede.test.v1.Streams/Collect";
const ECHO: &str = "stampede.test.v1.Streams/Echo";

/// The schema flags for streams.proto, which imports the contract's bench.proto.
fn schema() -> [String; 4] {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    [
        "--proto".into(),
        format!("{root}/crates/testkit/fixtures/grpc/streams.proto"),
        "--import-paths".into(),
        format!("{root}/contracts/grpc"),
    ]
}

fn args<'a>(schema: &'a [String; 4], call: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut all: Vec<&str> = schema.iter().map(String::as_str).collect();
    all.extend(["--call", call]);
    all.extend_from_slice(rest);
    all
}

/// `stampede load` of ten calls to `call` sending `data`, in text.
fn ten_calls(schema: &[String; 4], call: &str, data: &str, target: &str) -> std::process::Output {
    stampede(&[&["load"][..], &args(schema, call, &["-n", "10", "--data", data, target])].concat(), DEADLINE)
}

#[test]
fn a_client_stream_sends_every_message_of_the_array_and_the_server_counts_them_all() {
    let srv = GrpcServer::start(Mode::Ok);
    let (schema, target) = (schema(), srv.target());
    let data = r#"[{"text": "a", "a": 1, "b": 2}, {"a": 3}, {"text": "last"}]"#;
    let r = load_json(
        &args(&schema, COLLECT, &["-n", "50", "-c", "2", "--streams", "4", "--data", data, &target]),
        DEADLINE,
    );
    let g = &r["grpc"];
    assert_eq!(g["calls_by_status"], serde_json::json!({"OK": 50}), "{g}");
    assert_eq!((g["client_streaming"].as_bool(), g["request_messages"].as_u64()), (Some(true), Some(3)));
    assert_eq!((g["server_streaming"].as_bool(), g["messages"].as_u64()), (Some(false), Some(50)), "one reply a call");
    assert!(g.get("first_message_us").is_none(), "a single reply is not a stream: {g}");
    // The run's 50 calls and the preflight's one, three messages each.
    assert_eq!(srv.seen.calls.load(Ordering::Relaxed), 51);
    assert_eq!(srv.seen.requests.load(Ordering::Relaxed), 51 * 3);
}

#[test]
fn a_bidi_call_reads_a_reply_per_message_sent_and_times_them_as_a_stream() {
    let srv = GrpcServer::start(Mode::Ok);
    let (schema, target) = (schema(), srv.target());
    let data = r#"[{"a": 1}, {"a": 2}, {"a": 3}, {"a": 4}]"#;
    let r =
        load_json(&args(&schema, ECHO, &["-n", "40", "-c", "1", "--streams", "4", "--data", data, &target]), DEADLINE);
    let g = &r["grpc"];
    assert_eq!(g["calls_by_status"]["OK"], 40, "{g}");
    assert_eq!((g["client_streaming"].as_bool(), g["server_streaming"].as_bool()), (Some(true), Some(true)));
    assert_eq!(g["messages"], 160, "four replies a call");
    assert_eq!(srv.seen.requests.load(Ordering::Relaxed), 41 * 4);
    assert!(g["first_message_us"]["p50"].as_f64().is_some() && g["message_gap_us"]["max"].as_f64().is_some(), "{g}");
    let one = load_json(&args(&schema, ECHO, &["-n", "5", "--data", r#"{"a": 1}"#, &target]), DEADLINE);
    assert_eq!((one["grpc"]["request_messages"].as_u64(), one["grpc"]["messages"].as_u64()), (Some(1), Some(5)));
}

#[test]
fn the_summary_says_how_many_messages_a_client_stream_sends_and_a_unary_call_does_not() {
    let srv = GrpcServer::start(Mode::Ok);
    let (schema, target) = (schema(), srv.target());
    let out = ten_calls(&schema, COLLECT, r#"[{"a": 1}, {"a": 2}]"#, &target);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let collect = String::from_utf8_lossy(&out.stdout);
    assert!(
        collect.contains(&format!("gRPC {COLLECT} (a client stream of 2 messages a call): calls by status: OK 10")),
        "{collect}"
    );
    let proto = concat!(env!("CARGO_MANIFEST_DIR"), "/../../contracts/grpc/bench.proto");
    let unary =
        stampede(&["load", "--proto", proto, "--call", "stampede.bench.v1.Bench/Unary", "-n", "10", &target], DEADLINE);
    let unary = String::from_utf8_lossy(&unary.stdout);
    assert!(unary.contains("calls by status: OK 10") && !unary.contains("client stream"), "{unary}");
}

#[test]
fn an_array_for_a_call_of_one_message_or_a_bad_message_in_the_array_is_one_line_exit_2() {
    let srv = GrpcServer::start(Mode::Ok);
    let (schema, target) = (schema(), srv.target());
    let refused = |call: &str, data: &str| {
        let out = ten_calls(&schema, call, data, &target);
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        assert_eq!((out.status.code(), err.lines().count()), (Some(2), 1), "{err}");
        err
    };
    let err = refused("stampede.bench.v1.Bench/Unary", r#"[{"a": 1}]"#);
    assert!(err.contains("--data") && err.contains("an array is for client-streaming calls"), "{err}");
    let err = refused(COLLECT, r#"[{"a": 1}, {"txt": "x"}]"#);
    assert!(err.contains("--data") && err.contains("message 1 of the array") && err.contains("txt"), "{err}");
    assert_eq!(srv.calls(), 0, "nothing is sent before the request is whole");
}
