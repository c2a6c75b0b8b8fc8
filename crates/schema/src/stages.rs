//! Stages of a load (`--stages 30s:1k,1m:5k,30s:0`): what each stage asked
//! for, and what it got (`stampede.load/1`'s `stages`). The arithmetic of a
//! ramp (how many requests are due by when) is `stampede_spec::stages`.

use crate::errors::Errors;
use crate::load::Percentiles;
use serde::{Deserialize, Serialize};

/// What stages ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Ramp {
    /// The open-loop arrival rate, in requests per second.
    #[default]
    Rate,
    /// The connections of a closed loop, each sending as soon as answered.
    Connections,
}

/// One stage as given: over `duration_s`, the target moves linearly from the
/// previous stage's target (0 before the first) to `target`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub duration_s: f64,
    /// Requests per second, or connections, at the end of the stage.
    pub target: f64,
}

/// One stage of a run: what it asked for and what it got. Read leniently
/// (a field left out reads as its default), like every results document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct StageResult {
    pub ramp: Ramp,
    /// From the start of the measured phase, seconds.
    pub start_s: f64,
    pub duration_s: f64,
    /// The target at the start and at the end of the stage (req/s or connections).
    pub from: f64,
    pub to: f64,
    /// Responses counted in the stage (open loop: by intended send time; closed loop: by end).
    pub requests: u64,
    pub errors: Errors,
    /// `requests / duration_s`, requests per second.
    pub achieved_rate: f64,
    pub latency_us: Percentiles,
}

impl StageResult {
    /// The rate the stage asked for on average (open loop): the mean of a linear ramp.
    pub fn target_rate(&self) -> Option<f64> {
        (self.ramp == Ramp::Rate).then_some((self.from + self.to) / 2.0)
    }
}
