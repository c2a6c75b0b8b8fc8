//! A profile's open-loop latency phase (`latency = { fraction = 0.7 }`,
//! docs/scenarios.md): after the closed loop has measured what the server
//! sustains, the same server start is offered a fixed rate, that fraction of
//! the closed loop's requests/s, and the run's latency percentiles are taken
//! from it, measured from each request's intended send time. A closed loop
//! measures latency from the send, so requests queued behind a pause are
//! never counted (coordinated omission); this phase is how `stampede run`
//! measures latency the way the rest of Stampede tells users to.
//!
//! Also here: how many slow requests each phase keeps by default, so that
//! `stampede explain` has the requests above p99 of every run without being
//! asked.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use stampede_schema::LoadResult;

use crate::phases::loadgen::LoadError;
use crate::scenario::Profile;

/// `latency = { fraction = 0.7, duration = "4s" }` in a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyPhase {
    /// The offered rate as a share of the requests/s the closed loop just
    /// measured on the same server start, above 0 and at most 1.
    pub fraction: f64,
    /// How long the open loop runs; the profile's `duration` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "stampede_schema::units::serde_text_opt")]
    pub duration: Option<Duration>,
}

impl LatencyPhase {
    /// Checks the values, naming the field (relative to `latency`).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.fraction.is_finite() && self.fraction > 0.0 && self.fraction <= 1.0) {
            return Err((
                "fraction",
                format!(
                    "{} must be above 0 and at most 1 (e.g. 0.7: 70% of the closed loop's requests/s)",
                    self.fraction
                ),
            ));
        }
        if self.duration.is_some_and(|d| d < Duration::from_millis(100)) {
            return Err(("duration", "must be at least 100ms (e.g. \"4s\")".into()));
        }
        Ok(())
    }

    /// The rate offered after a closed loop that sustained `closed_rps`;
    /// `None` when it sustained nothing to take a fraction of.
    pub fn offered_rate(&self, closed_rps: f64) -> Option<f64> {
        let rate = self.fraction * closed_rps;
        (rate.is_finite() && rate >= 1.0).then_some(rate)
    }
}

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
    let max = stampede_load::config::limits::MAX_SLOW_LOG as u64;
    match expected_requests.filter(|n| n.is_finite() && *n >= 0.0) {
        Some(n) => ((n * SLOW_SHARE).ceil() as u64).saturating_add(SLOW_MARGIN).min(max),
        None => SLOW_UNKNOWN.min(max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offered_rate_is_the_fraction_of_the_closed_loop() {
        let phase = LatencyPhase { fraction: 0.7, duration: None };
        assert_eq!(phase.offered_rate(10_000.0), Some(7_000.0));
        assert_eq!(phase.offered_rate(0.0), None, "nothing sustained, nothing offered");
    }

    #[test]
    fn fractions_outside_zero_to_one_are_refused() {
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            let err = LatencyPhase { fraction: bad, duration: None }.validate().unwrap_err();
            assert_eq!(err.0, "fraction");
        }
        assert!(LatencyPhase { fraction: 1.0, duration: Some(Duration::from_secs(1)) }.validate().is_ok());
        let short = LatencyPhase { fraction: 0.5, duration: Some(Duration::from_millis(10)) };
        assert_eq!(short.validate().unwrap_err().0, "duration");
    }

    #[test]
    fn the_default_slow_log_reaches_below_p99_and_is_bounded() {
        assert_eq!(slow_log(0, Some(100_000.0)), 1_600, "1.5% of 100,000 and a margin of 100");
        assert!(slow_log(0, Some(100_000.0)) as f64 > 0.01 * 100_000.0);
        assert_eq!(slow_log(0, Some(1e12)), 100_000, "the generator's maximum");
        assert_eq!(slow_log(0, None), SLOW_UNKNOWN);
        assert_eq!(slow_log(7, Some(1e6)), 7, "the profile's own slow_log wins");
    }
}
