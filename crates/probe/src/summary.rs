//! Folds a time series into the figures a results table shows: averages and
//! maxima over the measured phase only (warmup samples are kept in the series,
//! with negative `t_s`, but never mixed into the figures), and the per-thread
//! breakdown (`prstat -mLc` style) over the same phase.

use std::time::Instant;

use crate::machine::MachineSample;
use crate::series::RawSample;
use crate::tracked::TrackedTree;

/// The figures this module folds a series into, as results.json stores them
/// (declared once in stampede-schema).
pub use stampede_schema::process::{MachineSummary, ThreadRow, TreeSummary};

/// Seconds from `t0` to `at`, negative before it.
pub fn seconds_since(t0: Instant, at: Instant) -> f64 {
    if at >= t0 {
        (at - t0).as_secs_f64()
    } else {
        -((t0 - at).as_secs_f64())
    }
}

/// The measured phase on the probe's clock: samples taken after `from` (all
/// of them when no measured phase was marked) and up to `until` (to the end
/// when its end was not marked: `stampede run` marks it before a latency
/// phase, whose samples stay in the series but not in the figures).
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    pub from: Option<Instant>,
    pub until: Option<Instant>,
}

impl Window {
    /// Whether a sample taken at `at` belongs to the measured phase.
    pub fn contains(&self, at: Instant) -> bool {
        self.from.is_none_or(|from| at > from) && self.until.is_none_or(|until| at <= until)
    }
}

/// Summarises `raw` over the samples in `window`; the series keeps every
/// sample, placed from the window's start.
pub fn summarize(raw: &[RawSample], window: Window, cores: usize) -> TreeSummary {
    let origin = window.from.or_else(|| raw.first().map(|r| r.at));
    let mut summary = TreeSummary::default();
    let mut cpu_s = 0.0;
    let mut wall_s = 0.0;
    for r in raw {
        let mut sample = r.sample;
        if let Some(origin) = origin {
            sample.t_s = seconds_since(origin, r.at);
        }
        summary.samples.push(sample);
        if !window.contains(r.at) {
            continue;
        }
        cpu_s += sample.cpu_cores * r.wall_s;
        wall_s += r.wall_s;
        summary.cpu_pct_max = summary.cpu_pct_max.max(sample.cpu_cores / cores.max(1) as f64 * 100.0);
        summary.rss_max_mib = summary.rss_max_mib.max(sample.rss_mib);
        summary.threads_max = summary.threads_max.max(sample.threads);
        summary.ctx_voluntary += sample.ctx_voluntary;
        summary.ctx_involuntary += sample.ctx_involuntary;
        summary.runqueue_wait_ms += sample.runqueue_wait_ms;
    }
    summary.cpu_cores_avg = if wall_s > 0.0 { cpu_s / wall_s } else { 0.0 };
    summary
}

/// One row per thread seen in the measured phase, busiest first.
pub fn threads_table(tree: &TrackedTree, ticks_per_s: f64) -> Vec<ThreadRow> {
    let mut rows: Vec<ThreadRow> = tree
        .threads()
        .map(|thread| {
            let d = match &thread.baseline {
                Some(base) => thread.last.since(base),
                None => thread.last,
            };
            ThreadRow {
                tid: thread.tid,
                name: thread.name.clone(),
                user_s: d.user_ticks as f64 / ticks_per_s,
                sys_s: d.sys_ticks as f64 / ticks_per_s,
                runqueue_wait_ms: d.runqueue_wait_ns as f64 / 1e6,
                ctx_voluntary: d.ctx_voluntary,
                ctx_involuntary: d.ctx_involuntary,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (b.user_s + b.sys_s)
            .total_cmp(&(a.user_s + a.sys_s))
            .then(b.ctx_voluntary.cmp(&a.ctx_voluntary))
            .then(a.tid.cmp(&b.tid))
    });
    rows
}

/// Summarises the machine's series the same way.
pub fn summarize_machine(raw: &[(Instant, f64, MachineSample)], window: Window) -> MachineSummary {
    let origin = window.from.or_else(|| raw.first().map(|r| r.0));
    let mut summary = MachineSummary::default();
    let (mut cpu_s, mut wall_s) = (0.0, 0.0);
    for (at, wall, sample) in raw {
        let mut sample = *sample;
        if let Some(origin) = origin {
            sample.t_s = seconds_since(origin, *at);
        }
        summary.samples.push(sample);
        if window.contains(*at) {
            cpu_s += sample.cpu_cores * wall;
            wall_s += wall;
        }
    }
    summary.cpu_cores_avg = if wall_s > 0.0 { cpu_s / wall_s } else { 0.0 };
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Sample;
    use std::time::Duration;

    fn raw(at: Instant, wall_s: f64, cores: f64, rss: f64, vol: u64) -> RawSample {
        RawSample {
            at,
            wall_s,
            sample: Sample {
                t_s: 0.0,
                cpu_cores: cores,
                cpu_user_cores: cores,
                cpu_sys_cores: 0.0,
                rss_mib: rss,
                threads: 3,
                ctx_voluntary: vol,
                ctx_involuntary: 0,
                runqueue_wait_ms: 1.0,
                ..Sample::default()
            },
        }
    }

    #[test]
    fn warmup_samples_are_kept_but_not_counted() {
        let start = Instant::now();
        let t0 = start + Duration::from_millis(200);
        let series = vec![
            raw(start + Duration::from_millis(100), 0.1, 2.0, 500.0, 1000),
            raw(t0, 0.1, 2.0, 500.0, 1000),
            raw(t0 + Duration::from_millis(100), 0.1, 1.0, 10.0, 5),
            raw(t0 + Duration::from_millis(300), 0.2, 0.5, 12.0, 7),
        ];
        let s = summarize(&series, Window { from: Some(t0), until: None }, 2);
        assert_eq!(s.samples.len(), 4);
        assert!(s.samples[0].t_s < 0.0);
        assert!((s.samples[3].t_s - 0.3).abs() < 1e-9);
        assert!((s.cpu_cores_avg - (0.1 + 0.1) / 0.3).abs() < 1e-9, "{}", s.cpu_cores_avg);
        assert!((s.cpu_pct_max - 50.0).abs() < 1e-9);
        assert!((s.rss_max_mib - 12.0).abs() < 1e-9);
        assert_eq!(s.ctx_voluntary, 12);
        assert!((s.runqueue_wait_ms - 2.0).abs() < 1e-9);
    }

    #[test]
    fn samples_after_the_marked_end_are_kept_but_not_counted() {
        let t0 = Instant::now();
        let end = t0 + Duration::from_millis(200);
        let series = vec![
            raw(t0 + Duration::from_millis(100), 0.1, 1.0, 10.0, 5),
            raw(end, 0.1, 1.0, 10.0, 5),
            raw(end + Duration::from_millis(100), 0.1, 0.2, 90.0, 7),
        ];
        let s = summarize(&series, Window { from: Some(t0), until: Some(end) }, 2);
        assert_eq!(s.samples.len(), 3, "the latency phase's samples stay in the series");
        assert!((s.cpu_cores_avg - 1.0).abs() < 1e-9, "{}", s.cpu_cores_avg);
        assert!((s.rss_max_mib - 10.0).abs() < 1e-9);
        assert_eq!(s.ctx_voluntary, 10);
    }
}
