//! The off-CPU profile of a process built to block on a lock: six `locker-N`
//! threads take turns holding one mutex while they compute, so five are
//! always queued on it, and one `sleeper` naps. Futex frames must carry most
//! of the blocked time; the sleeper's nanosleep must be there too, smaller.
//! Skips with a visible line when perf is missing or not permitted.
//!
//! The "server" is this test binary run again with `CONTENTION_SERVER` set.

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use stampede_profile::offcpu::OffCpu;
use stampede_profile::Recorder;

const SERVER_ENV: &str = "CONTENTION_SERVER";

/// The server's body: runs only in the re-executed child, for at most 20 s.
#[test]
fn contention_server() {
    if std::env::var_os(SERVER_ENV).is_none() {
        return;
    }
    let lock = Arc::new(Mutex::new(0u64));
    for i in 0..6 {
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

#[test]
fn futex_frames_carry_most_of_the_blocked_time() {
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "contention_server", "--nocapture", "--test-threads", "1"])
        .env(SERVER_ENV, "1")
        .stdout(Stdio::null())
        .spawn()
        .expect("re-run this test binary as the server");
    let server = Server(child);
    let pid = server.0.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count()) < 8 {
        assert!(Instant::now() < deadline, "the contention server did not start its threads");
        std::thread::sleep(Duration::from_millis(10));
    }
    let recorder = match Recorder::start_off_cpu(pid) {
        Ok(r) => r,
        Err(e) if e.is_unavailable() => {
            eprintln!("SKIP futex_frames_carry_most_of_the_blocked_time: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    std::thread::sleep(Duration::from_millis(1500));
    let recording = recorder.stop().expect("perf stops");
    drop(server);
    let off = OffCpu::from_recording(&recording).expect("blocked intervals");
    let total = off.folded.samples();
    let futex: u64 = off.folded.lines.iter().filter(|(s, _)| s.contains("futex")).map(|(_, n)| n).sum();
    let sleep: u64 = off.folded.lines.iter().filter(|(s, _)| s.contains("nanosleep")).map(|(_, n)| n).sum();
    assert!(futex * 2 > total, "futex {futex} of {total} µs:\n{}", off.folded.to_text());
    assert!(sleep > 0 && sleep < futex, "nanosleep {sleep}, futex {futex}:\n{}", off.folded.to_text());
    let dir = tempfile::tempdir().unwrap();
    let summary = off.write(dir.path(), "t", "contention").unwrap();
    let svg = std::fs::read_to_string(dir.path().join(&summary.flame_svg)).unwrap();
    assert!(svg.contains("futex") && svg.contains("µs"), "the flame graph names futex frames in µs");
}
