//! A run's thread microstates in the report (`prstat -mLc` for Linux): one
//! stacked bar per thread group of the server (`netty-worker-*`), splitting
//! its thread-seconds into user CPU, system CPU, run-queue wait, futex
//! (lock) wait, blocked I/O and other sleep. Drawn as inline SVG so it reads
//! without scripts; each segment's tooltip gives its share.

use std::fmt::Write;

use stampede_schema::microstates::{Microstates, StateShares};

use super::escape::esc;
use crate::schema::Run;

/// The states in drawing order, with their label and colour.
const STATES: [(&str, &str); 6] = [
    ("USR", "#4e79a7"),
    ("SYS", "#f28e2b"),
    ("LAT", "#e15759"),
    ("LCK", "#b07aa1"),
    ("IO", "#76b7b2"),
    ("SLP", "#d3d6db"),
];

/// Groups drawn; the rest are in results.json.
const MAX_GROUPS: usize = 24;

fn values(s: &StateShares) -> [f64; 6] {
    [s.usr_pct, s.sys_pct, s.lat_pct, s.lck_pct, s.io_pct, s.slp_pct]
}

pub fn section(out: &mut String, run: &Run) {
    let Some(m) = run.server.microstates.as_ref() else {
        return;
    };
    if m.groups.is_empty() {
        return;
    }
    out.push_str("<h3>Thread microstates</h3>");
    let _ = write!(
        out,
        r#"<p class="note">Share of each thread group's wall time (threads of one name pattern together, digits as *): CPU and run-queue wait are exact scheduler counters; the split of blocked time into LCK (futex), IO and SLP is sampled every {:.0} ms from each blocked thread's system call.</p>"#,
        m.interval_ms
    );
    out.push_str(&bars(m));
    out.push_str(r#"<div class="legend">"#);
    for (name, colour) in STATES {
        let _ = write!(out, r#"<span style="--swatch:{colour}">{name}</span>"#);
    }
    out.push_str("</div>");
    for note in &m.notes {
        let _ = write!(out, r#"<p class="note">{}</p>"#, esc(note));
    }
}

/// The stacked bars, one row per group, busiest first.
fn bars(m: &Microstates) -> String {
    const LABEL_W: f64 = 220.0;
    const BAR_W: f64 = 600.0;
    const ROW_H: f64 = 20.0;
    let groups: Vec<_> = m.groups.iter().take(MAX_GROUPS).collect();
    let height = ROW_H * groups.len() as f64 + 4.0;
    let mut svg = format!(
        r#"<svg class="microstates" role="img" viewBox="0 0 {w} {height}" width="{w}" height="{height}" font-size="12">"#,
        w = LABEL_W + BAR_W
    );
    for (row, group) in groups.iter().enumerate() {
        let y = row as f64 * ROW_H + 2.0;
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="end">{} ({})</text>"#,
            LABEL_W - 6.0,
            y + ROW_H * 0.7,
            esc(&group.group),
            group.threads
        );
        let mut x = LABEL_W;
        for ((name, colour), pct) in STATES.iter().zip(values(&group.shares)) {
            let w = BAR_W * pct.clamp(0.0, 100.0) / 100.0;
            if w <= 0.0 {
                continue;
            }
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="{colour}"><title>{} {name} {pct:.1}%</title></rect>"#,
                ROW_H - 4.0,
                esc(&group.group)
            );
            x += w;
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Process;
    use stampede_schema::microstates::{StateSeconds, ThreadStates};

    #[test]
    fn each_group_gets_an_escaped_bar_with_its_lock_share() {
        let mut run = Run::default();
        let mut out = String::new();
        section(&mut out, &run);
        assert!(out.is_empty(), "nothing without microstates");
        let thread = |tid, name: &str| ThreadStates {
            tid,
            name: name.into(),
            seconds: StateSeconds { usr_s: 1.0, lck_s: 3.0, ..StateSeconds::default() },
            ..ThreadStates::default()
        };
        let m = Microstates::from_threads(100.0, vec![thread(1, "<w>-1"), thread(2, "<w>-2")], Vec::new(), Vec::new());
        run.server = Process { microstates: Some(m), ..Process::default() };
        section(&mut out, &run);
        assert!(out.contains("&lt;w&gt;-* (2)"), "{out}");
        assert!(out.contains("&lt;w&gt;-* LCK 75.0%"), "{out}");
        assert!(!out.contains("<w>"), "{out}");
    }
}
