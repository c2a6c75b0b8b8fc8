//! The parts of a `stampede.load/1` document that only a load sent from
//! several hosts has: one row per host and the hosts that failed. The remote
//! controller writes them and `stampede run` reads them to judge a partial run.

use serde::{Deserialize, Serialize};

use crate::load::Loadgen;

/// One host's part of a multi-host run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct HostRow {
    pub host: String,
    /// The host's clock minus the controller's, in milliseconds.
    pub clock_offset_ms: f64,
    /// Round trip of the best clock sample, in milliseconds (the offset is uncertain by half).
    pub rtt_ms: f64,
    pub connections: usize,
    pub target_rate: Option<f64>,
    pub requests: u64,
    pub rps: f64,
    /// Socket errors plus bad responses ([`crate::Errors::total`]).
    pub errors: u64,
    pub p99_us: f64,
    pub duration_s: f64,
    pub interrupted: bool,
    pub loadgen: Loadgen,
    /// The host's own latency histogram (same encoding as the total's), so
    /// anyone can check or redo the merge.
    pub histogram: String,
}

/// A host that failed, for the result's `failed_hosts` and the error line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostFailure {
    pub host: String,
    pub reason: String,
}

impl HostFailure {
    /// The one line printed after `stampede: error: `.
    pub fn line(&self) -> String {
        format!("host {}: {}", self.host, self.reason)
    }
}

/// The hosts of a multi-host load (flattened into the load document).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MultiHost {
    pub hosts: Vec<HostRow>,
    /// True when a host failed and the run went on without it.
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub failed_hosts: Vec<HostFailure>,
}
