//! The load spec: everything a `stampede load` is asked to send, as one typed
//! document. `stampede load`'s flags become a [`LoadSpec`], a scenario
//! profile is one with a name, and the processes that start a `stampede load`
//! (the phases of `stampede run`, the load hosts of a `--hosts` run) hand it
//! over as JSON (`stampede load --spec -`) instead of a command line rebuilt
//! by hand, so the three cannot disagree. The engine turns a spec into its
//! run configuration in one place (`stampede_load::spec`). Every field is
//! documented in docs/load.md ("The load spec").
//!
//! A user writes specs (scenario profiles, `--spec FILE`), so unknown fields
//! are refused, naming the field.

use crate::units::{serde_text, serde_text_opt};
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::mix::Order;

/// One load: what to send, how, for how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoadSpec {
    /// Target URLs (templates allowed: `{1..100}`, `{rand:1..10000}`,
    /// `{a|b|c}`); several make a mix. A path (`/json`) is relative to the
    /// server `stampede run` starts. A single string is read as one URL.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "one_or_many")]
    pub urls: Vec<String>,
    /// The method of the `urls` (`--method`).
    pub method: String,
    /// Headers `"Name: value"` on every request, `mix` and `targets` ones too (`--header`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// The body of the `urls` requests: text, `"@FILE"`, or `{ base64 = "…" }`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// A targets file (docs/load.md, "Request mixes"), `-` for stdin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub targets: Option<PathBuf>,
    /// Targets written inline, each with its own method, headers, body and weight.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<TargetEntry>,
    /// With several targets: `round-robin` or `random` (by weight).
    pub order: Order,
    /// Seed of every random choice; from the clock when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Keep-alive connections, spread over the threads.
    pub connections: u64,
    /// Open loop: connections may grow to this many when all are busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u64>,
    /// Load generator threads, one event loop each.
    pub threads: u64,
    /// How long to measure (10s when neither this nor `requests` is given).
    #[serde(skip_serializing_if = "Option::is_none", with = "serde_text_opt")]
    pub duration: Option<Duration>,
    /// Send exactly this many requests, then stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Run this long before measuring, unrecorded.
    #[serde(with = "serde_text")]
    pub warmup: Duration,
    /// A request unanswered this long is a timeout; its connection is reopened.
    #[serde(with = "serde_text")]
    pub timeout: Duration,
    /// Open loop: requests per second in total; absent is closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Open loop: spacing of intended send times.
    pub arrival: Arrival,
    /// Open loop: a p99 send delay of the generator above this marks the run saturated.
    #[serde(with = "serde_text")]
    pub max_lag: Duration,
    /// Open loop: the longest the generator's wake-up granularity may be
    /// (a due request's longest wait for its wake-up); absent is the
    /// protocol's default (HTTP/2 1 ms, the others 500 us).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "serde_text_opt")]
    pub max_granularity: Option<Duration>,
    /// Keep the N slowest requests with their timestamps.
    pub slow_log: u64,
    /// HTTP/1.1: requests written back to back per connection.
    pub pipeline: u64,
    /// HTTP/1.1: close each connection after this many responses and open
    /// a new one (connection churn, HttpArena's `-r`); absent keeps them open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_connection: Option<u64>,
    /// Speak HTTP/2 (ALPN h2 on https://, prior knowledge on http://).
    pub http2: bool,
    /// Speak HTTP/3 over QUIC (ALPN h3) to an https:// URL.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub http3: bool,
    /// HTTP/2 and HTTP/3: concurrent streams per connection.
    pub streams: u64,
    /// https://: accept any server certificate.
    pub insecure: bool,
    /// https://: trust the CA certificates of this PEM file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca: Option<PathBuf>,
    /// https://: protocols to offer by ALPN, most preferred first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alpn: Vec<String>,
    /// Event loop of cleartext HTTP/1.1.
    pub engine: IoBackend,
    /// Write each second's latency histogram here as an HdrHistogram log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdr_log: Option<PathBuf>,
    /// Ramp the load through stages `DURATION:TARGET,…` (docs/load.md,
    /// Stages); the run lasts as long as they do, so no `duration`,
    /// `requests`, `rate` or `warmup` with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stages: Option<String>,
    /// What `stages` ramps: `rate` (open loop) or `connections` (closed loop).
    pub ramp: crate::stages::Ramp,
    /// gRPC calls instead of HTTP requests, over HTTP/2 (`--grpc` and the
    /// flags ghz users know: docs/grpc.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::grpc::GrpcSpec>,
    /// Send this load from other machines over ssh (`--hosts`, docs/hosts.md);
    /// how the load travels, so the hosts receive the spec without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_hosts: Option<crate::hosts::HostsSpec>,
}

impl Default for LoadSpec {
    /// `stampede load`'s defaults.
    fn default() -> LoadSpec {
        LoadSpec {
            urls: Vec::new(),
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            targets: None,
            mix: Vec::new(),
            order: Order::RoundRobin,
            seed: None,
            connections: 32,
            max_connections: None,
            threads: 1,
            duration: None,
            requests: None,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(5),
            rate: None,
            arrival: Arrival::Uniform,
            max_lag: Duration::from_millis(1),
            max_granularity: None,
            slow_log: 0,
            pipeline: 1,
            requests_per_connection: None,
            http2: false,
            http3: false,
            streams: 1,
            insecure: false,
            ca: None,
            alpn: Vec::new(),
            engine: IoBackend::Auto,
            hdr_log: None,
            stages: None,
            ramp: crate::stages::Ramp::Rate,
            grpc: None,
            from_hosts: None,
        }
    }
}

impl LoadSpec {
    /// Reads one spec document (JSON) from `reader`, leaving whatever
    /// follows it unread (a load host's stdin stays open after its spec to
    /// say when to stop). An error names the field, e.g. `warmup: "soon" is
    /// not a duration…`.
    pub fn read_json(reader: impl std::io::Read) -> Result<LoadSpec, String> {
        let mut de = serde_json::Deserializer::from_reader(reader);
        serde_path_to_error::deserialize(&mut de).map_err(|e| match e.path().to_string().as_str() {
            "." => e.inner().to_string(),
            path => format!("{path}: {}", e.inner()),
        })
    }

    /// The seed load host `index` (from 0, in `--hosts` order) uses: the
    /// run's seed plus the index, so hosts do not send one sequence in
    /// step, and host `i` alone is repeated with `--seed` (seed + i).
    pub fn host_seed(seed: u64, index: usize) -> u64 {
        seed.wrapping_add(index as u64)
    }
}

/// One target of an inline mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetEntry {
    #[serde(default = "get")]
    pub method: String,
    /// A URL (template) or, in a scenario, a path.
    pub url: String,
    /// `"Name: value"`, before the spec's own `headers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
    /// Share of the requests relative to the other targets' weights.
    #[serde(default = "one")]
    pub weight: u32,
}

fn get() -> String {
    "GET".into()
}

fn one() -> u32 {
    1
}

/// A request body: bytes, or a file read when the spec is used (relative to
/// the document's directory). Written as a string (`"@FILE"` names a file),
/// or `{ base64 = "…" }` for bytes that are not text or begin with `@`.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Bytes(Vec<u8>),
    File(PathBuf),
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum BodyText {
    Text(String),
    Base64 { base64: String },
}

impl Serialize for Body {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = match self {
            Body::File(path) => BodyText::Text(format!("@{}", path.display())),
            Body::Bytes(b) => match std::str::from_utf8(b) {
                Ok(t) if !t.starts_with('@') => BodyText::Text(t.to_string()),
                _ => BodyText::Base64 { base64: base64::engine::general_purpose::STANDARD.encode(b) },
            },
        };
        text.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Body, D::Error> {
        let text = BodyText::deserialize(d)
            .map_err(|_| serde::de::Error::custom("body: expected text, \"@FILE\" or { base64 = \"…\" }"))?;
        Ok(match text {
            BodyText::Text(t) => match t.strip_prefix('@') {
                Some(path) => Body::File(PathBuf::from(path)),
                None => Body::Bytes(t.into_bytes()),
            },
            BodyText::Base64 { base64 } => Body::Bytes(
                base64::engine::general_purpose::STANDARD
                    .decode(base64.trim())
                    .map_err(|e| serde::de::Error::custom(format!("body: base64: {e}")))?,
            ),
        })
    }
}

/// How intended send times are spaced in open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrival {
    /// Evenly spaced, like wrk2.
    #[default]
    Uniform,
    /// Exponentially distributed gaps (a Poisson process), like independent users.
    Poisson,
}

/// Which event loop drives cleartext HTTP/1.1 connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoBackend {
    /// io_uring where the kernel allows it, epoll otherwise.
    #[default]
    Auto,
    /// Edge-triggered epoll through `mio`: one `send` and one `recv` per request.
    Epoll,
    /// io_uring: sends and multishot receives of a batch in one system call.
    IoUring,
}

/// `urls = "/json"` or `urls = ["/a", "/b"]`.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    match OneOrMany::deserialize(d).map_err(|_| serde::de::Error::custom("urls: expected a URL or a list of URLs"))? {
        OneOrMany::One(u) => Ok(vec![u]),
        OneOrMany::Many(u) => Ok(u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec with every field away from its default: listing the fields
    /// without `..` makes a new field fail to compile here until it is added.
    pub fn every_field() -> LoadSpec {
        LoadSpec {
            urls: vec!["http://127.0.0.1:9/a/{1..3}".into(), "http://127.0.0.1:9/b".into()],
            method: "POST".into(),
            headers: vec!["X-A: 1".into()],
            body: Some(Body::Bytes(b"{\"n\":1}".to_vec())),
            targets: Some("mix.txt".into()),
            mix: vec![
                TargetEntry {
                    method: "PUT".into(),
                    url: "/x".into(),
                    headers: vec!["X-B: 2".into()],
                    body: Some(Body::File("item.json".into())),
                    weight: 3,
                },
                TargetEntry {
                    method: "GET".into(),
                    url: "/y".into(),
                    headers: vec![],
                    body: Some(Body::Bytes(vec![0, 159, 146, 150])),
                    weight: 1,
                },
            ],
            order: Order::Random,
            seed: Some(7),
            connections: 8,
            max_connections: Some(16),
            threads: 2,
            duration: Some(Duration::from_millis(1500)),
            requests: Some(1000),
            warmup: Duration::from_secs(1),
            timeout: Duration::from_secs(2),
            rate: Some(500.5),
            arrival: Arrival::Poisson,
            max_lag: Duration::from_millis(3),
            max_granularity: Some(Duration::from_millis(4)),
            slow_log: 5,
            pipeline: 4,
            requests_per_connection: Some(10),
            http2: true,
            http3: true,
            streams: 10,
            insecure: true,
            ca: Some("ca.pem".into()),
            alpn: vec!["h2".into(), "http/1.1".into()],
            engine: IoBackend::IoUring,
            hdr_log: Some("lat.hlog".into()),
            stages: Some("10s:100,5s:0".into()),
            ramp: crate::stages::Ramp::Connections,
            grpc: Some(crate::grpc::GrpcSpec {
                proto: vec!["api.proto".into()],
                import_paths: vec!["protos".into()],
                protoset: Some("api.protoset".into()),
                descriptors: Some("CgA=".into()),
                call: "p.S/M".into(),
                data: Some("{\"a\": 1}".into()),
                metadata: [("x-k".to_string(), "v".to_string())].into(),
                deadline: Some(Duration::from_millis(200)),
            }),
            from_hosts: Some(crate::hosts::HostsSpec {
                hosts: vec!["me@a".into(), "b".into()],
                copy_binary: true,
                remote_path: Some("/opt/stampede".into()),
                ssh_config: Some("ssh.cfg".into()),
                on_host_failure: crate::hosts::OnHostFailure::Continue,
                max_clock_offset: Duration::from_millis(250),
                connect_timeout: Duration::from_secs(3),
            }),
        }
    }

    #[test]
    fn every_field_survives_json_both_ways() {
        let spec = every_field();
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<LoadSpec>(&json).unwrap(), spec, "{json}");
        assert_eq!(serde_json::from_str::<LoadSpec>("{}").unwrap(), LoadSpec::default());
    }

    #[test]
    fn bodies_are_text_files_or_base64() {
        let body = |j: &str| serde_json::from_str::<Body>(j).unwrap();
        assert_eq!(body("\"hi\""), Body::Bytes(b"hi".to_vec()));
        assert_eq!(body("\"@item.json\""), Body::File("item.json".into()));
        assert_eq!(body("{\"base64\":\"QGF0\"}"), Body::Bytes(b"@at".to_vec()));
        let at = serde_json::to_string(&Body::Bytes(b"@at".to_vec())).unwrap();
        assert_eq!(at, "{\"base64\":\"QGF0\"}", "text starting with @ must not read back as a file");
    }

    #[test]
    fn mistakes_name_the_field() {
        let err = |j: &str| LoadSpec::read_json(j.as_bytes()).unwrap_err();
        assert!(
            err("{\"conections\": 3}").starts_with("conections: unknown field `conections`"),
            "{}",
            err("{\"conections\": 3}")
        );
        assert!(
            err("{\"warmup\": \"soon\"}").starts_with("warmup: \"soon\" is not a duration"),
            "{}",
            err("{\"warmup\": \"soon\"}")
        );
        assert!(err("{\"engine\": \"kqueue\"}").starts_with("engine: unknown variant `kqueue`"));
        assert!(err("{\"mix\": [{\"url\": \"/\", \"wieght\": 2}]}").starts_with("mix[0].wieght: unknown field"));
        assert_eq!(serde_json::from_str::<LoadSpec>("{\"urls\": \"/json\"}").unwrap().urls, ["/json"]);
    }

    #[test]
    fn host_seeds_differ_and_host_zero_keeps_the_seed() {
        assert_eq!(LoadSpec::host_seed(7, 0), 7);
        assert_eq!(LoadSpec::host_seed(7, 2), 9);
        assert_eq!(LoadSpec::host_seed(u64::MAX, 1), 0);
    }
}
