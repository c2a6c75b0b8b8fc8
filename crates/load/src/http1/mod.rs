//! HTTP/1.1: the request encoded once, the response framer, one connection's
//! cycle, and its two event loops: edge-triggered epoll (cleartext or TLS) and
//! io_uring (cleartext).

pub mod conn;
pub mod cycle;
pub mod decode;
pub mod epoll;
pub mod request;
pub mod response;
pub mod uring;
pub mod uring_bufs;
