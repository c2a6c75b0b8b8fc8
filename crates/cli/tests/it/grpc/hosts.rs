//! `stampede load --grpc --hosts`: the schema travels in the spec. The
//! load hosts are this machine behind a stand-in ssh
//! (crates/testkit/fixtures/fake_ssh), which removes the `.proto` before a
//! host's load starts and keeps the spec the host received: the controller
//! compiled the file, the hosts loaded with it gone. A `.proto` missing on
//! the controller is one line, exit 2, before any ssh session.

use super::proto;
use stampede_testkit::proto::grpc_server::{GrpcServer, Mode};
use stampede_testkit::{fixture, Outcome, Stampede};
use std::path::{Path, PathBuf};
use std::time::Duration;

const UNARY: &str = "stampede.bench.v1.Bench/Unary";

/// A scratch folder for one test: the fake ssh's files and the `.proto`.
fn scratch(name: &str) -> PathBuf {
    let dir = stampede_testkit::tmp_dir().join(format!("grpc-hosts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `stampede load --hosts a,b` through the fake ssh, which keeps its files
/// in `dir` and removes `remove` before each host's load.
fn from_hosts(dir: &Path, remove: &Path, args: &[&str]) -> Stampede {
    let path = format!("{}:{}", fixture("fake_ssh").display(), std::env::var("PATH").unwrap_or_default());
    let bin = stampede_testkit::bin();
    Stampede::new()
        .env("PATH", path)
        .env("FAKE_SSH_DIR", dir)
        .env("FAKE_SSH_REMOVE", remove)
        .args(["load", "--hosts", "a,b", "--remote-path", bin.to_str().unwrap()])
        .args(args)
        .deadline(Duration::from_secs(60))
}

/// The files the fake ssh left in `dir` whose names start with `prefix`.
fn left(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path());
    entries.filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix)).collect()
}

#[test]
fn a_proto_reaches_every_load_host_inside_the_spec() {
    let dir = scratch("proto");
    let file = dir.join("bench.proto");
    std::fs::copy(proto(), &file).unwrap();
    let srv = GrpcServer::start(Mode::Ok);
    let data = r#"{"text": "hi", "a": 2, "b": 3}"#;
    let args = ["--json", "--proto", file.to_str().unwrap(), "--call", UNARY, "--data", data, "-n", "40", "-c", "2"];
    let out = from_hosts(&dir, &file, &[&args[..], &[&srv.target()]].concat()).output();
    out.assert_code(0);
    let r = out.json();
    assert_eq!(r["grpc"]["calls_by_status"], serde_json::json!({"OK": 40}), "{}", out.stderr_text());
    assert_eq!(r["grpc"]["schema"], "proto", "the hosts say where the schema came from");
    assert!(!file.exists(), "the fake ssh removed the .proto before the hosts loaded");
    let specs = left(&dir, "spec.");
    assert_eq!(specs.len(), 2, "one spec per host: {specs:?}");
    for spec in specs {
        let spec: serde_json::Value = serde_json::from_slice(&std::fs::read(&spec).unwrap()).unwrap();
        let carried = spec["grpc"]["descriptors"].as_str().unwrap_or_default();
        assert!(carried.len() > 100, "the schema travels in the spec: {spec}");
    }
}

#[test]
fn a_proto_missing_on_the_controller_is_one_line_before_any_host_is_reached() {
    let dir = scratch("missing");
    let gone = dir.join("api.proto");
    let srv = GrpcServer::start(Mode::Ok);
    let args = ["--proto", gone.to_str().unwrap(), "--call", UNARY, "-n", "10", &srv.target()];
    let out = from_hosts(&dir, &gone, &args).finished();
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    let err = out.stderr.trim();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(&format!("--proto {}", gone.display())) && !err.contains("panicked"), "{err}");
    assert!(left(&dir, "ran.").is_empty(), "no ssh session was started");
    assert_eq!(srv.calls(), 0);
}
