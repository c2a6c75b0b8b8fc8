//! Nothing `stampede run` starts outlives it: a SIGKILL of `stampede run`
//! mid-load takes the server and the load generator with it (the kernel's
//! parent-death signal), a normal stop reaches a server's child that left
//! the process group with `setsid()` (the stop walks the server's
//! descendants, not only its group; issue 20, medium 5) and one that
//! daemonized (found by its tag; issue 42), and a captured command (build,
//! version) neither hangs `run` through a child it left behind nor ignores
//! SIGTERM while it hangs.

use stampede_testkit::run;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use run::{assert_nothing_left, text, wait_for, Scratch};

/// A one-profile scenario loading `app`'s /plaintext for `duration`.
fn scenario(s: &Scratch, app: &Path, duration: &str) -> PathBuf {
    s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"{duration}\"\nwarmup = \"0s\"\n",
        app.display()
    ))
}

/// Runs `app` for 1 s to the end: (exit status, stderr).
fn run_briefly(s: &Scratch, app: &Path) -> (Option<i32>, String) {
    let scenario = scenario(s, app, "1s");
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    (out.status.code(), text(&out.stderr))
}

/// Asserts nothing of the test is left within `limit`, killing what is
/// first, so a regression does not leave servers behind.
fn assert_gone(s: &Scratch, limit: Duration, when: &str) {
    let gone = wait_for(limit, || s.leftovers().is_empty());
    let left = s.leftovers();
    for (pid, _) in &left {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(gone, "alive {when}: {left:?}");
}

#[test]
fn sigkill_of_run_mid_load_leaves_no_process_of_the_app() {
    let s = Scratch::new("sigkill");
    let app = s.app("alpha", "");
    let scenario = scenario(&s, &app, "30s");
    let mut child = s.spawn_run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    // Mid-load: the server and the load generator (`stampede load`, which
    // carries the marker in its environment) are both running.
    let loading = wait_for(Duration::from_secs(60), || {
        let procs = s.leftovers();
        procs.iter().any(|(_, cmd)| cmd.contains("contract_server.py"))
            && procs.iter().any(|(_, cmd)| cmd.contains(" load "))
    });
    assert!(loading, "the load never started: {:?}", s.leftovers());
    let killed = Command::new("kill").args(["-KILL", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let _ = child.wait();
    assert_gone(&s, Duration::from_secs(10), "after SIGKILL of stampede run");
}

#[test]
fn a_server_child_that_called_setsid_is_stopped_with_the_server() {
    let s = Scratch::new("setsid");
    let (code, stderr) = run_briefly(&s, &s.app("alpha", "SETSID_CHILD=1"));
    assert_eq!(code, Some(0), "{stderr}");
    // It stayed in the server's tree: nothing is reported as a stray.
    assert!(!stderr.contains("daemonized"), "{stderr}");
    // The stop waits for every descendant; the deadline only allows for the
    // kernel to reap what was killed last.
    assert_gone(&s, Duration::from_secs(5), "after the run ended");
}

/// Issue 42: a server that daemonizes a helper (fork, setsid, fork, the
/// middle process exits) left it running after a valid run: its parent was
/// gone before the stop could see it as the server's descendant.
#[test]
fn a_daemonized_grandchild_of_the_server_is_stopped_and_reported() {
    let s = Scratch::new("daemon");
    let (code, stderr) = run_briefly(&s, &s.app("alpha", "DAEMON_CHILD=1"));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("outside its process tree (daemonized)"), "the stray is reported: {stderr}");
    assert_gone(&s, Duration::from_secs(5), "after the run ended");
}

/// A manifest around the contract server whose `key` (`version`, `build`) is `script`.
fn manifest_with(s: &Scratch, key: &str, script: &str) -> PathBuf {
    let server = stampede_testkit::fixture("contract_server.py");
    let text = format!(
        "name = \"alpha\"\nrequires = [\"python3\"]\nrun = \"exec python3 {} --name alpha-{}\"\n{key} = \"{script}\"\n",
        server.display(),
        s.marker
    );
    s.manifest("alpha", &text)
}

/// Issue 42: a `version` command that left a background child (in a session
/// of its own, holding the output pipe) made `run` wait for ever.
#[test]
fn a_version_command_leaving_a_background_child_neither_hangs_run_nor_outlives_it() {
    let s = Scratch::new("versionbg");
    let (code, stderr) = run_briefly(&s, &manifest_with(&s, "version", "echo v9; setsid sleep 300 & exit 0"));
    assert_eq!(code, Some(0), "{stderr}");
    let doc = s.results().unwrap();
    assert_eq!(doc["environment"]["runtimes"]["alpha"], "v9", "{}", doc["environment"]);
    assert_nothing_left(&s);
}

/// Issue 42: SIGTERM did not stop `run` while a captured command hung.
#[test]
fn sigterm_during_a_hung_build_stops_run_and_its_command() {
    let s = Scratch::new("hungbuild");
    let scenario = scenario(&s, &manifest_with(&s, "build", "echo building; sleep 300"), "1s");
    let child = s.spawn_run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let building = wait_for(Duration::from_secs(30), || s.leftovers().iter().any(|(_, cmd)| cmd.contains("sleep 300")));
    assert!(building, "the build never started: {:?}", s.leftovers());
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let out = run::wait_output(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    assert_nothing_left(&s);
}
