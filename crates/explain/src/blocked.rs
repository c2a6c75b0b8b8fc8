//! Two more kinds of server-side and client-side trouble, as events: bursts
//! of blocked threads from the probe's microstates (`server.microstates.samples`
//! in results.json), and the load generator's own lateness from the slow log.
//!
//! A microstate sample covers the interval before its `t_s` and holds the
//! thread-seconds the server's threads spent blocked in `futex` (LCK) and in
//! read/write calls (IO); divided by the interval, that is how many threads
//! were blocked on average. Idle pool threads park on futexes too, so the
//! level alone says little: an interval is a lock (or I/O) event when its
//! level is at least half a thread above the run's median and 1.5 times it,
//! i.e. when clearly more threads than usual were queued. Such an event slows
//! requests without stopping the server, so it accounts for as much delay as
//! it overlaps a request.
//!
//! A request whose actual send came later than its intended send waited in
//! the load generator: that lateness is an event of its own (`send_delay`),
//! and explains the request when it is at least half its excess latency.

use stampede_schema::microstates::StateSample;

use crate::attribution::Request;
use crate::event::{Event, Kind};

const OVER_MEDIAN: f64 = 1.5;
const FLOOR_THREADS: f64 = 0.5;
/// Send delays shorter than this are the generator's normal jitter.
const MIN_SEND_DELAY_NS: u64 = 100_000;

/// Thread-seconds of one state in a sample.
type Seconds = fn(&StateSample) -> f64;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Lock and blocked-I/O events from microstate samples; `t0_mono_ns` is
/// CLOCK_MONOTONIC at `t_s = 0`.
pub fn events(samples: &[StateSample], t0_mono_ns: u64) -> Vec<Event> {
    let mono = |t_s: f64| (t0_mono_ns as i128 + (t_s * 1e9).round() as i128).max(0) as u64;
    let usable: Vec<&StateSample> = samples.iter().filter(|s| s.wall_s > 0.0).collect();
    let mut out = Vec::new();
    let kinds: [(Kind, Seconds, &str); 2] = [
        (Kind::Lock, |s| s.seconds.lck_s, "blocked on futexes"),
        (Kind::BlockedIo, |s| s.seconds.io_s, "blocked in read/write calls"),
    ];
    for (kind, seconds, what) in kinds {
        let level = |s: &StateSample| seconds(s) / s.wall_s;
        let typical = median(usable.iter().map(|s| level(s)).collect());
        let threshold = (typical * OVER_MEDIAN).max(typical + FLOOR_THREADS);
        for s in &usable {
            let threads = level(s);
            if threads >= threshold {
                out.push(Event {
                    start_mono_ns: mono(s.t_s - s.wall_s),
                    end_mono_ns: mono(s.t_s),
                    kind,
                    label: format!("{threads:.1} threads {what} on average (median {typical:.1})"),
                    stopped: false,
                    error_ns: 0,
                });
            }
        }
    }
    out
}

/// One event per logged request that the load generator sent late.
pub fn send_delays(requests: &[Request]) -> Vec<Event> {
    requests
        .iter()
        .filter(|r| r.start_mono_ns >= r.intended_mono_ns + MIN_SEND_DELAY_NS && r.intended_mono_ns > 0)
        .map(|r| Event {
            start_mono_ns: r.intended_mono_ns,
            end_mono_ns: r.start_mono_ns,
            kind: Kind::SendDelay,
            label: format!(
                "the load generator sent it {:.2} ms after its intended time",
                (r.start_mono_ns - r.intended_mono_ns) as f64 / 1e6
            ),
            stopped: false,
            error_ns: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::{attribute, Margins};
    use crate::event::Cause;
    use stampede_schema::microstates::StateSeconds;

    fn sample(t_s: f64, lck_s: f64) -> StateSample {
        StateSample {
            t_s,
            wall_s: 0.1,
            threads: 8,
            seconds: StateSeconds { lck_s, slp_s: 0.8 - lck_s, ..StateSeconds::default() },
        }
    }

    fn request(from_ms: u64, sent_ms: u64, to_ms: u64) -> Request {
        Request {
            latency_us: ((to_ms - from_ms) * 1000) as f64,
            intended_mono_ns: from_ms * 1_000_000,
            start_mono_ns: sent_ms * 1_000_000,
            end_mono_ns: to_ms * 1_000_000,
            ..Request::default()
        }
    }

    #[test]
    fn a_burst_of_futex_waits_explains_the_requests_inside_it() {
        // Two parked threads all along (0.2 thread-s per 0.1 s); six at 1.0–1.1 s.
        let mut samples: Vec<StateSample> = (1..=20).map(|i| sample(i as f64 * 0.1, 0.2)).collect();
        samples[10] = sample(1.1, 0.6);
        let found = events(&samples, 0);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].kind, found[0].start_mono_ns, found[0].end_mono_ns),
            (Kind::Lock, 1_000_000_000, 1_100_000_000)
        );
        let requests = [request(1010, 1010, 1090), request(1500, 1500, 1580)];
        let causes: Vec<_> = attribute(&requests, &found, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::Lock), None]);
    }

    #[test]
    fn a_late_send_is_the_generators_doing() {
        let requests = [request(100, 130, 140), request(200, 200, 240)];
        let found = send_delays(&requests);
        assert_eq!(found.len(), 1);
        let causes: Vec<_> = attribute(&requests, &found, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::SendDelay), None]);
    }
}
