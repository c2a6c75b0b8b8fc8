//! Whether threads parked on futexes can be requests waiting for a lock.
//! Go's idle Ms (`runtime.futexsleep`), a JVM's GC and JIT threads, V8's
//! platform workers, tokio's parked workers and any pool thread waiting for
//! its next job sleep on a futex exactly like a thread queued on a mutex,
//! and they wake now and then, so they count among the working threads (a
//! CPU used within the last second). Their futex time is no lock.
//!
//! A lock on the request path leaves three marks a runtime's idle pool does
//! not, all read from the probe's figures for the phase its microstates
//! cover (the measured load):
//!
//! 1. requests wait: more requests are in the server (Little's law:
//!    throughput times mean latency, from the send) than its threads are
//!    running or ready to run, by at least one;
//! 2. with cores to spare: the working threads were on or waiting for a
//!    CPU at most half of the cores they could use (the smaller of the
//!    server's cores and its working threads). A server whose threads keep
//!    its cores busy makes requests wait for a CPU, and a lock held on a CPU
//!    would leave them waiting for it all the same;
//! 3. no single thread is the bottleneck: none was on or waiting for a CPU
//!    [`SATURATED`] of its time (Node's event loop, a Netty event loop at
//!    its limit): there, requests wait for that thread, and the futex time
//!    around it is its runtime's helpers.
//!
//! Besides, the futex-blocked working threads cannot much outnumber the
//! requests in flight: a thread waits for a lock on behalf of a request, so
//! more than [`WAITERS_PER_REQUEST`] per request are idle threads parked.
//! When any mark is missing, explain names no lock and says which.
//!
//! A lock held while its holder waits (a call to a slow backend made under a
//! global mutex, the common way one gets on the request path) leaves all
//! three marks on every runtime; so does any wait that parks threads on
//! futexes with requests queued, such as a Go goroutine parked on a channel
//! fed by something slow: the words say "lock" for what the OS shows, a
//! queue of requests behind threads parked on futexes.

use stampede_schema::microstates::{Microstates, StateSample};
use stampede_schema::LoadResult;

/// How many futex-blocked working threads each request in flight can
/// account for: one waiter per request in a thread-per-request server,
/// twice that for the spread of the per-interval levels around their mean
/// and a runtime's helper threads woken with a request (Go's spinning M).
pub const WAITERS_PER_REQUEST: f64 = 2.0;
/// A thread on or waiting for a CPU this share of its time is the
/// bottleneck requests wait for.
pub const SATURATED: f64 = 0.8;
/// The share of the usable cores the working threads may keep busy for
/// their futex waits to be requests queued with cores to spare.
const SPARE: f64 = 0.5;

/// Requests in service on average over a load (Little's law: throughput
/// times mean latency, from the actual send where an open loop measured
/// it, so a generator's own lateness is not counted); `None` without either
/// figure.
pub fn in_flight(load: &LoadResult) -> Option<f64> {
    let mean_us = load.open.as_ref().map_or(load.latency_us.mean, |o| o.service_time_us.mean);
    let n = load.rps * mean_us / 1e6;
    (n.is_finite() && n > 0.0).then_some(n)
}

/// The working threads' seconds per wall second over the measured phase
/// (`t_s > 0`): (blocked on futexes, on or waiting for a CPU, how many).
fn levels(states: &[StateSample]) -> Option<(f64, f64, f64)> {
    let measured: Vec<&StateSample> =
        states.iter().filter(|s| s.t_s > 0.0 && s.wall_s > 0.0 && s.working.total_s() > 0.0).collect();
    let wall: f64 = measured.iter().map(|s| s.wall_s).sum();
    (wall > 0.0).then(|| {
        let sum = |f: fn(&StateSample) -> f64| measured.iter().map(|s| f(s)).sum::<f64>();
        let threads = sum(|s| s.working_threads as f64) / measured.len() as f64;
        (sum(|s| s.working.lck_s) / wall, sum(|s| s.working.usr_s + s.working.sys_s + s.working.lat_s) / wall, threads)
    })
}

/// Why the working threads' futex waits are no lock, as one line; `None`
/// when they carry all the marks of requests queued on one (or the
/// figures are missing: then they count, as before). `load` is the phase the
/// microstates cover, `cores` the cores the server may use.
pub fn no_lock(micro: &Microstates, load: &LoadResult, cores: Option<f64>) -> Option<String> {
    let (futex, demand, working) = levels(&micro.samples)?;
    let in_flight = in_flight(load)?;
    if futex > WAITERS_PER_REQUEST * in_flight {
        return Some(format!(
            "the working threads blocked on futexes ({futex:.1} on average) outnumber the requests in flight ({in_flight:.2} on average: throughput × mean latency) more than {WAITERS_PER_REQUEST:.0} to 1: they are idle threads parked waiting for work, not requests waiting for a lock, and are not counted as one"
        ));
    }
    if let Some(t) = micro.threads.iter().find(|t| {
        let s = &t.seconds;
        s.total_s() > 0.0 && (s.usr_s + s.sys_s + s.lat_s) / s.total_s() >= SATURATED
    }) {
        let s = &t.seconds;
        return Some(format!(
            "thread {} ({}) was on or waiting for a CPU {:.0}% of its time: requests wait for that thread, and the futex waits beside it are its runtime's helper threads parked, not a lock",
            t.tid,
            t.name,
            (s.usr_s + s.sys_s + s.lat_s) / s.total_s() * 100.0
        ));
    }
    let usable = cores.map_or(working, |c| c.min(working)).max(1.0);
    if demand > SPARE * usable {
        return Some(format!(
            "the working threads were on or waiting for a CPU {demand:.1} threads' worth on average, of the {usable:.1} they could use: requests wait for a CPU, and the futex waits are threads parked beside the busy ones, not a lock"
        ));
    }
    if in_flight < demand + 1.0 {
        return Some(format!(
            "no requests waited: {in_flight:.2} in flight on average (throughput × mean latency) against {demand:.1} threads on or waiting for a CPU; the futex waits are idle threads parked, not a lock"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::microstates::{StateSeconds, ThreadStates};

    /// Three seconds of samples of four working threads, with `lck_s` and
    /// `usr_s` thread-seconds in each 0.1 s.
    fn micro(lck_s: f64, usr_s: f64) -> Microstates {
        let working = StateSeconds { usr_s, lck_s, slp_s: (0.4 - lck_s - usr_s).max(0.0), ..StateSeconds::default() };
        let samples = (1..=30).map(|i| StateSample {
            t_s: i as f64 * 0.1,
            wall_s: 0.1,
            working,
            working_threads: 4,
            ..StateSample::default()
        });
        Microstates { samples: samples.collect(), ..Microstates::default() }
    }

    fn load(rps: f64, mean_us: f64) -> LoadResult {
        let mut load = LoadResult { rps, ..LoadResult::default() };
        load.latency_us.mean = mean_us;
        load
    }

    #[test]
    fn eight_parked_threads_beside_a_fraction_of_a_request_in_flight_are_parking() {
        // 200 req/s of 300 µs: 0.06 requests in flight; 3.9 threads on futexes.
        let line = no_lock(&micro(0.39, 0.01), &load(200.0, 300.0), Some(2.0)).expect("parking");
        assert!(line.contains("3.9 on average") && line.contains("0.06"), "{line}");
    }

    #[test]
    fn requests_queued_behind_threads_parked_with_cores_to_spare_are_a_lock() {
        // 100 req/s of 30 ms: 3 requests in flight; 2.5 threads on futexes,
        // 0.1 on a CPU of the two cores.
        assert_eq!(no_lock(&micro(0.25, 0.01), &load(100.0, 30_000.0), Some(2.0)), None);
        assert_eq!(no_lock(&Microstates::default(), &load(100.0, 30_000.0), None), None, "no figures: counted");
    }

    #[test]
    fn futex_waits_beside_threads_that_keep_the_cores_busy_are_no_lock() {
        // Go under a closed loop: 32 requests in flight, Ms parked half the
        // time while the others keep both cores busy.
        let line = no_lock(&micro(0.2, 0.2), &load(30_000.0, 1_000.0), Some(2.0)).expect("no spare cores");
        assert!(line.contains("requests wait for a CPU"), "{line}");
    }

    #[test]
    fn a_saturated_event_loop_is_the_bottleneck_not_its_parked_helpers() {
        // Node: the event loop on a CPU 94% of its time, V8's workers parked.
        let mut m = micro(0.3, 0.05);
        let thread = |tid, usr_s, lck_s, slp_s| ThreadStates {
            tid,
            name: "node".into(),
            seconds: StateSeconds { usr_s, lck_s, slp_s, ..StateSeconds::default() },
            ..ThreadStates::default()
        };
        m.threads = vec![thread(1, 1.9, 0.0, 0.1), thread(2, 0.01, 1.99, 0.0)];
        let line = no_lock(&m, &load(20_000.0, 1_000.0), Some(2.0)).expect("saturated thread");
        assert!(line.contains("thread 1 (node)") && line.contains("95%"), "{line}");
    }

    #[test]
    fn parked_threads_with_nothing_waiting_are_no_lock() {
        // 1,500 req/s of 500 µs: 0.75 requests in flight.
        let line = no_lock(&micro(0.1, 0.01), &load(1_500.0, 500.0), Some(2.0)).expect("nothing waited");
        assert!(line.contains("no requests waited"), "{line}");
    }
}
