//! The gRPC test server's server reflection (grpc_server.rs, modes
//! `ReflectionV1` and `ReflectionV1Alpha`): one `ServerReflectionInfo`
//! stream answered question by question, `file_containing_symbol` of the
//! Bench service, its methods or its messages and `file_by_filename`
//! `bench.proto` with contracts/grpc/bench.proto's FileDescriptorProto
//! (compiled once by protox), anything else with NOT_FOUND. The reflection
//! messages are written by hand, as the server's bench messages are, so
//! Stampede's prost declarations are tested against another reading of
//! grpc/reflection/v1/reflection.proto; each answer also carries its
//! `original_request` (field 2), which the client must skip.

use std::sync::OnceLock;

use bytes::Bytes;

use super::grpc_server::{frame, put_varint, varint};

/// Which reflection service a mode offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V1Alpha,
}

impl Version {
    pub fn path(self) -> &'static str {
        match self {
            Version::V1 => "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            Version::V1Alpha => "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        }
    }
}

/// Whether `path` is a reflection call (of either version).
pub fn is_reflection(path: &str) -> bool {
    path.starts_with("/grpc.reflection.")
}

/// bench.proto's FileDescriptorProto, serialized.
fn bench_file() -> &'static [u8] {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = crate::repo_root().join("contracts/grpc");
        let set = protox::compile(["bench.proto"], [dir]).expect("contracts/grpc/bench.proto compiles");
        prost::Message::encode_to_vec(&set.file[0])
    })
}

/// Answers the stream's questions until the client ends it, then OK.
pub async fn serve(mut body: h2::RecvStream, mut respond: super::grpc_server::Respond) {
    let headers = http::Response::builder().status(200).header("content-type", "application/grpc");
    let Ok(mut out) = respond.send_response(headers.body(()).unwrap(), false) else { return };
    let mut pending = Vec::new();
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
        pending.extend_from_slice(&chunk);
        while pending.len() >= 5 {
            let len = u32::from_be_bytes(pending[1..5].try_into().unwrap()) as usize;
            if pending.len() < 5 + len {
                break;
            }
            let question: Vec<u8> = pending.drain(..5 + len).skip(5).collect();
            if out.send_data(Bytes::from(frame(&answer(&question))), false).is_err() {
                return;
            }
        }
    }
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let _ = out.send_trailers(trailers);
}

/// The ServerReflectionResponse to one ServerReflectionRequest.
fn answer(question: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    field_bytes(&mut out, 2, question);
    let bench = match ask(question) {
        Some((4, symbol)) => {
            let declared = ["Bench", "Request", "StreamRequest", "Reply"].map(|n| format!("stampede.bench.v1.{n}"));
            declared.contains(&symbol) || symbol.starts_with("stampede.bench.v1.Bench.")
        }
        Some((3, file)) => file == "bench.proto",
        _ => false,
    };
    let mut inner = Vec::new();
    if bench {
        field_bytes(&mut inner, 1, bench_file());
        field_bytes(&mut out, 4, &inner);
    } else {
        inner.push(0x08);
        put_varint(&mut inner, 5);
        field_bytes(&mut inner, 2, b"not known here");
        field_bytes(&mut out, 7, &inner);
    }
    out
}

/// The question's field number (3 file_by_filename, 4
/// file_containing_symbol) and its text.
fn ask(mut bytes: &[u8]) -> Option<(u64, String)> {
    let mut found = None;
    while !bytes.is_empty() {
        let tag = varint(&mut bytes)?;
        if tag & 7 != 2 {
            return None;
        }
        let len = varint(&mut bytes)? as usize;
        let text = String::from_utf8(bytes.get(..len)?.to_vec()).ok()?;
        bytes = &bytes[len..];
        if matches!(tag >> 3, 3 | 4) {
            found = Some((tag >> 3, text));
        }
    }
    found
}

/// A length-delimited field.
fn field_bytes(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    put_varint(out, number << 3 | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}
