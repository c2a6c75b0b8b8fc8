//! The measured phase: the profile's load for its duration while the probe
//! samples the server (its figures are this phase's alone, not the latency
//! phase's nor the profiler's reading), with an interval log beside
//! results.json and the slowest requests kept for `stampede explain`.
//! profiling.rs wraps it when `--profile` asks for perf.

use stampede_schema::LoadResult;

use crate::phases::latency;
use crate::phases::loadgen::{LoadError, LoadPhase};
use crate::phases::state::{load, RunState};
use crate::server::served::Served;

/// Loads the server for the profile's duration; the run goes on whatever
/// the load's result (the judgement reads it).
pub fn measure(run: &mut RunState, server: &mut dyn Served) -> Result<LoadResult, LoadError> {
    (run.ctx.phase)("measuring");
    server.mark_measured_start();
    // One interval log per run beside results.json (the generator cannot
    // write one when it runs on load hosts).
    let hdr_log = run.load_hosts().is_none().then(|| format!("{}.hlog", run.stem));
    // Every measured phase keeps its slowest requests for `stampede explain`
    // (latency::slow_log): here about twice the warmup's rate, since a
    // server still warming up answers slower than a warm one.
    let duration = run.spec.profile.duration();
    let warmup = run.record.warmup.as_ref().filter(|w| w.rps > 0.0);
    let expected = warmup.map(|w| 2.0 * w.rps * duration.as_secs_f64());
    let measured = LoadPhase {
        hdr_log: hdr_log.as_ref().map(|name| run.ctx.results_dir.join(name)),
        slow_log: latency::slow_log(run.spec.profile.spec.slow_log, expected),
        ..run.load_phase(duration)
    };
    let result = load(&measured, server);
    server.mark_measured_end();
    run.hdr_log = hdr_log;
    result
}
