//! `stampede check --contract grpc` through the real binary, against the
//! gRPC test server (crates/testkit/src/proto/grpc_server.rs): a correct server passes
//! every rule over h2c and over TLS (exit 0, no warning), and each fault
//! fails exactly the rules that catch it (exit 1) while the others still
//! pass; nothing listening and a server without HTTP/2 are one line, exit 2.

use stampede_testkit::proto;

use std::time::Duration;

use proto::grpc_server::{GrpcServer, Mode};
use proto::Certs;
use serde_json::Value;
use stampede_testkit::process::Finished;
use stampede_testkit::Stampede;

fn stampede(args: &[&str]) -> Finished {
    Stampede::new().args(args).env("NO_COLOR", "1").deadline(Duration::from_secs(60)).finished()
}

fn check(mode: Mode) -> (Option<i32>, Value) {
    let server = GrpcServer::start(mode);
    check_json(&["check", "--contract", "grpc", "--json", &server.url("http")])
}

fn check_json(args: &[&str]) -> (Option<i32>, Value) {
    let run = stampede(args);
    let report =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("--json printed no JSON ({e})\n{}", run.output()));
    (run.code(), report)
}

fn ids(report: &Value, pick: fn(&Value) -> bool) -> Vec<String> {
    let results = report["results"].as_array().expect("results is an array");
    results.iter().filter(|r| pick(r)).map(|r| r["id"].as_str().unwrap_or("?").to_string()).collect()
}

fn failed(report: &Value) -> Vec<String> {
    ids(report, |r| r["passed"] == false)
}

fn warned(report: &Value) -> Vec<String> {
    ids(report, |r| r["warning"] == true)
}

fn result<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["results"].as_array().unwrap().iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn a_correct_grpc_server_passes_every_rule_without_a_warning() {
    let (code, report) = check(Mode::Ok);
    assert_eq!(code, Some(0), "failed: {:?}\n{report:#}", failed(&report));
    assert_eq!(report["contract"], "grpc");
    assert_eq!(warned(&report), Vec::<String>::new(), "{report:#}");
    let all = ids(&report, |_| true);
    for id in ["unary", "stream", "unknown-method", "malformed-message", "deadline-expired", "stream-deadline"] {
        assert!(all.contains(&id.to_string()), "{id} missing from {all:?}");
    }
    assert!(all.contains(&"concurrent-connections".to_string()) && all.contains(&"status-in-trailers".to_string()));
}

#[test]
fn over_tls_the_contract_is_asked_with_alpn_h2() {
    let certs = Certs::generate();
    let server = GrpcServer::start_on(Mode::Ok, Some(certs.server_config(&[b"h2"])));
    let ca = certs.ca_file("grpc-check-tls");
    let (code, report) =
        check_json(&["check", "--contract", "grpc", "--ca", ca.to_str().unwrap(), "--json", &server.url("https")]);
    assert_eq!(code, Some(0), "failed: {:?}\n{report:#}", failed(&report));
}

#[test]
fn a_server_answering_a_constant_fails_every_unary_rule() {
    let (code, report) = check(Mode::Constant);
    assert_eq!(code, Some(1));
    let want = ["unary", "unary-again", "concurrent-one-connection", "concurrent-connections"];
    assert_eq!(failed(&report), want, "{report:#}");
    let unary = result(&report, "unary");
    let reason = unary["reason"].as_str().unwrap();
    assert!(reason.starts_with("reply 1: sum is \"3\", expected "), "{reason}");
    assert!(unary["request"].as_str().unwrap().starts_with("POST /stampede.bench.v1.Bench/Unary {"), "{unary:#}");
    let concurrent = result(&report, "concurrent-connections")["reason"].as_str().unwrap();
    assert!(concurrent.starts_with("512 of 512 calls failed; call 1: reply 1: "), "{concurrent}");
}

#[test]
fn a_server_ignoring_deadlines_fails_the_stream_deadline_and_warns_on_an_expired_one() {
    let (code, report) = check(Mode::IgnoresDeadline);
    assert_eq!(code, Some(1));
    assert_eq!(failed(&report), ["stream-deadline"], "{report:#}");
    let reason = result(&report, "stream-deadline")["reason"].as_str().unwrap();
    assert!(reason.starts_with("the call did not end within 1.8s ("), "{reason}");
    assert_eq!(warned(&report), ["deadline-expired"], "{report:#}");
    let warning = result(&report, "deadline-expired")["reason"].as_str().unwrap();
    assert!(
        warning.starts_with("grpc-status OK (0), allowed with a warning (expected DEADLINE_EXCEEDED)"),
        "{warning}"
    );
}

#[test]
fn a_server_answering_an_unknown_method_ok_fails_the_unknown_method_and_service_rules() {
    let (code, report) = check(Mode::UnknownMethodOk);
    assert_eq!(code, Some(1));
    assert_eq!(failed(&report), ["unknown-method", "unknown-service"], "{report:#}");
    let reason = result(&report, "unknown-method")["reason"].as_str().unwrap();
    assert_eq!(reason, "grpc-status OK (0), expected UNIMPLEMENTED");
}

#[test]
fn a_stream_of_one_reply_too_many_fails_the_stream_rules() {
    let (code, report) = check(Mode::OneReplyTooMany);
    assert_eq!(code, Some(1));
    assert_eq!(failed(&report), ["stream", "stream-empty"], "{report:#}");
    assert_eq!(result(&report, "stream")["reason"], "1001 replies, expected exactly 1000");
    assert_eq!(result(&report, "stream-empty")["reason"], "1 replies, expected exactly 0");
}

#[test]
fn a_status_in_the_headers_of_an_answer_with_replies_fails_status_in_trailers() {
    let (code, report) = check(Mode::StatusInHeaders);
    assert_eq!(code, Some(1));
    let failed = failed(&report);
    assert!(failed.contains(&"status-in-trailers".to_string()), "{report:#}");
    assert!(failed.contains(&"unary".to_string()), "{report:#}");
    assert!(!failed.contains(&"content-type".to_string()), "{report:#}");
    // Trailers-Only error answers carry their status in the headers, rightly.
    assert!(!failed.contains(&"unknown-method".to_string()), "{report:#}");
    let reason = result(&report, "status-in-trailers")["reason"].as_str().unwrap();
    assert!(reason.contains("grpc-status in the headers of an answer with trailers"), "{reason}");
}

#[test]
fn nothing_listening_or_a_server_without_http2_is_one_line_and_exit_2() {
    let url = format!("http://127.0.0.1:{}", stampede_testkit::load::refused_port());
    let run = stampede(&["check", "--contract", "grpc", &url]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("connection refused"), "{}", run.stderr);
    let http1 = stampede_testkit::contract::TestServer::start(stampede_testkit::contract::Fault::None);
    let run = stampede(&["check", "--contract", "grpc", "--timeout", "2s", &http1.url()]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("no HTTP/2 answer"), "{}", run.stderr);
}

/// `stampede run`'s readiness for a gRPC app (crates/run/src/ready.rs): an
/// empty request to the contract's `ready` method answered OK, which no
/// HTTP/1.1 answer and no other gRPC status stands in for.
#[test]
fn grpc_readiness_is_an_ok_call_and_nothing_else() {
    let ready = stampede_check::builtin("grpc").unwrap().ready.unwrap();
    let timeout = Duration::from_secs(5);
    let server = GrpcServer::start(Mode::Ok);
    assert!(stampede_check::grpc_ready(server.addr, &ready, timeout).is_ok());
    // A gRPC server that answered another status (another server, or not
    // up yet) and no gRPC answer at all are told apart by type.
    use stampede_check::NotReady;
    let unknown = stampede_check::grpc_ready(server.addr, "/stampede.bench.v1.Bench/Nope", timeout).unwrap_err();
    assert_eq!(unknown, NotReady::Answered("grpc-status UNIMPLEMENTED (12)".into()));
    let http1 = stampede_testkit::contract::TestServer::start(stampede_testkit::contract::Fault::None);
    let addr = http1.url().trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    let e = stampede_check::grpc_ready(addr, &ready, timeout).unwrap_err();
    assert!(matches!(&e, NotReady::NoAnswer(why) if why.starts_with("no HTTP/2 answer")), "{e:?}");
}

/// A gRPC contract of the user's own is a file beside its `.proto`; a
/// mistake in it (a status name, a missing `.proto`) is one line naming the
/// field, exit 2, before any call.
#[test]
fn a_grpc_contract_file_reads_its_proto_beside_it_and_a_mistake_is_one_line() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("grpc-contract-file");
    std::fs::create_dir_all(dir.join("grpc")).unwrap();
    std::fs::copy(root.join("contracts/grpc/bench.proto"), dir.join("grpc/bench.proto")).unwrap();
    let text = std::fs::read_to_string(root.join("contracts/grpc.toml")).unwrap();
    let (good, typo, no_proto) = (dir.join("mine.toml"), dir.join("typo.toml"), dir.join("no-proto.toml"));
    std::fs::write(&good, text.replace("name = \"grpc\"", "name = \"mine\"")).unwrap();
    std::fs::write(&typo, text.replacen("[\"UNIMPLEMENTED\"]", "[\"UNIMPLEMENTD\"]", 1)).unwrap();
    std::fs::write(&no_proto, text.replace("grpc/bench.proto", "missing.proto")).unwrap();
    let server = GrpcServer::start(Mode::Ok);
    let run = stampede(&["check", "--contract", good.to_str().unwrap(), &server.url("http")]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    assert!(run.stdout.starts_with("contract mine (version 1), "), "{}", run.stdout);
    let calls = server.calls();
    for (file, says) in [
        (&typo, "call[7].status (id \"unknown-method\"): \"UNIMPLEMENTD\" is not a gRPC status name"),
        (&no_proto, "proto: cannot read "),
    ] {
        let run = stampede(&["check", "--contract", file.to_str().unwrap(), &server.url("http")]);
        assert_eq!(run.code(), Some(2), "{}", run.output());
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
    assert_eq!(server.calls(), calls, "no call after a bad contract");
}

/// A gRPC contract without `proto` is read with the schema the server
/// gives by reflection; a server without reflection is one line, exit 2.
#[test]
fn a_grpc_contract_without_a_proto_asks_the_server_by_reflection() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("grpc-contract-reflection");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(root.join("contracts/grpc.toml")).unwrap();
    let file = dir.join("reflected.toml");
    std::fs::write(&file, text.replace("proto = \"grpc/bench.proto\"\n", "")).unwrap();
    let server = GrpcServer::start(Mode::Reflection(proto::grpc_server::Version::V1Alpha));
    let run = stampede(&["check", "--contract", file.to_str().unwrap(), &server.url("http")]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    let plain = GrpcServer::start(Mode::Ok);
    let run = stampede(&["check", "--contract", file.to_str().unwrap(), &plain.url("http")]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("offers no server reflection (UNIMPLEMENTED)"), "{}", run.stderr);
    assert_eq!(plain.calls(), 0, "no call without a schema");
}
