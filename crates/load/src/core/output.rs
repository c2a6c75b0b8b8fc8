//! What a load thread gives back when its loop ends: what it recorded, its
//! slow requests, its schedule's figures, how busy it was and where its
//! schedule began. Apart from `share.rs` (what the thread is given), so
//! that the share, the pacer and the schedule, which this reads, import
//! one another in no circle.

use crate::core::recorder::{Recorder, Slow};
use crate::core::rusage::ThreadTime;
use crate::core::schedule::Schedule;
use crate::core::share::Share;
use std::time::{Duration, Instant};

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
