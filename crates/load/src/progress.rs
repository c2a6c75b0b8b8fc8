//! What a run looks like while it goes, for a live display: once a second a
//! snapshot of the timeline (requests and errors so far, the newest whole
//! second's rate and p99) is handed to the caller's watcher. The engine draws
//! nothing itself; the binary decides whether and how to show it.

use crate::core::timeline::Timeline;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The run so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Live {
    /// Since the run started, warmup included.
    pub elapsed: Duration,
    /// Still in `--warmup` (nothing is recorded yet).
    pub warming_up: bool,
    /// Recorded requests and errors so far (a second late at most).
    pub requests: u64,
    pub errors: u64,
    /// The newest whole second with traffic: its requests per second…
    pub rps: f64,
    /// …and its p99 latency.
    pub p99_us: f64,
}

/// Called once a second from a thread of its own while the load runs.
pub type Watcher<'a> = &'a (dyn Fn(&Live) + Sync);

/// Hands `watch` a snapshot every `every` until `finished` is set; sleeps
/// in between (parked, so setting `finished` and unparking ends it at once).
pub(crate) fn watch(
    timeline: &Timeline,
    start: Instant,
    measure_from: Instant,
    every: Duration,
    finished: &AtomicBool,
    watch: Watcher,
) {
    let mut next = start + every;
    while !finished.load(Ordering::Acquire) {
        std::thread::park_timeout(next.saturating_duration_since(Instant::now()));
        let now = Instant::now();
        if now < next {
            continue;
        }
        next += every;
        let current = now.saturating_duration_since(measure_from).as_secs();
        let (requests, errors, newest) = timeline.so_far(current);
        watch(&Live {
            elapsed: now.saturating_duration_since(start),
            warming_up: now < measure_from,
            requests,
            errors,
            rps: newest.map_or(0.0, |s| s.requests as f64),
            p99_us: newest.map_or(0.0, |s| s.p99_us),
        });
    }
}

/// Ends the watching thread when the workers are done, or when the thread
/// collecting them unwinds (a watcher left running would hang the scope).
pub(crate) struct StopOnDrop<'a>(pub &'a AtomicBool, pub Option<std::thread::Thread>);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
        if let Some(t) = &self.1 {
            t.unpark();
        }
    }
}
