//! Nothing `stampede run` starts outlives it: a SIGKILL of `stampede run`
//! mid-load takes the server and the load generator with it (the kernel's
//! parent-death signal), and a normal stop reaches a server's child that
//! left the process group with `setsid()` (the stop walks the server's
//! descendants, not only its group). Issue 20, medium 5.

use crate::support_run;

use std::process::Command;
use std::time::Duration;

use support_run::{text, wait_for, Scratch};

#[test]
fn sigkill_of_run_mid_load_leaves_no_process_of_the_app() {
    let s = Scratch::new("sigkill");
    let app = s.app("alpha", "");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"30s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
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
    let gone = wait_for(Duration::from_secs(10), || s.leftovers().is_empty());
    let left = s.leftovers();
    // Clean up before failing, so a regression does not leave servers behind.
    for (pid, _) in &left {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(gone, "alive after SIGKILL of stampede run: {left:?}");
}

#[test]
fn a_server_child_that_called_setsid_is_stopped_with_the_server() {
    let s = Scratch::new("setsid");
    let app = s.app("alpha", "SETSID_CHILD=1");
    let scenario = s.scenario(&format!(
        "apps = [\"{}\"]\ncheck = false\n[[profiles]]\npath = \"/plaintext\"\nconnections = 2\nduration = \"1s\"\nwarmup = \"0s\"\n",
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The stop waits for every descendant; the deadline only allows for the
    // kernel to reap what was killed last.
    let clean = wait_for(Duration::from_secs(5), || s.leftovers().is_empty());
    let left = s.leftovers();
    for (pid, _) in &left {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(clean, "left running after the run ended: {left:?}");
}
