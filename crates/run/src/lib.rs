//! Scenario files, app lifecycle, phases, iterations and the knob matrix
//! behind `stampede run`: build each app once, then for every knob combination,
//! iteration and load profile start the server in its own process group, time
//! its start, check the contract, warm up, load it while the probe samples its
//! process tree, stop it, and append the run to results.json.
//!
//! The folders follow that path: `scenario/` (the scenario file, manifests,
//! the knob matrix), `server/` (building, starting, sampling and stopping a
//! server, here or on `[hosts] server` under `stampede agent`:
//! [`server::agent::run`], `server/remote_server/`), `database/` (the
//! scenario's PostgreSQL), `phases/` (one run, phase by phase, and the
//! judgement of its validity) and `terminal/` (what people see).
//!
//! The binary's `run` command only parses flags and calls [`run`].

pub mod database;
mod environment;
mod interrupt;
mod observer;
mod phases;
pub mod record;
mod results;
mod runner;
pub mod scenario;
mod schedule;
pub mod server;
pub mod terminal;

pub use runner::{run, RunError, RunOptions, RunSummary};
pub use scenario::error::ScenarioError;
pub use scenario::Scenario;
