//! Scenario files, app lifecycle, phases, iterations and the knob matrix
//! behind `stampede run`: build each app once, then for every knob combination,
//! iteration and load profile start the server in its own process group, time
//! its start, check the contract, warm up, load it while the probe samples its
//! process tree, stop it, and append the run to results.json.
//!
//! The binary's `run` command only parses flags and calls [`run`].

mod contract;
pub mod duration;
mod environment;
mod events;
mod error;
mod figures;
pub mod hosts;
mod http;
mod interrupt;
mod lifecycle;
mod loadgen;
pub mod manifest;
pub mod matrix;
mod overrides;
mod pinning;
mod prepare;
mod profiling;
mod progress;
pub mod record;
mod results;
mod runner;
pub mod scenario;
mod server;
mod subprocess;
mod tables;
mod text;

pub use error::ScenarioError;
pub use runner::{run, RunError, RunOptions, RunSummary};
pub use scenario::Scenario;
