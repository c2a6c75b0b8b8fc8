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

/// Where a load is sent from when it is not this machine (`stampede load
/// --hosts …`, a scenario's `[hosts] load`): the `from_hosts` part of a
/// [`crate::LoadSpec`]. It says how the load travels, not what it is, so the
/// controller strips it from the spec each host receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostsSpec {
    /// `user@host` or Host names of the ssh config.
    pub hosts: Vec<String>,
    /// Copy this binary to hosts that lack this version.
    pub copy_binary: bool,
    /// The stampede to run on the hosts; `stampede` on their PATH when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_path: Option<String>,
    /// `ssh -F FILE` instead of ~/.ssh/config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<std::path::PathBuf>,
    /// When a host fails: stop the others, or go on without it.
    pub on_host_failure: OnHostFailure,
    /// A host whose clock differs from this one's by more counts as failed.
    #[serde(with = "crate::units::serde_text")]
    pub max_clock_offset: std::time::Duration,
    /// Give up on connecting to a host after this long.
    #[serde(with = "crate::units::serde_text")]
    pub connect_timeout: std::time::Duration,
}

impl Default for HostsSpec {
    /// `stampede load --hosts`'s defaults.
    fn default() -> HostsSpec {
        HostsSpec {
            hosts: Vec::new(),
            copy_binary: false,
            remote_path: None,
            ssh_config: None,
            on_host_failure: OnHostFailure::Stop,
            max_clock_offset: std::time::Duration::from_millis(100),
            connect_timeout: std::time::Duration::from_secs(10),
        }
    }
}

/// Whether `name` can be an ssh destination (`user@host` or a Host of the
/// ssh config): not empty, no whitespace, not starting with `-` (ssh would
/// read it as an option). The one check of `--hosts` and a scenario's `[hosts]`.
pub fn is_host_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('-') && !name.contains(char::is_whitespace)
}

/// What a multi-host load does when one host fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnHostFailure {
    /// Stop the other hosts; the run fails (exit 2).
    #[default]
    Stop,
    /// Go on without it; the result is marked partial.
    Continue,
}
