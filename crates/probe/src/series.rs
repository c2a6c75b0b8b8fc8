//! One point of a process tree's time series, as `docs/results.md` defines it:
//! rates since the previous point, gauges at the point.

use std::time::Instant;

use crate::tracked::TreeReading;

/// One sample of a process tree, as results.json stores it (declared once in stampede-schema).
pub use stampede_schema::process::Sample;

/// A sample before it is placed on the measured phase's time axis.
#[derive(Debug, Clone, Copy)]
pub struct RawSample {
    pub at: Instant,
    pub wall_s: f64,
    pub sample: Sample,
}

/// Turns two readings `wall_s` apart into a sample (t_s filled in later).
/// CPU time comes from the scheduler's nanosecond runtime; the split between
/// user and system from the tick counters, which are too coarse on their own
/// at a 10 ms interval.
pub fn sample_between(prev: &TreeReading, now: &TreeReading, wall_s: f64) -> Sample {
    let d = now.totals.since(&prev.totals);
    let cpu_s = d.exec_ns as f64 / 1e9;
    let ticks = d.user_ticks + d.sys_ticks;
    let user_share = if ticks > 0 {
        d.user_ticks as f64 / ticks as f64
    } else {
        let all = now.totals.user_ticks + now.totals.sys_ticks;
        if all > 0 {
            now.totals.user_ticks as f64 / all as f64
        } else {
            1.0
        }
    };
    let cores = if wall_s > 0.0 { cpu_s / wall_s } else { 0.0 };
    Sample {
        t_s: 0.0,
        cpu_cores: cores,
        cpu_user_cores: cores * user_share,
        cpu_sys_cores: cores * (1.0 - user_share),
        rss_mib: now.rss_bytes as f64 / (1024.0 * 1024.0),
        threads: now.threads,
        ctx_voluntary: d.ctx_voluntary,
        ctx_involuntary: d.ctx_involuntary,
        runqueue_wait_ms: d.runqueue_wait_ns as f64 / 1e6,
        ..Sample::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tracked::ThreadReading;

    fn reading(exec_ns: u64, user: u64, sys: u64, wait_ns: u64, vol: u64) -> TreeReading {
        TreeReading {
            totals: ThreadReading {
                user_ticks: user,
                sys_ticks: sys,
                exec_ns,
                runqueue_wait_ns: wait_ns,
                ctx_voluntary: vol,
                ctx_involuntary: 1,
            },
            rss_bytes: 64 * 1024 * 1024,
            threads: 4,
            processes: 1,
        }
    }

    #[test]
    fn half_a_core_split_three_to_one() {
        let a = reading(1_000_000_000, 100, 100, 0, 10);
        let b = reading(1_050_000_000, 103, 101, 2_000_000, 25);
        let s = sample_between(&a, &b, 0.1);
        assert!((s.cpu_cores - 0.5).abs() < 1e-9, "{s:?}");
        assert!((s.cpu_user_cores - 0.375).abs() < 1e-9, "{s:?}");
        assert!((s.cpu_sys_cores - 0.125).abs() < 1e-9, "{s:?}");
        assert_eq!(s.ctx_voluntary, 15);
        assert_eq!(s.ctx_involuntary, 0);
        assert!((s.runqueue_wait_ms - 2.0).abs() < 1e-9);
        assert!((s.rss_mib - 64.0).abs() < 1e-9);
    }

    #[test]
    fn without_new_ticks_the_split_follows_the_totals() {
        let a = reading(0, 30, 10, 0, 0);
        let b = reading(10_000_000, 30, 10, 0, 0);
        let s = sample_between(&a, &b, 0.01);
        assert!((s.cpu_user_cores - 0.75).abs() < 1e-9, "{s:?}");
    }
}
