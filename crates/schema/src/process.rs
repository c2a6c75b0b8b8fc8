//! What the probe saw of a process tree and of the machine, as results.json
//! stores it in each run (`server`, `loadgen`, `machine`; docs/results.md).
//! The probe fills these types and the report and `stampede explain` read
//! the same ones. Numbers a hand-written or older file leaves out, or writes
//! as `null`, read as 0; unknown fields are ignored.

use serde::{Deserialize, Serialize};

use crate::lenient;

/// One process tree (the server's or the load generator's) over a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeSummary {
    /// Average cores used over the measured phase.
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_cores_avg: f64,
    /// Highest sample, as a percentage of the machine's cores.
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_pct_max: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub rss_max_mib: f64,
    #[serde(deserialize_with = "lenient::count")]
    pub threads_max: u64,
    #[serde(deserialize_with = "lenient::count")]
    pub ctx_voluntary: u64,
    #[serde(deserialize_with = "lenient::count")]
    pub ctx_involuntary: u64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub runqueue_wait_ms: f64,
    /// The series, warmup included (negative `t_s`).
    #[serde(deserialize_with = "lenient::or_default")]
    pub samples: Vec<Sample>,
    /// One row per thread over the measured phase, busiest first.
    #[serde(deserialize_with = "lenient::or_default")]
    pub threads_table: Vec<ThreadRow>,
    /// Per-thread microstates (`prstat -mLc`), for the server's tree only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microstates: Option<crate::microstates::Microstates>,
}

/// One probe sample of a process tree; `t_s` is seconds since the measured
/// phase began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sample {
    #[serde(deserialize_with = "lenient::or_default")]
    pub t_s: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_cores: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_user_cores: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_sys_cores: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub rss_mib: f64,
    #[serde(deserialize_with = "lenient::count")]
    pub threads: u64,
    #[serde(deserialize_with = "lenient::count")]
    pub ctx_voluntary: u64,
    #[serde(deserialize_with = "lenient::count")]
    pub ctx_involuntary: u64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub runqueue_wait_ms: f64,
    /// The kernel's TCP drops and retransmissions since the probe last read
    /// them, within [`NET_DROPS_PERIOD`] before this sample (server samples
    /// only; left out of the document when all are zero).
    #[serde(skip_serializing_if = "NetDrops::is_zero")]
    pub net_drops: NetDrops,
}

/// How often the probe reads the kernel's TCP counters (at every sample when
/// samples are further apart): a sample's `net_drops` happened at most this
/// long before it. Generating `/proc/<pid>/net/netstat` and `snmp` costs
/// about 55 us, more than all the rest of a 10 ms sample of a parked server.
pub const NET_DROPS_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

/// TCP trouble the kernel counted in one probe interval, in the server's
/// network namespace (docs/results.md): packets, not requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetDrops {
    /// Connections dropped because a listen socket's accept queue was full
    /// (`TcpExt: ListenOverflows`).
    pub listen_overflows: u64,
    /// Incoming SYNs dropped by a listen socket for any reason, overflows
    /// included (`TcpExt: ListenDrops`).
    pub listen_drops: u64,
    /// TCP segments retransmitted (`Tcp: RetransSegs`).
    pub retrans_segs: u64,
}

impl NetDrops {
    pub fn is_zero(&self) -> bool {
        *self == NetDrops::default()
    }
}

/// One thread of the server over the measured phase (`prstat -mLc` style).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThreadRow {
    pub tid: i32,
    #[serde(deserialize_with = "lenient::or_default")]
    pub name: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub user_s: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub sys_s: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub runqueue_wait_ms: f64,
    #[serde(deserialize_with = "lenient::count")]
    pub ctx_voluntary: u64,
    #[serde(deserialize_with = "lenient::count")]
    pub ctx_involuntary: u64,
}

/// The whole machine over a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineSummary {
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_cores_avg: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub samples: Vec<MachineSample>,
}

/// One point of the machine's time series.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineSample {
    #[serde(deserialize_with = "lenient::or_default")]
    pub t_s: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_cores: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_user_cores: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_sys_cores: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_that_could_not_sample_reads_as_zeros() {
        let t: TreeSummary =
            serde_json::from_str(r#"{"cpu_cores_avg":null,"threads_max":3.0,"samples":null,"future":1}"#).unwrap();
        assert_eq!((t.cpu_cores_avg, t.threads_max, t.samples.len()), (0.0, 3, 0));
    }
}
