//! The slow-window profile, after the PerfView practice of restricting the
//! CPU samples to the time of the slow requests: a whole-run profile can show
//! nothing unusual while the few milliseconds around each slow request are
//! spent in one place (a collection, a lock holder, a compaction). The slow
//! requests' windows run from their intended send to their response on
//! CLOCK_MONOTONIC, the clock perf records with (`-k CLOCK_MONOTONIC`); the
//! on-CPU samples inside them and the parts of off-CPU intervals inside them
//! are folded separately and compared with the whole phase: a frame whose
//! share of samples is larger inside the windows than over the phase is
//! over-represented during the slow requests.

use std::collections::HashMap;
use std::path::Path;

use stampede_schema::load::SlowRequest;
use stampede_schema::profile::{FrameShift, SlowWindowSummary};

use crate::error::ProfileError;
use crate::fold::Folded;
use crate::offcpu::{self, header_parts, OffCpu};
use crate::{flame, top};

/// Rows of the over-represented table.
pub const OVER_REPRESENTED: usize = 10;
/// The most over-represented frames whose bursts are kept for explain.
pub const WITH_BURSTS: usize = 3;

/// Sorted, disjoint `[start, end)` windows on CLOCK_MONOTONIC.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Windows(Vec<(u64, u64)>);

impl Windows {
    /// The union of the requests' windows, intended send to response.
    pub fn of(requests: &[SlowRequest]) -> Windows {
        let mut spans: Vec<(u64, u64)> = requests
            .iter()
            .map(|r| (r.intended_mono_ns.min(r.start_mono_ns), r.end_mono_ns))
            .filter(|(a, b)| b > a && *a > 0)
            .collect();
        spans.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
        for (a, b) in spans {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Windows(merged)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn total_ns(&self) -> u64 {
        self.0.iter().map(|(a, b)| b - a).sum()
    }

    pub fn contains(&self, t: u64) -> bool {
        let i = self.0.partition_point(|&(a, _)| a <= t);
        i > 0 && t < self.0[i - 1].1
    }

    /// Nanoseconds of `[from, to)` inside the windows.
    pub fn overlap(&self, from: u64, to: u64) -> u64 {
        let first = self.0.partition_point(|&(_, b)| b <= from);
        self.0[first..].iter().take_while(|&&(a, _)| a < to).map(|&(a, b)| to.min(b).saturating_sub(from.max(a))).sum()
    }
}

/// The samples of a `perf script` text (on-CPU, `--ns`) whose time is inside `windows`.
pub fn samples_inside(script: &str, windows: &Windows) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in script.lines() {
        if !line.is_empty() && !line.starts_with(char::is_whitespace) {
            keep = header_parts(line).is_some_and(|(_, t, _)| windows.contains(t));
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Frames whose share of samples (anywhere on the stack) is larger in `slow`
/// than in `whole`, by how many percentage points, most first.
pub fn over_represented(whole: &Folded, slow: &Folded, limit: usize) -> Vec<FrameShift> {
    let run: HashMap<String, f64> =
        top::top_frames(whole, usize::MAX).into_iter().map(|r| (r.frame, r.total_pct)).collect();
    let mut rows: Vec<FrameShift> = top::top_frames(slow, usize::MAX)
        .into_iter()
        .map(|r| FrameShift {
            run_pct: run.get(&r.frame).copied().unwrap_or(0.0),
            slow_pct: r.total_pct,
            frame: r.frame,
            kind: r.kind,
            ..FrameShift::default()
        })
        .filter(|r| r.slow_pct > r.run_pct)
        .collect();
    rows.sort_by(|a, b| (b.slow_pct - b.run_pct).total_cmp(&(a.slow_pct - a.run_pct)).then(a.frame.cmp(&b.frame)));
    rows.truncate(limit);
    rows
}

/// What the slow-window files are made from.
pub struct SlowWindow<'a> {
    pub requests: usize,
    pub windows: Windows,
    /// The whole phase's on-CPU stacks and its `perf script` text.
    pub whole: &'a Folded,
    pub script: &'a str,
    pub names: &'a HashMap<u32, String>,
    /// The phase's off-CPU profile, when recorded.
    pub off_cpu: Option<&'a OffCpu>,
}

impl SlowWindow<'_> {
    /// Writes `slow-<stem>.svg`, `slow-<stem>.folded`, `slowdiff-<stem>.svg`
    /// and, with off-CPU intervals, `slowoff-<stem>.svg` into `dir`.
    pub fn write(&self, dir: &Path, stem: &str, title: &str) -> Result<SlowWindowSummary, ProfileError> {
        let slow = Folded::from_perf_script(&samples_inside(self.script, &self.windows), self.names)?;
        let mut summary = SlowWindowSummary {
            requests: self.requests as u64,
            window_s: self.windows.total_ns() as f64 / 1e9,
            samples: slow.samples(),
            over_represented: over_represented(self.whole, &slow, OVER_REPRESENTED),
            ..SlowWindowSummary::default()
        };
        for f in summary.over_represented.iter_mut().take(WITH_BURSTS) {
            f.bursts = crate::bursts::of(self.script, &f.frame);
        }
        if slow.samples() > 0 {
            summary.flame_svg = format!("slow-{stem}.svg");
            summary.folded = format!("slow-{stem}.folded");
            summary.diff_svg = format!("slowdiff-{stem}.svg");
            let subtitle =
                format!("on-CPU samples inside {} slow requests' windows ({:.3} s)", self.requests, summary.window_s);
            let svg = flame::render(&slow, &format!("{title}: during slow requests"), Some(subtitle))?;
            crate::write_file(&dir.join(&summary.flame_svg), &svg)?;
            crate::write_file(&dir.join(&summary.folded), slow.to_text().as_bytes())?;
            let diff = flame::render_differential(self.whole, &slow, &format!("{title}: slow requests vs whole run"))?;
            crate::write_file(&dir.join(&summary.diff_svg), &diff)?;
        }
        if let Some(whole) = self.off_cpu {
            let off = offcpu::fold(&whole.intervals, self.names, |i| self.windows.overlap(i.start_ns, i.end_ns))?;
            summary.blocked_us = off.samples();
            summary.blocked_over_represented =
                crate::waiters::over_represented_waiters(&whole.folded, &off, &whole.intervals, OVER_REPRESENTED);
            if off.samples() > 0 {
                summary.offcpu_flame_svg = format!("slowoff-{stem}.svg");
                let subtitle = "time blocked inside the slow requests' windows".to_string();
                let svg = flame::render_counted(
                    &off,
                    &format!("{title}: blocked during slow requests"),
                    Some(subtitle),
                    "µs",
                )?;
                crate::write_file(&dir.join(&summary.offcpu_flame_svg), &svg)?;
            }
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(from_ms: u64, to_ms: u64) -> SlowRequest {
        SlowRequest {
            intended_mono_ns: from_ms * 1_000_000,
            start_mono_ns: from_ms * 1_000_000,
            end_mono_ns: to_ms * 1_000_000,
            ..SlowRequest::default()
        }
    }

    #[test]
    fn windows_merge_and_measure_overlap() {
        let w = Windows::of(&[request(10, 20), request(15, 30), request(50, 60)]);
        assert_eq!(w, Windows(vec![(10_000_000, 30_000_000), (50_000_000, 60_000_000)]));
        assert!(w.contains(10_000_000) && w.contains(55_000_000));
        assert!(!w.contains(30_000_000) && !w.contains(5_000_000) && !w.contains(70_000_000));
        assert_eq!(w.overlap(25_000_000, 55_000_000), 10_000_000);
        assert_eq!(w.total_ns(), 30_000_000);
    }

    #[test]
    fn only_samples_inside_are_kept_and_the_distinctive_frame_tops_the_shift() {
        let script = "\
srv 1/1 0.005000000: cpu-clock:
\t  10 handler (/srv)

srv 1/1 0.012000000: cpu-clock:
\t  20 compact (/srv)
\t  10 handler (/srv)

srv 1/1 0.040000000: cpu-clock:
\t  10 handler (/srv)
";
        let w = Windows::of(&[request(10, 20)]);
        let inside = samples_inside(script, &w);
        assert!(inside.contains("compact") && !inside.contains("0.040000000"), "{inside}");
        let whole = Folded::from_perf_script(script, &HashMap::new()).unwrap();
        let slow = Folded::from_perf_script(&inside, &HashMap::new()).unwrap();
        let shift = over_represented(&whole, &slow, 5);
        assert_eq!(shift[0].frame, "compact");
        assert_eq!((shift[0].slow_pct, shift[0].run_pct), (100.0, 33.33));
    }
}
