//! `stampede load --grpc`'s flags, named as ghz names them (`--proto`,
//! `--import-paths`, `--protoset`, `--call`, `--data`, `--metadata`), made
//! into the load spec's `grpc` field, and the schema resolved once before
//! the spec is printed, sent or run: the files compiled, or, when they name
//! none, the server's asked for by reflection, and carried in the spec.
//! Glue only: the schema, reflection, the encoding and the loop are the
//! `stampede-grpc` and `stampede-load` crates'.

use stampede_grpc::client::Endpoint;
use stampede_load::units::parse_duration;
use stampede_schema::grpc::GrpcSpec;
use stampede_schema::LoadSpec;
use stampede_spec::tls::{TlsOptions, TlsShared};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub struct GrpcArgs {
    /// Load a gRPC server: calls of --call on HTTP/2 (implied by --call);
    /// each call is an error unless its grpc-status is OK (docs/grpc.md)
    #[arg(group = "spec_flags", long, help_heading = "gRPC")]
    pub grpc: bool,

    /// A .proto file declaring the service (repeatable); compiled in process, no protoc needed. Without --proto or --protoset the server is asked by reflection
    #[arg(group = "spec_flags", long, value_name = "FILE", help_heading = "gRPC", conflicts_with = "protoset")]
    pub proto: Vec<PathBuf>,

    /// Where the .proto files' imports are found, comma-separated (the files' own folders are searched too)
    #[arg(group = "spec_flags", long, value_name = "DIRS", value_delimiter = ',', help_heading = "gRPC")]
    pub import_paths: Vec<PathBuf>,

    /// A protoset (protoc --include_imports -o FILE) instead of --proto
    #[arg(group = "spec_flags", long, value_name = "FILE", help_heading = "gRPC")]
    pub protoset: Option<PathBuf>,

    /// The method to call: package.Service/Method (unary, server-, client-streaming or bidirectional)
    #[arg(group = "spec_flags", long, value_name = "METHOD", help_heading = "gRPC")]
    pub call: Option<String>,

    /// The request message as JSON (proto3 mapping), or @FILE; a client stream's messages as a JSON array; encoded once before the run
    #[arg(group = "spec_flags", long, value_name = "JSON", help_heading = "gRPC", requires = "call")]
    pub data: Option<String>,

    /// Metadata sent with every call, a JSON object: '{"authorization": "Bearer …"}'
    #[arg(group = "spec_flags", long, value_name = "JSON", help_heading = "gRPC", requires = "call")]
    pub metadata: Option<String>,

    /// The deadline sent with every call as grpc-timeout, e.g. 200ms
    #[arg(group = "spec_flags", long, value_name = "DURATION", value_parser = parse_duration, help_heading = "gRPC", requires = "call")]
    pub deadline: Option<Duration>,
}

/// `--metadata`: a JSON object whose values are strings. Parsed here, not
/// by clap, whose error would repeat the text, which may hold a credential.
fn parse_metadata(s: &str) -> anyhow::Result<BTreeMap<String, String>> {
    serde_json::from_str(s).map_err(|_| {
        anyhow::anyhow!(
            "--metadata must be a JSON object of strings, e.g. '{{\"x-tenant\": \"a\"}}' (quote it for the shell)"
        )
    })
}

impl GrpcArgs {
    /// The spec's `grpc` field: present with --grpc or --call; a gRPC flag
    /// without either is refused.
    pub fn spec(&self, absolute: impl Fn(&Path) -> PathBuf) -> anyhow::Result<Option<GrpcSpec>> {
        if !self.grpc && self.call.is_none() {
            if !self.proto.is_empty() || self.protoset.is_some() || !self.import_paths.is_empty() {
                anyhow::bail!(
                    "--proto, --protoset and --import-paths describe a gRPC service: add --call package.Service/Method"
                );
            }
            return Ok(None);
        }
        let Some(call) = self.call.clone() else {
            anyhow::bail!("--grpc needs --call package.Service/Method: the method every call invokes");
        };
        let data = self.data.as_ref().map(|d| match d.strip_prefix('@') {
            Some(file) => format!("@{}", absolute(Path::new(file)).display()),
            None => d.clone(),
        });
        Ok(Some(GrpcSpec {
            proto: self.proto.iter().map(|p| absolute(p)).collect(),
            import_paths: self.import_paths.iter().map(|p| absolute(p)).collect(),
            protoset: self.protoset.as_deref().map(&absolute),
            descriptors: None,
            call,
            data,
            metadata: self.metadata.as_deref().map(parse_metadata).transpose()?.unwrap_or_default(),
            deadline: self.deadline,
        }))
    }
}

/// The schema of a gRPC spec, resolved once here and carried in it
/// (`grpc.descriptors`), so what is printed, sent to load hosts or run
/// needs neither the files nor reflection: the `.proto` files compiled or
/// the protoset read (a missing file said in the words of `args`: its flag,
/// or its `--spec` field), or, when it names neither, the server's asked by
/// reflection. A spec that carries its schema, or is not gRPC, is left as
/// it is.
pub fn resolve_schema(args: &super::load::Args, spec: &mut LoadSpec, dir: &Path) -> anyhow::Result<()> {
    let Some(g) = spec.grpc.as_mut() else { return Ok(()) };
    stampede_spec::grpc::carry_files(g, dir).map_err(|e| args.spec_error(e))?;
    match stampede_spec::grpc::awaits_reflection(g) {
        true => reflect(spec, dir),
        false => Ok(()),
    }
}

/// The server's schema by reflection, asked once.
fn reflect(spec: &mut LoadSpec, dir: &Path) -> anyhow::Result<()> {
    stampede_spec::grpc::check_spec(spec).map_err(anyhow::Error::msg)?;
    let g = spec.grpc.as_ref().expect("a gRPC spec");
    let Some((service, _)) = stampede_grpc::split_call(&g.call) else {
        anyhow::bail!("--call {}", stampede_grpc::SchemaError::CallFormat { call: g.call.clone() });
    };
    let url = stampede_spec::grpc::url(&spec.urls[0]);
    // The run's own preflight limit, so an unreachable server is as quick to say.
    let timeout = spec.timeout.min(Duration::from_secs(5));
    let endpoint = endpoint(spec, &url, dir, timeout)?;
    let metadata = stampede_spec::grpc::metadata(g).map_err(anyhow::Error::msg)?;
    let reflected = stampede_grpc::reflect::reflect(&endpoint, service, &metadata, timeout)
        .map_err(|e| anyhow::anyhow!("--grpc: {url} {e}"))?;
    let set = stampede_spec::grpc::encode_descriptors(&reflected.descriptor_set);
    spec.grpc.as_mut().expect("a gRPC spec").descriptors = Some(set);
    Ok(())
}

/// Where `url` is and how to trust it, tried once (a refused port, an
/// untrusted certificate said as the run says them).
fn endpoint(spec: &LoadSpec, url: &str, dir: &Path, timeout: Duration) -> anyhow::Result<Endpoint> {
    let target = stampede_load::Target::parse(url)?;
    let tls = match target.tls {
        true => {
            let opts = TlsOptions {
                insecure: spec.insecure,
                ca: spec.ca.as_ref().map(|c| dir.join(c)),
                alpn: vec!["h2".into()],
            };
            let shared = TlsShared::new(&opts, &target.host, url)?;
            shared.preflight(target.addr, url, timeout)?;
            Some((shared.config.clone(), shared.name.clone()))
        }
        false => {
            target.preflight(timeout)?;
            None
        }
    };
    Ok(Endpoint { addrs: vec![target.addr], authority: target.host_header.clone(), tls })
}
