//! The warmup phase: the profile's `warmup` of load before the measured
//! phase, recorded apart (`warmup` in the run record) and never judged; the
//! server's runtime events are kept from its start. A warmup that fails ends
//! the run, naming a crash when the server exited.

use crate::interrupt::interrupted;
use crate::phases::loadgen::LoadError;
use crate::phases::state::{load, RunState};
use crate::server::served::{Failure, Served};

/// Warms the server up; hands it back when the run goes on.
pub fn warmup<'a>(run: &mut RunState, mut server: Box<dyn Served + 'a>) -> Result<Box<dyn Served + 'a>, Failure> {
    server.mark_warmup();
    let duration = run.spec.profile.spec.warmup;
    if duration.is_zero() {
        return Ok(server);
    }
    (run.ctx.phase)("warming up");
    match load(&run.load_phase(duration), &*server) {
        Ok(doc) => {
            run.record.warmup = Some(doc);
            Ok(server)
        }
        // Stopped because the server's host was lost: finish says how.
        Err(LoadError::Interrupted) if !interrupted() => Err(server.finish().err().unwrap_or(Failure::Interrupted)),
        Err(LoadError::Interrupted) => Err(Failure::Interrupted),
        Err(err) => Err(Failure::Run(match server.crashed() {
            Some(status) => format!("{} crashed during warmup ({status}): {}", run.spec.app.name, server.output_tail()),
            None => format!("warmup: {err}"),
        })),
    }
}
