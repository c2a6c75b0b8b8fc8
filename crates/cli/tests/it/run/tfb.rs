//! `stampede run` on servers we did not write: an app whose manifest names a
//! TechEmpower `benchmark_config.json` is started on that config's port,
//! judged by `tfb` at its URLs and loaded there; an app that crashes at start
//! is reported by its panic line and the path of its log, not by the
//! goroutine dump that follows it; a failing `db` contract invalidates the
//! database profiles only, and each profile records the verdicts that
//! judged it.

use stampede_testkit::run;

use std::net::TcpListener;

use std::process::Stdio;
use std::time::Duration;

use run::{assert_nothing_left, text, wait_output, Scratch};

#[test]
fn an_app_with_a_tfb_config_runs_on_its_port_judged_by_tfb() {
    let s = Scratch::new("tfbconfig");
    // A free port for the config to declare; the app listens there whatever
    // PORT run gives it, as a TechEmpower implementation does.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let app = s.app("tfbish", &format!("PORT={port}"));
    std::fs::write(
        app.parent().unwrap().join("benchmark_config.json"),
        format!(
            r#"{{"tests": [{{"default": {{"plaintext_url": "/plaintext", "json_url": "/json", "port": {port}}}}}]}}"#
        ),
    )
    .unwrap();
    let mut manifest = std::fs::read_to_string(&app).unwrap();
    manifest.push_str("tfb_config = \"benchmark_config.json\"\n");
    std::fs::write(&app, manifest).unwrap();
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\n[[profiles]]\npath = \"/json\"\nconnections = 2\nduration = \"1s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc = s.results().expect("results.json");
    let run = &doc["runs"][0];
    assert_eq!(run["valid"], true, "{}", run["invalid_reason"]);
    assert_eq!(run["contract"], "tfb", "a tfb_config with plaintext and json URLs claims tfb");
    assert!(run["load"]["requests"].as_u64().unwrap() > 0);
    assert_nothing_left(&s);
}

#[test]
fn an_app_that_crashes_at_start_shows_its_panic_line_and_log_path() {
    let s = Scratch::new("startcrash");
    let run = "echo starting; echo 'panic: dial tcp: lookup tfb-database on 127.0.0.53:53: no such host'; echo; \
               echo 'goroutine 1 [running]:'; echo 'main.main()'; echo '	/src/main.go:40 +0x1d'; exit 2";
    let app = s.manifest("crasher", &format!("name = \"crasher\"\nrun = {run:?}\ncontract = \"none\"\n"));
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\n[[profiles]]\npath = \"/json\"\nconnections = 1\nduration = \"1s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    let doc = s.results().unwrap_or_else(|| panic!("results.json\n{stderr}"));
    let reason = doc["runs"][0]["invalid_reason"].as_str().unwrap_or_default().to_string();
    assert!(
        reason.contains("crashed during start")
            && reason.contains("panic: dial tcp: lookup tfb-database on 127.0.0.53:53: no such host"),
        "{reason}"
    );
    assert!(!reason.contains("goroutine"), "the panic line, not the dump: {reason}");
    let log = reason.rsplit("(its output: ").next().unwrap().trim_end_matches(')');
    let logged = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{log}: {e}; {reason}"));
    assert!(logged.contains("goroutine 1 [running]:"), "the named file is the app's log");
    assert_nothing_left(&s);
}

#[test]
fn a_failing_db_contract_invalidates_only_the_database_profiles() {
    // The contract server implements apps/CONTRACT.md's `stampede` API but no
    // database endpoint: with a [database], `db` fails and `stampede` passes.
    let s = Scratch::new("dbverdict");
    let app = s.app("nodb", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\n[database]\n[[profiles]]\npath = \"/plaintext\"\nconnections = 1\nduration = \"1s\"\nwarmup = \"0s\"\n\
         [[profiles]]\npath = \"/queries?queries=20\"\nconnections = 1\nduration = \"1s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    // The private cluster goes under TMPDIR: this test's folder.
    let child = s
        .stampede()
        .args(["run", scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()])
        .current_dir(&s.dir)
        .env("TMPDIR", &s.dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child, Duration::from_secs(180));
    let doc = s.results().unwrap_or_else(|| panic!("results.json\n{}", text(&out.stderr)));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{doc:#}");
    let plaintext = &runs[0];
    assert_eq!(plaintext["valid"], true, "a db failure leaves /plaintext valid: {}", plaintext["invalid_reason"]);
    assert_eq!(plaintext["verdicts"][0]["contract"], "stampede");
    assert_eq!(plaintext["verdicts"][0]["verdict"], "pass");
    assert_eq!(plaintext["verdicts"].as_array().unwrap().len(), 1, "db does not govern /plaintext");
    let queries = &runs[1];
    assert_eq!(queries["valid"], false);
    let verdict = &queries["verdicts"][0];
    assert_eq!((verdict["contract"].as_str(), verdict["verdict"].as_str()), (Some("db"), Some("fail")), "{queries:#}");
    let failed: Vec<&str> = verdict["failed"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    assert!(failed.contains(&"queries-20") && failed.contains(&"db-row"), "{failed:?}");
    let reason = queries["invalid_reason"].as_str().unwrap();
    for rule in &failed {
        assert!(reason.contains(rule), "the reason names every failing rule ({rule}): {reason}");
    }
    assert_nothing_left(&s);
}
