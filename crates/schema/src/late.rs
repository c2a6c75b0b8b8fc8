//! Whose a late send is: the one rule `stampede run`'s validity and
//! `stampede explain` share, so that a valid run never has its tail blamed
//! on the load generator and a run whose tail is the generator's is not
//! valid.
//!
//! A logged request of an open loop went out at `start`; it was due at
//! `intended` and had a connection free for it at `ready` (the kernel's
//! receive time of the response that freed it, or its connect). From
//! `intended` to `ready` it queued behind earlier requests on busy
//! connections: the server's queue. The loop then wakes at the schedule's
//! times, up to the pacer's wake granularity after a due send
//! (`wake_granularity_us`, by design: one wake-up sends every request due
//! by then), and reads the freed connection at that wake-up; that wait is
//! the pacing, not lateness, and belongs to whatever the request was
//! waiting for (a busy connection: the server's queue). Only the rest, a
//! send later than `ready` plus the granularity, is the generator's own:
//! its thread was busy, waiting for a CPU, or asleep past its wake-up while
//! the request was due and a connection free.

use crate::load::{LoadResult, SlowRequest};

/// Generator lateness shorter than this is its normal jitter.
pub const MIN_LATE_NS: u64 = 100_000;
/// The share of the logged requests above p99 whose lateness was mostly the
/// generator's from which the run's tail describes the generator, not the
/// server: the run is invalid, and explain names the generator only then.
pub const TAIL_SHARE: f64 = 0.2;

/// A logged request's send, split: (the server's queue, the generator's
/// lateness), in nanoseconds, given the pacer's granularity.
pub fn split(r: &SlowRequest, granularity_us: f64) -> (u64, u64) {
    if r.intended_mono_ns == 0 || r.start_mono_ns <= r.intended_mono_ns {
        return (0, 0);
    }
    let start = r.start_mono_ns;
    let ready = match r.ready_mono_ns {
        0 => r.intended_mono_ns,
        t => t.clamp(r.intended_mono_ns, start),
    };
    let paced = (ready + (granularity_us.max(0.0) * 1e3) as u64).min(start);
    // The designed wait after a queued request's connection freed is part of
    // the queue; after a request that was free to go, it is the pacing.
    let queue = if ready > r.intended_mono_ns { paced - r.intended_mono_ns } else { 0 };
    let late = start - paced;
    (queue, if late >= MIN_LATE_NS { late } else { 0 })
}

/// Of the logged requests above the load's p99, how many the generator made
/// late (its lateness at least half the request's excess over p50, the rule
/// explain's attribution applies to every cause), and how many there are.
pub fn tail(load: &LoadResult) -> (usize, usize) {
    let granularity = load.open.as_ref().map_or(0.0, |o| o.wake_granularity_us);
    let (p50, p99) = (load.latency_us.p50, load.latency_us.p99);
    let above: Vec<&SlowRequest> = load.slow_requests.iter().filter(|r| r.latency_us > p99).collect();
    let late = above
        .iter()
        .filter(|r| {
            let (_, late) = split(r, granularity);
            late > 0 && late as f64 / 1e3 >= 0.5 * (r.latency_us - p50)
        })
        .count();
    (late, above.len())
}

/// Why a load's tail is the generator's, as a validity reason; `None` when
/// it is not (or fewer than five requests above p99 were logged).
pub fn tail_reason(load: &LoadResult) -> Option<String> {
    let (late, above) = tail(load);
    (above >= 5 && late as f64 >= TAIL_SHARE * above as f64).then(|| {
        format!(
            "load generator late for {late} of the {above} logged requests above p99: its own thread sent them late with a connection free, so the tail is the generator's"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(intended_ms: f64, ready_ms: f64, start_ms: f64, latency_ms: f64) -> SlowRequest {
        let ns = |ms: f64| (ms * 1e6) as u64;
        SlowRequest {
            latency_us: latency_ms * 1e3,
            intended_mono_ns: ns(intended_ms),
            ready_mono_ns: ns(ready_ms),
            start_mono_ns: ns(start_ms),
            ..SlowRequest::default()
        }
    }

    #[test]
    fn the_wait_for_the_next_wake_up_after_a_busy_connection_is_the_queue() {
        // Due at 10, its connection freed at 12, read at the wake-up 12.4
        // (granularity 0.5 ms): all 2.4 ms are the server's queue.
        assert_eq!(split(&request(10.0, 12.0, 12.4, 5.0), 500.0), (2_400_000, 0));
        // Sent at 15: 2.5 ms of it the generator's own lateness.
        assert_eq!(split(&request(10.0, 12.0, 15.0, 8.0), 500.0), (2_500_000, 2_500_000));
        // Free at once, sent within the granularity: neither.
        assert_eq!(split(&request(10.0, 10.0, 10.3, 1.0), 500.0), (0, 0));
    }

    #[test]
    fn a_tail_the_generator_sent_late_is_its_own_and_a_queued_tail_is_not() {
        let mut load = LoadResult::default();
        load.latency_us.p50 = 500.0;
        load.latency_us.p99 = 2_000.0;
        load.slow_requests =
            (1..=10).map(|i| request(i as f64 * 10.0, i as f64 * 10.0 + 3.0, i as f64 * 10.0 + 3.2, 4.0)).collect();
        assert_eq!(tail(&load), (0, 10));
        assert_eq!(tail_reason(&load), None, "queued behind busy connections: the server's");
        for r in load.slow_requests.iter_mut().take(3) {
            r.ready_mono_ns = r.intended_mono_ns;
        }
        assert_eq!(tail(&load), (3, 10));
        assert!(tail_reason(&load).unwrap().contains("3 of the 10"), "{:?}", tail_reason(&load));
    }
}
