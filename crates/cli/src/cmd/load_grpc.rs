//! `stampede load --grpc`'s flags, named as ghz names them (`--proto`,
//! `--import-paths`, `--protoset`, `--call`, `--data`, `--metadata`), made
//! into the load spec's `grpc` field. Glue only: the schema, the encoding
//! and the loop are the `stampede-grpc` and `stampede-load` crates'.

use stampede_load::units::parse_duration;
use stampede_schema::grpc::GrpcSpec;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub struct GrpcArgs {
    /// Load a gRPC server: calls of --call on HTTP/2 (implied by --call);
    /// each call is an error unless its grpc-status is OK (docs/grpc.md)
    #[arg(group = "spec_flags", long, help_heading = "gRPC")]
    pub grpc: bool,

    /// A .proto file declaring the service (repeatable); compiled in process, no protoc needed
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
            call,
            data,
            metadata: self.metadata.as_deref().map(parse_metadata).transpose()?.unwrap_or_default(),
            deadline: self.deadline,
        }))
    }
}
