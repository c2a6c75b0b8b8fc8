//! `stampede check` through the real binary: for each built-in contract, an
//! in-test server that implements exactly that contract passes every rule with
//! exit 0; the same server with one deliberate fault fails the rule named for
//! that fault with exit 1; an unreachable server, a bad URL, an unknown
//! contract or an invalid contract file gives exit 2 and one clear line. The
//! JSON report is compared with the fields and rule ids documented in
//! docs/check.md, and the worked example of docs/contracts.md is run.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use stampede_testkit::contract::{Api, Fault, TestServer};
use stampede_testkit::process::Finished;
use stampede_testkit::Stampede;

pub(crate) fn stampede(args: &[&str]) -> Finished {
    Stampede::new().args(args).env("NO_COLOR", "1").deadline(Duration::from_secs(60)).finished()
}

/// Runs `stampede check --json` against a `stampede` server with `fault`.
fn check_json(fault: Fault) -> (Option<i32>, Value) {
    check_json_on(Api::Stampede, "stampede", fault)
}

/// Runs `stampede check --contract <contract> --json` against an `api` server with `fault`.
pub(crate) fn check_json_on(api: Api, contract: &str, fault: Fault) -> (Option<i32>, Value) {
    let server = TestServer::serving(api, fault);
    let run = stampede(&["check", "--contract", contract, "--json", &server.url()]);
    let report =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("--json printed no JSON ({e})\n{}", run.output()));
    (run.code(), report)
}

pub(crate) fn rule<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["results"]
        .as_array()
        .and_then(|results| results.iter().find(|r| r["id"] == id))
        .unwrap_or_else(|| panic!("no rule {id} in the report: {report:#}"))
}

pub(crate) fn failed_ids(report: &Value) -> Vec<String> {
    let results = report["results"].as_array().expect("results is an array");
    results.iter().filter(|r| r["passed"] == false).map(|r| r["id"].as_str().unwrap_or("?").to_string()).collect()
}

/// A faulty `stampede` server fails `id` (showing `request`), exit 1, and
/// fails no rule outside `also` beyond it.
fn assert_fails(fault: Fault, id: &str, request: &str, also: &[&str]) -> Value {
    assert_fails_on(Api::Stampede, "stampede", fault, id, request, also)
}

/// [`assert_fails`] for an `api` server checked against `contract`.
fn assert_fails_on(api: Api, contract: &str, fault: Fault, id: &str, request: &str, also: &[&str]) -> Value {
    let (code, report) = check_json_on(api, contract, fault);
    assert_eq!(code, Some(1), "{fault:?}: exit code\n{report:#}");
    let failed = rule(&report, id);
    assert_eq!(failed["passed"], false, "{fault:?}: rule {id} passed\n{report:#}");
    assert_eq!(failed["request"], request, "{fault:?}: rule {id} shows the wrong request\n{failed:#}");
    let unexpected: Vec<String> =
        failed_ids(&report).into_iter().filter(|f| f != id && !also.contains(&f.as_str())).collect();
    assert!(unexpected.is_empty(), "{fault:?}: unrelated rules failed too: {unexpected:?}\n{report:#}");
    report
}

#[test]
fn correct_server_passes_every_rule_with_exit_0() {
    let server = TestServer::start(Fault::None);
    let run = stampede(&["check", &server.url()]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    assert!(!run.stdout.contains("FAIL"), "{}", run.output());
    let last = run.stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "last line {last:?}");
    assert!(run.stdout.lines().any(|l| l.starts_with("PASS  fib-90 ")), "{}", run.stdout);
}

#[test]
fn wrong_plaintext_body_fails_plaintext() {
    let report = assert_fails(Fault::PlaintextNewline, "plaintext", "GET /plaintext HTTP/1.1", &["plaintext-query"]);
    let failed = rule(&report, "plaintext");
    assert_eq!(failed["response"]["body_prefix"], "Hello, World!\\n");
    assert!(failed["reason"].as_str().unwrap_or_default().contains("(14 bytes)"), "{failed:#}");
}

#[test]
fn missing_date_fails_header_date() {
    let report = assert_fails(Fault::NoDate, "header-date", "GET /plaintext HTTP/1.1", &["date-clock", "date-ticks"]);
    assert!(rule(&report, "header-date")["reason"].as_str().unwrap_or_default().starts_with("no Date header"));
}

#[test]
fn ok_for_negative_id_fails_values_negative() {
    let report = assert_fails(Fault::AcceptsNegativeId, "values-negative", "GET /values/-1 HTTP/1.1", &[]);
    let failed = rule(&report, "values-negative");
    assert_eq!(failed["reason"], "status 200, expected 400");
    assert_eq!(failed["response"]["status_line"], "HTTP/1.1 200 OK");
}

#[test]
fn stale_date_fails_date_clock() {
    let report = assert_fails(Fault::StaleDate, "date-clock", "GET /plaintext HTTP/1.1", &["date-ticks"]);
    assert!(rule(&report, "date-clock")["reason"].as_str().unwrap_or_default().contains("behind the checker's clock"));
}

#[test]
fn fib_rounded_like_a_double_fails_fib_90() {
    let report = assert_fails(Fault::FibAsDouble, "fib-90", "GET /api/fib/90 HTTP/1.1", &["fib-4000", "fib-max"]);
    let reason = rule(&report, "fib-90")["reason"].as_str().unwrap_or_default().to_string();
    // F79 is the first value above 2^53, so the first to lose digits.
    assert!(
        reason.starts_with("body differs from byte ") && reason.contains(" (item 79, counting from 0, "),
        "{reason}"
    );
    assert!(reason.contains("14472334024676220") && reason.contains("14472334024676221"), "{reason}");
}

#[test]
fn missing_server_on_404_fails_header_server() {
    let report = assert_fails(Fault::NoServerOn404, "header-server", "GET /nope HTTP/1.1", &[]);
    let failed = rule(&report, "header-server");
    assert!(failed["reason"].as_str().unwrap_or_default().starts_with("no Server header (3 of "), "{failed:#}");
}

#[test]
fn failures_are_shown_under_their_rule_in_the_table() {
    let server = TestServer::start(Fault::AcceptsNegativeId);
    let run = stampede(&["check", &server.url()]);
    assert_eq!(run.code(), Some(1), "{}", run.output());
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("FAIL  values-negative ")).expect("a FAIL line");
    assert_eq!(lines[at + 1].trim(), "status 200, expected 400");
    assert_eq!(lines[at + 2].trim(), "> GET /values/-1 HTTP/1.1");
    assert_eq!(lines[at + 3].trim(), "< HTTP/1.1 200 OK");
    assert!(lines[at + 4..]
        .iter()
        .take_while(|l| l.starts_with("      "))
        .any(|l| l.trim() == "< (body, 2 bytes) \"-1\""));
    assert!(lines.last().unwrap_or(&"").ends_with(" passed, 1 failed"), "{}", run.stdout);
}

#[test]
fn each_builtin_contract_passes_against_a_server_implementing_exactly_it() {
    for (api, contract, version) in
        [(Api::Stampede, "stampede", "2"), (Api::Sequence, "sequence", "2"), (Api::Tfb, "tfb", "3")]
    {
        let (code, report) = check_json_on(api, contract, Fault::None);
        assert_eq!(code, Some(0), "{contract}: {:?} failed\n{report:#}", failed_ids(&report));
        assert_eq!(report["contract"], contract, "{report:#}");
        assert_eq!(report["contract_version"], version, "{report:#}");
    }
}

#[test]
fn the_stampede_api_also_passes_the_sequence_contract() {
    let (code, report) = check_json_on(Api::Stampede, "sequence", Fault::None);
    assert_eq!(code, Some(0), "{:?}\n{report:#}", failed_ids(&report));
}

#[test]
fn a_sequence_server_fails_tfb_on_its_first_rule_not_as_unreachable() {
    let (code, report) = check_json_on(Api::Sequence, "tfb", Fault::None);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(rule(&report, "plaintext")["reason"], "status 404, expected 200");
    assert!(failed_ids(&report).contains(&"header-server".to_string()));
}

#[test]
fn wrong_digit_in_f4000_fails_sequence_fib_4000() {
    let report =
        assert_fails_on(Api::Sequence, "sequence", Fault::FibWrongDigit, "fib-4000", "GET /api/fib/4000 HTTP/1.1", &[]);
    let reason = rule(&report, "fib-4000")["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains(" (item 4000, counting from 0, "), "{reason}");
    assert!(reason.ends_with(" (1676923 bytes received, 1676923 expected)"), "{reason}");
}

#[test]
fn trailing_space_fails_sequence_count() {
    let report = assert_fails_on(
        Api::Sequence,
        "sequence",
        Fault::CountTrailingSpace,
        "count",
        "GET /api/count/5 HTTP/1.1",
        &["count-one", "count-zero", "count-1000"],
    );
    assert_eq!(
        rule(&report, "count")["reason"],
        "body is \"1 2 3 4 5 \" (10 bytes), expected exactly \"1 2 3 4 5\" (9 bytes)"
    );
}

#[test]
fn trailing_space_fails_stampede_count_too() {
    assert_fails(Fault::CountTrailingSpace, "count", "GET /api/count/10 HTTP/1.1", &["count-empty", "count-max"]);
}

#[test]
fn missing_server_header_fails_tfb() {
    let report = assert_fails_on(
        Api::Tfb,
        "tfb",
        Fault::NoServer,
        "header-server",
        "GET /plaintext HTTP/1.1",
        &["plaintext", "json"],
    );
    assert_eq!(rule(&report, "plaintext")["reason"], "no Server header");
    assert_eq!(rule(&report, "json")["reason"], "no Server header");
}

#[test]
fn cached_date_fails_tfb_date_ticks() {
    let report = assert_fails_on(
        Api::Tfb,
        "tfb",
        Fault::FrozenDate,
        "date-ticks-plaintext",
        "GET /plaintext HTTP/1.1",
        &["date-ticks-json"],
    );
    let reason = rule(&report, "date-ticks-plaintext")["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("across 2 second boundaries"), "{reason}");
}

#[test]
fn sequence_needs_no_server_or_date_header() {
    let (code, report) = check_json_on(Api::Sequence, "sequence", Fault::NoDate);
    assert_eq!(code, Some(0), "{report:#}");
    assert!(report["results"].as_array().unwrap().iter().all(|r| r["id"] != "header-date"));
}

#[test]
fn unknown_contract_exits_2_with_one_line() {
    let run = stampede(&["check", "--contract", "nope", "http://127.0.0.1:1/"]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "stampede: error: unknown contract \"nope\": not built in (stampede, sequence, tfb, db, grpc, httparena, web-frameworks) and no such file; give a built-in name or the path of a contract file (docs/contracts.md)\n"
    );
}

#[test]
fn invalid_contract_file_exits_2_naming_the_file_and_the_field() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("invalid-contract.toml");
    let file_arg = file.to_string_lossy().into_owned();
    for (text, field) in [
        ("name = \"x\"\nversion = \"1\"\n[[rule]]\nid = \"a\"\npath = \"/\"\nstatus = \"ok\"\n", "rule[1].status (line 6): "),
        ("name = \"x\"\nversion = \"1\"\n[[rule]]\nid = \"a\"\npath = \"/\"\ngenerate = { name = \"fibonacci\", n = 3 }\n", "rule[1].generate.name (line 6): "),
        ("name = \"x\"\nversion = \"1\"\n[[rule]]\nid = \"a\"\npath = \"nope\"\n", "rule[1].path (id \"a\"): "),
        ("name = \"x\"\nversion = \"1\"\nevery_response = [\"header-srever\"]\n[[rule]]\nid = \"a\"\npath = \"/\"\n", "every_response[1] (line 3): "),
    ] {
        std::fs::write(&file, text).unwrap();
        let run = stampede(&["check", "--contract", &file_arg, "http://127.0.0.1:1/"]);
        assert_eq!(run.code(), Some(2), "{}", run.output());
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        let want = format!("stampede: error: {file_arg}: {field}");
        assert!(run.stderr.starts_with(&want), "expected {want:?}…\ngot {}", run.stderr);
    }
    let missing = dir.join("no-such-contract.toml").to_string_lossy().into_owned();
    let run = stampede(&["check", "--contract", &missing, "http://127.0.0.1:1/"]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert!(
        run.stderr.starts_with(&format!("stampede: error: cannot read contract file {missing}: ")),
        "{}",
        run.stderr
    );
}

#[test]
fn list_contracts_shows_every_builtin_with_its_version() {
    let run = stampede(&["check", "--list-contracts"]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    let names: Vec<&str> = run.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(&names[..3], ["stampede", "sequence", "tfb"], "{}", run.stdout);
    assert!(run.stdout.lines().next().unwrap_or("").contains("version 2"), "{}", run.stdout);
}

/// The worked example in docs/contracts.md is a valid contract, and passes
/// against a server that does what it describes.
#[test]
fn the_worked_example_in_docs_contracts_md_passes() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/contracts.md"))
        .expect("docs/contracts.md");
    let start = docs.find("```toml\n").expect("a ```toml block in docs/contracts.md") + 8;
    let end = start + docs[start..].find("```").expect("the block ends");
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("my-api.toml");
    std::fs::write(&file, &docs[start..end]).unwrap();
    let server = TestServer::start(Fault::None);
    let run = stampede(&["check", "--contract", &file.to_string_lossy(), &server.url()]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    assert!(run.stdout.starts_with("contract my-api (version 1), "), "{}", run.stdout);
}

#[test]
fn unreachable_server_exits_2_with_one_line() {
    // A port freed a moment ago; port 1 is not safe, someone may run a server there.
    let url = format!("http://127.0.0.1:{}/", stampede_testkit::net::free_port());
    let run = stampede(&["check", &url]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!("stampede: error: cannot connect to {url}: connection refused (is the server running?)\n")
    );
}

#[test]
fn bad_url_exits_2_naming_the_url() {
    let run = stampede(&["check", "localhost:9009"]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.starts_with("stampede: error: invalid URL \"localhost:9009\": "), "{}", run.stderr);
    assert!(run.stderr.contains("http://"), "{}", run.stderr);
}

#[test]
fn bad_timeout_exits_2_naming_the_flag() {
    for bad in ["5", "0s", "soon"] {
        let run = stampede(&["check", "--timeout", bad, "http://127.0.0.1:1/"]);
        assert_eq!(run.code(), Some(2), "{}", run.output());
        assert!(run.stderr.contains("--timeout"), "{bad}: {}", run.stderr);
    }
}

#[test]
fn help_ends_with_examples_and_exit_codes() {
    let run = stampede(&["check", "--help"]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    let examples = run.stdout.find("Examples:").expect("an Examples section");
    assert!(run.stdout[examples..].contains("stampede check http://127.0.0.1:9009"), "{}", run.stdout);
    assert!(run.stdout.trim_end().ends_with("the server cannot be reached."), "{}", run.stdout);
}

/// Every field of real `--json` output, and every rule id, is in docs/check.md.
#[test]
fn json_report_matches_docs_check_md() {
    let (code, report) = check_json(Fault::PlaintextNewline);
    assert_eq!(code, Some(1));
    assert_eq!(report["schema"], "stampede.check/1");
    assert_eq!(report["contract"], "stampede");
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/check.md")).expect("docs/check.md");
    let documented: BTreeSet<&str> =
        docs.lines().filter_map(|l| l.strip_prefix("| `")).filter_map(|l| l.split('`').next()).collect();
    let mut keys = BTreeSet::new();
    collect_keys(&report, &mut keys);
    let undocumented_fields: Vec<&String> = keys.iter().filter(|k| !documented.contains(k.as_str())).collect();
    assert!(undocumented_fields.is_empty(), "fields missing from docs/check.md tables: {undocumented_fields:?}");
    let ids: Vec<&str> = report["results"].as_array().unwrap().iter().filter_map(|r| r["id"].as_str()).collect();
    let undocumented_ids: Vec<&&str> = ids.iter().filter(|id| !documented.contains(**id)).collect();
    assert!(undocumented_ids.is_empty(), "rule ids missing from docs/check.md tables: {undocumented_ids:?}");
}

fn collect_keys(value: &Value, keys: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                keys.insert(key.clone());
                collect_keys(inner, keys);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_keys(item, keys)),
        _ => {}
    }
}

#[test]
fn sleeps_served_one_at_a_time_fail_sleep_concurrent() {
    let report = assert_fails(Fault::SerialSleep, "sleep-concurrent", "GET /sleep/200 HTTP/1.1", &[]);
    let reason = rule(&report, "sleep-concurrent")["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("one after another") && reason.contains("event loop blocks"), "{reason}");
    let (code, correct) = check_json(Fault::None);
    assert_eq!(code, Some(0), "{correct:#}");
    assert_eq!(rule(&correct, "sleep-concurrent")["passed"], true, "the two overlapped\n{correct:#}");
}

/// The original api_runtime_compare Netty server answers its 400 and 404
/// close-delimited (issue #34): valid HTTP, so the contract named after that
/// project passes it, with a warning naming the paths.
#[test]
fn close_delimited_errors_pass_sequence_with_a_warning_naming_the_paths() {
    let (code, report) = check_json_on(Api::Sequence, "sequence", Fault::CloseDelimitedErrors);
    assert_eq!(code, Some(0), "{:?}\n{report:#}", failed_ids(&report));
    let framing = rule(&report, "framing");
    assert_eq!((framing["passed"].as_bool(), framing["warning"].as_bool()), (Some(true), Some(true)), "{framing:#}");
    let reason = framing["reason"].as_str().unwrap_or_default();
    for path in ["/api/count/abc", "/api/fib/abc", "/api/fib/1.5", "/nope", "/api/nope/5"] {
        assert!(reason.contains(&format!("GET {path} HTTP/1.1")), "{path} not named: {reason}");
    }
    assert!(reason.contains("close-delimited-error"), "{reason}");
    assert_eq!((report["warned"].as_u64(), report["failed"].as_u64()), (Some(1), Some(0)), "{report:#}");
    assert!(report["lenient"].as_array().unwrap().contains(&Value::from("close-delimited-error")));

    let server = TestServer::serving(Api::Sequence, Fault::CloseDelimitedErrors);
    let run = stampede(&["check", "--contract", "sequence", &server.url()]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    assert!(run.stdout.lines().any(|l| l.starts_with("WARN  framing ")), "{}", run.stdout);
    assert!(
        run.stdout.contains("warnings, not failures, under this contract: close-delimited-error"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.trim_end().ends_with(" passed (1 with a warning), 0 failed"), "{}", run.stdout);
}

#[test]
fn close_delimited_errors_still_fail_the_stampede_contract() {
    let report = assert_fails(Fault::CloseDelimitedErrors, "framing", "GET /values/-1 HTTP/1.1", &[]);
    let reason = rule(&report, "framing")["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("its `warn` lacks close-delimited-error"), "{reason}");
    assert_eq!(report["warned"], 0, "{report:#}");
}

#[test]
fn http_1_0_errors_warn_under_sequence_and_fail_under_stampede() {
    let (code, report) = check_json_on(Api::Sequence, "sequence", Fault::Http10Errors);
    assert_eq!(code, Some(0), "{:?}\n{report:#}", failed_ids(&report));
    let version = rule(&report, "http-version");
    assert_eq!(version["warning"], true, "{version:#}");
    assert!(version["reason"].as_str().unwrap_or_default().contains("GET /nope HTTP/1.1"), "{version:#}");
    assert_fails(Fault::Http10Errors, "http-version", "GET /values/-1 HTTP/1.1", &[]);
}

/// TechEmpower's verifier compares keys and the message case-insensitively;
/// `tfb` follows it with a warning, and says so (issue #31).
#[test]
fn hello_world_in_lower_case_passes_tfb_with_a_warning() {
    let (code, report) = check_json_on(Api::Tfb, "tfb", Fault::LowerCaseHello);
    assert_eq!(code, Some(0), "{:?}\n{report:#}", failed_ids(&report));
    assert_eq!(rule(&report, "plaintext")["warning"], true, "{report:#}");
    let json = rule(&report, "json")["reason"].as_str().unwrap_or_default().to_string();
    assert!(json.contains("key \"Message\" for \"message\" (key-case)"), "{json}");
    assert!(json.contains("\"Hello, world!\" for \"Hello, World!\" (message-case)"), "{json}");
    assert_eq!(report["lenient_note"], "as TechEmpower's verifier judges them", "{report:#}");
}
