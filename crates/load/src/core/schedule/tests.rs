//! The schedule driven the way the loops drive it, over a simulated clock:
//! wake at `wake`, take what is due, send while a connection is free.

use super::Schedule;
use crate::config::Arrival;
use crate::core::pacer::Pacer;
use crate::core::recorder::Recorder;
use crate::core::share::Share;
use crate::core::timeline::Timeline;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MS: Duration = Duration::from_millis(1);

fn share(t0: Instant, quota: Option<u64>, end: Option<Instant>) -> Share {
    Share { index: 0, connections: 1, max_connections: 1, quota, rate: None, start: t0, measure_from: t0, end }
}

/// An open-loop schedule of `rate` requests a second from `t0`.
fn paced(t0: Instant, rate: f64, quota: Option<u64>, end: Option<Instant>) -> (Schedule, Recorder) {
    let pacer = Pacer::new(t0, rate, Arrival::Uniform, 0.0, 1);
    let rec = Recorder::new(t0, end, 0, Arc::new(Timeline::default()), true);
    (Schedule::paced(Some(pacer), &share(t0, quota, end)), rec)
}

/// Wakes as the schedule asks until `until` or until it has nothing more
/// to wake for, sending every due request while `free(now)` says a
/// connection is free; returns the requests sent.
fn drive(s: &mut Schedule, rec: &mut Recorder, until: Instant, free: impl Fn(Instant) -> bool) -> u64 {
    let mut sent = 0;
    while let Some(now) = s.wake().filter(|&at| at < until) {
        s.take_due(now);
        while free(now) {
            let Some(intended) = s.next_request() else { break };
            assert!(intended <= now, "a request went before its time");
            s.send(rec, intended, now, now);
            s.in_flight -= 1; // answered at once
            sent += 1;
        }
        s.all_busy(now);
    }
    sent
}

#[test]
fn an_open_loop_takes_exactly_the_requests_of_its_duration_and_owes_none() {
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(1);
    let (mut s, mut rec) = paced(t0, 1000.0, None, Some(end));
    let sent = drive(&mut s, &mut rec, end + Duration::from_secs(5), |_| true);
    assert_eq!(sent, 1000);
    assert_eq!(s.wake(), None, "nothing more falls due after the end");
    assert!(s.done(&mut rec, end, Duration::from_secs(1), false));
    assert_eq!((rec.sent, rec.never_sent), (1000, 0));
    assert_eq!(s.figures().0.total(), Duration::ZERO, "never waited for a connection");
}

#[test]
fn requests_due_while_every_connection_is_busy_are_owed_then_counted_never_sent() {
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(1);
    let (mut s, mut rec) = paced(t0, 1000.0, None, Some(end));
    // The only connection hangs from 400 ms on.
    let hang = t0 + 400 * MS;
    let sent = drive(&mut s, &mut rec, end, |now| now < hang);
    assert_eq!(sent, 400);
    assert_eq!(s.wake(), None, "a loop waiting for a connection is woken by it, not the schedule");
    s.take_due(end);
    // At the end, the due requests are owed: the drain waits for them...
    assert!(!s.done(&mut rec, end, Duration::from_secs(1), false));
    // ...up to `--timeout`, then each is counted never sent, none past the end.
    assert!(s.done(&mut rec, end + Duration::from_secs(1), Duration::from_secs(1), false));
    assert_eq!((rec.sent, rec.never_sent), (400, 600));
    // Every due request waited from the hang to the end of the measured phase.
    assert_eq!(s.figures().0.total(), Duration::from_millis(600));
}

#[test]
fn a_run_stopped_early_counts_as_never_sent_only_what_fell_due_by_then() {
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(1);
    let (mut s, mut rec) = paced(t0, 1000.0, None, Some(end));
    let hang = t0 + 400 * MS;
    let stop = t0 + Duration::from_micros(499_500);
    assert_eq!(drive(&mut s, &mut rec, stop, |now| now < hang), 400);
    // Ctrl-C at 499.5 ms: nothing in flight is owed at the end (`drained`
    // is false), and the 100 requests due since the hang were never sent.
    assert!(!s.drained(stop, true));
    s.never_sent(&mut rec, stop);
    assert_eq!((rec.sent, rec.never_sent), (400, 100));
}

#[test]
fn an_open_loop_with_a_quota_stops_waking_once_it_is_sent() {
    let t0 = Instant::now();
    let (mut s, mut rec) = paced(t0, 1000.0, Some(25), None);
    assert_eq!(drive(&mut s, &mut rec, t0 + Duration::from_secs(5), |_| true), 25);
    assert!(s.used_up() && s.wake().is_none());
    assert!(!s.done(&mut rec, t0 + 30 * MS, Duration::from_secs(1), true), "answers still owed");
    assert!(s.done(&mut rec, t0 + 30 * MS, Duration::from_secs(1), false));
    assert_eq!(rec.never_sent, 0);
}

#[test]
fn a_request_the_server_never_processed_goes_again_first_with_its_intended_time() {
    let t0 = Instant::now();
    let (mut s, mut rec) = paced(t0, 1000.0, None, Some(t0 + Duration::from_secs(1)));
    s.take_due(t0 + 2 * MS);
    let first = s.next_request().unwrap();
    let (intended, _) = s.send(&mut rec, first, t0, t0 + 2 * MS);
    let slot = crate::http2::session::Slot::new(intended, t0 + 2 * MS, None);
    s.requeue(&mut rec, &slot);
    assert_eq!(s.next_request(), Some(first), "sent again before the next due");
    assert_eq!(s.next_request(), Some(first + MS));
    assert_eq!(rec.sent, 0, "a request sent again is counted once, when it goes");
}

#[test]
fn a_closed_loop_takes_its_quota_in_batches_and_ends_when_it_is_answered() {
    let t0 = Instant::now();
    let rec = &mut Recorder::new(t0, None, 0, Arc::new(Timeline::default()), false);
    let mut s = Schedule::paced(None, &share(t0, Some(10), None));
    assert_eq!([4, 4, 4, 4].map(|most| s.take_quota(most)), [4, 4, 2, 0]);
    assert!(!s.ready() && s.next_request().is_none() && s.wake().is_none());
    assert!(!s.done(rec, t0, Duration::from_secs(1), true));
    assert!(s.done(rec, t0, Duration::from_secs(1), false));
    // Without `-n`, only the end of a timed run ends it.
    let end = t0 + Duration::from_secs(1);
    let mut s = Schedule::paced(None, &share(t0, None, Some(end)));
    assert_eq!(s.take_quota(3), 3);
    assert_eq!(s.next_request(), Some(t0));
    assert!(!s.done(rec, t0, Duration::from_secs(1), false));
    assert!(s.done(rec, end, Duration::from_secs(1), true));
}

#[test]
fn requests_due_together_at_a_wake_up_are_not_a_wait_for_a_connection() {
    // 80,000 req/s: each wake-up finds several due, and sends them all.
    let t0 = Instant::now();
    let end = t0 + 100 * MS;
    let (mut s, mut rec) = paced(t0, 80_000.0, None, Some(end));
    assert_eq!(drive(&mut s, &mut rec, end + MS, |_| true), 8000);
    assert_eq!(s.figures().1, 0, "each went at the wake-up it fell due by: no lag");
    assert_eq!(s.figures().0.total(), Duration::ZERO);
}

/// `paced`, held until a connection is open, at most until `bound`.
fn held(t0: Instant, rate: f64, end: Instant, bound: Instant) -> (Schedule, Recorder) {
    let (s, rec) = paced(t0, rate, None, Some(end));
    (s.held_until(bound), rec)
}

#[test]
fn a_held_schedule_has_nothing_due_until_a_connection_is_open() {
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(1);
    let (mut s, mut rec) = held(t0, 1000.0, end, t0 + Duration::from_secs(5));
    // Connecting for 30 ms: no wake-up for the schedule, nothing due, no wait.
    for ms in [0, 10, 20] {
        let now = t0 + ms * MS;
        assert_eq!(s.wake(), None, "a connection opening wakes the loop, not the schedule");
        s.take_due(now);
        assert!(!s.due_by(now) && s.next_request().is_none(), "due at {ms} ms while connecting");
        s.all_busy(now);
        s.begin(now, true);
        assert!(s.held());
    }
    // One open at 30 ms: the schedule runs from there, its first request due then.
    s.begin(t0 + 30 * MS, false);
    assert!(!s.held());
    assert_eq!(s.origin(), Some(t0 + 30 * MS));
    assert_eq!(s.wake(), Some(t0 + 30 * MS));
    // The end does not move: the measured phase has 30 ms fewer requests,
    // and none is owed or never sent for the time spent connecting.
    assert_eq!(drive(&mut s, &mut rec, end + Duration::from_secs(5), |_| true), 970);
    assert!(s.done(&mut rec, end, Duration::from_secs(1), false));
    assert_eq!(rec.never_sent, 0);
    assert_eq!(s.figures().0.total(), Duration::ZERO, "the time connecting is no wait for a connection");
    // Begun once: a later call (a reconnection opening) moves nothing.
    s.begin(t0 + 500 * MS, false);
    assert_eq!(s.origin(), Some(t0 + 30 * MS));
}

#[test]
fn a_held_schedule_begins_at_its_bound_when_connections_never_open() {
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(1);
    let bound = t0 + 200 * MS;
    let (mut s, mut rec) = held(t0, 1000.0, end, bound);
    // Still connecting when the loop wakes 50 ms past the bound: the
    // schedule began at the bound, and the requests due since wait.
    let now = bound + 50 * MS;
    s.begin(now, true);
    assert!(!s.held());
    assert_eq!(s.origin(), Some(bound));
    s.take_due(now);
    s.all_busy(now);
    assert!(s.waiting() && s.wake().is_none(), "due requests wait for a connection");
    // They stay owed, and are never sent when no connection ever opens.
    assert!(s.done(&mut rec, end + Duration::from_secs(1), Duration::from_secs(1), false));
    assert_eq!(rec.never_sent, 800);
}

#[test]
fn a_closed_loop_is_never_held() {
    let t0 = Instant::now();
    let s = Schedule::paced(None, &share(t0, Some(10), None)).held_until(t0 + Duration::from_secs(5));
    assert!(!s.held() && s.ready() && s.origin().is_none());
}
