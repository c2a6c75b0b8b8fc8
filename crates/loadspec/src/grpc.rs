//! A gRPC load's rules and its request: the spec's `grpc` field (the
//! schema, the call, its JSON request, metadata and deadline) checked and
//! made into one POST to `/package.Service/Method` with gRPC's header
//! fields and the request message encoded once, length-prefixed. The HTTP/2
//! engine sends it (`stampede_load::grpc`); a scenario checks it without
//! the engine.

use crate::headers::header_problem;
use crate::spec_error::{Field, SpecError};
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
}

/// What a gRPC load sends on every stream.
#[derive(Debug, Clone)]
pub struct GrpcRequest {
    pub call: GrpcCall,
    /// `/package.Service/Method`.
    pub path: String,
    /// gRPC's header fields, then the metadata.
    pub headers: Vec<(String, String)>,
    /// The request message, length-prefixed.
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
pub fn check_spec(s: &LoadSpec) -> Result<(), SpecError> {
    if s.urls.len() != 1 || !s.mix.is_empty() || s.targets.is_some() {
        let field = if s.urls.len() != 1 {
            Field::Urls
        } else if s.mix.is_empty() {
            Field::Targets
        } else {
            Field::Mix
        };
        return Err(SpecError::new(field, "--grpc loads one server: give one URL (host:port), no mix or --targets"));
    }
    if s.urls[0].contains('{') {
        return Err(SpecError::new(
            Field::Urls,
            "--grpc: the URL names the server only; the call is --call package.Service/Method",
        ));
    }
    if s.body.is_some() {
        return Err(SpecError::new(Field::Body, "--grpc sends the request of --data (JSON), not --body"));
    }
    if !s.method.eq_ignore_ascii_case("GET") && !s.method.eq_ignore_ascii_case("POST") {
        return Err(SpecError::new(
            Field::Method,
            format!("--grpc calls are POST requests: drop --method {}", s.method),
        ));
    }
    Ok(())
}

/// `--data`: JSON, or `@FILE` read relative to `dir` (JSON never starts
/// with `@`), so a spec sent to a load host carries the request itself.
pub fn read_data(data: &str, dir: &Path) -> Result<String, SpecError> {
    match data.strip_prefix('@') {
        Some(file) => std::fs::read_to_string(dir.join(file)).map_err(|e| {
            SpecError::new(Field::GrpcData, format!("--data @{file}: cannot read it ({e}): give a file of JSON"))
        }),
        None => Ok(data.to_string()),
    }
}

/// The request the call `g` describes; files are relative to `dir`.
pub fn request(g: &GrpcSpec, dir: &Path) -> Result<GrpcRequest, SpecError> {
    let schema = schema(g, dir)?;
    let method = schema.method(&g.call).map_err(|e| SpecError::new(Field::GrpcCall, format!("--call {e}")))?;
    let data = read_data(g.data.as_deref().unwrap_or("{}"), dir)?;
    let body = method.encode_request(&data).map_err(|e| SpecError::new(Field::GrpcData, format!("--data: {e}")))?;
    let mut metadata = Vec::new();
    for (name, value) in &g.metadata {
        if let Some(why) = header_problem(name, value) {
            return Err(SpecError::new(Field::GrpcMetadata, format!("--metadata {name:?}: {why}")));
        }
        metadata.push((name.clone(), value.clone()));
    }
    Ok(GrpcRequest {
        call: GrpcCall { name: method.name(), server_streaming: method.is_server_streaming() },
        path: method.path(),
        headers: request_headers(g.deadline, &metadata),
        body,
    })
}

fn schema(g: &GrpcSpec, dir: &Path) -> Result<Schema, SpecError> {
    match (&g.protoset, g.proto.is_empty()) {
        (Some(_), false) => {
            Err(SpecError::new(Field::GrpcProto, "--proto and --protoset both describe the service: give one"))
        }
        (Some(set), true) => Schema::from_protoset(&dir.join(set))
            .map_err(|e| SpecError::new(Field::GrpcProtoset, format!("--protoset {e}"))),
        (None, false) => {
            let files: Vec<_> = g.proto.iter().map(|p| dir.join(p)).collect();
            let imports: Vec<_> = g.import_paths.iter().map(|p| dir.join(p)).collect();
            Schema::from_protos(&files, &imports).map_err(|e| SpecError::new(Field::GrpcProto, format!("--proto {e}")))
        }
        (None, true) => Err(SpecError::new(
            Field::GrpcProto,
            "--grpc needs the service's schema: --proto FILE (with --import-paths) or --protoset FILE \
             (server reflection is not supported yet)",
        )),
    }
}
