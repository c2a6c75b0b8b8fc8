//! The load engine behind `stampede load`: HTTP/1.1 (optionally pipelined)
//! over TCP or TLS, HTTP/2, and HTTP/3 over QUIC.
//!
//! Connections are owned by one thread's event loop each (io_uring for
//! cleartext HTTP/1.1 where the kernel allows, else edge-triggered epoll
//! through `mio`, registered once), requests are encoded once and reused,
//! responses are framed with `httparse` and their bodies drained without being
//! kept, and latency goes into per-thread HDR histograms merged at the end. The
//! aim is to spend as little CPU per request as possible: on a small machine
//! every cycle the generator burns is taken from the server it measures.

pub mod capacity;
pub mod config;
mod conn;
mod credentials;
mod cycle;
pub mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod h2_block;
mod h2_fast;
mod h2_frame;
mod h2_hpack;
mod h2_preflight;
mod h2_session;
mod h3_client;
mod h3_fast;
mod h3_frame;
mod h3_qpack;
mod h3_udp;
pub mod interchange;
pub mod mix;
mod pacer;
pub mod progress;
mod recorder;
mod request;
pub mod response;
pub mod result;
mod runner;
mod rusage;
mod rx_time;
mod schedule;
mod share;
pub mod spec;
pub mod stages;
pub mod target;
pub mod targets_file;
pub mod text;
mod timeline;
pub mod tls;
mod transport;
pub use stampede_schema::units;
mod uring_bufs;
mod uring_worker;
mod worker;

pub use config::{Arrival, Engine, LoadConfig, Stop};
pub use error::LoadError;
pub use result::LoadResult;
pub use runner::{run, run_watched};
pub use rusage::monotonic_ns;
pub use target::Target;
pub use tls::TlsOptions;
