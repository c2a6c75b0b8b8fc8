//! A profile's open-loop latency phase (`latency = { fraction = 0.7 }`,
//! docs/scenarios.md): after the closed loop has measured what the server
//! sustains, the same server start is offered a fixed rate, that fraction of
//! the closed loop's requests/s, and the run's latency percentiles are taken
//! from it, measured from each request's intended send time. A closed loop
//! measures latency from the send, so requests queued behind a pause are
//! never counted (coordinated omission); this phase is how `stampede run`
//! measures latency the way the rest of Stampede tells users to.
//!
//! The profile's `latency` table itself is scenario/latency.rs.
//!
//! Also here: how many slow requests each phase keeps by default, so that
//! `stampede explain` has the requests above p99 of every run without being
//! asked.

use std::time::Duration;

use stampede_schema::LoadResult;

use crate::interrupt::interrupted;
use crate::phases::loadgen::{LoadError, LoadPhase};
use crate::phases::state::{self, RunState};
use crate::scenario::latency::LatencyPhase;
use crate::scenario::Profile;
use crate::server::served::Served;

/// How a latency phase ended.
#[derive(Debug)]
pub enum Outcome {
    Measured(Box<LoadResult>),
    Failed(LoadError),
    /// The closed loop sustained too little to take a fraction of.
    NoRate,
}

/// Runs the latency phase of `profile` after a closed loop that sustained
/// `closed_rps`: `load` runs the generator for a duration at a rate with a
/// slow log of so many requests.
pub fn run(
    profile: &Profile,
    phase: &LatencyPhase,
    closed_rps: f64,
    load: impl FnOnce(Duration, f64, u64) -> Result<LoadResult, LoadError>,
) -> Outcome {
    let Some(rate) = phase.offered_rate(closed_rps) else {
        return Outcome::NoRate;
    };
    let duration = phase.duration.unwrap_or_else(|| profile.duration());
    match load(duration, rate, slow_log(profile.spec.slow_log, Some(rate * duration.as_secs_f64()))) {
        Ok(doc) => Outcome::Measured(Box::new(doc)),
        Err(err) => Outcome::Failed(err),
    }
}

/// The latency phase of a run whose measured load `load` sustained a rate:
/// `None` when the profile has none, or when a signal, a lost host or a
/// crash leaves no server to measure (its figures would describe connection
/// errors, not the server).
pub fn latency(run: &mut RunState, server: &mut dyn Served, load: &Result<LoadResult, LoadError>) -> Option<Outcome> {
    run.died_measuring = server.crashed().is_some();
    let (Ok(closed), Some(latency)) = (load, &run.spec.profile.latency) else {
        return None;
    };
    if interrupted() || !server.alive() || run.died_measuring {
        return None;
    }
    (run.ctx.phase)("measuring latency (open loop)");
    Some(self::run(run.spec.profile, latency, closed.rps, |duration, rate, slow_log| {
        let open = LoadPhase { rate: Some(rate), slow_log, ..run.load_phase(duration) };
        state::load(&open, server)
    }))
}

/// Share of a phase's requests its default slow log keeps: everything above
/// p99 and half as much again below it, so the log reaches below p99 even
/// when the phase answers more requests than expected.
pub const SLOW_SHARE: f64 = 0.015;

/// Slow requests kept beyond [`SLOW_SHARE`], for short or slow phases.
pub const SLOW_MARGIN: u64 = 100;

/// Slow requests kept when nothing says how many requests to expect (a
/// closed loop without a warmup): 10,000 × about 80 bytes per generator thread.
pub const SLOW_UNKNOWN: u64 = 10_000;

/// The slow log a phase keeps: the profile's `slow_log` when it gives one,
/// else [`SLOW_SHARE`] of `expected_requests` plus [`SLOW_MARGIN`], at most
/// the load generator's maximum (`--slow-log`, 100,000).
pub fn slow_log(profile_slow_log: u64, expected_requests: Option<f64>) -> u64 {
    if profile_slow_log > 0 {
        return profile_slow_log;
    }
    let max = stampede_spec::limits::MAX_SLOW_LOG as u64;
    match expected_requests.filter(|n| n.is_finite() && *n >= 0.0) {
        Some(n) => ((n * SLOW_SHARE).ceil() as u64).saturating_add(SLOW_MARGIN).min(max),
        None => SLOW_UNKNOWN.min(max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_slow_log_reaches_below_p99_and_is_bounded() {
        assert_eq!(slow_log(0, Some(100_000.0)), 1_600, "1.5% of 100,000 and a margin of 100");
        assert!(slow_log(0, Some(100_000.0)) as f64 > 0.01 * 100_000.0);
        assert_eq!(slow_log(0, Some(1e12)), 100_000, "the generator's maximum");
        assert_eq!(slow_log(0, None), SLOW_UNKNOWN);
        assert_eq!(slow_log(7, Some(1e6)), 7, "the profile's own slow_log wins");
    }
}
