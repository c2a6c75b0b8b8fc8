//! A run's off-CPU profile in the report (`stampede run --profile`): the link
//! to its flame graph (widths are time blocked) beside the on-CPU one, and the
//! frames under which the server's threads spent the most time blocked.

use std::fmt::Write;

use super::escape::esc;
use super::tables::{table, Cell};
use crate::schema::Run;

pub fn section(out: &mut String, run: &Run) {
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
    use stampede_schema::profile::OffCpuSummary;

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
    }
}
