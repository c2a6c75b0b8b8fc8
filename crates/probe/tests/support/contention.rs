//! A process built to block on a lock, shared by the probe's microstate test
//! and the profiler's off-CPU test (the latter includes this file by path):
//! `lockers` threads named `locker-N` take turns holding one mutex while they
//! compute for 20 ms, so all but one are always queued on it, and one
//! `sleeper` thread naps in 50 ms sleeps. The process is the test binary run
//! again with `CONTENTION_SERVER` set, calling [`serve_if_asked`] from a test
//! named `contention_server`, so it is a tree of its own found through /proc.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SERVER_ENV: &str = "CONTENTION_SERVER";

/// In the re-executed child, runs the server for at most 20 s and exits;
/// in the test run itself, returns at once.
pub fn serve_if_asked(lockers: usize) {
    if std::env::var_os(SERVER_ENV).is_none() {
        return;
    }
    let lock = Arc::new(Mutex::new(0u64));
    for i in 0..lockers {
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

/// The running server; killed when dropped.
pub struct Server(Child);

impl Server {
    /// Starts the server and waits (with a deadline) until it has at least `threads` threads.
    pub fn start(threads: usize) -> Server {
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "contention_server", "--nocapture", "--test-threads", "1"])
            .env(SERVER_ENV, "1")
            .stdout(Stdio::null())
            .spawn()
            .expect("re-run this test binary as the server");
        let server = Server(child);
        let pid = server.pid();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()) < threads {
            assert!(Instant::now() < deadline, "the contention server did not start its threads");
            std::thread::sleep(Duration::from_millis(10));
        }
        server
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
