//! What raises latency for every request, not only the slow ones. The
//! slow-request attribution compares the slowest requests with the same
//! requests moved to other times, so a cause present all the time (a lock
//! the workers always queue on, a CPU always at its limit) gets a share no
//! higher than its chance level and looks like noise, while it is why the
//! median request is slow. This module reads the levels the probe measured
//! over the measured phase instead:
//!
//! - `lock`: the working threads' share of their serving time blocked on
//!   futexes (microstates' LCK of the threads that used a CPU within the last
//!   second, over their time on a CPU, waiting for one or on a futex: time
//!   waiting in read/write calls or sleeping is idleness, left out);
//! - `runqueue`: their share of that time runnable but not running (LAT);
//! - `cpu_saturation`: the server's mean CPU against the cores it may use;
//! - `gc`: the share of the phase's wall time the runtime was stopped.
//!
//! A level at or above its threshold is dominant. Each comes with the
//! second-by-second correlation between the level and that second's p99, a
//! check that latency moves with it (for contention that never lets go
//! neither moves much, and the level alone tells). Blocked I/O is left out:
//! a thread-per-connection server's workers wait in `read` for the next
//! request, which is idleness, not a cause.

use std::collections::BTreeMap;

use stampede_schema::explain::{Cause, Dominant};
use stampede_schema::load::SecondStats;
use stampede_schema::microstates::{StateSample, StateSeconds};
use stampede_schema::process::Sample;

use crate::event::Event;

/// The working threads' futex share from which a lock is dominant.
const LOCK: f64 = 0.30;
/// Their runnable-but-waiting share from which the run queue is dominant.
const RUNQUEUE: f64 = 0.30;
/// The share of the allowed cores, on average, from which the CPU is dominant.
const CPU: f64 = 0.90;
/// The share of wall time stopped by the runtime from which GC is dominant.
const GC: f64 = 0.05;

/// What the dominant levels are read from: the measured phase only.
pub struct Levels<'a> {
    /// Microstate samples (`server.microstates.samples`).
    pub states: &'a [StateSample],
    /// Probe samples (`server.samples`).
    pub samples: &'a [Sample],
    /// The cores the server may use.
    pub cores: Option<f64>,
    /// Runtime events on CLOCK_MONOTONIC, and the phase's start there.
    pub events: &'a [Event],
    pub t0_mono_ns: u64,
    /// The phase's length, seconds.
    pub duration_s: f64,
    /// The load's seconds, for the correlation with latency.
    pub timeline: &'a [SecondStats],
    /// The working threads' futex waits lack the marks of requests queued
    /// on a lock (crate::parking): a lock is then never dominant, whatever
    /// its level (idle threads park more in a slow second too).
    pub no_lock: bool,
}

/// One state's seconds in a sample's working threads.
type Part = fn(&StateSeconds) -> f64;

/// The time a thread was serving: on a CPU, waiting for one, or blocked on
/// a futex; not waiting in read/write calls or sleeping (a
/// thread-per-connection server's worker waits in `read` for its next
/// request: idleness, which would dilute the level).
fn busy(s: &StateSeconds) -> f64 {
    s.usr_s + s.sys_s + s.lat_s + s.lck_s
}

/// The dominant causes, highest level (as a fraction of its threshold) first.
pub fn dominant(l: &Levels<'_>) -> Vec<Dominant> {
    let inside = |t_s: f64| t_s > 0.0 && t_s <= l.duration_s + 1e-9;
    let states: Vec<&StateSample> = l.states.iter().filter(|s| inside(s.t_s) && s.working.total_s() > 0.0).collect();
    let mut found: Vec<(f64, Dominant)> = Vec::new();
    let share_of = |part: Part| {
        let (p, t) = states.iter().fold((0.0, 0.0), |(p, t), s| (p + part(&s.working), t + busy(&s.working)));
        (t > 0.0).then(|| p / t)
    };
    let per_second_states = |part: Part| {
        let mut by: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        for s in &states {
            let e = by.entry((s.t_s - s.wall_s / 2.0).max(0.0) as u64).or_default();
            e.0 += part(&s.working);
            e.1 += busy(&s.working);
        }
        by.into_iter().filter(|(_, (_, t))| *t > 0.0).map(|(k, (p, t))| (k, p / t)).collect::<BTreeMap<_, _>>()
    };
    let threads: [(Cause, Part, f64); 2] = [(Cause::Lock, |s| s.lck_s, LOCK), (Cause::Runqueue, |s| s.lat_s, RUNQUEUE)];
    for (cause, part, threshold) in threads {
        if let Some(level) = share_of(part).filter(|&x| x >= threshold) {
            let correlation = correlation(&per_second_states(part), l.timeline);
            if cause == Cause::Lock && l.no_lock {
                continue;
            }
            found.push((
                level / threshold,
                Dominant { cause, level_pct: level * 100.0, latency_correlation: correlation },
            ));
        }
    }
    let samples: Vec<&Sample> = l.samples.iter().filter(|s| inside(s.t_s)).collect();
    if let (Some(cores), false) = (l.cores.filter(|&c| c > 0.0), samples.is_empty()) {
        let level = samples.iter().map(|s| s.cpu_cores).sum::<f64>() / samples.len() as f64 / cores;
        if level >= CPU {
            let mut by: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
            for s in &samples {
                let e = by.entry(s.t_s as u64).or_default();
                e.0 += s.cpu_cores / cores;
                e.1 += 1.0;
            }
            let series = by.into_iter().map(|(k, (sum, n))| (k, sum / n)).collect();
            found.push((
                level / CPU,
                Dominant {
                    cause: Cause::CpuSaturation,
                    level_pct: level * 100.0,
                    latency_correlation: correlation(&series, l.timeline),
                },
            ));
        }
    }
    if l.duration_s > 0.0 {
        let end = l.t0_mono_ns + (l.duration_s * 1e9) as u64;
        let stopped: Vec<(u64, u64)> = l
            .events
            .iter()
            .filter(|e| e.stopped && e.kind.cause() == Cause::Gc)
            .map(|e| (e.start_mono_ns.max(l.t0_mono_ns), e.end_mono_ns.min(end)))
            .filter(|(a, b)| b > a)
            .collect();
        let level = stopped.iter().map(|(a, b)| (b - a) as f64).sum::<f64>() / (l.duration_s * 1e9);
        if level >= GC {
            let mut by: BTreeMap<u64, f64> = (0..l.duration_s.ceil() as u64).map(|k| (k, 0.0)).collect();
            for (a, b) in &stopped {
                *by.entry((a - l.t0_mono_ns) / 1_000_000_000).or_default() += (b - a) as f64 / 1e9;
            }
            found.push((
                level / GC,
                Dominant {
                    cause: Cause::Gc,
                    level_pct: level * 100.0,
                    latency_correlation: correlation(&by, l.timeline),
                },
            ));
        }
    }
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    found.into_iter().map(|(_, d)| d).collect()
}

/// Pearson correlation between a per-second level and the load's per-second
/// p99, over the seconds both have; `None` with fewer than three or when
/// either does not vary.
fn correlation(level: &BTreeMap<u64, f64>, timeline: &[SecondStats]) -> Option<f64> {
    let pairs: Vec<(f64, f64)> =
        timeline.iter().filter(|s| s.requests > 0).filter_map(|s| level.get(&s.t_s).map(|&x| (x, s.p99_us))).collect();
    if pairs.len() < 3 {
        return None;
    }
    let n = pairs.len() as f64;
    let (mx, my) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 1e-12 && syy > 1e-12).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Kind;

    fn state(t_s: f64, lck_s: f64, lat_s: f64) -> StateSample {
        StateSample {
            t_s,
            wall_s: 0.1,
            working_threads: 4,
            working: StateSeconds { usr_s: 0.4 - lck_s - lat_s, lck_s, lat_s, ..StateSeconds::default() },
            ..StateSample::default()
        }
    }

    fn levels<'a>(
        states: &'a [StateSample],
        samples: &'a [Sample],
        events: &'a [Event],
        timeline: &'a [SecondStats],
    ) -> Levels<'a> {
        Levels { states, samples, cores: Some(1.0), events, t0_mono_ns: 0, duration_s: 4.0, timeline, no_lock: false }
    }

    #[test]
    fn a_lock_every_worker_waits_on_is_dominant_and_its_seconds_follow_latency() {
        // Workers blocked on futexes half their time, more in the slower seconds.
        let states: Vec<StateSample> =
            (1..=40).map(|i| state(i as f64 * 0.1, if i <= 20 { 0.16 } else { 0.24 }, 0.0)).collect();
        let timeline: Vec<SecondStats> = (0..4)
            .map(|t| SecondStats {
                t_s: t,
                requests: 100,
                p99_us: if t < 2 { 40_000.0 } else { 60_000.0 },
                ..SecondStats::default()
            })
            .collect();
        let found = dominant(&levels(&states, &[], &[], &timeline));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].cause, Cause::Lock);
        assert!((found[0].level_pct - 50.0).abs() < 1e-6, "{found:?}");
        assert!(found[0].latency_correlation.unwrap() > 0.9, "{found:?}");
        // Without the marks of requests queued on it (crate::parking), a
        // futex level is no lock even where it follows latency: idle threads
        // park more in a slow second too.
        let parked = Levels { no_lock: true, ..levels(&states, &[], &[], &timeline) };
        assert!(dominant(&parked).is_empty(), "{:?}", dominant(&parked));
    }

    #[test]
    fn idle_threads_parked_on_futexes_are_no_dominant_lock() {
        // Working threads on futexes 90% of their time, steady, latency flat.
        let states: Vec<StateSample> = (1..=40).map(|i| state(i as f64 * 0.1, 0.36, 0.0)).collect();
        let timeline: Vec<SecondStats> =
            (0..4).map(|t| SecondStats { t_s: t, requests: 200, p99_us: 900.0, ..SecondStats::default() }).collect();
        assert_eq!(dominant(&levels(&states, &[], &[], &timeline))[0].cause, Cause::Lock, "counted without the check");
        assert!(dominant(&Levels { no_lock: true, ..levels(&states, &[], &[], &timeline) }).is_empty());
    }

    #[test]
    fn a_calm_server_has_nothing_dominant_and_warmup_is_left_out() {
        let mut states: Vec<StateSample> = (1..=40).map(|i| state(i as f64 * 0.1, 0.02, 0.01)).collect();
        states.push(state(-0.1, 0.4, 0.0)); // warmup: not the measured phase
        let samples: Vec<Sample> =
            (1..=40).map(|i| Sample { t_s: i as f64 * 0.1, cpu_cores: 0.3, ..Sample::default() }).collect();
        assert!(dominant(&levels(&states, &samples, &[], &[])).is_empty());
    }

    #[test]
    fn saturated_cpu_waiting_threads_and_long_pauses_are_each_dominant() {
        let states: Vec<StateSample> = (1..=40).map(|i| state(i as f64 * 0.1, 0.0, 0.2)).collect();
        let samples: Vec<Sample> =
            (1..=40).map(|i| Sample { t_s: i as f64 * 0.1, cpu_cores: 0.97, ..Sample::default() }).collect();
        let gc: Vec<Event> = (0..4)
            .map(|k| Event {
                start_mono_ns: k * 1_000_000_000,
                end_mono_ns: k * 1_000_000_000 + 100_000_000,
                kind: Kind::Gc,
                label: "gc".into(),
                stopped: true,
                error_ns: 0,
                owner: None,
            })
            .collect();
        let causes: Vec<Cause> = dominant(&levels(&states, &samples, &gc, &[])).iter().map(|d| d.cause).collect();
        assert_eq!(causes, [Cause::Gc, Cause::Runqueue, Cause::CpuSaturation]);
    }
}
