//! `stampede check --contract httparena` and `--contract web-frameworks`
//! through the real binary (issue #43): an arena-shaped server that does the
//! work passes every rule with no warning, and the same server with one
//! arena fault fails exactly the rules that catch it (a cached answer to a
//! randomised POST, a chunked body left out of the sum, a body read in one
//! `read` under split writes, gzip nobody asked for); the arenas' leniencies
//! pass with a warning only where the server departs. A default check of an
//! arena server says it may speak another contract; a check that mostly
//! passes does not. Bad `send` fields in a contract file exit 2 naming them.

use std::path::Path;

use serde_json::Value;

use super::contract::{check_json_on, failed_ids, rule, stampede};
use stampede_testkit::contract::{Api, Fault, TestServer};

/// The ids that passed with a warning.
fn warned_ids(report: &Value) -> Vec<String> {
    let results = report["results"].as_array().expect("results is an array");
    results.iter().filter(|r| r["warning"] == true).map(|r| r["id"].as_str().unwrap_or("?").to_string()).collect()
}

/// `contract` on an `api` server with `fault` fails exactly `ids`, exit 1.
fn fails_exactly(api: Api, contract: &str, fault: Fault, ids: &[&str]) -> Value {
    let (code, report) = check_json_on(api, contract, fault);
    assert_eq!(failed_ids(&report), ids, "{fault:?}\n{report:#}");
    assert_eq!(code, Some(1), "{fault:?}: exit code\n{report:#}");
    report
}

#[test]
fn a_correct_arena_server_passes_httparena_with_no_warning() {
    let (code, report) = check_json_on(Api::HttpArena, "httparena", Fault::None);
    assert_eq!((code, failed_ids(&report), warned_ids(&report)), (Some(0), vec![], vec![]), "{report:#}");
    assert_eq!(report["contract"], "httparena");
    assert_eq!(report["results"].as_array().map(Vec::len), Some(26), "{report:#}");
}

#[test]
fn a_correct_server_passes_web_frameworks_with_no_warning() {
    let (code, report) = check_json_on(Api::WebFrameworks, "web-frameworks", Fault::None);
    assert_eq!((code, failed_ids(&report), warned_ids(&report)), (Some(0), vec![], vec![]), "{report:#}");
}

#[test]
fn a_cached_answer_to_randomised_posts_fails_them() {
    let report = fails_exactly(
        Api::HttpArena,
        "httparena",
        Fault::CachedAnswer,
        &["baseline-post-random-1", "baseline-post-random-2"],
    );
    let failed = rule(&report, "baseline-post-random-1");
    assert!(
        failed["reason"].as_str().unwrap_or_default().starts_with("body is \"75\" (2 bytes), expected exactly"),
        "{failed:#}"
    );
    let request = failed["request"].as_str().unwrap_or_default();
    assert!(request.starts_with("POST /baseline11?a=13&b=42 HTTP/1.1 (a 3-byte body, Content-Length: \""), "{request}");
}

#[test]
fn a_wrong_sum_on_a_chunked_post_fails_the_chunked_rule() {
    let report = fails_exactly(Api::HttpArena, "httparena", Fault::ChunkedBodyIgnored, &["baseline-post-chunked"]);
    let failed = rule(&report, "baseline-post-chunked");
    assert_eq!(failed["reason"], "body is \"55\" (2 bytes), expected exactly \"75\" (2 bytes)");
    assert_eq!(failed["request"], "POST /baseline11?a=13&b=42 HTTP/1.1 (a 2-byte body, chunked: \"20\")");
}

/// The body "20" goes as "2", then "0" 30 ms later: one read sees "2".
/// Uploads larger than one read fail the same way; a body in one write passes.
#[test]
fn a_body_read_once_fails_the_split_writes() {
    let report = fails_exactly(
        Api::HttpArena,
        "httparena",
        Fault::ReadsBodyOnce,
        &["baseline-split-body", "upload-500k", "upload-2m", "upload-10m", "upload-20m"],
    );
    let failed = rule(&report, "baseline-split-body");
    assert_eq!(failed["reason"], "body is \"57\" (2 bytes), expected exactly \"75\" (2 bytes)");
    assert_eq!(
        failed["request"],
        "POST /baseline11?a=13&b=42 HTTP/1.1 (a 2-byte body, Content-Length: \"20\") in 3 writes"
    );
}

#[test]
fn compression_when_not_asked_fails_json_comp_unasked_only() {
    let report = fails_exactly(Api::HttpArena, "httparena", Fault::CompressesUnasked, &["json-comp-unasked"]);
    let reason = rule(&report, "json-comp-unasked")["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.starts_with("Content-Encoding: gzip, expected none"), "{reason}");
}

#[test]
fn a_trailing_newline_passes_httparena_with_a_warning() {
    let (code, report) = check_json_on(Api::HttpArena, "httparena", Fault::TrailingNewline);
    assert_eq!((code, failed_ids(&report)), (Some(0), vec![]), "{report:#}");
    let warned = warned_ids(&report);
    assert!(warned.contains(&"baseline-get".to_string()) && !warned.contains(&"pipeline".to_string()), "{warned:?}");
    let reason = rule(&report, "baseline-post")["reason"].as_str().unwrap_or_default().to_string();
    assert_eq!(reason, "\"75\\n\" for \"75\" (trailing-newline)");
}

#[test]
fn web_frameworks_catches_a_fixed_id_and_warns_on_201() {
    let report = fails_exactly(Api::WebFrameworks, "web-frameworks", Fault::FixedUserId, &["user-id-random"]);
    assert_eq!(rule(&report, "user-id")["passed"], true);
    let (code, report) = check_json_on(Api::WebFrameworks, "web-frameworks", Fault::Created201);
    assert_eq!((code, warned_ids(&report)), (Some(0), vec!["user-post".to_string()]), "{report:#}");
    assert_eq!(rule(&report, "user-post")["reason"], "status 201, expected 200 (success-status)");
}

#[test]
fn a_default_check_of_an_arena_server_says_it_may_speak_another_contract() {
    const HINT: &str =
        "the server may speak another contract; `stampede check --list-contracts` lists the built-in ones";
    let arena = TestServer::serving(Api::HttpArena, Fault::None);
    let run = stampede(&["check", &arena.url()]);
    assert_eq!(run.code(), Some(1), "{}", run.output());
    let hint: Vec<&str> = run.stderr.lines().filter(|l| l.contains(HINT)).collect();
    assert_eq!(hint.len(), 1, "{}", run.output());
    assert!(
        hint[0].starts_with("stampede: ") && hint[0].contains("(the first: status 404, expected 200)"),
        "{}",
        hint[0]
    );
    assert!(hint[0].contains("httparena, web-frameworks"), "{}", hint[0]);
    let run = stampede(&["check", "--contract", "web-frameworks", &arena.url()]);
    assert!(run.stderr.contains(HINT), "{}", run.output());
    // A server of the contract with one fault: a failure, no hint.
    let stampede_server = TestServer::start(Fault::NoDate);
    let run = stampede(&["check", &stampede_server.url()]);
    assert_eq!(run.code(), Some(1), "{}", run.output());
    assert!(!run.stderr.contains(HINT), "{}", run.output());
}

/// docs/check.md has a row for every rule of both arena contracts.
#[test]
fn every_arena_rule_is_documented() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/check.md")).unwrap();
    for (api, contract) in [(Api::HttpArena, "httparena"), (Api::WebFrameworks, "web-frameworks")] {
        let (_, report) = check_json_on(api, contract, Fault::None);
        let ids: Vec<&str> = report["results"].as_array().unwrap().iter().filter_map(|r| r["id"].as_str()).collect();
        let missing: Vec<&&str> = ids.iter().filter(|id| !docs.contains(&format!("`{id}`"))).collect();
        assert!(missing.is_empty(), "{contract} rules missing from docs/check.md: {missing:?}");
    }
}

#[test]
fn list_contracts_names_the_arenas() {
    let run = stampede(&["check", "--list-contracts"]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    let names: Vec<&str> = run.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(names.contains(&"httparena") && names.contains(&"web-frameworks"), "{}", run.stdout);
}

#[test]
fn bad_send_fields_exit_2_naming_the_file_and_field() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("invalid-send-contract.toml");
    let file_arg = file.to_string_lossy().into_owned();
    let rule = "name = \"x\"\nversion = \"1\"\n[[rule]]\nid = \"a\"\npath = \"/\"\n";
    for (extra, field) in [
        ("send = { split = [\"middle\"] }\n", "rule[1].send.split[1] (line 6): "),
        ("send = { method = \"POST\", body = \"{rand:9..1}\" }\n", "rule[1].send.body (id \"a\"): "),
        ("send = { file = \"no-such-body.bin\" }\n", "rule[1].send.file (id \"a\"): "),
        ("content_encoding = \"gzip\"\n", "rule[1].content_encoding (id \"a\"): "),
        ("answer = \"total\"\n", "rule[1].answer (line 6): "),
    ] {
        std::fs::write(&file, format!("{rule}{extra}")).unwrap();
        let run = stampede(&["check", "--contract", &file_arg, "http://127.0.0.1:1/"]);
        assert_eq!(run.code(), Some(2), "{}", run.output());
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        let want = format!("stampede: error: {file_arg}: {field}");
        assert!(run.stderr.starts_with(&want), "expected {want:?}…\ngot {}", run.stderr);
    }
}

/// A body file is read relative to the contract file, and sent.
#[test]
fn a_body_file_beside_the_contract_is_sent() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("arena-body-file");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("body.bin"), vec![7u8; 1000]).unwrap();
    let contract = "name = \"upload\"\nversion = \"1\"\n[[rule]]\nid = \"upload-file\"\npath = \"/upload\"\nsend = { method = \"POST\", file = \"body.bin\", split = [\"head\", \"body\"] }\nanswer = \"length\"\n";
    std::fs::write(dir.join("upload.toml"), contract).unwrap();
    let server = TestServer::serving(Api::HttpArena, Fault::None);
    let run = stampede(&["check", "--contract", &dir.join("upload.toml").to_string_lossy(), &server.url()]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    assert!(
        run.stdout.contains("PASS  upload-file  POST /upload answers 200, the number of body bytes it sent"),
        "{}",
        run.stdout
    );
    let once = TestServer::serving(Api::HttpArena, Fault::ReadsBodyOnce);
    let run = stampede(&["check", "--contract", &dir.join("upload.toml").to_string_lossy(), &once.url()]);
    assert_eq!(run.code(), Some(1), "{}", run.output());
    assert!(run.stdout.contains("FAIL  upload-file"), "{}", run.stdout);
}
