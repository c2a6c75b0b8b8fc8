//! The `stampede.load/1` document: what `stampede load --json` prints, what a
//! load host returns to the controller, and what `stampede run` embeds in each
//! run of results.json. Field names and units are documented in
//! `docs/results.md`; a test checks real output against that table.
//!
//! The writer fills every field. Readers accept older or partial documents:
//! missing fields read as their defaults (zero, empty) and unknown ones are
//! ignored. The figures people read (socket errors, bad responses, valid
//! responses, what makes a load valid) are methods here, defined once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::errors::Errors;
use crate::hosts::MultiHost;

pub const SCHEMA: &str = "stampede.load/1";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadResult {
    pub schema: String,
    pub tool: Tool,
    pub url: String,
    pub method: String,
    pub mode: String,
    pub connections: usize,
    pub threads: usize,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub duration_s: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub warmup_s: f64,
    pub interrupted: bool,
    pub requests: u64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub rps: f64,
    pub bytes_read: u64,
    pub errors: Errors,
    /// Requests sent in the measured phase (open loop: those whose intended
    /// time fell in it). Each ends as a response (`requests`), an error
    /// counted against it, or `unanswered`.
    pub sent: u64,
    /// Requests still owed when the run ended (a closed loop's end, Ctrl-C):
    /// counted here, their age so far in the latency, never dropped.
    pub unanswered: u64,
    /// Open loop: requests that fell due and were never sent (every
    /// connection stayed busy), in the latency from their intended time to
    /// the schedule's end. Due requests = `sent` + `never_sent`.
    pub never_sent: u64,
    /// The longest time the server answered nothing while requests were
    /// outstanding, when it reached [`STALL_S`]: the server stopped
    /// answering, and the run is invalid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled: Option<Stall>,
    pub reconnects: u64,
    pub status_codes: BTreeMap<String, u64>,
    pub latency_us: Percentiles,
    pub latency_spectrum: Vec<SpectrumPoint>,
    /// HdrHistogram V2 compressed interchange encoding, base64, values in nanoseconds.
    pub histogram: String,
    pub loadgen: Loadgen,
    pub timeline: Vec<SecondStats>,
    /// With `--slow-log N`: the N slowest requests, slowest first. Empty in
    /// a results.json that keeps them in a file beside it (`slow_log_file`);
    /// [`crate::document::read`] puts them back.
    pub slow_requests: Vec<SlowRequest>,
    /// In results.json: the `stampede.slow/1` file beside it that holds this
    /// phase's `slow_requests` (docs/results.md, "Slow-request files").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_log_file: Option<crate::slow_log::SlowLogFile>,
    /// `"http/1.1"`, `"h2"` or `"h3"`.
    #[serde(default = "http11")]
    pub protocol: String,
    /// The generator's event loop: `"io_uring"` or `"epoll"` (HTTPS and HTTP/2 always epoll).
    pub engine: String,
    /// HTTP/1.1 requests written back to back per connection (`--pipeline`).
    #[serde(default = "one")]
    pub pipeline: usize,
    /// HTTP/1.1: responses after which each connection was replaced
    /// (`--requests-per-connection`); absent when connections were kept open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_connection: Option<u32>,
    /// `https://` only: TLS handshake durations, apart from request latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_handshake_us: Option<Percentiles>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Stats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3: Option<Http3Stats>,
    /// A gRPC load (`--grpc`): its calls by status, its messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::grpc::GrpcStats>,
    /// HTTP/1.1 with `Accept-Encoding` asked: the responses by the
    /// `Content-Encoding` they came with, wire and decoded bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content_encodings: Vec<crate::encoding::EncodingStats>,
    /// With several targets or URL templates: how they were chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<crate::mix::MixStats>,
    /// With several targets or URL templates: the figures of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<crate::mix::TargetResult>,
    /// With `--stages`: each stage's target and figures, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<crate::stages::StageResult>,
    /// Open loop (`--rate`) only.
    #[serde(flatten)]
    pub open: Option<OpenLoop>,
    /// Load sent from several hosts (`--hosts`) only.
    #[serde(flatten)]
    pub multi_host: Option<MultiHost>,
}

/// A silence this long (seconds) with requests outstanding is a server
/// that stopped answering.
pub const STALL_S: f64 = 1.0;

/// The exit status of `stampede load` when its run measured a stall (the
/// server stopped answering): its result is printed all the same. A program
/// reading a generator's result by its exit status (`run`'s load phase,
/// `--hosts`' controller) takes this one as a result too ([`printed_a_result`]).
pub const EXIT_STALLED: i32 = 1;

/// Whether `stampede load` exiting with `code` printed its result.
pub fn printed_a_result(code: i32) -> bool {
    code == 0 || code == EXIT_STALLED
}

/// A time the server answered nothing while requests were outstanding.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Stall {
    /// When it began, in seconds from the start of the measured phase.
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub at_s: f64,
    /// How long it lasted (up to the end of the run, if it never ended).
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub for_s: f64,
}

impl Stall {
    /// The reason a run with this stall is invalid.
    pub fn said(&self) -> String {
        format!(
            "the server stopped answering: no response for {:.1}s from {:.1}s into the measured phase while requests were outstanding",
            self.for_s, self.at_s
        )
    }
}

fn http11() -> String {
    "http/1.1".into()
}

fn one() -> usize {
    1
}

impl LoadResult {
    /// Socket errors: see [`Errors::socket`].
    pub fn socket_errors(&self) -> u64 {
        self.errors.socket()
    }

    /// Bad responses: see [`Errors::bad_responses`].
    pub fn bad_responses(&self) -> u64 {
        self.errors.bad_responses()
    }

    /// Responses with a status in 2xx/3xx.
    pub fn valid_responses(&self) -> u64 {
        self.requests.saturating_sub(self.errors.status)
    }

    /// Bytes read per second over the measured period.
    pub fn read_bytes_per_s(&self) -> f64 {
        if self.duration_s > 0.0 {
            self.bytes_read as f64 / self.duration_s
        } else {
            0.0
        }
    }

    /// Whether an open-loop generator fell behind its schedule.
    pub fn saturated(&self) -> bool {
        self.open.as_ref().is_some_and(|o| o.saturated)
    }

    /// The hosts a multi-host load came from (empty for one machine).
    pub fn hosts(&self) -> &[crate::hosts::HostRow] {
        self.multi_host.as_ref().map_or(&[], |m| &m.hosts)
    }

    /// Hosts of a multi-host load that failed (empty otherwise).
    pub fn failed_hosts(&self) -> &[crate::hosts::HostFailure] {
        self.multi_host.as_ref().map_or(&[], |m| &m.failed_hosts)
    }

    /// True when a host failed and the load went on without it.
    pub fn partial(&self) -> bool {
        self.multi_host.as_ref().is_some_and(|m| m.partial)
    }

    /// The exit status of `stampede load` for this result: [`EXIT_STALLED`]
    /// when the server stopped answering, else 0.
    pub fn exit_status(&self) -> i32 {
        if self.stalled.is_some() {
            EXIT_STALLED
        } else {
            0
        }
    }

    /// Why this load's figures cannot be trusted as a measurement of the
    /// server, if they cannot: the rules that make a run invalid and need only
    /// the load document. Empty for a valid load.
    pub fn invalid(&self) -> Vec<Invalid> {
        let mut reasons = Vec::new();
        if let Some(stall) = self.stalled {
            reasons.push(Invalid::Stalled(stall.said()));
        }
        if self.socket_errors() > 0 {
            reasons.push(Invalid::SocketErrors(self.socket_errors()));
        }
        match &self.grpc {
            Some(g) if g.failed() > 0 => reasons.push(Invalid::FailedGrpcCalls(g.failed())),
            Some(_) => {}
            None if self.bad_responses() > 0 => reasons.push(Invalid::BadResponses(self.bad_responses())),
            None => {}
        }
        if self.requests == 0 {
            reasons.push(Invalid::NoResponses);
        }
        if self.saturated() {
            reasons.push(Invalid::Saturated);
        }
        // Judged where the reported tail is, not only on the lag's own p99.
        reasons.extend(crate::late::tail_reason(self).map(Invalid::LateTail));
        if let Some(multi) = self.multi_host.as_ref().filter(|m| m.partial) {
            let failed: Vec<String> = multi.failed_hosts.iter().map(|f| f.line()).collect();
            reasons.push(Invalid::Partial(failed.join("; ")));
        }
        reasons
    }

    /// [`LoadResult::invalid`], each reason as results.json words it.
    pub fn invalid_reasons(&self) -> Vec<String> {
        self.invalid().iter().map(Invalid::to_string).collect()
    }
}

/// One reason a load's figures are not a measurement of the server
/// ([`LoadResult::invalid`]), typed so a caller that rewords or blames
/// one (`stampede run`'s fault.rs) decides on the kind, not on its words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Invalid {
    /// The server stopped answering (`stalled`), as it says.
    #[error("{0}")]
    Stalled(String),
    #[error("{0} socket errors")]
    SocketErrors(u64),
    #[error("{0} failed gRPC calls (status not OK)")]
    FailedGrpcCalls(u64),
    #[error("{0} bad responses (outside 2xx/3xx)")]
    BadResponses(u64),
    #[error("no responses in the measured period")]
    NoResponses,
    #[error("load generator saturated: it could not keep to the requested rate")]
    Saturated,
    /// The reported tail is made of requests the generator sent late.
    #[error("{0}")]
    LateTail(String),
    /// Hosts that failed, each said.
    #[error("partial load: {0}")]
    Partial(String),
}

/// TLS handshakes in the measured period.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TlsStats {
    pub handshakes: u64,
    /// Handshakes that resumed an earlier session (reconnects).
    pub resumed: u64,
    /// The protocol the server chose by ALPN, if any.
    pub alpn: Option<String>,
}

/// HTTP/2 connection events in the measured period.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Http2Stats {
    /// Concurrent streams per connection (`--streams`).
    pub streams: usize,
    /// GOAWAY frames received; each connection that got one was reopened.
    pub goaway: u64,
    /// Streams the server reset (RST_STREAM); each counts as a `read` error.
    pub rst_stream: u64,
}

/// HTTP/3 stream and packet events in the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Http3Stats {
    /// Concurrent streams per connection (`--streams`).
    pub streams: usize,
    /// Request streams the server reset (RESET_STREAM) in the measured
    /// period; each counts as a `read` error.
    pub stream_resets: u64,
    /// Connections the server sent GOAWAY on in the measured period; each
    /// was reopened, and its requests the GOAWAY said were not processed
    /// were sent again.
    pub goaway: u64,
    /// Packets QUIC declared lost and sent again, over the whole run
    /// (warmup included); a loss costs time, not a request.
    pub lost_packets: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Default for Tool {
    /// This build of Stampede.
    fn default() -> Self {
        Tool { name: "stampede".into(), version: env!("CARGO_PKG_VERSION").into() }
    }
}

/// Latency statistics in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Percentiles {
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub min: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub mean: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub stdev: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub max: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p50: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p75: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p90: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p99: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p999: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p9999: f64,
}

/// One point of HdrHistogram's percentile spectrum.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SpectrumPoint {
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub percentile: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub us: f64,
}

/// The load generator's own cost, as measured by itself.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Loadgen {
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub cpu_user_s: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub cpu_sys_s: f64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub cpu_cores: f64,
    pub max_rss_kib: u64,
}

/// One second of the measured period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SecondStats {
    pub t_s: u64,
    pub requests: u64,
    /// Socket errors plus bad responses in this second.
    pub errors: u64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub p99_us: f64,
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
    /// The longest a due request waits by design for its thread's next
    /// wake-up (microseconds): part of the schedule lag, and not saturation.
    #[serde(default, deserialize_with = "crate::lenient::or_default")]
    pub wake_granularity_us: f64,
    /// Seconds during which every connection was busy and due requests queued.
    pub all_busy_s: f64,
    /// Largest share of a generator thread's time spent on or waiting for a CPU.
    pub generator_busy: f64,
    /// Largest share of a generator thread's time spent waiting for a CPU
    /// (run-queue wait, part of `generator_busy`): other processes held its
    /// CPU while it had work. 0 in documents written before it was measured.
    #[serde(default, deserialize_with = "crate::lenient::or_default")]
    pub generator_cpu_wait: f64,
    /// Milliseconds from the start of the run to where the open loop's
    /// schedule began, the latest of its threads: a thread's schedule begins
    /// once the first of its connections is open (connected, TLS, HTTP/2 or
    /// QUIC handshake done), or all failed, or at `--timeout`, so that no
    /// request's latency carries the generator's own connection setup. 0 in
    /// an older document.
    #[serde(default, deserialize_with = "crate::lenient::or_default")]
    pub schedule_start_ms: f64,
}

/// A generator whose busiest thread was on or waiting for a CPU more than
/// this share of its life (`OpenLoop::generator_busy`) had no slack left to
/// keep a schedule: the load crate's saturation rule and run's judgement of
/// whose fault a late send is both use it.
pub const GENERATOR_BUSY: f64 = 0.9;

/// A generator thread that waited for a CPU at least this share of its time
/// (`OpenLoop::generator_cpu_wait`, or the probe's run-queue wait over a
/// phase) was preempted by other processes: on a quiet machine the wait is a
/// few milliseconds a second (its own threads' wake-ups), well under 1%.
pub const PREEMPTED_WAIT_SHARE: f64 = 0.05;

/// One request of the slow log (`--slow-log N`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SlowRequest {
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub latency_us: f64,
    pub intended_unix_ns: u64,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    pub intended_mono_ns: u64,
    pub start_mono_ns: u64,
    pub end_mono_ns: u64,
    pub connection: u32,
    /// 0 for a request that got no response.
    pub status: u16,
    /// When the request could have gone (open loop): its intended time, or
    /// later, when the connection it went on became free or finished
    /// opening. From intended to ready it waited for a connection (the
    /// server's doing); from ready to start, for the generator. 0 when
    /// unknown (an older document).
    pub ready_mono_ns: u64,
    /// It waited for a connection while some of the generator's connections
    /// were still opening (a connect or TLS handshake pending, a failed
    /// connect to retry), or went on a socket's first request: the wait was
    /// for connection setup, not for a response.
    pub connecting: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_older_document_reads_with_defaults() {
        let r: LoadResult =
            serde_json::from_str(r#"{"schema":"stampede.load/1","url":"http://x/","rps":10.0,"future":1}"#).unwrap();
        assert_eq!((r.url.as_str(), r.rps, r.requests), ("http://x/", 10.0, 0));
        assert_eq!((r.protocol.as_str(), r.pipeline), ("http/1.1", 1));
        assert!(r.open.is_none() && r.multi_host.is_none());
    }

    #[test]
    fn a_load_with_errors_or_no_responses_is_invalid() {
        let mut r = LoadResult { requests: 10, ..Default::default() };
        assert!(r.invalid_reasons().is_empty());
        r.errors.parse = 2;
        r.errors.status = 3;
        assert_eq!(r.valid_responses(), 7);
        let reasons = r.invalid_reasons().join("; ");
        assert!(reasons.contains("2 socket errors") && reasons.contains("3 bad responses"), "{reasons}");
        assert!(LoadResult::default().invalid_reasons().iter().any(|r| r.contains("no responses")));
    }

    #[test]
    fn a_grpc_load_with_failed_calls_is_invalid_for_those_and_not_for_http_status() {
        let mut grpc = crate::grpc::GrpcStats::default();
        grpc.calls_by_status.insert("OK".into(), 8);
        let mut r = LoadResult { requests: 10, grpc: Some(grpc.clone()), ..Default::default() };
        assert!(r.invalid_reasons().is_empty(), "{:?}", r.invalid_reasons());
        grpc.calls_by_status.insert("INTERNAL".into(), 2);
        r.errors.status = 2;
        r.grpc = Some(grpc);
        let reasons = r.invalid_reasons().join("; ");
        assert!(reasons.contains("2 failed gRPC calls (status not OK)"), "{reasons}");
        assert!(!reasons.contains("outside 2xx/3xx"), "{reasons}");
    }

    #[test]
    fn a_load_during_which_the_server_stopped_answering_is_invalid_for_that_first() {
        let mut r = LoadResult { requests: 10, ..Default::default() };
        r.errors.timeout = 3;
        assert!(!r.invalid_reasons().iter().any(|r| r.contains("stopped answering")));
        r.stalled = Some(Stall { at_s: 1.0, for_s: 3.0 });
        let reasons = r.invalid_reasons();
        assert!(reasons[0].starts_with("the server stopped answering: no response for 3.0s"), "{reasons:?}");
        let back: LoadResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.stalled, r.stalled);
    }

    #[test]
    fn open_loop_fields_round_trip_flattened() {
        let r = LoadResult {
            open: Some(OpenLoop {
                target_rate: 100.0,
                achieved_rate: 90.0,
                service_time_us: Percentiles::default(),
                saturated: true,
                saturation_reason: Some("behind".into()),
                max_schedule_lag_us: 1.0,
                schedule_lag_p99_us: 1.0,
                wake_granularity_us: 500.0,
                all_busy_s: 0.0,
                generator_busy: 0.5,
                generator_cpu_wait: 0.0,
                schedule_start_ms: 1.5,
            }),
            ..Default::default()
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"target_rate\":100.0"), "{text}");
        let back: LoadResult = serde_json::from_str(&text).unwrap();
        assert!(back.saturated());
        assert_eq!(back.open.unwrap().schedule_start_ms, 1.5);
        // A document from before the field parses, as 0.
        let old = text.replace("\"schedule_start_ms\":1.5,", "").replace(",\"schedule_start_ms\":1.5", "");
        assert!(!old.contains("schedule_start_ms"), "{old}");
        let back: LoadResult = serde_json::from_str(&old).unwrap();
        assert_eq!(back.open.unwrap().schedule_start_ms, 0.0);
    }
}
