//! A scenario's `[database]`: `stampede run` starts a private PostgreSQL
//! cluster before the apps, gives them its settings (DATABASE_URL, PG*), and
//! leaves nothing of it behind (no postgres process, no cluster folder)
//! after a normal run, after an app that fails to start, and after SIGINT or
//! SIGTERM mid-load. The cluster's folder goes under TMPDIR, set here to the
//! test's scratch folder; every postgres process works in that folder (its
//! data directory), which is how the tests find them.

use stampede_testkit::run;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use run::{assert_nothing_left, text, wait_for, wait_output, Scratch};

/// Processes whose working directory is inside `dir`: the cluster's.
fn cluster_processes(dir: &Path) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir)))
        .collect()
}

fn cluster_folders(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("stampede-db-"))
        .collect()
}

fn assert_cluster_gone(s: &Scratch) {
    let gone = wait_for(Duration::from_secs(5), || cluster_processes(&s.dir).is_empty());
    assert!(gone, "postgres processes left: {:?}", cluster_processes(&s.dir));
    assert!(cluster_folders(&s.dir).is_empty(), "cluster folders left: {:?}", cluster_folders(&s.dir));
}

fn scenario(s: &Scratch, app: &Path, duration: &str) -> String {
    s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[database]\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"{duration}\"\nwarmup = \"0s\"\n",
        app.display()
    ))
    .to_string_lossy()
    .into_owned()
}

fn run_with_tmpdir(s: &Scratch, args: &[&str]) -> std::process::Child {
    s.stampede()
        .arg("run")
        .args(args)
        .current_dir(&s.dir)
        .env("TMPDIR", &s.dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn run_to_end(s: &Scratch, scenario: &str) -> std::process::Output {
    wait_output(run_with_tmpdir(s, &[scenario, "--out", s.out().to_str().unwrap()]), Duration::from_secs(180))
}

#[test]
fn the_cluster_is_gone_after_a_normal_run() {
    let s = Scratch::new("db-normal");
    let app = s.app("alpha", "");
    let scenario = scenario(&s, &app, "1s");
    let out = run_to_end(&s, &scenario);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = s.results().unwrap();
    assert_eq!(doc["runs"][0]["valid"], true, "{}", doc["runs"][0]["invalid_reason"]);
    let log = std::fs::read_dir(s.out()).unwrap().next().unwrap().unwrap().path().join("logs/database.log");
    assert!(std::fs::read_to_string(&log).unwrap().contains("ready to accept connections"));
    assert_cluster_gone(&s);
    assert_nothing_left(&s);
}

#[test]
fn the_cluster_is_gone_after_an_app_fails_to_start() {
    let s = Scratch::new("db-appfails");
    let app = s.manifest("broken", "name = \"broken\"\nbuild = \"true\"\nrun = \"exit 3\"\nversion = \"echo 1\"\n");
    let scenario = scenario(&s, &app, "1s");
    let out = run_to_end(&s, &scenario);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc = s.results().unwrap();
    assert!(doc["runs"][0]["invalid_reason"].as_str().unwrap().contains("crashed during start"), "{doc}");
    assert_cluster_gone(&s);
}

/// Sends `signal` while the load runs: the app has the database's settings,
/// and afterwards nothing of the cluster is left.
fn interrupted_mid_load(test: &str, signal: &str, code: i32) {
    let s = Scratch::new(test);
    let app = s.app("alpha", "");
    let scenario = scenario(&s, &app, "30s");
    let child = run_with_tmpdir(&s, &[&scenario, "--out", s.out().to_str().unwrap()]);
    let loading = wait_for(Duration::from_secs(120), || s.leftovers().iter().any(|(_, cmd)| cmd.contains(" load ")));
    assert!(loading, "the load never started");
    assert!(!cluster_processes(&s.dir).is_empty(), "no postgres process works in the scratch folder");
    let (app_pid, _) = s.leftovers().into_iter().find(|(_, cmd)| cmd.contains("contract_server.py")).unwrap();
    let environ = String::from_utf8_lossy(&std::fs::read(format!("/proc/{app_pid}/environ")).unwrap()).into_owned();
    assert!(environ.contains("DATABASE_URL=postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:"), "{environ}");
    assert!(environ.contains("PGDATABASE=hello_world"), "{environ}");
    let pid = child.id().to_string();
    assert!(Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap().success());
    let out = wait_output(child, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
    assert_cluster_gone(&s);
    assert_nothing_left(&s);
}

#[test]
fn the_cluster_is_gone_after_sigint() {
    interrupted_mid_load("db-sigint", "SIGINT", 130);
}

#[test]
fn the_cluster_is_gone_after_sigterm() {
    interrupted_mid_load("db-sigterm", "SIGTERM", 143);
}

/// With a database, each app is also checked against the `db` contract,
/// through that database: an app without the database endpoints is not
/// measured on them (its /plaintext still is: run_tfb.rs).
#[test]
fn an_app_without_the_database_endpoints_fails_the_db_contract() {
    let s = Scratch::new("db-contract");
    let app = s.app("alpha", "");
    let written = scenario(&s, &app, "1s");
    let text_of = std::fs::read_to_string(&written).unwrap();
    let scenario =
        s.scenario(&text_of.replace("check = false\n", "").replace("path = \"/plaintext\"", "path = \"/db\""));
    let out = run_to_end(&s, scenario.to_str().unwrap());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc = s.results().unwrap();
    let reason = doc["runs"][0]["invalid_reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("contract check failed") && reason.contains("db-json"), "{reason}");
    assert_cluster_gone(&s);
}
