//! `stampede explain` names lock contention: the cause server's workers take
//! a mutex that its `holder` thread keeps for 60 ms and releases for 40 ms,
//! over and over (crates/testkit/fixtures/cause_server.rs, mode `lock`). The workers'
//! microstates must show them blocked on futexes most of their time, and
//! explain must attribute most slow requests to `lock`, well above the share
//! the same requests get at random times (a random window meets a held
//! stretch often, but not always: docs/explain.md, "Lock"), with the working
//! threads' futex level higher in the slow windows than over the run.

use stampede_testkit::causes::{build_server, run_and_explain, Scratch};

#[test]
fn a_mutex_held_for_long_stretches_is_named_lock_contention() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-lock");
    let Some(bin) = build_server(&s.dir) else { return };
    // Closed loop: four connections always have a request in flight, so each
    // held stretch catches four requests (about 30 stretches in 3 s: the 100
    // slowest requests are all caught) and the generator never sends late.
    let e = run_and_explain(&s, &bin, "lock", "connections = 4\nslow_log = 100", &[]);
    let workers = e.group("worker-*");
    let lck = workers["shares"]["lck_pct"].as_f64().unwrap();
    assert!(lck >= 50.0, "the workers queue on the mutex most of their time: {workers}");
    assert!(e.explain["slow_requests"].as_u64().unwrap() >= 5, "{}", e.explain);
    let (share, chance) = (e.share("lock"), e.chance("lock"));
    assert!(share > 0.5, "most slow requests are the lock's: {}", e.human);
    assert!(share >= chance + 0.2, "the lock explains the slow requests far above chance ({chance}): {}", e.human);
    let level = &e.explain["lock_level"];
    let (slow_pct, run_pct) = (level["slow_windows_pct"].as_f64().unwrap(), level["run_pct"].as_f64().unwrap());
    assert!(slow_pct >= 50.0, "{level}");
    assert!(slow_pct > run_pct, "the slow windows are where the threads queue: {level}");
    for cause in ["gc", "pause", "send_delay", "blocked_io"] {
        assert!(e.share(cause) <= 0.1, "nothing else was injected ({cause}): {}", e.human);
    }
    assert!(!e.human.contains("lock level"), "the detail is behind --detail: {}", e.human);
    assert!(e.human.lines().count() <= 5, "one short paragraph: {}", e.human);
}

/// A lock every request waits on raises the median, not only the tail: the
/// same server under an open loop must get the lock as its dominant cause,
/// with the working threads' futex share, first in the short answer.
#[test]
fn a_lock_every_request_waits_on_is_the_dominant_cause_with_its_futex_share() {
    let _machine = crate::machine();
    let s = Scratch::new("explain-lock-dominant");
    let Some(bin) = build_server(&s.dir) else { return };
    let e = run_and_explain(
        &s,
        &bin,
        "lock",
        "rate = 100
connections = 16
slow_log = 100",
        &[],
    );
    let dominant = e.explain["dominant"].as_array().expect("explain --json has dominant");
    let first = dominant.first().unwrap_or_else(|| panic!("no dominant cause: {}", e.human));
    assert_eq!(first["cause"], "lock", "{dominant:?}");
    assert!(first["level_pct"].as_f64().unwrap() >= 30.0, "{first}");
    let line = e.human.lines().nth(1).unwrap_or_default();
    assert!(line.contains("Requests queue on a lock") && line.contains("blocked on futexes"), "{}", e.human);
}
