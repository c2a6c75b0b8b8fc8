//! A gRPC load's rules and its request: the spec's `grpc` field (the
//! schema, the call, its JSON request, metadata and deadline) checked and
//! made into one POST to `/package.Service/Method` with gRPC's header
//! fields and the request message encoded once, length-prefixed. The HTTP/2
//! engine sends it (`stampede_load::grpc`); a scenario checks it without
//! the engine.

use crate::headers::header_problem;
use stampede_grpc::{request_headers, Schema};
use stampede_schema::grpc::GrpcSpec;
use stampede_schema::spec::LoadSpec;
use std::path::Path;

/// The call a gRPC load makes, for its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcCall {
    /// `package.Service/Method`.
    pub name: String,
    pub server_streaming: bool,
    pub client_streaming: bool,
    /// The messages each call sends (client streams: `--data`'s array).
    pub request_messages: u32,
}

/// What a gRPC load sends on every stream.
#[derive(Debug, Clone)]
pub struct GrpcRequest {
    pub call: GrpcCall,
    /// `/package.Service/Method`.
    pub path: String,
    /// gRPC's header fields, then the metadata.
    pub headers: Vec<(String, String)>,
    /// The request messages, each length-prefixed, one after the other (a
    /// client stream's are sent as DATA frames as windows allow, then
    /// END_STREAM).
    pub body: Vec<u8>,
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

/// The request the call `g` describes; files are relative to `dir`.
pub fn request(g: &GrpcSpec, dir: &Path) -> Result<GrpcRequest, String> {
    let schema = schema(g, dir)?;
    let method = schema.method(&g.call).map_err(|e| format!("--call {e}"))?;
    let data = read_data(g.data.as_deref().unwrap_or("{}"), dir)?;
    let (body, request_messages) = method.encode_requests(&data).map_err(|e| format!("--data: {e}"))?;
    let mut metadata = Vec::new();
    for (name, value) in &g.metadata {
        if let Some(why) = header_problem(name, value) {
            return Err(format!("--metadata {name:?}: {why}"));
        }
        metadata.push((name.clone(), value.clone()));
    }
    Ok(GrpcRequest {
        call: GrpcCall {
            name: method.name(),
            server_streaming: method.is_server_streaming(),
            client_streaming: method.is_client_streaming(),
            request_messages,
        },
        path: method.path(),
        headers: request_headers(g.deadline, &metadata),
        body,
    })
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
