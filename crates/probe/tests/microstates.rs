//! Microstates against a process built for them: four `locker-N` threads take
//! turns holding one mutex while they compute (so three of them are always
//! queued on it) and a `sleeper` thread naps. The lockers must read as
//! blocked on a lock (LCK) above everything else, the sleeper as SLP and not
//! LCK. The classification is asserted, not the percentages' exact values.
//!
//! The "server" is this test binary run again with `CONTENTION_SERVER` set,
//! so it is a separate process tree found through /proc like a real one.

use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use stampede_probe::{Probe, ProbeConfig};
use stampede_schema::microstates::StateShares;

const SERVER_ENV: &str = "CONTENTION_SERVER";

/// The server's body: runs only in the re-executed child, for at most 20 s.
#[test]
fn contention_server() {
    if std::env::var_os(SERVER_ENV).is_none() {
        return;
    }
    let lock = Arc::new(Mutex::new(0u64));
    for i in 0..4 {
        let lock = Arc::clone(&lock);
        std::thread::Builder::new()
            .name(format!("locker-{i}"))
            .spawn(move || loop {
                let mut held = lock.lock().unwrap();
                let until = Instant::now() + Duration::from_millis(20);
                while Instant::now() < until {
                    *held = std::hint::black_box(held.wrapping_mul(31).wrapping_add(1));
                }
            })
            .unwrap();
    }
    std::thread::Builder::new()
        .name("sleeper".into())
        .spawn(|| loop {
            std::thread::sleep(Duration::from_millis(50));
        })
        .unwrap();
    std::thread::sleep(Duration::from_secs(20));
    std::process::exit(0);
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "contention_server", "--nocapture", "--test-threads", "1"])
        .env(SERVER_ENV, "1")
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("re-run this test binary as the server");
    let server = Server(child);
    let pid = server.0.id() as i32;
    // Poll until the five threads exist (the harness starts them in its own thread).
    let deadline = Instant::now() + Duration::from_secs(10);
    while stampede_probe::descendants(pid).is_empty()
        || std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()) < 6
    {
        assert!(Instant::now() < deadline, "the contention server did not start its threads");
        std::thread::sleep(Duration::from_millis(10));
    }
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
