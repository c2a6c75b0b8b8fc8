//! Why a load spec cannot run, typed: the [`Field`] it is about and one line
//! saying why and what to do. The line is written in `stampede load`'s
//! words (its flags, `URL argument 2`), which is how the error displays; a
//! caller that read the spec from a document (a scenario's profile, a
//! `--spec` file) names the field as the document spells it
//! ([`Field::key`]) and asks for the line in the document's words
//! ([`SpecError::in_document`]), so a user is never told about a flag they
//! did not type. The table of flags and fields is declared once, here.

use thiserror::Error;

/// A field of the load spec (`stampede_schema::spec::LoadSpec`, with the
/// gRPC call's), each with its `stampede load` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Urls,
    Method,
    Headers,
    Body,
    Targets,
    Mix,
    Connections,
    MaxConnections,
    Threads,
    Duration,
    Requests,
    Warmup,
    Timeout,
    Rate,
    MaxLag,
    MaxGranularity,
    SlowLog,
    Pipeline,
    RequestsPerConnection,
    Http2,
    Http3,
    Streams,
    Insecure,
    Ca,
    Alpn,
    HdrLog,
    Stages,
    Ramp,
    Grpc,
    GrpcCall,
    GrpcData,
    GrpcMetadata,
    GrpcProto,
    GrpcImportPaths,
    GrpcProtoset,
    GrpcDescriptors,
}

/// Every field, its flag and its key in a spec document.
const TABLE: &[(Field, &str, &str)] = &[
    (Field::Urls, "URL", "urls"),
    (Field::Method, "--method", "method"),
    (Field::Headers, "--header", "headers"),
    (Field::Body, "--body", "body"),
    (Field::Targets, "--targets", "targets"),
    (Field::Mix, "mix", "mix"),
    (Field::Connections, "--connections", "connections"),
    (Field::MaxConnections, "--max-connections", "max_connections"),
    (Field::Threads, "--threads", "threads"),
    (Field::Duration, "--duration", "duration"),
    (Field::Requests, "--requests", "requests"),
    (Field::Warmup, "--warmup", "warmup"),
    (Field::Timeout, "--timeout", "timeout"),
    (Field::Rate, "--rate", "rate"),
    (Field::MaxLag, "--max-lag", "max_lag"),
    (Field::MaxGranularity, "--max-granularity", "max_granularity"),
    (Field::SlowLog, "--slow-log", "slow_log"),
    (Field::Pipeline, "--pipeline", "pipeline"),
    (Field::RequestsPerConnection, "--requests-per-connection", "requests_per_connection"),
    (Field::Http2, "--http2", "http2"),
    (Field::Http3, "--http3", "http3"),
    (Field::Streams, "--streams", "streams"),
    (Field::Insecure, "--insecure", "insecure"),
    (Field::Ca, "--ca", "ca"),
    (Field::Alpn, "--alpn", "alpn"),
    (Field::HdrLog, "--hdr-log", "hdr_log"),
    (Field::Stages, "--stages", "stages"),
    (Field::Ramp, "--ramp", "ramp"),
    (Field::Grpc, "--grpc", "grpc"),
    (Field::GrpcCall, "--call", "grpc.call"),
    (Field::GrpcData, "--data", "grpc.data"),
    (Field::GrpcMetadata, "--metadata", "grpc.metadata"),
    (Field::GrpcProto, "--proto", "grpc.proto"),
    (Field::GrpcImportPaths, "--import-paths", "grpc.import_paths"),
    (Field::GrpcProtoset, "--protoset", "grpc.protoset"),
    // No flag: the schema `stampede load` compiled or asked by reflection, carried in the spec.
    (Field::GrpcDescriptors, "grpc.descriptors", "grpc.descriptors"),
];

impl Field {
    fn row(self) -> (Field, &'static str, &'static str) {
        *TABLE.iter().find(|(f, _, _)| *f == self).expect("every field is in TABLE")
    }

    /// Its `stampede load` flag (`--max-lag`), or `URL` for the URL arguments.
    pub fn flag(self) -> &'static str {
        self.row().1
    }

    /// Its key in a spec document (`max_lag`, `grpc.data`).
    pub fn key(self) -> &'static str {
        self.row().2
    }
}

/// Why a load spec cannot run: the field it is about (for a conflict, the
/// first one named) and the line that says why, in `stampede load`'s words.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct SpecError {
    pub field: Field,
    message: String,
}

impl SpecError {
    pub fn new(field: Field, message: impl Into<String>) -> SpecError {
        SpecError { field, message: message.into() }
    }

    /// The line in a spec document's words: each flag of the table as its
    /// key (`--max-lag` → `max_lag`, `--data` → `grpc.data`) and `URL
    /// argument N` as `urls[N-1]`. Only a flag that starts a word is
    /// rewritten, so a quoted value (`--method "--rate"`) stays as given.
    pub fn in_document(&self) -> String {
        self.in_document_naming_urls(&|i| format!("urls[{i}]"))
    }

    /// [`SpecError::in_document`] for a document that names the spec's
    /// URLs its own way: `url(i)` names the one at index `i`.
    pub fn in_document_naming_urls(&self, url: &dyn Fn(usize) -> String) -> String {
        let mut out = String::with_capacity(self.message.len());
        let mut rest = self.message.as_str();
        while !rest.is_empty() {
            let word_start = out.is_empty() || out.ends_with([' ', '(']);
            match word_start.then(|| document_word(rest, url)).flatten() {
                Some((word, len)) => {
                    out.push_str(&word);
                    rest = &rest[len..];
                }
                None => {
                    let c = rest.chars().next().expect("rest is not empty");
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }
}

/// The document's word for the flag (or URL argument) `text` starts with,
/// and the length of what it replaces.
fn document_word(text: &str, url: &dyn Fn(usize) -> String) -> Option<(String, usize)> {
    if let Some(after) = text.strip_prefix("URL argument ") {
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n: usize = after[..digits].parse().ok()?;
        return Some((url(n.checked_sub(1)?), "URL argument ".len() + digits));
    }
    let name = text.strip_prefix("--")?;
    let len = 2 + name.find(|c: char| !(c.is_ascii_lowercase() || c == '-')).unwrap_or(name.len());
    // `--body-file` is `--body`'s other spelling.
    let flag = match &text[..len] {
        "--body-file" => "--body",
        flag => flag,
    };
    TABLE.iter().find(|(_, f, _)| *f == flag).map(|(_, _, key)| (key.to_string(), len))
}

/// Where one target of a load came from: its field and where in it
/// (`URL argument 2`, `mix[0]`, `mix.txt:7`), for errors about that target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub field: Field,
    pub at: String,
}

impl Origin {
    /// `why` about this target: `at: why`.
    pub fn error(&self, why: impl std::fmt::Display) -> SpecError {
        SpecError::new(self.field, format!("{}: {why}", self.at))
    }
}

/// `Result<T, SpecError>` from a `Result<T, String>` whose error is about `field`.
pub trait AboutField<T> {
    fn about(self, field: Field) -> Result<T, SpecError>;
}

impl<T> AboutField<T> for Result<T, String> {
    fn about(self, field: Field) -> Result<T, SpecError> {
        self.map_err(|message| SpecError::new(field, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_one_flag_and_one_key() {
        for (field, flag, key) in TABLE {
            assert_eq!((field.flag(), field.key()), (*flag, *key));
            let others = TABLE.iter().filter(|(f, fl, k)| f == field || fl == flag || k == key).count();
            assert_eq!(others, 1, "{field:?} is declared once");
        }
    }

    #[test]
    fn a_document_names_its_fields_where_the_command_line_names_flags() {
        let err = SpecError::new(
            Field::Threads,
            "--threads (4) must not exceed --connections (2): each thread needs a connection",
        );
        assert_eq!(err.to_string(), "--threads (4) must not exceed --connections (2): each thread needs a connection");
        assert_eq!(err.in_document(), "threads (4) must not exceed connections (2): each thread needs a connection");
        let grpc = SpecError::new(Field::GrpcData, "--data @nope.json: cannot read it");
        assert_eq!(grpc.in_document(), "grpc.data @nope.json: cannot read it");
        let url = SpecError::new(Field::Urls, "URL argument 2: '{' without '}'");
        assert_eq!(url.in_document(), "urls[1]: '{' without '}'");
    }

    #[test]
    fn quoted_values_and_unknown_flags_are_left_as_written() {
        let err = SpecError::new(Field::Method, "--method \"--rate\" is not an HTTP method; see --help");
        assert_eq!(err.in_document(), "method \"--rate\" is not an HTTP method; see --help");
        let body = SpecError::new(Field::Body, "--body-file x: cannot read");
        assert_eq!(body.in_document(), "body x: cannot read");
        assert_eq!(SpecError::new(Field::Method, "X--threads").in_document(), "X--threads");
    }
}
