//! `stampede load` with the request and response shapes the arenas use
//! (issue #43 part 4), against the arena-shaped test server: a POST whose
//! body goes chunked is read by a server that de-chunks it (no error, no
//! reconnect); compressed answers are decoded and counted by coding when a
//! request asks for compression, and never reported when none asks, even
//! from a server that compresses unasked.

use std::time::Duration;

use serde_json::Value;

use stampede_testkit::contract::{Api, Fault, TestServer};
use stampede_testkit::load::load_json;

const DEADLINE: Duration = Duration::from_secs(30);

fn load(server: &TestServer, extra: &[&str], path: &str) -> Value {
    let url = format!("{}{path}", server.url());
    let mut args = vec!["-c", "2", "-n", "200"];
    args.extend_from_slice(extra);
    args.push(&url);
    load_json(&args, DEADLINE)
}

fn clean(r: &Value) {
    assert_eq!(r["requests"], 200, "{r}");
    assert_eq!(r["status_codes"]["200"], 200, "every answer 200: {r}");
    assert_eq!(r["reconnects"], 0, "no connection lost to bad framing: {r}");
    let errors = r["errors"].as_object().unwrap();
    assert!(errors.values().all(|n| n.as_u64() == Some(0)), "no error: {r}");
}

#[test]
fn a_chunked_post_is_framed_so_the_server_reads_every_request() {
    let server = TestServer::serving(Api::HttpArena, Fault::None);
    let chunked = ["-m", "POST", "-H", "Transfer-Encoding: chunked", "--body", "20"];
    clean(&load(&server, &chunked, "/baseline11?a=13&b=42"));
}

#[test]
fn compressed_answers_are_decoded_and_counted_when_asked() {
    let server = TestServer::serving(Api::HttpArena, Fault::None);
    let r = load(&server, &["-H", "Accept-Encoding: gzip"], "/json/20");
    clean(&r);
    let codings = r["content_encodings"].as_array().unwrap_or_else(|| panic!("content_encodings: {r}"));
    assert_eq!(codings.len(), 1, "{r}");
    let gz = &codings[0];
    assert_eq!(gz["coding"], "gzip");
    assert_eq!(gz["responses"], 200);
    assert_eq!(gz["undecodable"], 0);
    let (wire, decoded) = (gz["wire_bytes"].as_u64().unwrap(), gz["decoded_bytes"].as_u64().unwrap());
    assert!(wire > 0 && decoded > wire, "JSON compresses: {wire} on the wire, {decoded} decoded");
}

#[test]
fn no_coding_is_reported_when_no_request_asks_even_from_a_server_that_compresses_unasked() {
    for fault in [Fault::None, Fault::CompressesUnasked] {
        let server = TestServer::serving(Api::HttpArena, fault);
        let r = load(&server, &[], "/json/20");
        clean(&r);
        assert!(r.get("content_encodings").is_none(), "{fault:?}: {r}");
    }
}
