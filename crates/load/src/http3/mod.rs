//! HTTP/3 over QUIC: the quinn-proto client endpoint, batched UDP I/O, the
//! HTTP/3 frames and QPACK, and the event loop that drives many streams per
//! connection.

pub mod client;
pub mod event_loop;
pub mod frame;
pub mod qpack;
pub mod udp;
