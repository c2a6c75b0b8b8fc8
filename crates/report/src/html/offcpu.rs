//! A run's off-CPU and slow-window profiles in the report (`stampede run
//! --profile`): the link to the off-CPU flame graph (widths are time blocked)
//! beside the on-CPU one with the frames under which the server's threads
//! spent the most time blocked, then the flame graphs of what the server did
//! during the slow requests and the frames over-represented there.

use std::fmt::Write;

use super::escape::esc;
use super::tables::{table, Cell};
use crate::schema::Run;

pub fn section(out: &mut String, run: &Run) {
    off_cpu(out, run);
    slow_window(out, run);
}

fn link(out: &mut String, file: &str, what: &str) {
    if !file.is_empty() {
        let _ = write!(out, r#"<a href="{0}">{1}</a> · "#, esc(file), what);
    }
}

fn slow_window(out: &mut String, run: &Run) {
    let Some(w) = run.cpu_profile.as_ref().and_then(|p| p.slow_window.as_ref()) else {
        return;
    };
    out.push_str("<h3>During the slow requests</h3><p>");
    link(out, &w.flame_svg, "on-CPU flame graph");
    link(out, &w.diff_svg, "differential against the whole run");
    link(out, &w.offcpu_flame_svg, "off-CPU flame graph");
    let _ = write!(
        out,
        "{} slow requests, {:.3} s of windows, {} CPU samples, {:.3} s blocked</p>",
        w.requests,
        w.window_s,
        w.samples,
        w.blocked_us as f64 / 1e6
    );
    if w.over_represented.is_empty() {
        return;
    }
    let rows: Vec<(String, Vec<Cell>)> = w
        .over_represented
        .iter()
        .map(|f| {
            let cells = vec![
                Cell::Num(format!("{:.2}", f.slow_pct)),
                Cell::Num(format!("{:.2}", f.run_pct)),
                Cell::Text(f.kind.clone()),
                Cell::Wrap(f.frame.clone()),
            ];
            (String::new(), cells)
        })
        .collect();
    table(out, "slow-frames", &["% of samples in slow windows", "% over the run", "kind", "function"], &rows);
}

fn off_cpu(out: &mut String, run: &Run) {
    let Some(off) = run.cpu_profile.as_ref().and_then(|p| p.off_cpu.as_ref()) else {
        return;
    };
    out.push_str("<h3>Off-CPU profile</h3><p>");
    if !off.flame_svg.is_empty() {
        let _ = write!(out, r#"<a href="{0}">off-CPU flame graph</a> ({0})"#, esc(&off.flame_svg));
    }
    if !off.folded.is_empty() {
        let _ = write!(out, r#" · <a href="{0}">folded stacks</a>"#, esc(&off.folded));
    }
    let _ = write!(out, " · {:.3} s blocked in {} intervals</p>", off.blocked_us as f64 / 1e6, off.intervals);
    if off.top.is_empty() {
        return;
    }
    let rows: Vec<(String, Vec<Cell>)> = off
        .top
        .iter()
        .map(|row| {
            let cells = vec![
                Cell::Num(format!("{:.2}", row.total_pct)),
                Cell::Num(format!("{:.1}", row.total_samples as f64 / 1000.0)),
                Cell::Text(row.kind.clone()),
                Cell::Wrap(row.frame.clone()),
            ];
            (String::new(), cells)
        })
        .collect();
    table(out, "offcpu-frames", &["blocked %", "blocked ms", "kind", "function"], &rows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ProfileSummary, TopFrame};
    use stampede_schema::profile::{FrameShift, OffCpuSummary, SlowWindowSummary};

    #[test]
    fn the_off_cpu_graph_is_linked_and_its_frames_escaped() {
        let mut run = Run::default();
        let mut out = String::new();
        section(&mut out, &run);
        assert!(out.is_empty());
        let off = OffCpuSummary {
            flame_svg: "offcpu-a.svg".into(),
            blocked_us: 2_500_000,
            intervals: 40,
            top: vec![TopFrame {
                frame: "lock<T>".into(),
                total_samples: 2_000_000,
                total_pct: 80.0,
                ..TopFrame::default()
            }],
            ..OffCpuSummary::default()
        };
        run.cpu_profile = Some(ProfileSummary { off_cpu: Some(off), ..ProfileSummary::default() });
        section(&mut out, &run);
        assert!(out.contains(r#"<a href="offcpu-a.svg">off-CPU flame graph</a>"#), "{out}");
        assert!(out.contains("lock&lt;T&gt;") && out.contains("2000.0") && out.contains("2.500 s"), "{out}");
        let slow = SlowWindowSummary {
            requests: 12,
            diff_svg: "slowdiff-a.svg".into(),
            over_represented: vec![FrameShift {
                frame: "gc<x>".into(),
                slow_pct: 60.0,
                run_pct: 3.0,
                ..FrameShift::default()
            }],
            ..SlowWindowSummary::default()
        };
        run.cpu_profile.as_mut().unwrap().slow_window = Some(slow);
        out.clear();
        section(&mut out, &run);
        assert!(
            out.contains(r#"<a href="slowdiff-a.svg">"#) && out.contains("gc&lt;x&gt;") && out.contains("60.00"),
            "{out}"
        );
    }
}
