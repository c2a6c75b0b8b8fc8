//! HTTP/1.1: the response framer, one connection's cycle, and its two event
//! loops: edge-triggered epoll (cleartext or TLS) and io_uring (cleartext).
//! The request is encoded once by `stampede_spec::request`.

pub mod conn;
pub mod cycle;
pub mod decode;
pub mod epoll;
pub mod response;
pub mod uring;
pub mod uring_bufs;
