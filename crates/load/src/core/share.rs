//! What a load thread is given: its share of the run (connections,
//! requests, rate, the phases' instants), and the account of the time its
//! due requests waited for a free connection. Every loop, the epoll and
//! io_uring ones, HTTP/2's and HTTP/3's, speaks this type (and gives back
//! `core::output::Output`), so it lives apart from any one loop.

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
