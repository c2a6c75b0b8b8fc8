//! Why a server cannot be loaded with gRPC at all, said once for the two
//! places that find out before a run: the load's preflight call
//! (`stampede_load::http2::grpc_preflight`) and server reflection
//! (reflect.rs). Each reads after the server's URL: `--grpc: URL {refusal}`.

/// A server that is not a gRPC server's port.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No HTTP/2 (an HTTP/1.1-only server, a TLS port without ALPN h2).
    #[error("does not speak HTTP/2 ({why}); gRPC runs over HTTP/2: is this a gRPC server's port?")]
    NotHttp2 { why: String },
    /// HTTP/2, but the answer to `call` was not gRPC's.
    #[error("is not a gRPC server: it answered {call} with {what}; check the URL's port")]
    NotGrpc { call: String, what: String },
}

impl Refusal {
    /// The answer `status` (HTTP) without a gRPC content-type, said.
    pub fn not_grpc(call: &str, status: u16) -> Refusal {
        let what = match status {
            200 => "an answer without content-type application/grpc".to_string(),
            _ => format!("HTTP {status}"),
        };
        Refusal::NotGrpc { call: call.to_string(), what }
    }
}
