//! The `stampede.run/1` document (docs/results.md): the environment, the
//! scenario as run, and one record per app × knobs × profile × iteration.
//! Field names follow the document exactly; the HTML report and `compare`
//! read them.

use std::collections::BTreeMap;

use serde::Serialize;
use stampede_probe::{MachineSummary, TreeSummary};
use stampede_schema::profile::ProfileSummary;
use stampede_schema::LoadResult;

pub const SCHEMA: &str = "stampede.run/1";

#[derive(Debug, Clone, Serialize)]
pub struct ResultsDoc {
    pub schema: &'static str,
    pub environment: Environment,
    pub scenario: serde_json::Value,
    pub runs: Vec<RunRecord>,
    /// Apps (or app × knob values) that could not run at all, and why.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub app: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    pub tool_version: String,
    pub git_commit: Option<String>,
    pub command_line: String,
    pub cpu_model: String,
    pub kernel: String,
    pub cores: usize,
    pub pinning: PinningRecord,
    /// App name → its `version` command's output.
    pub runtimes: BTreeMap<String, String>,
    pub started_unix_s: u64,
    /// With `[hosts] server`: where the server ran and that host's clock
    /// offset; the CPU, kernel and cores above are then this machine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_host: Option<crate::remote_server::ServerHostRecord>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct PinningRecord {
    pub server: Option<String>,
    pub loadgen: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: String,
    pub path: String,
    pub iteration: u32,
    pub valid: bool,
    pub invalid_reason: Option<String>,
    /// The contract the app claims (manifest `contract`), `none` when it
    /// claims none and so was not checked.
    pub contract: String,
    pub build_time_ms: f64,
    pub start_time_ms: f64,
    pub first_request_ms: f64,
    pub warmup: Option<LoadResult>,
    pub load: Option<LoadResult>,
    pub server: TreeSummary,
    pub loadgen: TreeSummary,
    pub machine: MachineRecord,
    pub rps_per_server_core: f64,
    /// With `--profile`: the `stampede.profile/1` summary of the measured
    /// phase (flame graph and folded stacks beside results.json, top frames);
    /// null when not profiled or when the profile failed.
    pub cpu_profile: Option<ProfileSummary>,
    /// The measured phase's HdrHistogram interval log, a file beside results.json.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdr_log: Option<String>,
    /// Runtime GC and safepoint events from the warmup's start to the load's
    /// end (manifest `[events]`), for the report's timeline and `stampede explain`.
    pub events: Vec<crate::events::EventRecord>,
    /// Clock anchors that put `t_s` on CLOCK_MONOTONIC.
    pub clock: crate::events::ClockRecord,
    /// With a scenario's `[database]`: its CPU and requests per core of
    /// server and database together (stampede-schema's `DatabaseUsage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<stampede_schema::database::DatabaseUsage>,
}

/// The machine's series, plus the probe's own cost.
#[derive(Debug, Clone, Serialize, Default)]
pub struct MachineRecord {
    #[serde(flatten)]
    pub summary: MachineSummary,
    /// Cores the probe's sampling thread used (its overhead).
    pub probe_cpu_cores: f64,
}

impl RunRecord {
    /// A record for a run that stopped before its load (`valid` false).
    pub fn failed(
        app: &str,
        knobs: &BTreeMap<String, String>,
        profile: &crate::scenario::Profile,
        iteration: u32,
        build_time_ms: f64,
        reason: String,
    ) -> RunRecord {
        RunRecord {
            app: app.to_string(),
            knobs: knobs.clone(),
            profile: profile.name.clone(),
            path: profile.path_label(),
            iteration,
            valid: false,
            invalid_reason: Some(reason),
            contract: String::new(),
            build_time_ms,
            start_time_ms: 0.0,
            first_request_ms: 0.0,
            warmup: None,
            load: None,
            server: TreeSummary::default(),
            loadgen: TreeSummary::default(),
            machine: MachineRecord::default(),
            rps_per_server_core: 0.0,
            cpu_profile: None,
            hdr_log: None,
            events: Vec::new(),
            clock: Default::default(),
            database: None,
        }
    }

    /// Marks the run invalid, keeping the first reason and adding later ones.
    pub fn invalidate(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        self.valid = false;
        self.invalid_reason = Some(match self.invalid_reason.take() {
            Some(first) => format!("{first}; {reason}"),
            None => reason,
        });
    }
}

/// `load.rps / server.cpu_cores_avg`, 0 when the server used no measurable CPU.
pub fn rps_per_core(rps: f64, cores: f64) -> f64 {
    if cores > 1e-6 {
        rps / cores
    } else {
        0.0
    }
}

#[cfg(test)]
pub mod tests {
    use stampede_schema::LoadResult;

    /// A small but complete `stampede.load/1` document for tests: 3 bad
    /// responses and `socket_errors` connect errors.
    pub fn fake_load(rps: f64, socket_errors: u64) -> LoadResult {
        serde_json::from_value(serde_json::json!({
            "schema": "stampede.load/1",
            "tool": {"name": "stampede", "version": "0.1.0"},
            "url": "http://127.0.0.1:1/plaintext", "method": "GET", "mode": "closed",
            "connections": 4, "threads": 1, "duration_s": 2.0, "warmup_s": 0.0,
            "requests": (rps * 2.0) as u64, "rps": rps, "bytes_read": 300_000,
            "errors": {"connect": socket_errors, "read": 0, "write": 0, "timeout": 0, "status": 3, "parse": 0},
            "reconnects": 0, "status_codes": {"200": (rps * 2.0) as u64},
            "latency_us": {"min": 50, "mean": 120.5, "stdev": 10, "max": 900, "p50": 110, "p75": 130, "p90": 150, "p99": 400, "p999": 800, "p9999": 900},
            "latency_spectrum": [], "histogram": "",
            "loadgen": {"cpu_user_s": 0.5, "cpu_sys_s": 0.5, "cpu_cores": 0.5, "max_rss_kib": 4000},
            "timeline": []
        }))
        .expect("a valid load document")
    }
}
