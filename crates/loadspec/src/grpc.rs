//! A gRPC load's rules and its request: the spec's `grpc` field (the
//! schema, the call, its JSON request, metadata and deadline) checked and
//! made into one POST to `/package.Service/Method` with gRPC's header
//! fields and the request message encoded once, length-prefixed. The HTTP/2
//! engine sends it (`stampede_load::grpc`); a scenario checks it without
//! the engine.

use crate::headers::header_problem;
use crate::spec_error::{Field, SpecError};
use stampede_grpc::{request_headers, Schema, SchemaError};
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
    /// Where the schema came from: `proto`, `protoset` or `reflection`.
    pub schema: &'static str,
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
    let (schema, source) = schema(g, dir)?;
    let method = schema.method(&g.call).map_err(|e| SpecError::new(Field::GrpcCall, format!("--call {e}")))?;
    let data = read_data(g.data.as_deref().unwrap_or("{}"), dir)?;
    let (body, request_messages) =
        method.encode_requests(&data).map_err(|e| SpecError::new(Field::GrpcData, format!("--data: {e}")))?;
    let metadata = metadata(g)?;
    Ok(GrpcRequest {
        call: GrpcCall {
            name: method.name(),
            server_streaming: method.is_server_streaming(),
            client_streaming: method.is_client_streaming(),
            request_messages,
            schema: source.name(),
        },
        path: method.path(),
        headers: request_headers(g.deadline, &metadata),
        body,
    })
}

/// `g`'s metadata as header fields, each checked.
pub fn metadata(g: &GrpcSpec) -> Result<Vec<(String, String)>, SpecError> {
    let mut metadata = Vec::new();
    for (name, value) in &g.metadata {
        if let Some(why) = header_problem(name, value) {
            return Err(SpecError::new(Field::GrpcMetadata, format!("--metadata {name:?}: {why}")));
        }
        metadata.push((name.clone(), value.clone()));
    }
    Ok(metadata)
}

/// What can be checked of a call whose schema the server will give: the
/// method's name, the request is JSON, the metadata.
pub fn check_before_reflection(g: &GrpcSpec, dir: &Path) -> Result<(), SpecError> {
    if stampede_grpc::split_call(&g.call).is_none() {
        let why = SchemaError::CallFormat { call: g.call.clone() };
        return Err(SpecError::new(Field::GrpcCall, format!("--call {why}")));
    }
    let data = read_data(g.data.as_deref().unwrap_or("{}"), dir)?;
    serde_json::from_str::<serde_json::Value>(&data)
        .map_err(|e| SpecError::new(Field::GrpcData, format!("--data: not JSON ({e})")))?;
    metadata(g).map(drop)
}

/// The schema `g` names and where it came from: the descriptors it
/// carries when it has them, else its files compiled here.
fn schema(g: &GrpcSpec, dir: &Path) -> Result<(Schema, Source), SpecError> {
    let source = source(g)?;
    match (&g.descriptors, source) {
        (Some(set), _) => decode_descriptors(set).map(|s| (s, source)),
        (None, Source::Reflection) => Err(SpecError::new(Field::Grpc, format!("--grpc: {AWAITS_REFLECTION}"))),
        (None, _) => compile(g, dir).map(|s| (s, source)),
    }
}

/// Where a spec's schema comes from, as the result's `grpc.schema` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Proto,
    Protoset,
    /// Neither file named: the server's, by reflection.
    Reflection,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Proto => "proto",
            Source::Protoset => "protoset",
            Source::Reflection => "reflection",
        }
    }
}

/// Where `g`'s schema comes from.
fn source(g: &GrpcSpec) -> Result<Source, SpecError> {
    match (g.protoset.is_some(), g.proto.is_empty()) {
        (true, false) => {
            Err(SpecError::new(Field::GrpcProto, "--proto and --protoset both describe the service: give one"))
        }
        (true, true) => Ok(Source::Protoset),
        (false, false) => Ok(Source::Proto),
        (false, true) => Ok(Source::Reflection),
    }
}

/// The schema of `g`'s `.proto` files or protoset, read here.
fn compile(g: &GrpcSpec, dir: &Path) -> Result<Schema, SpecError> {
    match &g.protoset {
        Some(set) => Schema::from_protoset(&dir.join(set))
            .map_err(|e| SpecError::new(Field::GrpcProtoset, format!("--protoset {e}"))),
        None => {
            let files: Vec<_> = g.proto.iter().map(|p| dir.join(p)).collect();
            let imports: Vec<_> = g.import_paths.iter().map(|p| dir.join(p)).collect();
            Schema::from_protos(&files, &imports).map_err(|e| SpecError::new(Field::GrpcProto, format!("--proto {e}")))
        }
    }
}

/// Why a spec without `proto`, `protoset` or `descriptors` cannot be
/// checked alone: its schema is the server's, asked for when it runs.
pub const AWAITS_REFLECTION: &str =
    "the schema comes from the server's reflection, asked for when the load starts; give --proto or --protoset to check it here";

/// Whether `g`'s schema is to be asked of the server (no `.proto`, no
/// protoset, not asked yet).
pub fn awaits_reflection(g: &GrpcSpec) -> bool {
    g.proto.is_empty() && g.protoset.is_none() && g.descriptors.is_none()
}

/// `g` made to carry the schema its `.proto` files or protoset name
/// (`descriptors`), compiled once here, so whoever runs it (a load host,
/// a replay of `--print-spec`) needs none of the files. A spec that carries
/// one already, or whose schema is the server's, is left as it is.
pub fn carry_files(g: &mut GrpcSpec, dir: &Path) -> Result<(), SpecError> {
    if g.descriptors.is_some() || source(g)? == Source::Reflection {
        return Ok(());
    }
    let schema = compile(g, dir)?;
    g.descriptors = Some(encode_descriptors(&schema.pool().encode_to_vec()));
    Ok(())
}

/// A serialized FileDescriptorSet as `descriptors` carries it: base64.
pub fn encode_descriptors(set: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(set)
}

/// The schema a spec carries (`descriptors`).
fn decode_descriptors(set: &str) -> Result<Schema, SpecError> {
    use base64::Engine;
    let bad = |e: String| {
        let why = format!(
            "grpc.descriptors: not a base64 FileDescriptorSet ({e}); leave it out to compile the files or ask the server"
        );
        SpecError::new(Field::GrpcDescriptors, why)
    };
    let bytes = base64::engine::general_purpose::STANDARD.decode(set.trim()).map_err(|e| bad(e.to_string()))?;
    let pool =
        stampede_grpc::prost_reflect::DescriptorPool::decode(bytes.as_slice()).map_err(|e| bad(e.to_string()))?;
    Ok(Schema::from_pool(pool))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::spec::LoadSpec;

    fn bench() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contracts/grpc/bench.proto")
    }

    fn spec(g: GrpcSpec) -> LoadSpec {
        LoadSpec { urls: vec!["127.0.0.1:9".into()], requests: Some(1), grpc: Some(g), ..LoadSpec::default() }
    }

    const UNARY: &str = "stampede.bench.v1.Bench/Unary";

    #[test]
    fn a_reflected_schema_carried_in_the_spec_sends_what_the_proto_sends_and_says_so() {
        let data = Some(r#"{"text": "x", "a": 1}"#.to_string());
        let proto = GrpcSpec { proto: vec![bench()], call: UNARY.into(), data: data.clone(), ..Default::default() };
        let from_proto = crate::check(&spec(proto), Path::new("")).unwrap();
        let set = Schema::from_protos(&[bench()], &[]).unwrap().pool().encode_to_vec();
        let descriptors = Some(encode_descriptors(&set));
        let carried = GrpcSpec { descriptors, call: UNARY.into(), data, ..Default::default() };
        // What a load host gets: the spec inlined, the schema in it.
        let sent = crate::inline::inline(&spec(carried), Path::new(""), None).unwrap();
        let from_reflection = crate::check(&sent, Path::new("")).unwrap();
        assert_eq!(from_reflection.load.body, from_proto.load.body);
        assert_eq!(from_proto.load.grpc.unwrap().schema, "proto");
        assert_eq!(from_reflection.load.grpc.unwrap().schema, "reflection");
    }

    #[test]
    fn a_proto_compiled_into_the_spec_needs_the_file_no_more_and_still_says_proto() {
        let dir = std::env::temp_dir().join(format!("stampede-carry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(bench(), dir.join("bench.proto")).unwrap();
        let data = Some(r#"{"text": "x", "a": 1}"#.to_string());
        let mut g = GrpcSpec { proto: vec!["bench.proto".into()], call: UNARY.into(), data, ..Default::default() };
        let from_file = crate::check(&spec(g.clone()), &dir).unwrap();
        carry_files(&mut g, &dir).unwrap();
        assert!(g.descriptors.is_some() && !awaits_reflection(&g));
        std::fs::remove_dir_all(&dir).unwrap();
        let carried = crate::check(&spec(g.clone()), &dir).unwrap();
        assert_eq!(carried.load.body, from_file.load.body);
        assert_eq!(carried.load.grpc.unwrap().schema, "proto");
        // Carried once: a spec that has its schema is not compiled again.
        let before = g.descriptors.clone();
        carry_files(&mut g, &dir).unwrap();
        assert_eq!(g.descriptors, before);
    }

    #[test]
    fn only_files_are_compiled_into_the_spec_and_a_missing_one_is_named() {
        let mut asks = GrpcSpec { call: UNARY.into(), ..Default::default() };
        carry_files(&mut asks, Path::new("")).unwrap();
        assert!(asks.descriptors.is_none() && awaits_reflection(&asks), "reflection's is asked when it runs");
        let mut missing = GrpcSpec { proto: vec!["nope.proto".into()], call: UNARY.into(), ..Default::default() };
        let err = carry_files(&mut missing, Path::new("/nonexistent")).unwrap_err();
        assert_eq!(err.field, Field::GrpcProto);
        assert!(err.to_string().starts_with("--proto /nonexistent/nope.proto: "), "{err}");
        let mut garbled =
            GrpcSpec { descriptors: Some("not base64!".into()), call: UNARY.into(), ..Default::default() };
        carry_files(&mut garbled, Path::new("")).unwrap();
        let err = crate::check(&spec(garbled), Path::new("")).unwrap_err();
        assert_eq!(err.field, Field::GrpcDescriptors);
        assert!(err.to_string().starts_with("grpc.descriptors: not a base64 FileDescriptorSet"), "{err}");
    }

    #[test]
    fn a_call_awaiting_reflection_is_checked_but_for_its_schema_before_a_server_runs() {
        let g = GrpcSpec { call: UNARY.into(), data: Some("{\"a\": 1}".into()), ..Default::default() };
        assert!(awaits_reflection(&g));
        let err = crate::check(&spec(g.clone()), Path::new("")).unwrap_err();
        assert!(err.to_string().contains("server's reflection"), "{err}");
        assert!(crate::check::check_before_reflection(&spec(g.clone()), Path::new("")).is_ok());
        let bad_call = GrpcSpec { call: "Unary".into(), ..g.clone() };
        let err = crate::check::check_before_reflection(&spec(bad_call), Path::new("")).unwrap_err();
        assert!(err.to_string().starts_with("--call Unary: not a method name"), "{err}");
        let bad_data = GrpcSpec { data: Some("{a".into()), ..g };
        let err = crate::check::check_before_reflection(&spec(bad_data), Path::new("")).unwrap_err();
        assert!(err.to_string().starts_with("--data: not JSON"), "{err}");
    }
}
