//! The handful of numbers the tables and the validity rules read from a
//! `stampede.load/1` document (kept whole in results.json); missing fields
//! read as zero so a partial document still prints.

use serde_json::Value;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadFigures {
    pub requests: u64,
    pub rps: f64,
    pub duration_s: f64,
    pub bytes_read: u64,
    pub mean_us: f64,
    pub max_us: f64,
    pub p50_us: f64,
    pub p75_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    /// Responses outside 2xx/3xx.
    pub bad_responses: u64,
    /// connect + read + write + timeout + parse errors.
    pub socket_errors: u64,
    pub loadgen_cpu_cores: f64,
    pub saturated: bool,
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for key in path {
        match cur.get(key) {
            Some(next) => cur = next,
            None => return 0.0,
        }
    }
    cur.as_f64().unwrap_or(0.0)
}

impl LoadFigures {
    pub fn from_json(v: &Value) -> LoadFigures {
        let errors = |k: &str| num(v, &["errors", k]) as u64;
        LoadFigures {
            requests: num(v, &["requests"]) as u64,
            rps: num(v, &["rps"]),
            duration_s: num(v, &["duration_s"]),
            bytes_read: num(v, &["bytes_read"]) as u64,
            mean_us: num(v, &["latency_us", "mean"]),
            max_us: num(v, &["latency_us", "max"]),
            p50_us: num(v, &["latency_us", "p50"]),
            p75_us: num(v, &["latency_us", "p75"]),
            p90_us: num(v, &["latency_us", "p90"]),
            p99_us: num(v, &["latency_us", "p99"]),
            bad_responses: errors("status"),
            socket_errors: errors("connect") + errors("read") + errors("write") + errors("timeout") + errors("parse"),
            loadgen_cpu_cores: num(v, &["loadgen", "cpu_cores"]),
            saturated: v.get("saturated").and_then(Value::as_bool).unwrap_or(false),
        }
    }

    /// Bytes read per second.
    pub fn read_bytes_per_s(&self) -> f64 {
        if self.duration_s > 0.0 { self.bytes_read as f64 / self.duration_s } else { 0.0 }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A small but complete `stampede.load/1` document for tests.
    pub fn fake_load(rps: f64, socket_errors: u64) -> Value {
        serde_json::json!({
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
        })
    }

    #[test]
    fn figures_from_a_document() {
        let f = LoadFigures::from_json(&fake_load(1000.0, 2));
        assert_eq!(f.requests, 2000);
        assert_eq!(f.socket_errors, 2);
        assert_eq!(f.bad_responses, 3);
        assert_eq!(f.p99_us, 400.0);
        assert_eq!(f.read_bytes_per_s(), 150_000.0);
        assert!(!f.saturated);
        assert_eq!(LoadFigures::from_json(&serde_json::json!({})), LoadFigures::default());
    }
}
