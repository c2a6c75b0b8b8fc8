//! Whether a run is valid, decided in one place once its server has stopped:
//! a crash first (what follows from it, connect errors and a skipped latency
//! phase, is its consequence, not another cause), then the measured load's
//! own rules (`LoadResult::invalid_reasons`, defined once in stampede-schema,
//! with the listener's drops, fault.rs), the generator's pinned CPU and
//! preemption (contention.rs), then the latency phase, whose failures spoil
//! only the latency figures (`load_valid`). Each reason that is the server's
//! doing is kept apart, to say whether all are (`invalid_by_server`).

use stampede_schema::LoadResult;

use crate::interrupt;
use crate::phases::contention::{self, GeneratorCpu};
use crate::phases::fault;
use crate::phases::latency;
use crate::phases::loadgen::LoadError;
use crate::phases::state::{Outcome, RunState};
use crate::phases::stop::Stopped;
use crate::record::{rps_per_core, RunRecord};
use crate::scenario::pinning;

/// What the phases measured, to be judged.
pub struct Measured {
    pub load: Result<LoadResult, LoadError>,
    pub latency: Option<latency::Outcome>,
    pub stopped: Stopped,
}

/// The run's outcome: its record judged valid or not, with every reason.
pub fn outcome(mut run: RunState, measured: Measured) -> Outcome {
    let Measured { load, latency, stopped } = measured;
    let interrupted = matches!(load, Err(LoadError::Interrupted))
        || matches!(latency, Some(latency::Outcome::Failed(LoadError::Interrupted)));
    let mut server_reasons = crash(&mut run, &stopped, &load, &latency);
    server_reasons.extend(judge_load(&mut run, load));
    // Whether the measured load stands on its own: what the latency phase
    // finds below spoils only the latency figures (`load_valid`).
    let load_valid = run.record.valid;
    server_reasons.extend(judge_latency(&mut run.record, latency));
    // Measured here with the generator here: other processes are visible.
    let all_here = run.ctx.server_host.is_none() && run.load_hosts().is_none();
    let record = &mut run.record;
    record.load_valid = load_validity(load_valid, record, stopped.crashed.is_some());
    if all_here {
        record.warnings.extend(contention::neighbours(record, stampede_probe::machine_cores()));
    }
    record.invalid_by_server = fault::all_the_servers(record.invalid_reason.as_deref(), &server_reasons);
    Outcome { record: run.record, interrupted, contract: run.verdict, host_lost: None }
}

/// A crash, named first, and its consequences in both phases; the reasons
/// are all the server's doing.
fn crash(
    run: &mut RunState,
    stopped: &Stopped,
    load: &Result<LoadResult, LoadError>,
    latency: &Option<latency::Outcome>,
) -> Vec<String> {
    let Some(status) = &stopped.crashed else {
        return Vec::new();
    };
    let mut crash = format!("{} crashed during load ({status}): {}", run.spec.app.name, stopped.tail);
    if run.died_measuring && run.spec.profile.latency.is_some() {
        crash.push_str(" (the latency phase was not run)");
    }
    run.record.invalidate(crash.clone());
    let mut reasons = vec![crash];
    reasons.extend(load.as_ref().map(fault::crash_consequences).unwrap_or_default());
    if let Some(latency::Outcome::Measured(doc)) = latency {
        reasons.extend(fault::crash_consequences(doc).into_iter().map(|r| format!("latency phase: {r}")));
    }
    reasons
}

/// The measured load's rules; it goes into the record when there is one.
fn judge_load(run: &mut RunState, load: Result<LoadResult, LoadError>) -> Vec<String> {
    let loadgen_cpus = run.loadgen_cpus();
    let record = &mut run.record;
    match load {
        Ok(doc) => {
            record.rps_per_server_core = rps_per_core(doc.rps, record.server.cpu_cores_avg);
            let backlog = fault::Backlog::of_listener(record.listen_drops.measured);
            let cpu = GeneratorCpu::of(&record.loadgen.samples, 0.0, doc.duration_s, doc.duration_s);
            let reasons = judge(record, &doc, backlog, &cpu, loadgen_cpus);
            record.load = Some(doc);
            let results_dir = run.ctx.results_dir;
            record.hdr_log = run.hdr_log.take().filter(|name| results_dir.join(name).exists());
            reasons
        }
        Err(LoadError::Interrupted) => {
            record.invalidate(interrupt::reason());
            Vec::new()
        }
        Err(err) => {
            record.invalidate(format!("load: {err}"));
            Vec::new()
        }
    }
}

/// The latency phase's rules, each reason prefixed `latency phase: `.
fn judge_latency(record: &mut RunRecord, latency: Option<latency::Outcome>) -> Vec<String> {
    let mut server_reasons = Vec::new();
    match latency {
        Some(latency::Outcome::Measured(doc)) => {
            let backlog = fault::Backlog::of_listener(record.listen_drops.after);
            let from_s = record.load.as_ref().map_or(0.0, |l| l.duration_s);
            let cpu = GeneratorCpu::of(&record.loadgen.samples, from_s, f64::INFINITY, doc.duration_s);
            for (reason, server) in contention::preempted(fault::reasons(&doc, backlog), &doc, &cpu) {
                let reason = format!("latency phase: {reason}");
                if server {
                    server_reasons.push(reason.clone());
                }
                record.invalidate(reason);
            }
            record.latency = Some(*doc);
        }
        Some(latency::Outcome::Failed(LoadError::Interrupted)) => record.invalidate(interrupt::reason()),
        Some(latency::Outcome::Failed(err)) => record.invalidate(format!("latency phase: {err}")),
        Some(latency::Outcome::NoRate) => {
            record.invalidate("latency phase: the closed loop sustained under 1 request/s to take a fraction of")
        }
        None => {}
    }
    server_reasons
}

/// A run's `load_valid`: `Some(true)` when the run is invalid but was still
/// valid once its measured load had been judged (only its latency phase
/// failed, and the server did not crash), so its closed-loop figures count;
/// `None` otherwise (it reads as `valid`).
fn load_validity(valid_after_load: bool, record: &RunRecord, crashed: bool) -> Option<bool> {
    (valid_after_load && !record.valid && !crashed).then_some(true)
}

/// The validity rules that need the load's figures: the load's own
/// (`LoadResult::invalid_reasons`, defined once in stampede-schema) and the
/// generator's pinned CPU, which only the orchestrator knows. Returns the
/// reasons that are the server's doing (fault.rs).
fn judge(
    record: &mut RunRecord,
    load: &stampede_schema::LoadResult,
    backlog: Option<fault::Backlog>,
    cpu: &GeneratorCpu,
    loadgen_cpus: Option<&str>,
) -> Vec<String> {
    let mut server = Vec::new();
    for (reason, by_server) in contention::preempted(fault::reasons(load, backlog), load, cpu) {
        if by_server {
            server.push(reason.clone());
        }
        record.invalidate(reason);
    }
    // A closed-loop generator that used all the CPU it was given was the
    // bottleneck: the figures describe it, not the server.
    if let Some(cpus) = loadgen_cpus.and_then(|c| pinning::parse_cpu_list(c).ok()) {
        let cores = cpus.len() as f64;
        let used = record.loadgen.cpu_cores_avg.max(load.loadgen.cpu_cores);
        if used >= 0.97 * cores {
            record.invalidate(format!("load generator saturated: it used {used:.2} of its {cores} pinned core(s)"));
        }
    }
    server
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::fake_load;
    use crate::scenario::Profile;

    #[test]
    fn only_a_latency_phase_failure_leaves_the_closed_loop_valid() {
        let mut r = RunRecord { load: Some(fake_load(1000.0, 0)), ..RunRecord::default() };
        assert_eq!(load_validity(true, &r, false), None, "a valid run needs no flag");
        r.invalidate("latency phase: load generator late");
        assert_eq!(load_validity(true, &r, false), Some(true));
        r.load_valid = Some(true);
        assert!(r.load_is_valid() && !r.is_valid());
        assert_eq!(load_validity(true, &r, true), None, "a crash spoils every figure");
        assert_eq!(load_validity(false, &r, false), None, "the measured load was invalid itself");
    }

    #[test]
    fn socket_errors_and_saturation_invalidate() {
        let profile: Profile = toml::from_str("path = \"/json\"").unwrap();
        let mut r = crate::record::failed("go", &Default::default(), &profile, 1, 0.0, String::new());
        r.valid = true;
        r.invalid_reason = None;
        judge(&mut r, &fake_load(1000.0, 0), None, &GeneratorCpu::default(), None);
        assert!(!r.valid, "3 bad responses in the fake document");
        assert_eq!(r.invalid_reason.as_deref(), Some("3 bad responses (outside 2xx/3xx)"));
        let mut doc = fake_load(1000.0, 4);
        doc.errors.status = 0;
        doc.loadgen.cpu_cores = 0.99;
        let mut r = crate::record::failed("go", &Default::default(), &profile, 1, 0.0, String::new());
        r.valid = true;
        r.invalid_reason = None;
        judge(&mut r, &doc, None, &GeneratorCpu::default(), Some("0"));
        let reason = r.invalid_reason.unwrap();
        assert!(reason.contains("4 socket errors") && reason.contains("saturated"), "{reason}");
    }
}
