//! The `stampede.run/1` document (docs/results.md) is declared once, in
//! stampede-schema; this module adds what only the writer needs: the record
//! of a run that stopped before its load.

use std::collections::BTreeMap;

pub use stampede_schema::run::{
    rps_per_core, Environment, MachineRecord, PinningRecord, ResultsDoc, RunRecord, Skipped, SCHEMA,
};

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
        build_time_ms,
        ..RunRecord::default()
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
