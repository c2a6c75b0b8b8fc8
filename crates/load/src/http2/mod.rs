//! HTTP/2: hand-written framing and HPACK, one connection's session state,
//! the cleartext preflight, and the event loop that drives many streams per
//! connection.

pub mod block;
pub mod event_loop;
pub mod frame;
pub mod grpc_preflight;
pub mod hpack;
pub mod preflight;
pub mod session;
