//! The off-CPU profile of a process built to block on a lock: six `locker-N`
//! threads take turns holding one mutex while they compute, so five are
//! always queued on it, and one `sleeper` naps. Futex frames must carry most
//! of the blocked time; the sleeper's nanosleep must be there too, smaller.
//! Skips with a visible line when perf is missing or not permitted.
//!
//! The server is the probe's `tests/support/contention.rs`, included by path.

#[path = "../../probe/tests/support/contention.rs"]
mod contention;

use std::time::Duration;

use contention::{serve_if_asked, Server};
use stampede_profile::offcpu::OffCpu;
use stampede_profile::Recorder;

/// The server's body, in the re-executed child only.
#[test]
fn contention_server() {
    serve_if_asked(6);
}

#[test]
fn futex_frames_carry_most_of_the_blocked_time() {
    // Main, the harness's test thread, six lockers and the sleeper.
    let server = Server::start(9);
    let pid = server.pid();
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
