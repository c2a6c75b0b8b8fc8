//! `stampede check --http3` through the real binary: the contract's test
//! server behind an HTTP/3 front passes every rule of the `stampede`
//! contract over HTTP/3 (exit 0), and fails the rule of its fault (exit 1);
//! servers without HTTP/3 (nothing on the UDP port, QUIC offering only h2
//! by ALPN) are one line and exit 2.

use stampede_testkit::proto;

use std::net::SocketAddr;
use std::time::Duration;

use proto::h3_front::H3Front;
use proto::h3_server::{Behaviour, H3Server};
use proto::Certs;
use serde_json::Value;
use stampede_testkit::contract::{Fault, TestServer};
use stampede_testkit::process::Finished;
use stampede_testkit::Stampede;

fn stampede(args: &[&str]) -> Finished {
    Stampede::new().args(args).env("NO_COLOR", "1").deadline(Duration::from_secs(60)).finished()
}

/// The `stampede` test server with `fault`, and an HTTP/3 front before it.
fn h3_server(fault: Fault, certs: &Certs) -> (TestServer, H3Front) {
    let server = TestServer::start(fault);
    let behind: SocketAddr = server.url().trim_start_matches("http://").parse().unwrap();
    let front = H3Front::start(behind, certs.server_config(&[b"h3"]));
    (server, front)
}

fn check_json(url: &str, ca: &str) -> (Option<i32>, Value) {
    let run = stampede(&["check", "--http3", "--ca", ca, "--json", url]);
    let report =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("--json printed no JSON ({e})\n{}", run.output()));
    (run.code(), report)
}

fn failed_ids(report: &Value) -> Vec<String> {
    let results = report["results"].as_array().expect("results is an array");
    results.iter().filter(|r| r["passed"] == false).map(|r| r["id"].as_str().unwrap_or("?").to_string()).collect()
}

#[test]
fn a_correct_server_over_http3_passes_every_rule_of_the_stampede_contract() {
    let certs = Certs::generate();
    let (_server, front) = h3_server(Fault::None, &certs);
    let ca = certs.ca_file("h3-check-pass");
    let (code, report) = check_json(&front.url(), ca.to_str().unwrap());
    assert_eq!(code, Some(0), "failed: {:?}\n{report:#}", failed_ids(&report));
    assert_eq!(report["contract"], "stampede");
}

#[test]
fn a_fault_over_http3_fails_its_rule_with_exit_1() {
    let certs = Certs::generate();
    let (_server, front) = h3_server(Fault::PlaintextNewline, &certs);
    let ca = certs.ca_file("h3-check-fault");
    let (code, report) = check_json(&front.url(), ca.to_str().unwrap());
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(failed_ids(&report), ["plaintext", "plaintext-query"], "{report:#}");
    let plaintext = report["results"].as_array().unwrap().iter().find(|r| r["id"] == "plaintext").unwrap();
    assert_eq!(plaintext["request"], "GET /plaintext HTTP/3", "{plaintext:#}");
}

#[test]
fn a_server_without_http3_is_one_line_and_exit_2() {
    // HTTP/1.1 on TCP only: nothing answers QUIC on the UDP port.
    let server = TestServer::start(Fault::None);
    let url = server.url().replace("http://", "https://");
    let run = stampede(&["check", "--http3", "-k", "--timeout", "1s", &url]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("no HTTP/3 answer on UDP"), "{}", run.stderr);
}

#[test]
fn quic_without_h3_by_alpn_is_one_line_and_exit_2() {
    let certs = Certs::generate();
    let srv = H3Server::start(Behaviour::Ok, certs.server_config(&[b"h2"]));
    let run = stampede(&["check", "--http3", "-k", &srv.url("/")]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("not HTTP/3"), "{}", run.stderr);
}
