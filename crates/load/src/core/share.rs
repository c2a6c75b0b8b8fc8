//! What a load thread is given and what it gives back: its share of the
//! run (connections, requests, rate, the phases' instants) and its output
//! (what it recorded, its slow requests, how busy it was). Every loop, the
//! epoll and io_uring ones, HTTP/2's, and the cycle they share, speaks these
//! two types, so they live apart from any one loop.

use crate::core::recorder::{Recorder, Slow};
use crate::core::rusage::ThreadTime;
use crate::core::schedule::Schedule;
use std::time::{Duration, Instant};

/// This thread's share of the run.
pub struct Share {
    pub index: usize,
    pub connections: usize,
    pub max_connections: usize,
    /// Requests this thread may send (`-n`), or unlimited.
    pub quota: Option<u64>,
    /// This thread's requests per second (open loop).
    pub rate: Option<f64>,
    pub start: Instant,
    pub measure_from: Instant,
    /// The end of the measured phase (`-d`), or none (`-n`).
    pub end: Option<Instant>,
}

/// Open loop: the time due requests waited because every connection (over
/// HTTP/2, every stream) was busy, counted from the measured phase on.
#[derive(Debug, Default, Clone, Copy)]
pub struct Starved {
    total: Duration,
    since: Option<Instant>,
    /// The end of the measured phase: a wait is counted up to it, never
    /// into the drain after it (nothing is sent then).
    until: Option<Instant>,
}

impl Starved {
    /// Waits counted within the measured phase ending at `until`.
    pub fn until(until: Option<Instant>) -> Starved {
        Starved { until, ..Starved::default() }
    }

    /// Due requests wait from `now` (or from earlier, if they already did).
    pub fn begin(&mut self, now: Instant) {
        self.since.get_or_insert(now);
    }

    /// Whether due requests are waiting.
    pub fn waiting(&self) -> bool {
        self.since.is_some()
    }

    /// The time they waited so far (a wait still going not counted).
    pub fn total(&self) -> Duration {
        self.total
    }

    /// They no longer wait, as of `now`.
    pub fn end(&mut self, now: Instant, measure_from: Instant) {
        if let Some(since) = self.since.take() {
            let now = self.until.map_or(now, |until| now.min(until));
            self.total += now.saturating_duration_since(since.max(measure_from));
        }
    }
}

pub struct Output {
    pub recorder: Recorder,
    pub slow: Vec<Slow>,
    pub finished: Instant,
    pub max_lag_ns: u64,
    /// Time during which every connection was busy and due requests waited.
    pub starved: Duration,
    /// Share of the thread's life it spent on or waiting for a CPU (0..1).
    pub busy: f64,
    /// Share of the thread's life it spent waiting for a CPU (0..1): other
    /// processes held it while this thread had work.
    pub cpu_wait: f64,
    /// Open loop: where its schedule's times ran from (once its first
    /// connections were open: `Schedule::begin`).
    pub schedule_origin: Option<Instant>,
}

impl Output {
    /// A loop's result once it has ended: its schedule's figures (a wait
    /// for a connection still going counts up to now), and how busy the
    /// thread was: its CPU time and run-queue wait since `busy_from` over
    /// its life since `started`.
    pub fn at_end(
        mut rec: Recorder,
        sched: &Schedule,
        share: &Share,
        started: Instant,
        busy_from: ThreadTime,
    ) -> Output {
        let (mut starved, max_lag_ns) = sched.figures();
        let finished = Instant::now();
        starved.end(finished, share.measure_from);
        let slow = rec.finish();
        let time = ThreadTime::now().since(busy_from);
        let life_ns = finished.saturating_duration_since(started).as_nanos().max(1) as f64;
        let busy = (time.on_cpu_ns + time.wait_ns) as f64 / life_ns;
        let cpu_wait = time.wait_ns as f64 / life_ns;
        let schedule_origin = sched.origin();
        Output { recorder: rec, slow, finished, max_lag_ns, starved: starved.total(), busy, cpu_wait, schedule_origin }
    }
}
