//! Microstates against a process built for them: four `locker-N` threads take
//! turns holding one mutex while they compute (so three of them are always
//! queued on it) and a `sleeper` thread naps. The lockers must read as
//! blocked on a lock (LCK) above everything else, the sleeper as SLP and not
//! LCK. The classification is asserted, not the percentages' exact values.
//!
//! The server is `support/contention.rs`: this test binary run again.

mod support {
    pub mod contention;
}

use std::time::Duration;

use stampede_probe::{Probe, ProbeConfig};
use stampede_schema::microstates::StateShares;
use support::contention::{serve_if_asked, Server};

/// The server's body, in the re-executed child only.
#[test]
fn contention_server() {
    serve_if_asked(4);
}

fn largest(s: &StateShares) -> &'static str {
    let all = [
        ("usr", s.usr_pct),
        ("sys", s.sys_pct),
        ("lat", s.lat_pct),
        ("lck", s.lck_pct),
        ("io", s.io_pct),
        ("slp", s.slp_pct),
    ];
    all.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|x| x.0).unwrap()
}

#[test]
fn queued_lockers_read_as_lck_and_a_sleeper_as_slp() {
    // Main, the harness's test thread, four lockers and the sleeper.
    let server = Server::start(7);
    let pid = server.pid() as i32;
    let probe = Probe::start(ProbeConfig { interval: Duration::from_millis(20), ..Default::default() }, pid).unwrap();
    probe.mark_measured_start();
    std::thread::sleep(Duration::from_millis(1500));
    let report = probe.finish();
    drop(server);
    let micro = report.server.microstates.expect("the server's microstates");
    assert!(micro.notes.is_empty(), "{:?}", micro.notes);
    let lockers = micro.groups.iter().find(|g| g.group == "locker-*").expect("a locker-* group");
    assert_eq!(lockers.threads, 4, "{micro:#?}");
    assert_eq!(largest(&lockers.shares), "lck", "{lockers:?}");
    assert!(lockers.shares.lck_pct >= 50.0, "{lockers:?}");
    let sleeper = micro.threads.iter().find(|t| t.name == "sleeper").expect("the sleeper thread");
    assert_eq!(largest(&sleeper.shares), "slp", "{sleeper:?}");
    assert!(sleeper.shares.lck_pct < 5.0, "{sleeper:?}");
    assert!(sleeper.blocked_samples > 0);
    // The time series covers the phase with the tree's threads.
    let measured: Vec<_> = micro.samples.iter().filter(|s| s.t_s > 0.0).collect();
    assert!(measured.len() >= 10, "{} samples", measured.len());
    assert!(measured.iter().all(|s| s.threads >= 6), "{measured:?}");
}
