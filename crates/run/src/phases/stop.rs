//! The stop phase: stop the server and its process tree (the probe takes
//! its last sample first), and copy what the probe measured into the run
//! record: the server's and the generator's CPU and memory, the machine's,
//! the listener's drops, the runtime events, and with a database its usage.
//! Processes the server left outside its tree are stopped too and named.

use stampede_schema::database::DatabaseUsage;
use stampede_schema::LoadResult;

use crate::phases::loadgen::LoadError;
use crate::phases::state::RunState;
use crate::record::MachineRecord;
use crate::server::served::{Failure, Served};

/// What the judgement needs of a stopped server beyond the run record.
pub struct Stopped {
    /// The exit status if the server had exited before it was stopped.
    pub crashed: Option<String>,
    /// The last lines of its output.
    pub tail: String,
}

/// Stops the server after a measured load `load`.
pub fn stop(
    run: &mut RunState,
    server: Box<dyn Served + '_>,
    load: &Result<LoadResult, LoadError>,
) -> Result<Stopped, Failure> {
    let (ctx, name) = (run.ctx, &run.spec.app.name);
    (ctx.phase)("stopping");
    let finished = server.finish()?;
    if let Some(profile) = &run.record.cpu_profile {
        crate::phases::profiling::remove_perf_maps(profile);
    }
    if !finished.strays.is_empty() {
        (ctx.note)(&format!(
            "stampede: {name}: stopped {} process(es) it had left outside its process tree (daemonized): {}",
            finished.strays.len(),
            finished.strays.join("; ")
        ));
    }
    let record = &mut run.record;
    record.events = finished.events;
    if let Some(e) = finished.events_error {
        (ctx.note)(&format!("{name}: runtime events not read: {e}"));
    }
    record.clock.measured_start_mono_ns = finished.measured_start_mono_ns;
    let report = finished.report;
    record.server = report.server;
    record.listen_drops = finished.listen_drops;
    record.loadgen = report.loadgen;
    record.machine = MachineRecord { summary: report.machine, probe_cpu_cores: report.probe_cpu_cores };
    if let Some(db) = ctx.database {
        let tree = report.database.as_ref();
        let rps = load.as_ref().map_or(0.0, |doc| doc.rps);
        let cores = tree.map(|t| t.cpu_cores_avg);
        record.database = Some(DatabaseUsage {
            database: db.describe(),
            cpu_cores_avg: cores,
            cpu_pct_max: tree.map(|t| t.cpu_pct_max),
            rss_max_mib: tree.map(|t| t.rss_max_mib),
            rps_per_core: DatabaseUsage::rps_per_core(rps, record.server.cpu_cores_avg, cores),
        });
    }
    Ok(Stopped { crashed: finished.crashed, tail: finished.tail })
}
