//! The server's own accept-queue drops through `stampede run` (issue #43's
//! closing table found the false verdict): a listener with
//! `TCP_DEFER_ACCEPT` (fasthttp's) makes the kernel drop every handshake's
//! bare ACK on purpose, raising its `sk_drops` with nothing lost, and a run
//! that opens connections all through its measured phase must never
//! blame the server for a drop. The other way, a listener whose queue
//! overflows, is tests/serial/explain/backlog.rs.

use stampede_testkit::run::{assert_nothing_left, text, Scratch};

#[test]
fn a_deferred_accept_listener_under_connection_churn_is_valid_and_drops_nothing() {
    let s = Scratch::new("defer-accept");
    let app = s.app("deferring", "DEFER_ACCEPT=1");
    let scenario = s.scenario(&format!(
        r#"
apps = ["{}"]
[[profiles]]
name = "churn"
path = "/plaintext"
connections = 4
duration = "1s"
warmup = "300ms"
requests_per_connection = 5
"#,
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc = s.results().expect("results.json");
    let run = &doc["runs"][0];
    assert!(run["load"]["requests"].as_u64().unwrap_or(0) > 0, "{run}");
    assert_eq!(run["listen_drops"]["measured"], 0, "deferred ACKs are not queue drops: {}", run["listen_drops"]);
    // Validity may fall to a busy machine (the tests run side by side);
    // the server must never be the one blamed.
    assert_ne!(run["invalid_by_server"], true, "{}", run["invalid_reason"]);
    let reason = run["invalid_reason"].as_str().unwrap_or("");
    assert!(!reason.contains("accept queue") && !stdout.contains("accept queue overflowed"), "{reason}\n{stdout}");
    assert_nothing_left(&s);
}
