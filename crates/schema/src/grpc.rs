//! gRPC in the two documents that know about it: what a `stampede load
//! --grpc` is asked to call ([`GrpcSpec`], the `grpc` field of the load
//! spec) and what its calls got ([`GrpcStats`], the `grpc` section of
//! `stampede.load/1`). Declared once here so the engine that writes them,
//! the load hosts that merge them and the reports that read them agree.
//! The status code names are the specification's (`OK`, `INTERNAL`, ...,
//! declared in the `stampede-grpc` crate).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::load::Percentiles;
use crate::units::serde_text_opt;

/// The call a gRPC load makes (flags as ghz names them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GrpcSpec {
    /// `.proto` files declaring the service (`--proto`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proto: Vec<PathBuf>,
    /// Where the `.proto` files' imports are looked up (`--import-paths`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub import_paths: Vec<PathBuf>,
    /// A protoset (a serialized FileDescriptorSet) instead of `.proto` files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protoset: Option<PathBuf>,
    /// The schema itself, a serialized FileDescriptorSet in base64: the
    /// `proto` files compiled, the `protoset` read, or, without either, what
    /// server reflection gave, filled in once by the `stampede load` that
    /// runs or sends the spec, so load hosts and a replayed spec need
    /// neither the files nor reflection. When present it is the schema, and
    /// `proto`/`protoset` only say where it came from. Specs written before
    /// it was generalised name it `reflected`, still read.
    #[serde(skip_serializing_if = "Option::is_none", alias = "reflected")]
    pub descriptors: Option<String>,
    /// `package.Service/Method`.
    pub call: String,
    /// The request message as JSON, or `@FILE`; `{}` (every field at its
    /// default) when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Metadata sent as header fields on every call, `{"name": "value"}`.
    /// Values of secret names are masked in shared documents as HTTP
    /// headers are (`redact`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// The deadline sent with every call as `grpc-timeout`.
    #[serde(skip_serializing_if = "Option::is_none", with = "serde_text_opt")]
    pub deadline: Option<Duration>,
}

/// What the calls of a gRPC load got, in the measured period.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GrpcStats {
    /// `package.Service/Method`.
    pub call: String,
    /// Whether the server answers with a stream of messages.
    pub server_streaming: bool,
    /// Whether each call sends a stream of messages (client-streaming and
    /// bidirectional calls), and how many (`--data`'s array).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub client_streaming: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_messages: Option<u32>,
    /// Where the schema came from: `proto`, `protoset` or `reflection`
    /// (the server's, asked at start-up).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub schema: String,
    /// Calls that ended with a `grpc-status`, by its name (`OK`,
    /// `INTERNAL`, ...). Every call not `OK` is a failed call.
    pub calls_by_status: BTreeMap<String, u64>,
    /// Answers that were not a gRPC server's: an HTTP status other than 200
    /// or a content-type that is not `application/grpc`.
    pub not_grpc: u64,
    /// gRPC answers that ended without a `grpc-status`, or inside a message.
    pub no_status: u64,
    /// Response messages received (a unary call's reply counts one).
    pub messages: u64,
    #[serde(deserialize_with = "crate::lenient::or_default")]
    pub messages_per_s: f64,
    /// Server streaming: from the intended send time to the first message
    /// of each call that had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_message_us: Option<Percentiles>,
    /// Server streaming: the gap between consecutive messages of a call,
    /// from one's arrival to the next's (messages that arrive in the same
    /// read are 0 apart). With `first_message_us` it says when each message
    /// came; absent when no call had two messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_gap_us: Option<Percentiles>,
}

impl GrpcStats {
    /// Calls that ended `OK`.
    pub fn ok(&self) -> u64 {
        self.calls_by_status.get("OK").copied().unwrap_or(0)
    }

    /// Calls that failed: a status other than OK, no status, not gRPC.
    pub fn failed(&self) -> u64 {
        let not_ok: u64 = self.calls_by_status.iter().filter(|(k, _)| *k != "OK").map(|(_, n)| n).sum();
        not_ok + self.not_grpc + self.no_status
    }

    /// Adds another host's counts (`messages_per_s` and the percentiles are
    /// the caller's to recompute).
    pub fn add(&mut self, other: &GrpcStats) {
        for (code, n) in &other.calls_by_status {
            *self.calls_by_status.entry(code.clone()).or_default() += n;
        }
        self.not_grpc += other.not_grpc;
        self.no_status += other.no_status;
        self.messages += other.messages;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_failed_unless_its_status_is_ok_and_counts_add_up_across_hosts() {
        let mut a = GrpcStats { not_grpc: 1, no_status: 2, messages: 10, ..Default::default() };
        a.calls_by_status.insert("OK".into(), 7);
        a.calls_by_status.insert("INTERNAL".into(), 3);
        assert_eq!((a.ok(), a.failed()), (7, 6));
        let mut b = a.clone();
        b.add(&a);
        assert_eq!((b.ok(), b.failed(), b.messages), (14, 12, 20));
        assert_eq!(GrpcStats::default().failed(), 0);
    }

    #[test]
    fn a_document_from_before_the_stream_figures_still_reads_and_a_unary_one_writes_none() {
        let old: GrpcStats =
            serde_json::from_str(r#"{"call":"p.S/M","server_streaming":true,"messages":4,"messages_per_s":2.0}"#)
                .unwrap();
        assert_eq!((old.messages, old.first_message_us, old.message_gap_us), (4, None, None));
        let text = serde_json::to_string(&GrpcStats::default()).unwrap();
        assert!(!text.contains("first_message_us") && !text.contains("message_gap_us"), "{text}");
    }

    #[test]
    fn secret_metadata_is_masked_in_a_shared_document_and_the_rest_kept() {
        let mut spec = GrpcSpec { call: "p.S/M".into(), ..Default::default() };
        spec.metadata.insert("authorization".into(), "Bearer tok".into());
        spec.metadata.insert("x-tenant".into(), "acme".into());
        let mut doc = serde_json::to_value(&spec).unwrap();
        crate::redact::Redaction::default().json(&mut doc);
        assert_eq!(doc["metadata"]["authorization"], crate::redact::MASK);
        assert_eq!(doc["metadata"]["x-tenant"], "acme");
    }

    #[test]
    fn a_spec_from_before_descriptors_still_reads_its_reflected_schema_and_writes_the_new_name() {
        let old: GrpcSpec = serde_json::from_str(r#"{"call":"p.S/M","reflected":"CgA="}"#).unwrap();
        assert_eq!(old.descriptors.as_deref(), Some("CgA="));
        let text = serde_json::to_string(&old).unwrap();
        assert!(text.contains(r#""descriptors":"CgA=""#) && !text.contains("reflected"), "{text}");
        let both = r#"{"call":"p.S/M","reflected":"CgA=","descriptors":"CgA="}"#;
        let err = serde_json::from_str::<GrpcSpec>(both).unwrap_err().to_string();
        assert!(err.contains("duplicate field `descriptors`"), "{err}");
    }

    #[test]
    fn a_spec_reads_ghz_style_fields_and_refuses_unknown_ones() {
        let s: GrpcSpec = serde_json::from_str(
            r#"{"proto":["a.proto"],"call":"p.S/M","data":"{\"a\":1}","metadata":{"x-k":"v"},"deadline":"200ms"}"#,
        )
        .unwrap();
        assert_eq!(s.deadline, Some(Duration::from_millis(200)));
        assert_eq!(s.metadata["x-k"], "v");
        let back: GrpcSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        let err = serde_json::from_str::<GrpcSpec>(r#"{"call":"p.S/M","methd":1}"#).unwrap_err().to_string();
        assert!(err.contains("methd"), "{err}");
    }
}
