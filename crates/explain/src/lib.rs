//! Why is the tail slow? This crate reads the GC and safepoint logs of the
//! reference apps' runtimes (Go, the JVM, Node.js, Python), puts their events
//! on CLOCK_MONOTONIC beside the load generator's slow-request log, adds CPU
//! saturation, run-queue spikes and kernel drops from the probe's samples,
//! lock and I/O waits from its microstates, and decides for each slow request
//! which of them it met; a profiled run adds its slow windows' frames. `stampede explain` is its front
//! end; docs/explain.md describes the method and its limits.

pub mod attribution;
pub mod blocked;
pub mod dominant;
pub mod error;
pub mod event;
pub mod events;
pub mod explanation;
pub mod input;
pub mod latency;
pub mod parking;
pub mod profiled;
pub mod render;
pub mod sources;
pub mod summary;
pub mod windows;

pub use attribution::{Margins, Request, Shares};
pub use error::ExplainError;
pub use event::{Cause, Event, Kind};
pub use events::{parse_file, Parsed, Runtime};
pub use explanation::{explain, Explanation, Source};
