//! The parts of the documents that describe a request mix: the targets as
//! given (the load spec's part, which scenario files and load hosts will
//! carry too) and what each target got (`stampede.load/1`'s `mix` and
//! `targets`). The engine that expands and sends them is
//! `stampede_load::mix`.

use crate::errors::Errors;
use crate::load::Percentiles;
use serde::{Deserialize, Serialize};

/// One target as given: a URL (template), a method, headers, a body, a weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetSpec {
    pub method: String,
    pub url: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(default)]
    pub body: Vec<u8>,
    #[serde(default = "one")]
    pub weight: u32,
}

fn one() -> u32 {
    1
}

/// The order targets are sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Smooth weighted round robin: with weights 3:1, A A B A, A A B A, …
    #[default]
    RoundRobin,
    /// Each request picks a target at random, in proportion to the weights.
    Random,
}

/// How the targets of a mix were chosen, so the run can be repeated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MixStats {
    /// `"round-robin"` or `"random"`.
    pub order: Order,
    /// The seed of every random choice (`--seed` repeats the run's choices).
    pub seed: u64,
}

/// One target of a mix: what it was and what it got.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    /// The method and the path template, e.g. `GET /api/fib/{1..100}`.
    pub name: String,
    pub weight: u32,
    pub requests: u64,
    pub errors: Errors,
    pub latency_us: Percentiles,
}
