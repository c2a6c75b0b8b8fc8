//! The gRPC vocabulary, declared once for every crate that speaks it:
//! `stampede load --grpc` sends calls on the HTTP/2 engine and `stampede
//! check --grpc` judges a server's answers, and both need the same schema,
//! the same framing, the same status codes and the same header fields. The
//! vocabulary knows nothing about connections: it turns a user's `.proto`
//! files and JSON into bytes to send, and the bytes and trailers a server
//! sends back into counts, messages and a status. One client, behind the
//! feature `client` (client.rs), serves the checker and `stampede run`'s
//! readiness poll; the load engine leaves it off.

#[cfg(feature = "client")]
pub mod client;
mod frame;
mod headers;
#[cfg(feature = "client")]
pub mod reflect;
pub mod reflection;
mod refusal;
mod schema;
mod status;
mod timeout;

pub use frame::{frame, Deframer, FrameError, PREFIX_LEN};
pub use headers::{is_grpc_content_type, request_headers, CONTENT_TYPE};
pub use refusal::Refusal;
pub use schema::{split_call, Method, Schema, SchemaError};
pub use status::{parse_message, parse_status, Code};
pub use timeout::{decode_timeout, encode_timeout, short_duration};

/// The messages a call may carry when the user did not say (gRPC's own
/// default limit on a received message).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The reflection library the schema is made of, for callers that build or
/// read messages themselves.
pub use prost_reflect;
