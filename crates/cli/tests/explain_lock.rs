//! `stampede explain` names steady lock contention: the cause server's
//! workers take a mutex that its `holder` thread keeps for 30 ms and releases
//! for 5 ms, over and over (support_explain/cause_server.rs, mode `lock`).
//! The workers' microstates must show them mostly blocked on futexes, and
//! explain must attribute most slow requests to `lock`, with the working
//! threads' futex level in the slow windows at least half their time. The
//! contention is steady, so a random window meets it as well: its chance
//! share is not asserted below its share (docs/explain.md, "Lock").

mod support_causes;

use support_causes::{build_server, run_and_explain, Scratch};

#[test]
fn a_mutex_held_for_long_stretches_is_named_lock_contention() {
    let s = Scratch::new("explain-lock");
    let Some(bin) = build_server(&s.dir) else { return };
    // Closed loop: four connections always have a request in flight, so the
    // workers queue on the lock and the generator never sends late.
    let e = run_and_explain(&s, &bin, "lock", "connections = 4\nslow_log = 200", &[]);
    let workers = e.group("worker-*");
    let lck = workers["shares"]["lck_pct"].as_f64().unwrap();
    assert!(lck >= 50.0, "the workers queue on the mutex most of their time: {workers}");
    assert!(e.explain["slow_requests"].as_u64().unwrap() >= 5, "{}", e.explain);
    assert!(e.share("lock") > 0.5, "most slow requests are the lock's: {}", e.human);
    let level = &e.explain["lock_level"];
    assert!(level["slow_windows_pct"].as_f64().unwrap() >= 50.0, "{level}");
    assert!(level["run_pct"].as_f64().unwrap() >= 50.0, "{level}");
    for cause in ["gc", "pause", "send_delay", "blocked_io"] {
        assert!(e.share(cause) <= 0.1, "nothing else was injected ({cause}): {}", e.human);
    }
    assert!(e.human.contains("lock level: working threads"), "{}", e.human);
}
