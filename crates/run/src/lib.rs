//! Scenario files, app lifecycle, phases, iterations and the knob matrix
//! behind `stampede run`: build each app once, then for every knob combination,
//! iteration and load profile start the server in its own process group, time
//! its start, check the contract, warm up, load it while the probe samples its
//! process tree, stop it, and append the run to results.json.
//!
//! With `[hosts] server` the server runs on another host under `stampede
//! agent` ([`agent::run`], remote_server.rs); the lifecycle is the same.
//!
//! The binary's `run` command only parses flags and calls [`run`].

pub mod agent;
mod contention;
mod contract;
pub mod database;
mod database_cluster;
mod database_seed;
pub mod duration;
mod environment;
mod error;
mod events;
mod fault;
pub mod hosts;
mod http;
mod interrupt;
pub mod latency_phase;
mod lifecycle;
mod loadgen;
pub mod manifest;
pub mod matrix;
mod microstates;
mod names;
mod overrides;
mod pinning;
mod plan;
mod prepare;
mod profiling;
pub mod progress;
mod ready;
pub mod record;
pub mod remote_server;
mod results;
mod runner;
pub mod scenario;
mod served;
mod server;
mod subprocess;
mod tables;
mod text;

pub use error::ScenarioError;
pub use runner::{run, RunError, RunOptions, RunSummary};
pub use scenario::Scenario;
