//! A kernel without io_uring: `auto` falls back to epoll, and asking for
//! io_uring by name is refused in one line. The test switches io_uring off
//! for the whole machine (`/proc/sys/kernel/io_uring_disabled`), so it lives
//! here, where tests run alone: in `it` it made any test that names
//! `--engine io-uring` fail at the same moment ("io_uring_setup: Operation
//! not permitted").

use stampede_testkit::hostile::{Hostile, Trick};
use stampede_testkit::load::{load_json, stampede};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

/// Restores `/proc/sys/kernel/io_uring_disabled` however the test ends.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, &self.0);
    }
}

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

#[test]
fn without_io_uring_auto_falls_back_and_asking_for_it_is_one_line_exit_2() {
    let _machine = crate::machine();
    let Ok(before) = std::fs::read_to_string(SYSCTL) else {
        println!("SKIP io_uring fallback: {SYSCTL} does not exist on this kernel");
        return;
    };
    if std::fs::write(SYSCTL, "2").is_err() {
        println!("SKIP io_uring fallback: cannot write {SYSCTL} (not root)");
        return;
    }
    let _restore = Restore(before);
    let srv = Hostile::start(Trick::None);
    let r = load_json(&["-n", "500", "-c", "2", &srv.url("/")], DEADLINE);
    assert_eq!((r["engine"].as_str(), r["requests"].as_u64()), (Some("epoll"), Some(500)));
    let out = stampede(&["load", "--engine", "io-uring", "-n", "10", &srv.url("/")], DEADLINE);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--engine io-uring") && err.contains("--engine epoll"), "{err}");
}
