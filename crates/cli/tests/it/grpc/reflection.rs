//! `stampede load --grpc` without `--proto` or `--protoset`: the schema
//! asked of the server by reflection (the gRPC test server's modes
//! `Reflection(V1)` and `Reflection(V1Alpha)`), the same request bytes as
//! the `.proto` gives, over TLS too, the result saying where the schema
//! came from, and a server without reflection or without the service said
//! in one line, exit 2.

use super::{proto, refused};
use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load::load_json;
use stampede_testkit::proto::grpc_server::{GrpcServer, Mode, Version};
use stampede_testkit::proto::Certs;
use std::sync::atomic::Ordering;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);
const UNARY: &str = "stampede.bench.v1.Bench/Unary";
const DATA: &str = r#"{"text": "héllo", "a": -7, "b": 300000}"#;

fn last_request(srv: &GrpcServer) -> Vec<u8> {
    srv.seen.request.lock().unwrap().clone().expect("a call was made")
}

#[test]
fn a_load_by_reflection_sends_exactly_the_calls_and_bytes_the_proto_gives() {
    let srv = GrpcServer::start(Mode::Reflection(Version::V1));
    let r = load_json(&["--call", UNARY, "--data", DATA, "-n", "300", "-c", "2", &srv.target()], DEADLINE);
    assert_eq!(r["grpc"]["calls_by_status"], serde_json::json!({"OK": 300}), "{r:#}");
    assert_eq!(r["grpc"]["schema"], "reflection");
    // The run's 300 and the preflight's one; one reflection stream, asked
    // before them and counted apart.
    assert_eq!(srv.calls(), 301);
    assert_eq!(srv.seen.reflection_calls.load(Ordering::Relaxed), 1, "v1 answered at once");
    let reflected = last_request(&srv);

    let proto = proto();
    let r = load_json(&["--proto", &proto, "--call", UNARY, "--data", DATA, "-n", "5", &srv.target()], DEADLINE);
    assert_eq!(r["grpc"]["schema"], "proto", "a .proto given is said, not reflection");
    assert_eq!(srv.seen.reflection_calls.load(Ordering::Relaxed), 1, "a .proto asks no reflection");
    assert_eq!(last_request(&srv), reflected, "the same message bytes either way");
    assert!(reflected.len() > 10, "{reflected:?}");
}

#[test]
fn a_server_offering_only_v1alpha_reflection_is_asked_that_after_v1() {
    let srv = GrpcServer::start(Mode::Reflection(Version::V1Alpha));
    let stream = "stampede.bench.v1.Bench/Stream";
    let r = load_json(&["--call", stream, "--data", r#"{"count": 3}"#, "-n", "20", &srv.target()], DEADLINE);
    assert_eq!(r["grpc"]["calls_by_status"]["OK"], 20, "{r:#}");
    assert_eq!((r["grpc"]["messages"].as_u64(), r["grpc"]["server_streaming"].as_bool()), (Some(60), Some(true)));
    assert_eq!(srv.seen.reflection_calls.load(Ordering::Relaxed), 2, "v1 (UNIMPLEMENTED), then v1alpha");
}

#[test]
fn reflection_works_over_tls() {
    let certs = Certs::generate();
    let srv = GrpcServer::start_on(Mode::Reflection(Version::V1), Some(certs.server_config(&[b"h2"])));
    let ca = certs.ca_file("grpc-reflection-tls");
    let url = srv.url("https");
    let r = load_json(&["--ca", ca.to_str().unwrap(), "--call", UNARY, "--data", DATA, "-n", "10", &url], DEADLINE);
    assert_eq!(
        (r["grpc"]["calls_by_status"]["OK"].as_u64(), r["grpc"]["schema"].as_str()),
        (Some(10), Some("reflection"))
    );
}

#[test]
fn a_server_without_reflection_is_one_line_naming_it_and_suggesting_a_proto() {
    let srv = GrpcServer::start(Mode::Ok);
    let err = refused(&["--call", UNARY, "-n", "5", &srv.target()]);
    let want = format!("{} offers no server reflection (UNIMPLEMENTED); give --proto or --protoset", srv.url("http"));
    assert!(err.ends_with(&want), "{err}");
    assert_eq!(srv.seen.reflection_calls.load(Ordering::Relaxed), 2, "v1 and v1alpha were both asked");
    assert_eq!(srv.calls(), 0, "no call was sent");
}

#[test]
fn a_service_or_method_the_server_does_not_know_is_named() {
    let srv = GrpcServer::start(Mode::Reflection(Version::V1));
    let err = refused(&["--call", "stampede.bench.v1.Nope/Unary", &srv.target()]);
    assert!(err.contains("does not know the service stampede.bench.v1.Nope (NOT_FOUND"), "{err}");
    let err = refused(&["--call", "stampede.bench.v1.Bench/Nope", &srv.target()]);
    assert!(err.contains("no such method") && err.contains(UNARY), "lists what the server has: {err}");
    assert_eq!(srv.calls(), 0);
}

#[test]
fn a_server_that_is_not_grpc_or_not_http2_is_said_as_the_run_says_it() {
    let page = GrpcServer::start(Mode::NotGrpc);
    let err = refused(&["--call", UNARY, &page.target()]);
    let want = "is not a gRPC server: it answered grpc.reflection.v1.ServerReflection/ServerReflectionInfo with an \
                answer without content-type application/grpc";
    assert!(err.contains(want), "{err}");
    let http1 = Hostile::start(Trick::None);
    let err = refused(&["--call", UNARY, &http1.url("/")]);
    assert!(err.contains("does not speak HTTP/2"), "{err}");
}
