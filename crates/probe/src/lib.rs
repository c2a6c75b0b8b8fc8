//! Samples a process tree's CPU, memory, threads and scheduling from /proc, so
//! that `stampede run` can say not only how fast a server answered but what it
//! cost: cores used, resident memory, threads, context switches and time spent
//! waiting for a CPU, for the server's whole process tree (cluster and uvicorn
//! workers included), for the load generator, and for the machine.
//!
//! The probe keeps its /proc files open and re-reads them with `pread`, so one
//! sample of a ten-thread server costs a few dozen small reads and no directory
//! walks; the tree is re-discovered only when its thread count changes or
//! every [`ProbeConfig::rescan`].

mod error;
mod host;
pub mod lifeline;
mod machine;
pub mod microstate;
mod microstates;
pub mod net_drops;
mod proc_file;
mod sampler;
mod series;
mod summary;
mod tracked;
mod tree;

pub use error::ProbeError;
pub use host::{cpu_model, kernel, machine_cores};
pub use machine::{MachineReading, MachineSample};
pub use sampler::{Probe, ProbeConfig, ProbeReport};
pub use series::Sample;
pub use summary::{MachineSummary, ThreadRow, TreeSummary};
pub use tracked::{ThreadReading, TreeReading};
pub use tree::descendants;
