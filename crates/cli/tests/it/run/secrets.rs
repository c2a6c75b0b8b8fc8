//! No secret leaves the machine in a result (issue 42): a load and a run
//! given credentials in every place they can be given (a URL's userinfo,
//! `Authorization`, `Cookie` and a header the user names, a database URL,
//! the command line) send them to the server as they are, and no file they
//! write (load's JSON and text, the HdrHistogram log, results.json,
//! report.html, the logs) and neither stdout nor stderr shows one.

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::run::{self, text, Scratch};
use stampede_testkit::Stampede;

use base64::Engine as _;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

const URL_PASSWORD: &str = "urlpass-7f3a";
const BEARER: &str = "bearer-5e6f";
const COOKIE: &str = "cookie-91b2";
const API_KEY: &str = "apikey-c4d5";
const DB_PASSWORD: &str = "dbpass-0a1b";

/// Every header line the server received, `Name: value`.
fn headers_received(server: &Hostile) -> BTreeSet<String> {
    let log = server.seen.log.lock().unwrap();
    log.iter().flat_map(|r| r.headers.iter().map(|(n, v)| format!("{n}: {v}"))).collect()
}

/// Every secret, as it could appear: itself, and the URL's credentials as
/// the Basic header carries them.
fn secrets() -> Vec<String> {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("alice:{URL_PASSWORD}"));
    [URL_PASSWORD, BEARER, COOKIE, API_KEY, DB_PASSWORD, &basic].map(String::from).to_vec()
}

/// Fails naming the secret and where it was found.
fn assert_no_secret(what: &str, content: &str) {
    for secret in secrets() {
        assert!(!content.contains(&secret), "{secret} is in {what}:\n{content}");
    }
}

/// Every file under `dir`, read as text.
fn assert_no_secret_in_files(dir: &Path) -> usize {
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files += assert_no_secret_in_files(&path);
        } else {
            assert_no_secret(&path.display().to_string(), &String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
            files += 1;
        }
    }
    files
}

fn stampede(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = run::stampede()
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), stdin) {
        pipe.write_all(bytes).unwrap();
    }
    run::wait_output(child, std::time::Duration::from_secs(60))
}

#[test]
fn a_load_sends_url_credentials_and_headers_and_no_output_shows_them() {
    let server = Hostile::start(Trick::None);
    let s = Scratch::new("secrets-load");
    let hlog = s.dir.join("load.hlog");
    let url = format!("http://alice:{URL_PASSWORD}@{}/plaintext", server.addr);
    let cookie = format!("Cookie: sess={COOKIE}");
    let key = format!("X-Api-Key: {API_KEY}");
    let flags = ["-n", "40", "-c", "2", "--slow-log", "5", "-H", &cookie, "-H", &key];
    let hlog_flag = ["--hdr-log", hlog.to_str().unwrap()];
    let json = stampede(&[&["load", "--json"][..], &flags, &hlog_flag, &[&url]].concat(), None);
    assert_eq!(json.status.code(), Some(0), "{}", text(&json.stderr));
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("alice:{URL_PASSWORD}"));
    let received = headers_received(&server);
    for sent in [format!("Authorization: Basic {basic}"), cookie.clone(), key.clone()] {
        assert!(received.contains(&sent), "the server did not receive {sent:?}: {received:?}");
    }
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["url"], format!("http://alice:***@{}/plaintext", server.addr));
    assert_eq!(doc["requests"], 40);
    let document = s.dir.join("load.json");
    std::fs::write(&document, &json.stdout).unwrap();
    let report = stampede(&["report", document.to_str().unwrap()], None);
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    let words = stampede(&[&["load"][..], &flags, &[&url]].concat(), None);
    assert_eq!(words.status.code(), Some(0), "{}", text(&words.stderr));
    assert!(text(&words.stdout).contains("alice:***@"), "{}", text(&words.stdout));
    for (what, out) in [("load --json", &json), ("report", &report), ("load", &words)] {
        assert_no_secret(&format!("{what}'s stdout"), &text(&out.stdout));
        assert_no_secret(&format!("{what}'s stderr"), &text(&out.stderr));
    }
    assert_eq!(assert_no_secret_in_files(&s.dir), 3, "load.json, report.html and load.hlog");

    // A spec is no shared document: it keeps the real values, so the load it
    // describes is the load replayed.
    let spec = stampede(&[&["load", "--print-spec"][..], &flags, &[&url]].concat(), None);
    assert!(text(&spec.stdout).contains(URL_PASSWORD), "{}", text(&spec.stdout));
    server.seen.log.lock().unwrap().clear();
    let replay = stampede(&["load", "--spec", "-", "--json"], Some(&spec.stdout));
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    let again = headers_received(&server);
    assert!(again.contains(&format!("Authorization: Basic {basic}")), "{again:?}");
    assert_no_secret("the replay's output", &format!("{}{}", text(&replay.stdout), text(&replay.stderr)));
}

#[test]
fn a_run_sends_profile_headers_and_no_file_or_output_shows_them() {
    let s = Scratch::new("secrets-run");
    let heads = s.dir.join("received.txt");
    let app = s.app("alpha", &format!("HEADERS_TO={}", heads.display()));
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\nredact_headers = [\"X-Api-Key\"]\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"1s\"\nwarmup = \"200ms\"\nslow_log = 5\n",
        app.display()
    ));
    let headers = format!(
        r#"profiles.*.headers=["Authorization: Bearer {BEARER}", "Cookie: sess={COOKIE}", "X-Api-Key: {API_KEY}"]"#
    );
    let out = s.run(&[scenario.to_str().unwrap(), "--set", &headers, "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let received = std::fs::read_to_string(&heads).unwrap();
    for sent in
        [format!("Authorization: Bearer {BEARER}"), format!("Cookie: sess={COOKIE}"), format!("X-Api-Key: {API_KEY}")]
    {
        assert!(received.lines().any(|l| l == sent), "the server did not receive {sent:?}:\n{received}");
    }
    assert_no_secret("stdout", &stdout);
    assert_no_secret("stderr", &stderr);
    let results = std::fs::read_to_string(s.results_path().unwrap()).unwrap();
    assert!(results.contains("Authorization: ***") && results.contains("X-Api-Key: ***"), "{results}");
    let files = assert_no_secret_in_files(&s.out());
    assert!(files >= 3, "results.json, report.html, the logs: {files} files");
    run::assert_nothing_left(&s);
}

#[test]
fn a_database_password_given_on_the_command_line_is_in_no_file_or_output() {
    let s = Scratch::new("secrets-db");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!("apps = [\"{}\"]\n[[profiles]]\npath = \"/plaintext\"\n", app.display()));
    // Nothing listens on port 1: the run stops at the database, after results.json is begun.
    let database = format!("database.url=\"postgres://bench:{DB_PASSWORD}@127.0.0.1:1/hello_world\"");
    let out = s.run(&[scenario.to_str().unwrap(), "--set", &database, "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("bench:***@127.0.0.1:1"), "the error names the database, masked: {stderr}");
    assert_no_secret("stdout", &stdout);
    assert_no_secret("stderr", &stderr);
    let results = s.results_path().expect("results.json is begun before the database is reached");
    let doc = std::fs::read_to_string(&results).unwrap();
    assert!(doc.contains("postgres://bench:***@127.0.0.1:1/hello_world"), "{doc}");
    let report = Stampede::new().arg("report").arg(&results).output();
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    assert!(assert_no_secret_in_files(&s.out()) >= 2, "results.json and report.html");
}
