//! A load as the engine runs it, declared once: what [`crate::check`]
//! makes of a spec (with the mix's plan beside it) and what the engine's
//! `LoadConfig` holds (beside the prepared mix and the interrupt flag,
//! which only a running load has). [`crate::rules`] judge this one type,
//! so a checked spec and a config changed in code are held to the same
//! rules.

use crate::grpc::GrpcCall;
use crate::protocol::Protocol;
use crate::rules::Stop;
use crate::spec_error::SpecError;
use crate::stages::Stages;
use crate::target::Target;
use crate::tls::TlsOptions;
use stampede_schema::spec::Arrival;
use std::path::PathBuf;
use std::time::Duration;

/// The request and the settings of a load, as the engine runs them.
#[derive(Debug, Clone)]
pub struct Load {
    /// The one target, or the mix's first (its origin, for connecting).
    pub target: Target,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub connections: usize,
    /// Open loop only: connections may grow to this many when all are busy.
    pub max_connections: usize,
    pub threads: usize,
    pub stop: Stop,
    pub warmup: Duration,
    pub timeout: Duration,
    /// Requests per second in total; `None` is closed-loop mode.
    pub rate: Option<f64>,
    pub arrival: Arrival,
    /// Open loop: delay by the generator itself, beyond its wake-up
    /// granularity, past which the run is saturated.
    pub max_lag: Duration,
    /// Open loop: `--max-granularity`, the longest wake-up granularity
    /// (`pacer::max_granularity` in the engine); `None` is the protocol's default.
    pub max_granularity: Option<Duration>,
    /// Keep this many slowest requests with their timestamps.
    pub slow_log: usize,
    /// What the connections speak, with the settings that apply to it.
    pub protocol: Protocol,
    /// HTTP/1.1: a connection is closed after this many responses and a new
    /// one opened in its place (connection churn).
    pub requests_per_connection: Option<u32>,
    /// `https://` only: trust and ALPN.
    pub tls: TlsOptions,
    /// `--stages`: the rate (open loop; `rate` is then their mean) or the
    /// connections (closed loop) ramp through these; `stop` is their total.
    pub stages: Option<Stages>,
    /// Write the latency of each second as an HdrHistogram interval log here.
    pub hdr_log: Option<PathBuf>,
    /// A gRPC load: the call (`method`, `target.path`, `headers` and `body`
    /// are then that call's).
    pub grpc: Option<GrpcCall>,
}

impl Load {
    /// The request as it goes on the wire, encoded once for the whole run.
    pub fn encode_request(&self) -> Vec<u8> {
        crate::request::encode(&self.method, &self.target.path, &self.target.host_header, &self.headers, &self.body)
    }

    /// Whether [`crate::rules`] let this load run, naming the field if not.
    pub fn check(&self) -> Result<(), SpecError> {
        crate::rules::check(self)
    }
}
