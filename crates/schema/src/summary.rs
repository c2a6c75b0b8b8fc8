//! `stampede.summary/1`: what `stampede report --format json` prints, one
//! row per configuration (app, knobs, load profile) with the median of each
//! headline figure over its valid iterations. Declared here, beside the
//! results it is derived from, so a script or another crate that reads a
//! summary uses the same type the report serialises; the report computes the
//! rows (`stampede_report::summary::summarize`). Fields are documented in
//! docs/report.md, which a test compares with real output.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ErrorCategory;

pub const SUMMARY_SCHEMA: &str = "stampede.summary/1";

/// A row's p99 is not reproducible when its highest p99 over iterations is
/// more than this many times its lowest. Two starts of one reference app
/// whose tails agree stay within ~1.5x; a tail decided by one GC pause or one
/// descheduling in a short phase differs 2.4-8x (issue 39's shootout: go
/// /json 34-81 ms, rust /json 0.8-2.6 ms, python /json 2.8-22 ms).
pub const P99_REPRODUCIBLE_FACTOR: f64 = 2.0;

/// `(p99_spread, p99_reproducible)` of a row's p99 range over iterations.
pub fn p99_spread(range: Option<(f64, f64)>, iterations: usize) -> (Option<f64>, Option<bool>) {
    match range {
        Some((min, max)) if iterations >= 2 && min > 0.0 => {
            let spread = max / min;
            (Some(spread), Some(spread <= P99_REPRODUCIBLE_FACTOR))
        }
        _ => (None, None),
    }
}

/// The whole summary document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SummaryDoc {
    /// Always [`SUMMARY_SCHEMA`].
    pub schema: String,
    /// Stampede version that wrote the results, when recorded.
    pub tool_version: Option<String>,
    pub git_commit: Option<String>,
    pub rows: Vec<SummaryRow>,
}

/// One configuration's line in the summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SummaryRow {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: String,
    /// Iterations of the configuration, valid or not.
    pub runs: usize,
    /// Iterations valid in full: the latency figures come from these.
    pub valid_runs: usize,
    /// Iterations whose measured load is valid (`RunRecord::load_is_valid`),
    /// at least `valid_runs`: the requests/s, per-core, CPU and RSS figures
    /// come from these, so a run invalid only in its latency phase keeps them.
    pub load_valid_runs: usize,
    /// Medians over the valid iterations; `None` when none was valid. The
    /// requests/s and per-core figures come from the measured load (closed
    /// loop unless its profile gives a rate); the latency percentiles from
    /// the run's latency phase when it has one (`RunRecord::latency_load`).
    pub rps: Option<f64>,
    /// The lowest and highest requests/s of the valid iterations (shown in
    /// the tables, not part of `stampede.summary/1`).
    #[serde(skip)]
    pub rps_range: Option<(f64, f64)>,
    pub rps_per_core: Option<f64>,
    /// Server-streaming gRPC profiles: response messages per second of the
    /// measured load (median, as `rps`, which counts calls); absent for
    /// every other profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The lowest and highest p99 of the valid iterations (tables only).
    #[serde(skip)]
    pub p99_ms_range: Option<(f64, f64)>,
    /// The highest p99 of the valid iterations over the lowest (≥ 1); `None`
    /// with fewer than two.
    pub p99_spread: Option<f64>,
    /// False when `p99_spread` is above [`P99_REPRODUCIBLE_FACTOR`]: the
    /// iterations disagree too much for their median to stand for the
    /// server; `None` with fewer than two valid iterations.
    pub p99_reproducible: Option<bool>,
    pub p999_ms: Option<f64>,
    /// With an open-loop latency: the rate offered (requests/s), the share
    /// of the closed loop's requests/s it was (a profile's
    /// `latency.fraction`), and the generator's p99 delay behind its
    /// schedule (ms). Absent when the latency is closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_offered_rps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_fraction: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule_lag_p99_ms: Option<f64>,
    pub server_cpu_cores: Option<f64>,
    pub server_rss_max_mib: Option<f64>,
    pub loadgen_cpu_cores: Option<f64>,
    /// Runs with a scenario `[database]`: its cores, and requests per core of both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_cpu_cores: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rps_per_core_with_db: Option<f64>,
    /// Socket errors summed over every run of the configuration ([`crate::Errors::socket`]).
    pub socket_errors: u64,
    /// Bad responses summed over every run of the configuration ([`crate::Errors::bad_responses`]).
    pub bad_responses: u64,
    /// `iteration N: reason` for each invalid iteration.
    pub invalid_reasons: Vec<String>,
}

impl SummaryRow {
    /// The errors of one category summed over every run of the configuration.
    pub fn errors(&self, category: ErrorCategory) -> u64 {
        match category {
            ErrorCategory::SocketErrors => self.socket_errors,
            ErrorCategory::BadResponses => self.bad_responses,
        }
    }
}
