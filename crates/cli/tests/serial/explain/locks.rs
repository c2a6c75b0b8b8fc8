//! `stampede explain` names a lock only where requests queue on one, on
//! every runtime Stampede ships. Servers written for the test in Go, Java
//! and Node (crates/testkit/fixtures/locks/) serialise each request on a lock held across a
//! 2 ms blocking call: a `sync.Mutex`, a `synchronized` block, an Atomics
//! mutex between worker threads. Each must get the lock as its first
//! dominant cause. The shipped apps (apps/go, apps/java, apps/node) hold no
//! lock on their request path, while their runtimes' helper threads (Go's
//! idle Ms, the JVM's GC and JIT threads, V8's workers) park on futexes
//! between bursts: they must get no lock, dominant or in their slow
//! requests, and a note saying which mark of a lock is missing. It broke
//! when every Node and Java run of the shootout opened with "Every request
//! waits for a lock" (issue 39).
//!
//! Both run the shootout's shape (a closed loop of 32 connections for 2 s,
//! then an open loop at 70% of its rate for 2 s, after a 500 ms warmup): the
//! verdict is judged on the loads a user runs. A toolchain that is missing
//! skips its server with a visible SKIP line.

use std::path::{Path, PathBuf};
use std::process::Command;

use stampede_testkit::causes::{explain_scenario, Explained, Scratch};

const PROFILE: &str = "name = \"locks\"\npath = \"/plaintext\"\nconnections = 32\nthreads = 1\nduration = \"2s\"\nwarmup = \"500ms\"\nlatency = { fraction = 0.7, duration = \"2s\" }\nslow_log = 100";

fn on_path(program: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
}

fn built(what: &str, cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// The lock servers whose toolchain is on PATH, built into the scratch
/// folder, as manifests; the others are skipped with a SKIP line.
fn lock_servers(s: &Scratch) -> Vec<PathBuf> {
    let source = stampede_testkit::fixture("locks");
    let dir = s.dir.display();
    let mut manifests = Vec::new();
    let mut add = |name: &str, requires: &str, run: String| {
        if !on_path(requires) {
            eprintln!("SKIP {name}: {requires} is not on PATH");
            return false;
        }
        let text = format!(
            "name = \"{name}\"\ndescription = \"a lock on the request path\"\nbuild = \"true\"\nrun = \"HOLD_US=2000 exec {run} {}\"\nversion = \"true\"\n",
            s.marker
        );
        manifests.push(s.manifest(name, &text));
        true
    };
    if add("lock-go", "go", format!("{dir}/lock_go")) {
        built(
            "go build",
            Command::new("go")
                .args(["build", "-o"])
                .arg(s.dir.join("lock_go"))
                .arg(source.join("lock_server.go"))
                .current_dir(&s.dir),
        );
    }
    if add("lock-java", "javac", format!("java -cp {dir} LockServer")) {
        built("javac", Command::new("javac").arg("-d").arg(&s.dir).arg(source.join("LockServer.java")));
    }
    add("lock-node", "node", format!("node {}", source.join("lock_server.js").display()));
    manifests
}

/// The shipped apps whose toolchains are on PATH, as manifests.
fn shipped_apps() -> Vec<PathBuf> {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    [("go", "go"), ("java", "mvn"), ("node", "node")]
        .into_iter()
        .filter(|(app, tool)| {
            let ok = on_path(tool);
            if !ok {
                eprintln!("SKIP {app}: {tool} is not on PATH");
            }
            ok
        })
        .map(|(app, _)| apps.join(app).join("app.toml"))
        .collect()
}

fn dominant(e: &Explained) -> Vec<String> {
    e.explain["dominant"].as_array().unwrap().iter().map(|d| d["cause"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_request_serialised_on_a_lock_is_named_in_go_java_and_node() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-locks");
    let manifests = lock_servers(&s);
    if manifests.is_empty() {
        return;
    }
    for e in explain_scenario(&s, &manifests, PROFILE, &[]) {
        let app = e.run()["app"].as_str().unwrap().to_string();
        assert_eq!(dominant(&e).first().map(String::as_str), Some("lock"), "{app}: {}", e.human);
        let line = e.human.lines().nth(1).unwrap_or_default();
        assert!(line.contains("Requests queue on a lock"), "{app}: the first line after the title: {}", e.human);
        let notes = e.explain["notes"].to_string();
        assert!(!notes.contains("not a lock"), "{app}: every mark of a lock is there: {notes}");
    }
}

#[test]
fn the_shipped_go_java_and_node_apps_hold_no_lock() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-no-locks");
    let manifests = shipped_apps();
    if manifests.is_empty() {
        return;
    }
    for e in explain_scenario(&s, &manifests, PROFILE, &[]) {
        let app = e.run()["app"].as_str().unwrap().to_string();
        assert!(!dominant(&e).contains(&"lock".to_string()), "{app}: {}", e.human);
        assert!(e.share("lock") == 0.0, "{app}: no slow request waited for a lock: {}", e.human);
        assert!(!e.human.contains("lock"), "{app}: {}", e.human);
        let notes = e.explain["notes"].to_string();
        assert!(notes.contains("not a lock"), "{app}: explain says which mark of a lock is missing: {notes}");
    }
}
