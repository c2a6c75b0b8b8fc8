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
mod core;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod grpc;
mod http1;
mod http2;
mod http3;
pub mod interchange;
pub mod mix;
pub mod progress;
pub mod result;
mod runner;
pub mod spec;
pub mod text;
pub mod tls;
pub use stampede_schema::units;
// The vocabulary of a load, declared in the spec crate below the engine,
// named here as the engine's modules always named it.
pub use stampede_spec::{error, limits, protocol, stages, target, targets_file};

pub use self::core::rusage::monotonic_ns;
pub use config::{Arrival, LoadConfig, Stop};
pub use error::LoadError;
pub use http1::response;
pub use protocol::{IoBackend, Protocol};
pub use result::LoadResult;
pub use runner::{run, run_watched};
pub use target::Target;
pub use tls::TlsOptions;
