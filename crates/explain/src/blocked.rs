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
//! That finds bursts, not a lock the workers queue on all the time: there the
//! level never rises above its median. So an interval is also a lock event
//! when the *working* threads (those that used a CPU within the last second,
//! `working` in the sample) spent at least half their time blocked on
//! futexes: most of the serving threads' time went to waiting for a lock.
//! Counting only working threads leaves out pool threads parked all along;
//! it misses nothing of a real queue, but it still counts a pool thread that
//! serves a request now and then and parks in between (a lightly loaded Go
//! or JVM pool), and a futex is also a condition variable: a worker waiting
//! on a channel for the next job looks the same as one waiting for a lock.
//! Steady contention is present in every window, so its share by chance is
//! as high as its share: the evidence is its level, which [`lock_level`]
//! measures in the slow requests' windows and over the run.
//!
//! A request whose actual send came later than its intended send waited
//! for a connection (one to open: `connection_setup`; a busy one to answer:
//! `connection_busy`; both the server's) up to the time the slow log says it
//! could have gone and the loop's next designed wake-up, and for the load
//! generator past that (`send_delay`), by the rule `stampede run`'s validity
//! uses too (stampede_schema::late). Each wait is an event of its own, owned
//! by its request: it explains that request when it is at least half its
//! excess latency, and no other. A neighbour whose window it overlaps did
//! not wait for it; counted for every request it overlaps, a few
//! sub-millisecond late sends around a slow stretch added up to "load
//! generator late" for requests that went out on time (15 of 45 valid runs
//! of the shootout of 2026-11-27 named it).

use stampede_schema::explain::LockLevel;
use stampede_schema::late;
use stampede_schema::microstates::StateSample;

use crate::attribution::Request;
use crate::event::{Event, Kind, Owner};

const OVER_MEDIAN: f64 = 1.5;
/// The working threads' futex share from which an interval is steady contention.
const STEADY_LOCK: f64 = 0.5;
const FLOOR_THREADS: f64 = 0.5;
/// Waits for a connection shorter than this are not worth an event.
const MIN_SEND_DELAY_NS: u64 = late::MIN_LATE_NS;

/// Thread-seconds of one state in a sample.
type Seconds = fn(&StateSample) -> f64;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Lock and blocked-I/O events from microstate samples; `t0_mono_ns` is
/// CLOCK_MONOTONIC at `t_s = 0`. `lock` is false when the futex waits lack
/// the marks of requests queued on a lock (crate::parking): then neither a
/// burst nor the steady level of futex waits is a lock event (a JVM's GC
/// workers or V8's all waking at once make a burst of futex waits too).
pub fn events(samples: &[StateSample], t0_mono_ns: u64, lock: bool) -> Vec<Event> {
    let mono = |t_s: f64| (t0_mono_ns as i128 + (t_s * 1e9).round() as i128).max(0) as u64;
    let usable: Vec<&StateSample> = samples.iter().filter(|s| s.wall_s > 0.0).collect();
    let mut out = Vec::new();
    let kinds: [(Kind, Seconds, &str); 2] = [
        (Kind::Lock, |s| s.seconds.lck_s, "blocked on futexes"),
        (Kind::BlockedIo, |s| s.seconds.io_s, "blocked in read/write calls"),
    ];
    for (kind, seconds, what) in kinds.into_iter().filter(|k| lock || k.0 != Kind::Lock) {
        let level = |s: &StateSample| seconds(s) / s.wall_s;
        let typical = median(usable.iter().map(|s| level(s)).collect());
        let threshold = (typical * OVER_MEDIAN).max(typical + FLOOR_THREADS);
        for s in &usable {
            let threads = level(s);
            let steady = (kind == Kind::Lock).then(|| working_lock_share(s)).flatten().filter(|&f| f >= STEADY_LOCK);
            let label = if threads >= threshold {
                format!("{threads:.1} threads {what} on average (median {typical:.1})")
            } else if let Some(share) = steady {
                format!(
                    "the {} working threads spent {:.0}% of their time blocked on futexes",
                    s.working_threads,
                    share * 100.0
                )
            } else {
                continue;
            };
            out.push(Event {
                start_mono_ns: mono(s.t_s - s.wall_s),
                end_mono_ns: mono(s.t_s),
                kind,
                label,
                stopped: false,
                error_ns: 0,
                owner: None,
            });
        }
    }
    out
}

/// The share of the working threads' time spent blocked on futexes in one
/// sample; `None` when no thread was working.
fn working_lock_share(s: &StateSample) -> Option<f64> {
    let total = s.working.total_s();
    (total > 0.0).then(|| s.working.lck_s / total)
}

/// The working threads' futex share, as a percentage, in the windows of
/// `requests` (each sample weighted by how long it overlaps them) and over
/// the measured phase (`t_s > 0`); `None` without working-thread figures.
pub fn lock_level(samples: &[StateSample], t0_mono_ns: u64, requests: &[Request]) -> Option<LockLevel> {
    let mono = |t_s: f64| (t0_mono_ns as i128 + (t_s * 1e9).round() as i128).max(0) as u64;
    let measured: Vec<&StateSample> = samples.iter().filter(|s| s.t_s > 0.0 && s.working.total_s() > 0.0).collect();
    if measured.is_empty() {
        return None;
    }
    let (lck, total) = measured.iter().fold((0.0, 0.0), |(l, t), s| (l + s.working.lck_s, t + s.working.total_s()));
    let (mut weighted, mut weight) = (0.0, 0.0);
    for r in requests {
        let (from, to) = (r.intended_mono_ns.min(r.start_mono_ns), r.end_mono_ns);
        for s in &measured {
            let (a, b) = (mono(s.t_s - s.wall_s), mono(s.t_s));
            let overlap = to.min(b).saturating_sub(from.max(a)) as f64;
            if overlap > 0.0 {
                weighted += overlap * s.working.lck_s / s.working.total_s();
                weight += overlap;
            }
        }
    }
    let threads = measured.iter().map(|s| s.working_threads).sum::<u64>() as f64 / measured.len() as f64;
    Some(LockLevel {
        slow_windows_pct: (weight > 0.0).then(|| weighted / weight * 100.0),
        run_pct: lck / total * 100.0,
        working_threads: threads,
    })
}

/// The waits of each logged request that was sent late, as events, split
/// by the rule `stampede run`'s validity uses too (stampede_schema::late):
/// until its connection was free and the loop's next designed wake-up, it
/// waited for a connection (a new one to open, or a busy one to answer: the
/// server's queue); past that, for the load generator's own thread. A
/// request from a document without `ready_mono_ns` waited for the
/// generator from its intended time, as before the split was recorded.
pub fn send_delays(requests: &[Request], granularity_us: f64) -> Vec<Event> {
    let mut out = Vec::new();
    for r in requests.iter().filter(|r| r.intended_mono_ns > 0) {
        let (queue, late) = late::split(r, granularity_us);
        let event = |from: u64, to: u64, kind: Kind, label: String| Event {
            start_mono_ns: from,
            end_mono_ns: to,
            kind,
            label,
            stopped: false,
            error_ns: 0,
            owner: Some(Owner::of(r)),
        };
        let ms = |ns: u64| ns as f64 / 1e6;
        let from = r.intended_mono_ns;
        if queue >= MIN_SEND_DELAY_NS {
            let (kind, what) = if r.connecting {
                (Kind::ConnectionSetup, "for connections to open".to_string())
            } else {
                (
                    Kind::ConnectionBusy,
                    "for a free connection: all were busy with earlier requests (the server's queue)".to_string(),
                )
            };
            out.push(event(from, from + queue, kind, format!("waited {:.2} ms {what}", ms(queue))));
        }
        if late > 0 {
            out.push(event(
                r.start_mono_ns - late,
                r.start_mono_ns,
                Kind::SendDelay,
                format!(
                    "the load generator sent it {:.2} ms after it could have gone, past its wake-up with a connection free",
                    ms(late)
                ),
            ));
        }
    }
    out
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
            ..StateSample::default()
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
        let found = events(&samples, 0, true);
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
    fn steady_contention_of_the_working_threads_is_a_lock_event_and_idle_parking_is_not() {
        // Eight threads parked on futexes all along (the tree's level never
        // moves from its median); four of them work, queued on a lock 80% of
        // their time in the first second and 10% in the second.
        let working = |lck_s: f64| StateSeconds { usr_s: 0.4 - lck_s, lck_s, ..StateSeconds::default() };
        let samples: Vec<StateSample> = (1..=20)
            .map(|i| StateSample {
                working_threads: 4,
                working: working(if i <= 10 { 0.32 } else { 0.04 }),
                ..sample(i as f64 * 0.1, 0.7)
            })
            .collect();
        let found = events(&samples, 0, true);
        assert_eq!(found.len(), 10, "{found:?}");
        assert!(events(&samples, 0, false).is_empty(), "idle parking: no lock event, burst or steady");
        assert!(found.iter().all(|e| e.kind == Kind::Lock && e.end_mono_ns <= 1_000_000_000), "{found:?}");
        assert!(found[0].label.contains("4 working threads spent 80%"), "{}", found[0].label);
        let requests = [request(500, 500, 580), request(1500, 1500, 1580)];
        let causes: Vec<_> = attribute(&requests, &found, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::Lock), None]);
        let level = lock_level(&samples, 0, &requests[..1]).unwrap();
        assert!((level.slow_windows_pct.unwrap() - 80.0).abs() < 1e-6, "{level:?}");
        assert!((level.run_pct - 45.0).abs() < 1e-6, "{level:?}");
        assert_eq!(level.working_threads, 4.0);
    }

    #[test]
    fn a_late_send_is_the_generators_doing() {
        let requests = [request(100, 130, 140), request(200, 200, 240)];
        let found = send_delays(&requests, 0.0);
        assert_eq!(found.len(), 1);
        let causes: Vec<_> = attribute(&requests, &found, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::SendDelay), None]);
    }

    #[test]
    fn a_late_send_explains_its_own_request_and_not_the_neighbours_it_overlaps() {
        // Ten requests on ten connections, all due at 100 ms and slow until
        // 110 ms; the generator sent the one on connection 3 late by 6 ms
        // (its own excess is 10 ms) and the rest on time. Four overlapping
        // late sends of 1.5 ms on other connections add up past half of any
        // neighbour's excess; none of them was that neighbour's wait.
        let mut requests: Vec<Request> =
            (0..10u32).map(|c| Request { connection: c, ..request(100, 100, 110) }).collect();
        requests[3].start_mono_ns = 106_000_000;
        for (i, c) in [5usize, 6, 7, 8].into_iter().enumerate() {
            requests[c].intended_mono_ns = 100_000_000 + i as u64 * 1_500_000;
            requests[c].start_mono_ns = requests[c].intended_mono_ns + 1_500_000;
        }
        let found = send_delays(&requests, 0.0);
        assert_eq!(found.len(), 5, "{found:?}");
        let causes: Vec<_> = attribute(&requests, &found, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes[3], Some(Cause::SendDelay), "{causes:?}");
        for c in [0, 1, 2, 4, 9] {
            assert_eq!(causes[c], None, "request on connection {c} went on time: {causes:?}");
        }
    }

    #[test]
    fn a_wait_for_a_connection_is_the_servers_and_only_the_rest_the_generators() {
        let ready = |r: Request, ready_ms: u64, connecting: bool| Request {
            ready_mono_ns: ready_ms * 1_000_000,
            connecting,
            ..r
        };
        let requests = [
            ready(request(100, 131, 140), 130, false), // all connections busy until 130
            ready(request(200, 260, 270), 259, true),  // its connection opened at 259
            ready(request(300, 330, 340), 302, false), // free at 302, sent at 330
        ];
        let found = send_delays(&requests, 0.0);
        let kinds: Vec<_> = found.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::ConnectionBusy,
                Kind::SendDelay,
                Kind::ConnectionSetup,
                Kind::SendDelay,
                Kind::ConnectionBusy,
                Kind::SendDelay
            ]
        );
        let causes: Vec<_> = attribute(&requests, &found, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::ConnectionBusy), Some(Cause::ConnectionSetup), Some(Cause::SendDelay)]);
    }
}
