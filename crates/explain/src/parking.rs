//! Idle parking is not a lock. Go's idle Ms (`runtime.futexsleep`,
//! `notesleep`), a JVM pool's idle threads (`Unsafe.park`) and any worker
//! waiting on a condition variable for its next job sleep on a futex, exactly
//! like a thread queued on a mutex; they wake now and then, so they count
//! among the working threads (a CPU used within the last second). On a calm
//! server their futex time would read as lock contention.
//!
//! Little's law tells the two apart without looking at stacks: the requests
//! in service at a time are, on average, the throughput times the mean
//! latency. A thread can only be waiting for a lock *on behalf of a request*
//! while that request is in service, so the working threads blocked on
//! futexes, on average, cannot much exceed the requests in flight unless
//! most of them are idle. When they exceed [`WAITERS_PER_REQUEST`] times the
//! requests in flight, the futex level is parking, and the steady-lock rule
//! and the dominant lock do not count it (unless its second-by-second level
//! follows latency, which idle parking does not). A lock every request
//! waits on is unaffected: there, requests pile up behind it and the
//! requests in flight grow with its waiters.

use stampede_schema::microstates::StateSample;
use stampede_schema::LoadResult;

/// How many futex-blocked working threads each request in flight can
/// account for: one waiter per request in a thread-per-request server,
/// twice that for the spread of the per-interval levels around their mean
/// and a runtime's helper threads woken with a request (Go's spinning M).
pub const WAITERS_PER_REQUEST: f64 = 2.0;

/// Requests in service on average over a load (Little's law: throughput
/// times mean latency); `None` without either figure.
pub fn in_flight(load: &LoadResult) -> Option<f64> {
    let n = load.rps * load.latency_us.mean / 1e6;
    (n.is_finite() && n > 0.0).then_some(n)
}

/// The working threads blocked on futexes, on average over the measured
/// phase (`t_s > 0`); `None` without working-thread figures.
pub fn futex_threads(states: &[StateSample]) -> Option<f64> {
    let measured = states.iter().filter(|s| s.t_s > 0.0 && s.wall_s > 0.0 && s.working.total_s() > 0.0);
    let (lck, wall) = measured.fold((0.0, 0.0), |(l, w), s| (l + s.working.lck_s, w + s.wall_s));
    (wall > 0.0).then(|| lck / wall)
}

/// Why the working threads' futex waits are idle parking rather than a
/// lock, as one line; `None` when they can be requests waiting (or the
/// figures are missing: then they count, as before).
pub fn parking(states: &[StateSample], in_flight: Option<f64>) -> Option<String> {
    let (waiting, in_flight) = (futex_threads(states)?, in_flight?);
    (waiting > WAITERS_PER_REQUEST * in_flight).then(|| {
        format!(
            "the working threads blocked on futexes ({waiting:.1} on average) outnumber the requests in flight ({in_flight:.2} on average: throughput × mean latency) more than {WAITERS_PER_REQUEST:.0} to 1: they are idle threads parked waiting for work, not requests waiting for a lock, and are not counted as one"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::microstates::StateSeconds;

    /// Three seconds of samples whose working threads spend `lck_s` of each 0.1 s on futexes.
    fn samples(lck_s: f64) -> Vec<StateSample> {
        let working = StateSeconds { usr_s: 0.01, lck_s, ..StateSeconds::default() };
        (1..=30).map(|i| StateSample { t_s: i as f64 * 0.1, wall_s: 0.1, working, ..StateSample::default() }).collect()
    }

    fn load(rps: f64, mean_us: f64) -> LoadResult {
        let mut load = LoadResult { rps, ..LoadResult::default() };
        load.latency_us.mean = mean_us;
        load
    }

    #[test]
    fn eight_parked_threads_beside_a_fraction_of_a_request_in_flight_are_parking() {
        // 200 req/s of 300 µs: 0.06 requests in flight; 7.9 threads on futexes.
        let line = parking(&samples(0.79), in_flight(&load(200.0, 300.0))).expect("parking");
        assert!(line.contains("7.9 on average") && line.contains("0.06"), "{line}");
    }

    #[test]
    fn waiters_as_many_as_the_requests_queued_behind_a_lock_are_not_parking() {
        // 100 req/s of 30 ms: 3 requests in flight; 2.5 threads on futexes.
        let states = samples(0.25);
        assert_eq!(parking(&states, in_flight(&load(100.0, 30_000.0))), None);
        assert_eq!(parking(&states, None), None, "without a load's figures the level counts, as before");
        assert_eq!(in_flight(&LoadResult::default()), None);
    }
}
