//! A profile's `latency = { fraction = 0.7, duration = "4s" }`: the open-loop
//! latency phase it asks for (docs/scenarios.md), as the scenario file says
//! it and checked with it; phases/latency.rs runs it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

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
}
