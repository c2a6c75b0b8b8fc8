//! `stampede check` at a server's own URLs: `--url NAME=URL` and
//! `--tfb-config benchmark_config.json` (a TechEmpower implementation's
//! config, its URLs and port). A server that serves TechEmpower's plaintext and
//! json tests only at its own URLs passes when they are given and fails when
//! they are not; a missing or malformed config, an unknown `--test` and a
//! database test without `--database` are exit 2 with one line naming them.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use stampede_testkit::contract::{Api, Fault, TestServer};
use stampede_testkit::process::Finished;
use stampede_testkit::Stampede;

fn stampede(args: &[&str]) -> Finished {
    Stampede::new().args(args).env("NO_COLOR", "1").deadline(Duration::from_secs(60)).finished()
}

/// A file in this test's own folder, removed with it by the caller.
fn scratch(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stampede-check-tfb-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A TechEmpower-style config: `default` at the server's own URLs and port,
/// and `pg`, a database test.
fn config(port: u16) -> String {
    format!(
        r#"{{"framework": "own", "tests": [{{
  "default": {{"plaintext_url": "/hello/text", "json_url": "/hello/json?pretty=", "port": {port},
               "approach": "Realistic", "orm": "Raw", "display_name": "own"}},
  "pg": {{"db_url": "/dbs", "query_url": "/queries/", "update_url": "/update?q=", "port": {port}}}
}}]}}"#
    )
}

#[test]
fn tfb_config_urls_and_port_pass_where_the_fixed_paths_fail() {
    let server = TestServer::serving(Api::TfbOwnUrls, Fault::None);
    let port = server.url().rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let path = scratch("pass", "benchmark_config.json", &config(port));
    let cfg = path.to_str().unwrap();

    let run = stampede(&["check", "--tfb-config", cfg, "--test", "default"]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    assert!(
        run.stdout.starts_with(&format!("test default of {cfg}, at json=/hello/json?pretty= plaintext=/hello/text\n")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("contract tfb (version"), "{}", run.stdout);
    assert!(!run.stdout.contains("FAIL"), "{}", run.stdout);

    let run = stampede(&["check", "--tfb-config", cfg, "--test", "default", "--json"]);
    assert_eq!(run.code(), Some(0), "{}", run.output());
    let reports: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}\n{}", run.output()));
    let reports = reports.as_array().expect("--json with --tfb-config prints an array of reports");
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["contract"], "tfb");
    assert_eq!(reports[0]["failed"], 0, "{:#}", reports[0]);

    let run = stampede(&[
        "check",
        "--contract",
        "tfb",
        "--url",
        "plaintext=/hello/text",
        "--url",
        "json=/hello/json?pretty=",
        &server.url(),
    ]);
    assert_eq!(run.code(), Some(0), "--url gives the same map: {}", run.output());

    let fixed = stampede(&["check", "--contract", "tfb", &server.url()]);
    assert_eq!(fixed.code(), Some(1), "at the contract's own paths the server answers 404: {}", fixed.output());
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

#[test]
fn a_bad_tfb_config_is_exit_2_naming_it() {
    let missing = "/nonexistent/benchmark_config.json";
    let run = stampede(&["check", "--tfb-config", missing]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert!(run.stderr.contains(&format!("--tfb-config: {missing}: cannot read")), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);

    let bad = scratch("bad", "benchmark_config.json", r#"{"tests": {"default": {"json_url": "/json"}}}"#);
    let run = stampede(&["check", "--tfb-config", bad.to_str().unwrap()]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert!(
        run.stderr.contains(&format!("{}: not a TechEmpower benchmark_config.json", bad.display())),
        "{}",
        run.stderr
    );

    let good = scratch("bad", "two.json", &config(1));
    let run = stampede(&["check", "--tfb-config", good.to_str().unwrap(), "--test", "mysql"]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert!(run.stderr.contains("no test named \"mysql\"; it declares default, pg"), "{}", run.stderr);

    let run = stampede(&["check", "--tfb-config", good.to_str().unwrap()]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert!(run.stderr.contains("test \"pg\"") && run.stderr.contains("--database"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "refused before any request: {}", run.stdout);

    let run = stampede(&["check", "--contract", "tfb", "--url", "plaintext", "http://127.0.0.1:1"]);
    assert_eq!(run.code(), Some(2), "{}", run.output());
    assert!(run.stderr.contains("--url \"plaintext\": write NAME=URL"), "{}", run.stderr);
    std::fs::remove_dir_all(bad.parent().unwrap()).unwrap();
}
