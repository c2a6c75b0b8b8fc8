//! A gRPC load made into what the HTTP/2 engine sends: the spec's `grpc`
//! field (the schema, the call, its JSON request, metadata and deadline)
//! becomes one POST to `/package.Service/Method` with gRPC's header fields
//! and the request message encoded once, length-prefixed, as its body.
//! Everything after that is the HTTP/2 loop's, which judges each answer by
//! its `grpc-status` (`http2::session`, `core::grpc_tally`).

use crate::config::{header_problem, LoadConfig};
use crate::core::grpc_tally::GrpcTally;
use stampede_grpc::{request_headers, Code, Schema};
use stampede_schema::grpc::{GrpcSpec, GrpcStats};
use stampede_schema::load::Percentiles;
use stampede_schema::spec::LoadSpec;
use std::path::Path;

/// The call a gRPC load makes, for its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcCall {
    /// `package.Service/Method`.
    pub name: String,
    pub server_streaming: bool,
}

/// A URL for `--grpc`: ghz's `host:port` is `http://host:port`.
pub fn url(raw: &str) -> String {
    match raw.contains("://") {
        true => raw.to_string(),
        false => format!("http://{raw}"),
    }
}

/// Refuses what a gRPC load cannot send: several targets, a method or a
/// body of its own (the call decides both).
pub fn check_spec(s: &LoadSpec) -> Result<(), String> {
    if s.urls.len() != 1 || !s.mix.is_empty() || s.targets.is_some() {
        return Err("--grpc loads one server: give one URL (host:port), no mix or --targets".into());
    }
    if s.urls[0].contains('{') {
        return Err("--grpc: the URL names the server only; the call is --call package.Service/Method".into());
    }
    if s.body.is_some() {
        return Err("--grpc sends the request of --data (JSON), not --body".into());
    }
    if !s.method.eq_ignore_ascii_case("GET") && !s.method.eq_ignore_ascii_case("POST") {
        return Err(format!("--grpc calls are POST requests: drop --method {}", s.method));
    }
    Ok(())
}

/// `--data`: JSON, or `@FILE` read relative to `dir` (JSON never starts
/// with `@`), so a spec sent to a load host carries the request itself.
pub fn read_data(data: &str, dir: &Path) -> Result<String, String> {
    match data.strip_prefix('@') {
        Some(file) => std::fs::read_to_string(dir.join(file))
            .map_err(|e| format!("--data @{file}: cannot read it ({e}): give a file of JSON")),
        None => Ok(data.to_string()),
    }
}

/// Makes `cfg` send the call `g` describes; files are relative to `dir`.
pub fn apply(g: &GrpcSpec, dir: &Path, cfg: &mut LoadConfig) -> Result<(), String> {
    let schema = schema(g, dir)?;
    let method = schema.method(&g.call).map_err(|e| format!("--call {e}"))?;
    let data = read_data(g.data.as_deref().unwrap_or("{}"), dir)?;
    cfg.body = method.encode_request(&data).map_err(|e| format!("--data: {e}"))?;
    let mut metadata = Vec::new();
    for (name, value) in &g.metadata {
        if let Some(why) = header_problem(name, value) {
            return Err(format!("--metadata {name:?}: {why}"));
        }
        metadata.push((name.clone(), value.clone()));
    }
    let mut headers = request_headers(g.deadline, &metadata);
    headers.extend(std::mem::take(&mut cfg.headers));
    cfg.headers = headers;
    cfg.method = "POST".into();
    cfg.target.path = method.path();
    cfg.grpc = Some(GrpcCall { name: method.name(), server_streaming: method.is_server_streaming() });
    Ok(())
}

fn schema(g: &GrpcSpec, dir: &Path) -> Result<Schema, String> {
    match (&g.protoset, g.proto.is_empty()) {
        (Some(_), false) => Err("--proto and --protoset both describe the service: give one".into()),
        (Some(set), true) => Schema::from_protoset(&dir.join(set)).map_err(|e| format!("--protoset {e}")),
        (None, false) => {
            let files: Vec<_> = g.proto.iter().map(|p| dir.join(p)).collect();
            let imports: Vec<_> = g.import_paths.iter().map(|p| dir.join(p)).collect();
            Schema::from_protos(&files, &imports).map_err(|e| format!("--proto {e}"))
        }
        (None, true) => {
            Err("--grpc needs the service's schema: --proto FILE (with --import-paths) or --protoset FILE \
             (server reflection is not supported yet)"
                .into())
        }
    }
}

/// The `grpc` section of `stampede.load/1` from the merged tally.
pub fn stats(call: &GrpcCall, tally: Option<&GrpcTally>, wall_s: f64) -> GrpcStats {
    let mut out = GrpcStats { call: call.name.clone(), server_streaming: call.server_streaming, ..Default::default() };
    let Some(t) = tally else { return out };
    for (code, n) in Code::ALL.iter().zip(t.codes).filter(|(_, n)| *n > 0) {
        out.calls_by_status.insert(code.name().to_string(), n);
    }
    out.not_grpc = t.not_grpc;
    out.no_status = t.no_status;
    out.messages = t.messages;
    out.messages_per_s = if wall_s > 0.0 { t.messages as f64 / wall_s } else { 0.0 };
    out.first_message_us =
        (call.server_streaming && !t.first_message.is_empty()).then(|| Percentiles::of(&t.first_message));
    out
}
