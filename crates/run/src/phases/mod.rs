//! One run, start to finish, as a pipeline of phases over one
//! [`RunState`]: start the server (start.rs), check its contract
//! (check.rs), warm up (warmup.rs), measure, under perf with `--profile`
//! (measure.rs inside profiling.rs), measure latency open-loop (latency.rs),
//! stop the server (stop.rs); then judge.rs decides, in one place, whether
//! the run is valid. A phase that cannot go on returns a [`Failure`]: the run
//! ends there as an invalid record with a one-line reason. The server is
//! stopped on every path (its `Drop` does it if nothing else does).

pub(crate) mod check;
pub(crate) mod contention;
pub(crate) mod contract;
pub(crate) mod fault;
pub(crate) mod judge;
pub mod latency;
pub(crate) mod loadgen;
pub(crate) mod measure;
pub(crate) mod profiling;
pub(crate) mod start;
pub(crate) mod state;
pub(crate) mod stop;
pub(crate) mod warmup;

use crate::server::served::Failure;
use judge::Measured;
pub use state::{Outcome, RunContext, RunSpec, RunState};

/// Runs one app × knobs × profile × iteration and judges it.
pub fn run_once(ctx: &RunContext, spec: &RunSpec) -> Outcome {
    let mut run = RunState::new(ctx, spec);
    match phases(&mut run) {
        Ok(measured) => judge::outcome(run, measured),
        Err(failure) => run.fail(failure),
    }
}

/// The phases in their order; the first failure ends the run.
fn phases(run: &mut RunState) -> Result<Measured, Failure> {
    let server = start::start(run)?;
    check::check(run)?;
    let mut server = warmup::warmup(run, server)?;
    let load = profiling::around(run, server.as_mut(), measure::measure);
    let latency = latency::latency(run, server.as_mut(), &load);
    let stopped = stop::stop(run, server, &load)?;
    Ok(Measured { load, latency, stopped })
}
