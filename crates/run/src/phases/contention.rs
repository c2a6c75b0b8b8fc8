//! Other processes competing for the machine's CPUs, as a run sees them.
//! Two verdicts come from it. A generator that fell behind its schedule
//! while its threads were mostly idle, but waited on a run queue for a
//! measurable share of the phase (the probe's `runqueue_wait_ms`, from each
//! thread's `schedstat`), was preempted by other processes, not short of CPU
//! of its own making: the reason says so instead of "saturated". And a run
//! during which processes other than the server, the generator, the probe
//! and the database used a measurable share of the machine gets a
//! noisy-neighbour warning (a warning, not an invalid run: the figures are
//! what the server did on that machine, but they will not compare with a
//! quiet machine's, and a reader must know).

use stampede_schema::load::{GENERATOR_BUSY, PREEMPTED_WAIT_SHARE};
use stampede_schema::process::Sample;
use stampede_schema::run::RunRecord;
use stampede_schema::LoadResult;

/// Other processes used at least this many cores, and at least
/// [`NEIGHBOURS_MIN_SHARE`] of the machine: the machine's busy time (its
/// CPUs less their idle time) and the processes' own CPU (schedstat) are
/// measured differently and differ by up to about 0.1 core under load
/// (interrupt time, kernel threads serving the loopback traffic), so this
/// is well above that noise.
pub const NEIGHBOURS_MIN_CORES: f64 = 0.25;
pub const NEIGHBOURS_MIN_SHARE: f64 = 0.10;

/// The generator's CPU and run-queue wait over one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GeneratorCpu {
    pub wait_ms: f64,
    pub cores: f64,
    pub wall_s: f64,
}

impl GeneratorCpu {
    /// From the generator's samples in `(from_s, to_s]` (seconds from the
    /// measured phase's start), the phase lasting `wall_s`.
    pub fn of(samples: &[Sample], from_s: f64, to_s: f64, wall_s: f64) -> GeneratorCpu {
        let phase: Vec<&Sample> = samples.iter().filter(|s| s.t_s > from_s && s.t_s <= to_s).collect();
        let wait_ms = phase.iter().map(|s| s.runqueue_wait_ms).sum();
        let cores =
            if phase.is_empty() { 0.0 } else { phase.iter().map(|s| s.cpu_cores).sum::<f64>() / phase.len() as f64 };
        GeneratorCpu { wait_ms, cores, wall_s }
    }

    fn preempted(&self) -> bool {
        self.wall_s > 0.0 && self.wait_ms / (self.wall_s * 1000.0) >= PREEMPTED_WAIT_SHARE
    }
}

/// `reasons` (fault.rs's, with whether each is the server's) with the
/// generator's saturation reworded as preemption when it was: behind its
/// schedule, its threads not busy, and a measurable wait for a CPU.
pub fn preempted(reasons: Vec<(String, bool)>, load: &LoadResult, cpu: &GeneratorCpu) -> Vec<(String, bool)> {
    let busy = load.open.as_ref().is_some_and(|o| o.generator_busy > GENERATOR_BUSY);
    if busy || !cpu.preempted() {
        return reasons;
    }
    reasons
        .into_iter()
        .map(|(reason, server)| match reason.strip_prefix("load generator saturated: ") {
            Some(rest) => (
                format!(
                    "load generator preempted: it waited {:.0} ms for a CPU behind other processes while using {:.2} cores; {rest}",
                    cpu.wait_ms, cpu.cores
                ),
                server,
            ),
            None => (reason, server),
        })
        .collect()
}

/// The noisy-neighbour warning of a finished record's measured phase: the
/// machine's busy CPU less the server's, the generator's, the probe's and
/// the database's, when that is at least [`NEIGHBOURS_MIN_CORES`] and
/// [`NEIGHBOURS_MIN_SHARE`] of `cores`.
pub fn neighbours(record: &RunRecord, cores: usize) -> Option<String> {
    let machine = record.machine.summary.cpu_cores_avg;
    let database = record.database.as_ref().and_then(|d| d.cpu_cores_avg).unwrap_or(0.0);
    let ours = record.server.cpu_cores_avg + record.loadgen.cpu_cores_avg + record.machine.probe_cpu_cores + database;
    let others = machine - ours;
    let floor = NEIGHBOURS_MIN_CORES.max(NEIGHBOURS_MIN_SHARE * cores as f64);
    (machine > 0.0 && others >= floor).then(|| {
        format!(
            "noisy neighbour: other processes used {others:.2} of the machine's {cores} cores during the measured phase (machine {machine:.2} less server {:.2}, load generator {:.2}, probe and database {:.2}); figures will not compare with a quiet machine's",
            record.server.cpu_cores_avg,
            record.loadgen.cpu_cores_avg,
            record.machine.probe_cpu_cores + database
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_load(generator_busy: f64) -> LoadResult {
        crate::phases::fault::tests::load(0, true, generator_busy)
    }

    fn samples(wait_ms_each: f64, cores: f64) -> Vec<Sample> {
        (1..=10)
            .map(|i| Sample {
                t_s: i as f64 * 0.5,
                runqueue_wait_ms: wait_ms_each,
                cpu_cores: cores,
                ..Sample::default()
            })
            .collect()
    }

    fn saturated() -> Vec<(String, bool)> {
        vec![("load generator saturated: it could not keep to the requested rate".into(), false)]
    }

    /// Issue 42: a generator that used 0.21 cores and waited 833 ms for its
    /// CPU was called "saturated … short of CPU".
    #[test]
    fn a_generator_that_waited_for_its_cpu_is_preempted_a_busy_one_saturated() {
        let cpu = GeneratorCpu::of(&samples(83.3, 0.21), 0.0, 5.0, 5.0);
        assert!((cpu.wait_ms - 833.0).abs() < 1e-6 && (cpu.cores - 0.21).abs() < 1e-9, "{cpu:?}");
        let found = preempted(saturated(), &open_load(0.3), &cpu);
        assert!(found[0].0.starts_with("load generator preempted: it waited 833 ms"), "{found:?}");
        assert!(!found[0].1, "preemption is not the server's doing");
        // Busy threads: it lacked CPU itself, whoever else ran.
        assert_eq!(preempted(saturated(), &open_load(0.95), &cpu), saturated());
        // No measurable wait: saturated it stays.
        let quiet = GeneratorCpu::of(&samples(1.0, 0.21), 0.0, 5.0, 5.0);
        assert_eq!(preempted(saturated(), &open_load(0.3), &quiet), saturated());
        // The latency phase's samples are not the measured phase's.
        assert_eq!(GeneratorCpu::of(&samples(83.3, 0.21), 5.0, f64::INFINITY, 1.0).wait_ms, 0.0);
    }

    fn record(machine: f64, server: f64, loadgen: f64) -> RunRecord {
        let mut r = RunRecord::default();
        r.machine.summary.cpu_cores_avg = machine;
        r.machine.probe_cpu_cores = 0.02;
        r.server.cpu_cores_avg = server;
        r.loadgen.cpu_cores_avg = loadgen;
        r
    }

    #[test]
    fn noisy_neighbours_are_warned_only_when_there_are_some() {
        let warning = neighbours(&record(1.9, 0.8, 0.3), 2).expect("0.78 cores used by others");
        assert!(
            warning.starts_with("noisy neighbour: other processes used 0.78 of the machine's 2 cores"),
            "{warning}"
        );
        assert_eq!(neighbours(&record(1.2, 0.8, 0.3), 2), None, "0.08 cores: measurement noise");
        assert_eq!(neighbours(&record(0.0, 0.8, 0.3), 2), None, "no machine reading");
        // On 16 cores 0.78 is under a tenth of the machine.
        assert_eq!(neighbours(&record(1.9, 0.8, 0.3), 16), None);
    }
}
