//! Samples a process tree's CPU, memory, threads and scheduling from /proc, so
//! that `stampede run` can say not only how fast a server answered but what it
//! cost: cores used, resident memory, threads, context switches and time spent
//! waiting for a CPU, for the server's whole process tree (cluster and uvicorn
//! workers included), for the load generator, and for the machine.
//!
//! The probe keeps its /proc files open and re-reads each with one `pread`, so
//! one sample of a thirty-thread server is one small read per thread (its
//! `schedstat`, plus its `syscall` if it ran, for the microstates; none when
//! the process's CPU-time clock shows no thread ran) and no directory walks;
//! a process's thread list is re-read only when its thread
//! count changes, the tree's processes every [`ProbeConfig::rescan`] through
//! the threads' open `children` files, and each thread's `stat` and `status`
//! once a second. `bench/probe_cost.sh` measures what that costs.

mod error;
mod host;
pub mod lifeline;
pub mod listen_drops;
mod machine;
pub mod microstate;
mod microstates;
pub mod net_drops;
mod proc_file;
mod proc_text;
mod sampler;
mod series;
mod summary;
mod tracked;
mod tree;

pub use error::ProbeError;
pub use host::{cpu_model, kernel, machine_cores};
pub use machine::{MachineReading, MachineSample};
pub use proc_text::process_cpu_s;
pub use sampler::{Probe, ProbeConfig, ProbeReport};
pub use series::Sample;
pub use summary::{MachineSummary, ThreadRow, TreeSummary};
pub use tracked::{ThreadReading, TreeReading};
pub use tree::descendants;
