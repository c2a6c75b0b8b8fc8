//! The result of a load run: the `stampede.load/1` document that `--json`
//! prints and `stampede run` embeds. Field names and units are documented in
//! `docs/results.md`; a test checks real output against that table.

use crate::recorder::Errors;
pub use crate::timeline::SecondStats;
use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA: &str = "stampede.load/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadResult {
    pub schema: String,
    pub tool: Tool,
    pub url: String,
    pub method: String,
    pub mode: String,
    pub connections: usize,
    pub threads: usize,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub interrupted: bool,
    pub requests: u64,
    pub rps: f64,
    pub bytes_read: u64,
    pub errors: Errors,
    pub reconnects: u64,
    pub status_codes: BTreeMap<String, u64>,
    pub latency_us: Percentiles,
    pub latency_spectrum: Vec<SpectrumPoint>,
    /// HdrHistogram V2 compressed interchange encoding, base64, values in nanoseconds.
    pub histogram: String,
    pub loadgen: Loadgen,
    pub timeline: Vec<SecondStats>,
    /// With `--slow-log N`: the N slowest requests, slowest first.
    #[serde(default)]
    pub slow_requests: Vec<SlowRequest>,
    /// `"http/1.1"` or `"h2"`.
    #[serde(default = "http11")]
    pub protocol: String,
    /// The generator's event loop: `"io_uring"`, `"epoll"` or `"tokio"` (HTTP/2).
    #[serde(default)]
    pub engine: String,
    /// HTTP/1.1 requests written back to back per connection (`--pipeline`).
    #[serde(default = "one")]
    pub pipeline: usize,
    /// `https://` only: TLS handshake durations, apart from request latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_handshake_us: Option<Percentiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Stats>,
    /// With several targets or URL templates: how they were chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixStats>,
    /// With several targets or URL templates: the figures of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetResult>,
    #[serde(flatten)]
    pub open: Option<OpenLoop>,
}

/// How the targets of a mix were chosen, so the run can be repeated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MixStats {
    /// `"round-robin"` or `"random"`.
    pub order: crate::mix::Order,
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

fn http11() -> String {
    "http/1.1".into()
}

fn one() -> usize {
    1
}

/// TLS handshakes in the measured period.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TlsStats {
    pub handshakes: u64,
    /// Handshakes that resumed an earlier session (reconnects).
    pub resumed: u64,
    /// The protocol the server chose by ALPN, if any.
    pub alpn: Option<String>,
}

/// HTTP/2 connection events in the measured period.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Http2Stats {
    /// Concurrent streams per connection (`--streams`).
    pub streams: usize,
    /// GOAWAY frames received; each connection that got one was reopened.
    pub goaway: u64,
    /// Streams the server reset (RST_STREAM); each counts as a `read` error.
    pub rst_stream: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Default for Tool {
    fn default() -> Self {
        Tool { name: "stampede".into(), version: env!("CARGO_PKG_VERSION").into() }
    }
}

/// Latency statistics in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub max: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub p9999: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct SpectrumPoint {
    pub percentile: f64,
    pub us: f64,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Loadgen {
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub cpu_cores: f64,
    pub max_rss_kib: u64,
}

/// The fields only an open-loop (`--rate`) run has.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenLoop {
    pub target_rate: f64,
    pub achieved_rate: f64,
    pub service_time_us: Percentiles,
    pub saturated: bool,
    pub saturation_reason: Option<String>,
    pub max_schedule_lag_us: f64,
    pub schedule_lag_p99_us: f64,
    /// Seconds during which every connection was busy and due requests queued.
    pub all_busy_s: f64,
    /// Largest share of a generator thread's time spent on or waiting for a CPU.
    pub generator_busy: f64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SlowRequest {
    pub latency_us: f64,
    pub intended_unix_ns: u64,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    pub intended_mono_ns: u64,
    pub start_mono_ns: u64,
    pub end_mono_ns: u64,
    pub connection: u32,
    pub status: u16,
}

fn us(ns: u64) -> f64 {
    (ns as f64 / 100.0).round() / 10.0
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        let q = |p: f64| us(h.value_at_quantile(p));
        Percentiles {
            min: us(h.min()),
            mean: (h.mean() / 100.0).round() / 10.0,
            stdev: (h.stdev() / 100.0).round() / 10.0,
            max: us(h.max()),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
        }
    }
}

/// The percentile spectrum for HdrHistogram's classic plot (x: 1/(1-p), log scale).
pub fn spectrum(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    if h.is_empty() {
        return Vec::new();
    }
    const POINTS: [f64; 16] =
        [0.0, 25.0, 50.0, 75.0, 90.0, 95.0, 97.5, 99.0, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999, 99.9999, 100.0];
    POINTS.iter().map(|&p| SpectrumPoint { percentile: p, us: us(h.value_at_quantile(p / 100.0)) }).collect()
}

/// HdrHistogram's standard interchange form, so any HdrHistogram library can
/// read the full distribution and merge it losslessly.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
        Err(_) => String::new(),
    }
}
