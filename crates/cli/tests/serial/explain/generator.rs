//! `stampede explain` still names the load generator when it is the one to
//! blame: the load generator is pinned to CPU 1, where a real-time burner
//! (the cause server in mode `burner`) takes the CPU for 20 ms of every
//! 100 ms, while the server (mode `plain`, on CPU 0) answers at once. The
//! requests due while the burner runs go out late although their
//! connections are free: `send_delay` ("load generator late"), not a wait
//! for a connection. Needs `chrt` and `taskset` and the right to use a
//! real-time priority: skipped with a printed reason otherwise.

use std::process::{Child, Command, Stdio};

use stampede_testkit::causes::{build_server, run_and_explain, Scratch};

/// The burner, killed (by its pid) when the test ends.
struct Burner(Child);

impl Drop for Burner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn rt_works() -> bool {
    let ok = Command::new("chrt").args(["-f", "10", "taskset", "-c", "1", "true"]).status().is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIP a_generator_starved_of_cpu_is_named_as_the_generator: chrt -f or taskset refused");
    }
    ok && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

#[test]
fn a_generator_starved_of_cpu_is_named_as_the_generator() {
    let _machine = crate::machine();
    if !rt_works() {
        return;
    }
    let s = Scratch::new("explain-generator");
    let Some(bin) = build_server(&s.dir) else { return };
    // A copy outside the scratch folder: the run checks that nothing of the
    // scenario's is left behind, and the burner outlives the run on purpose.
    let copy = std::env::temp_dir().join(format!("stampede-burner-{}", std::process::id()));
    std::fs::copy(&bin, &copy).expect("copy the burner");
    let burner = Command::new("chrt")
        .args(["-f", "10", "taskset", "-c", "1"])
        .arg(&copy)
        .arg("burner")
        .stdout(Stdio::null())
        .spawn()
        .map(Burner)
        .expect("start the burner");
    let e = run_and_explain(
        &s,
        &bin,
        "plain",
        "rate = 200\nconnections = 8\nslow_log = 100",
        &["--set", "pinning.loadgen=1", "--set", "pinning.server=0"],
    );
    drop(burner);
    let _ = std::fs::remove_file(&copy);
    assert!(e.explain["slow_requests"].as_u64().unwrap() >= 5, "{}", e.explain);
    let generator = e.share("send_delay");
    let server_side = e.share("connection_setup") + e.share("connection_busy");
    assert!(generator >= 0.5, "most slow requests were sent late by the generator: {}", e.human);
    assert!(generator > server_side, "not a wait for connections: {}", e.human);
    assert!(e.human.contains("load generator late"), "{}", e.human);
    // run and explain agree: a tail the generator sent late is no measurement
    // of the server (stampede_schema::late).
    assert_eq!(e.run()["valid"], false, "{}", e.run()["invalid_reason"]);
    let reason = e.run()["invalid_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("load generator late for"), "judged where the tail is: {reason}");
}

/// The other way: a slow but honest server (the cause server's mutex held
/// 60 ms of every 100 ms) behind two connections. Its requests queue behind
/// busy connections, and the generator's loop reads a freed connection at
/// its next designed wake-up: that is the server's queue, never "load
/// generator late", and no reason of the run's validity blames the
/// generator's lateness. It broke when every wait past the kernel's receive
/// time of the freeing response counted as the generator's.
#[test]
fn requests_queued_behind_busy_connections_are_the_servers_not_the_generators() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-queued");
    let Some(bin) = build_server(&s.dir) else { return };
    let e = run_and_explain(&s, &bin, "lock", "rate = 300\nconnections = 2\nslow_log = 100", &[]);
    assert!(e.explain["slow_requests"].as_u64().unwrap() >= 5, "{}", e.explain);
    let server_side = e.share("connection_setup") + e.share("connection_busy") + e.share("lock");
    assert!(server_side >= 0.5, "the slow requests waited for the server: {}", e.human);
    assert!(e.share("send_delay") <= 0.1, "not the generator's: {}", e.human);
    assert!(!e.human.contains("load generator late"), "{}", e.human);
    let reason = e.run()["invalid_reason"].as_str().unwrap_or_default();
    assert!(!reason.contains("load generator late for"), "the tail is the server's queue: {reason}");
}
