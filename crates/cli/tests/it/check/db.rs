//! `stampede check --contract db --database URL`: the database rules pass
//! against a server that does the four endpoints right (the in-test one, and
//! the Go app when Go is installed) and fail, by name, against servers that
//! break one rule each: a fortune not escaped, fortunes out of order, an
//! update not written, N not clamped, a number the row does not hold; and,
//! through the database's own counts under 512 concurrent requests, a server
//! that caches rows, one that reads /queries in one statement, one that
//! updates one row of N, and one that fails only under concurrency; one that
//! writes swapped UPDATE parameters (as TechEmpower's uvicorn does) is named
//! so; and a TechEmpower-style config with database URLs of another shape
//! (`/dbs`, `/queries?q=`, `/update?q=`) passes with no warning.

use stampede_testkit::db;
use stampede_testkit::Stampede;

use std::process::Command;

use db::{cluster, serve, Fault};

fn check(base: &str, database: &str) -> (i32, String) {
    check_contract("db", base, database)
}

/// `stampede check --contract CONTRACT` (a built-in name or a file).
fn check_contract(contract: &str, base: &str, database: &str) -> (i32, String) {
    let out = Stampede::new()
        .args(["check", "--contract", contract, "--database", database, base])
        .env("NO_COLOR", "1")
        .output();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// The built-in db contract (contracts/db.toml) with its four concurrent
/// phases cut from 512 requests over 512 connections to 32 over 32 (the
/// contract's own `requests` and `connections` fields, docs/contracts.md), in
/// `dir`: for the tests whose faults every phase size shows, so that only the
/// tests about the phases and the counts pay for TechEmpower's 512.
fn small_phases_contract(dir: &std::path::Path) -> String {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let db = std::fs::read_to_string(repo.join("contracts/db.toml")).unwrap();
    let phase = "check = \"concurrent\"\n";
    assert_eq!(db.matches(phase).count(), 4, "contracts/db.toml's concurrent probes changed");
    let small = db.replace(phase, &format!("{phase}requests = 32\nconnections = 32\n"));
    let path = dir.join("db-small-phases.toml");
    std::fs::write(&path, small).unwrap();
    path.display().to_string()
}

/// The ids of the rules reported with `word` (`FAIL`, `WARN`).
fn reported(report: &str, word: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| l.strip_prefix(word))
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

fn failed(report: &str) -> Vec<String> {
    reported(report, "FAIL")
}

fn warned(report: &str) -> Vec<String> {
    reported(report, "WARN")
}

#[test]
fn each_database_rule_fails_against_the_server_that_breaks_it() {
    let (db, logs) = cluster("rules");
    let url = db.url().to_string();
    // The right server passes TechEmpower's 512 at once; each fault below
    // is one a phase of 32 shows as well.
    let (code, report) = check(&serve(&url, Fault::None), &url);
    assert_eq!(code, 0, "a right server fails:\n{report}");
    assert_eq!(warned(&report), Vec::<String>::new(), "a right server is warned:\n{report}");
    let contract = small_phases_contract(&logs);
    let check = |base: &str, url: &str| check_contract(&contract, base, url);
    // TechEmpower's quoted tables are seeded too, for servers that use them.
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let count = |client: &mut postgres::Client, table: &str| -> i64 {
        client.query_one(&format!("SELECT count(*) FROM {table}"), &[]).unwrap().get(0)
    };
    assert_eq!(count(&mut client, "\"World\""), 10_000);
    assert_eq!(count(&mut client, "\"Fortune\""), 12);
    drop(client);
    let cases = [
        (Fault::NoEscape, vec!["fortunes-escaped"]),
        (Fault::Unsorted, vec!["fortunes-sorted"]),
        (
            Fault::NoPersist,
            vec![
                "updates-20",
                "updates-clamp-0",
                "updates-clamp-501",
                "updates-not-a-number",
                "updates-empty",
                "updates-counted",
            ],
        ),
        (Fault::NoClamp, vec!["queries-clamp-0", "updates-clamp-0"]),
        (Fault::WrongNumber, vec!["db-row"]),
        (Fault::BarePage, vec!["fortunes-html", "fortunes-page"]),
    ];
    for (fault, rules) in cases {
        let (code, report) = check(&serve(&url, fault), &url);
        assert_eq!(code, 1, "{fault:?}:\n{report}");
        assert_eq!(failed(&report), rules, "{fault:?}:\n{report}");
    }
    // TechEmpower's verifier passes this one (rows did change); the answer
    // is not what the database holds, and the reason says why.
    let (code, report) = check(&serve(&url, Fault::SwappedUpdate), &url);
    assert_eq!(code, 1, "{report}");
    let updates = ["updates-20", "updates-clamp-0", "updates-clamp-501", "updates-not-a-number", "updates-empty"];
    assert_eq!(failed(&report), updates, "{report}");
    assert!(report.contains("the UPDATE's id and randomNumber parameters are swapped"), "{report}");
    // TechEmpower's verifier only warns about an unclamped 501 case, and
    // lower-cases keys: both pass `db` with a warning that names them.
    let (_, report) = check(&serve(&url, Fault::NoClamp), &url);
    assert_eq!(warned(&report), ["queries-clamp-501", "updates-clamp-501"], "{report}");
    assert!(report.contains("501 rows for N = 501, expected 500 (upper-clamp)"), "{report}");
    let (code, report) = check(&serve(&url, Fault::LowerCaseKeys), &url);
    assert_eq!(code, 0, "lower-case keys fail db:\n{report}");
    assert!(warned(&report).contains(&"db-row".to_string()), "{report}");
    assert!(report.contains("key \"randomnumber\" for \"randomNumber\" (key-case)"), "{report}");
    assert!(report.contains("warnings, not failures, under this contract (as TechEmpower's verifier"), "{report}");
    drop(db);
    let _ = std::fs::remove_dir_all(logs);
}

/// A TechEmpower-style config for a server whose database URLs have shapes
/// of their own (Go gin's `/dbs`, axum's `?q=`, go-std's `/update`).
fn own_urls_config(base: &str, dir: &std::path::Path) -> std::path::PathBuf {
    let port = base.rsplit(':').next().unwrap();
    let config = format!(
        r#"{{"framework": "own", "tests": [{{"pg": {{"db_url": "/dbs", "query_url": "/queries?q=",
  "update_url": "/update?q=", "fortune_url": "/fortunes", "port": {port}, "database": "Postgres"}}}}]}}"#
    );
    let path = dir.join("benchmark_config.json");
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn tfb_config_db_urls_of_another_shape_pass_with_no_upper_clamp_warning() {
    let (db, logs) = cluster("tfb-urls");
    let url = db.url().to_string();
    let base = serve(&url, Fault::OwnUrls);
    let config = own_urls_config(&base, &logs);
    let out = Stampede::new()
        .args(["check", "--tfb-config", config.to_str().unwrap(), "--test", "pg", "--database", &url])
        .env("NO_COLOR", "1")
        .output();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(report.contains("contract db (version"), "{report}");
    assert!(report.contains("at db=/dbs fortunes=/fortunes queries=/queries?q= updates=/update?q=\n"), "{report}");
    // 500 rows for N = 501 is TechEmpower's clamp: no warning (it was one).
    assert_eq!(warned(&report), Vec::<String>::new(), "{report}");
    assert!(report.contains("PASS  queries-clamp-501") && report.contains("PASS  updates-counted"), "{report}");
    // Each line names the request sent, not the contract's path.
    assert!(report.contains("GET /queries?q=20 answers 20 row(s)"), "{report}");
    assert!(report.contains("512 GET /update?q=20 over 512 connections"), "{report}");
    assert!(!report.contains("?queries="), "a line names the contract's path:\n{report}");
    let (code, fixed) = check(&base, &url);
    assert_eq!(code, 1, "at the contract's own paths the server answers otherwise:\n{fixed}");
    assert!(failed(&fixed).contains(&"queries-20".to_string()), "{fixed}");
    drop(db);
    let _ = std::fs::remove_dir_all(logs);
}

#[test]
fn counting_the_database_work_fails_a_cache_a_batch_and_skipped_updates() {
    let (db, logs) = cluster("counts");
    let url = db.url().to_string();
    let cases = [
        (Fault::CachedRows, "db-counted", "rows come from a cache"),
        (Fault::OneStatement, "queries-counted", "fewer statements than rows"),
        (Fault::OneRowUpdated, "updates-counted", "fewer rows updated than asked"),
    ];
    for (fault, rule, why) in cases {
        let (code, report) = check(&serve(&url, fault), &url);
        assert_eq!(code, 1, "{fault:?}:\n{report}");
        assert_eq!(failed(&report), [rule], "{fault:?}:\n{report}");
        assert!(report.contains(why), "{fault:?}:\n{report}");
    }
    drop(db);
    let _ = std::fs::remove_dir_all(logs);
}

#[test]
fn a_server_that_fails_only_under_concurrency_fails_the_concurrent_phase() {
    let (db, logs) = cluster("overload");
    let url = db.url().to_string();
    let (code, report) = check(&serve(&url, Fault::Overload), &url);
    assert_eq!(code, 1, "{report}");
    let concurrent = ["db-concurrent", "queries-concurrent", "fortunes-concurrent", "updates-concurrent"];
    assert_eq!(failed(&report), concurrent, "{report}");
    assert!(
        report.contains("responses failed") && report.contains("answered HTTP/1.1 503 Service Unavailable"),
        "{report}"
    );
    drop(db);
    let _ = std::fs::remove_dir_all(logs);
}

#[test]
fn the_db_contract_without_a_database_says_to_give_one() {
    let out = Stampede::new().args(["check", "--contract", "db", "http://127.0.0.1:9"]).output();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--database postgres://"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn the_go_app_passes_the_database_rules() {
    if Command::new("go").arg("version").output().is_err() {
        eprintln!("go is not installed: skipped");
        return;
    }
    let (db, logs) = cluster("go");
    let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps/go");
    let binary = logs.join("go-server");
    let built = Command::new("go").args(["build", "-o"]).arg(&binary).arg(".").current_dir(&app).status().unwrap();
    assert!(built.success());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(&binary).env("PORT", port.to_string()).env("DATABASE_URL", db.url()).spawn().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (code, report) = check(&base, db.url());
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{report}");
    drop(db);
    let _ = std::fs::remove_dir_all(logs);
}
