//! A signal that stops `stampede run` is named, and only finished runs are
//! counted as finished: the closing line says "interrupted by SIGTERM after
//! N of M run(s)", the cut-short run's record says which signal, the exit
//! status is 128 + the signal's number, and what was measured stays in
//! results.json. Issue 20: SIGTERM was recorded as "Ctrl-C" and the
//! interrupted run counted as finished.

use std::process::Command;
use std::time::Duration;

use stampede_testkit::run::{assert_nothing_left, text, wait_for, wait_output, Scratch};

/// Starts a 3-run scenario, sends `signal` during the second run, and checks
/// the closing line, the records and the exit status.
fn interrupt_mid_run(test: &str, signal: &str, code: i32) {
    let s = Scratch::new(test);
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\niterations = 3\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"3s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let child = s.spawn_run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let pid = child.id();
    let first_done = wait_for(Duration::from_secs(60), || {
        s.results().is_some_and(|d| d["runs"].as_array().is_some_and(|r| !r.is_empty()))
    });
    assert!(first_done, "no run finished within 60 s");
    // The second run's load is under way: its generator carries the marker.
    wait_for(Duration::from_secs(20), || s.leftovers().iter().any(|(_, cmd)| cmd.contains(" load ")));
    assert!(Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status().unwrap().success());
    let out = wait_output(child, Duration::from_secs(30));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr:\n{stderr}");
    let doc = s.results().unwrap();
    let runs = doc["runs"].as_array().unwrap();
    let reason = format!("interrupted by {signal}");
    let finished = runs.iter().filter(|r| r["invalid_reason"].as_str() != Some(reason.as_str())).count();
    assert!((1..3).contains(&finished), "{finished} finished runs");
    assert!(stderr.contains(&format!("stampede: interrupted by {signal} after {finished} of 3 run(s)")), "{stderr}");
    assert!(!stderr.contains("Ctrl-C") && !doc.to_string().contains("Ctrl-C"), "{stderr}");
    assert_eq!(runs[0]["valid"], true, "{}", runs[0]["invalid_reason"]);
    assert_nothing_left(&s);
}

#[test]
fn sigterm_is_named_as_sigterm_not_ctrl_c() {
    let _machine = crate::machine();
    interrupt_mid_run("sigterm", "SIGTERM", 143);
}

#[test]
fn sigint_does_not_count_the_interrupted_run_as_finished() {
    let _machine = crate::machine();
    interrupt_mid_run("sigint2", "SIGINT", 130);
}
