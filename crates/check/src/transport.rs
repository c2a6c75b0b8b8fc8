//! Why a request got no complete response. Both the connection code
//! (`wire.rs`) and the client that retries and judges (`client.rs`) name
//! these causes, so they live apart from either, and neither file imports
//! the other's internals in a cycle.

use std::time::Duration;

/// After this many timeouts in a row the server is taken as hung.
pub const HUNG_AFTER_TIMEOUTS: u32 = 2;

/// Why a request got no complete response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    #[error("connection refused")]
    Refused,
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("no complete response within {}", stampede_grpc::short_duration(*.0))]
    Timeout(Duration),
    #[error("the server closed the connection before answering")]
    ClosedBeforeResponse,
    #[error("the server closed the connection {0}")]
    ClosedMidResponse(String),
    #[error("malformed response: {0}")]
    Malformed(String),
    #[error("not sent: the server stopped answering ({HUNG_AFTER_TIMEOUTS} requests in a row timed out)")]
    Hung,
    /// The request cannot be made this way (a body over HTTP/3, a missing file).
    #[error("not sent: {0}")]
    NotSent(String),
}

impl TransportError {
    /// Nothing is listening, or nothing answers: the server cannot be reached.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, TransportError::Refused | TransportError::Connect(_) | TransportError::Timeout(_))
    }
}
