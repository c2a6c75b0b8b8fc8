//! Every reference app in `apps/` is built, started on a free port, checked
//! with the real `stampede check` binary against the contract its manifest
//! claims (`stampede`) and against the original `sequence` API it also speaks,
//! and stopped with SIGTERM, one test per app so a failure names the app. An app whose folder or toolchain is
//! missing is skipped with a visible `SKIP <app>: <reason>` line, never
//! silently. The work is in `stampede_testkit::app::check_app`.

use std::path::Path;
use std::time::{Duration, Instant};

use stampede_testkit::app::{
    announce, check_app, check_app_as, load_manifest, manifest_paths, Manifest, Server, Variant,
};
use stampede_testkit::process::group_members;

/// The apps this file has a test for; a new app folder must be added here.
const APPS: &[&str] = &["go", "node", "python", "java", "rust", "csharp"];

/// The contracts every reference app passes: its own, and the original
/// sequence API (`/api/count`, `/api/fib`) that is part of it.
const CONTRACTS: &[&str] = &["stampede", "sequence"];

#[test]
fn app_go() {
    check_app("go", CONTRACTS);
}

/// Issue 33: with its knobs http2 and http3 on, apps/go passes every
/// contract over HTTP/1.1 and, with `stampede check --http3 -k`, over HTTP/3
/// on the same port number (quic-go and its self-signed certificate).
#[test]
fn app_go_with_http2_and_http3_on() {
    check_app_as("go", CONTRACTS, &Variant { knobs: &[("http2", "on"), ("http3", "on")], http3: true });
}

/// The Rust app's knobs on (hyper-util's h2c beside HTTP/1.1, an h3 + quinn
/// listener): the same contracts over HTTP/1.1 and over HTTP/3.
#[test]
fn app_rust_with_http2_and_http3_on() {
    check_app_as("rust", CONTRACTS, &Variant { knobs: &[("http2", "on"), ("http3", "on")], http3: true });
}

#[test]
fn app_node() {
    check_app("node", CONTRACTS);
}

#[test]
fn app_python() {
    check_app("python", CONTRACTS);
}

#[test]
fn app_java() {
    check_app("java", CONTRACTS);
}

#[test]
fn app_rust() {
    check_app("rust", CONTRACTS);
}

#[test]
fn app_csharp() {
    check_app("csharp", CONTRACTS);
}

#[test]
fn every_manifest_parses_with_required_fields_and_knob_tables() {
    let manifests = manifest_paths();
    if manifests.is_empty() {
        announce("SKIP manifests: no apps/*/app.toml yet");
    }
    let errors: Vec<String> = manifests.values().filter_map(|path| load_manifest(path).err()).collect();
    assert!(errors.is_empty(), "invalid manifests:\n{}", errors.join("\n"));
}

#[test]
fn every_app_claims_the_stampede_contract() {
    let wrong: Vec<String> = manifest_paths()
        .values()
        .filter_map(|path| load_manifest(path).ok())
        .filter(|m| m.contract.as_deref() != Some("stampede"))
        .map(|m| format!("{}: contract = {:?}", m.name, m.contract))
        .collect();
    assert!(
        wrong.is_empty(),
        "every reference app implements apps/CONTRACT.md and must say `contract = \"stampede\"`: {wrong:?}"
    );
}

#[test]
fn every_app_folder_has_a_named_test() {
    let untested: Vec<String> = manifest_paths().into_keys().filter(|name| !APPS.contains(&name.as_str())).collect();
    assert!(
        untested.is_empty(),
        "apps without a test in crates/cli/tests/apps.rs (add an `app_<name>` test and list it in APPS): {untested:?}"
    );
}

/// A manifest whose `run` is `run`, for exercising the lifecycle code itself.
fn fake_manifest(run: &str) -> Manifest {
    let text = format!(
        "name = \"fake\"\ndescription = \"d\"\nrequires = [\"sh\"]\nbuild = \"true\"\nrun = {run:?}\nversion = \"echo 1\"\n"
    );
    toml::from_str(&text).expect("fake manifest parses")
}

/// Starts `run`, waits until `sleeps` `sleep` processes run in its group (so
/// its traps are set), then stops it the way the app tests do.
fn stop_fake(name: &str, run: &str, sleeps: usize) -> Result<Duration, String> {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let log = tmp.join(format!("{name}.log"));
    let mut server = Server::start(&fake_manifest(run), tmp, 0, &log, &[]);
    let start = Instant::now();
    let sleeping = |pgid| group_members(pgid).iter().filter(|m| m.ends_with(" sleep")).count();
    while sleeping(server.pgid()) < sleeps {
        assert!(start.elapsed() < Duration::from_secs(5), "{name}: `{run}` did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    server.stop()
}

#[test]
fn stop_fails_when_the_server_ignores_sigterm() {
    let error = stop_fake("ignores-sigterm", "trap '' TERM; sleep 30", 1).unwrap_err();
    assert!(error.contains("did not exit within 5s of SIGTERM"), "{error}");
}

#[test]
fn stop_fails_when_a_child_outlives_the_server() {
    let error = stop_fake("leaves-child", "(trap '' TERM; sleep 31) & exec sleep 30", 2).unwrap_err();
    assert!(error.contains("outlived SIGTERM"), "{error}");
}

#[test]
fn stop_passes_when_the_group_ends_on_sigterm() {
    let took = stop_fake("ends-on-sigterm", "exec sleep 30", 1).expect("sleep ends on SIGTERM");
    assert!(took < Duration::from_secs(5));
}
