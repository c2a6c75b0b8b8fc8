//! A run's CPU profile in the report (`stampede run --profile`): links to the
//! flame graph and folded stacks stored beside results.json, and the top
//! functions by self share of samples. Nothing is drawn for runs without one.

use std::fmt::Write;

use super::escape::esc;
use super::tables::{table, Cell};
use crate::schema::Run;

pub fn section(out: &mut String, run: &Run) {
    let Some(profile) = &run.cpu_profile else {
        return;
    };
    out.push_str("<h3>CPU profile</h3><p>");
    if !profile.flame_svg.is_empty() {
        let _ = write!(out, r#"<a href="{0}">flame graph</a> ({0})"#, esc(&profile.flame_svg));
    }
    if !profile.folded.is_empty() {
        let _ = write!(out, r#" · <a href="{0}">folded stacks</a>"#, esc(&profile.folded));
    }
    if profile.samples > 0 && profile.frequency_hz > 0 {
        let _ = write!(out, " · {} samples at {} Hz", profile.samples, profile.frequency_hz);
    }
    out.push_str("</p>");
    if profile.top.is_empty() {
        return;
    }
    let rows: Vec<(String, Vec<Cell>)> = profile
        .top
        .iter()
        .map(|row| {
            let cells = vec![
                Cell::Num(format!("{:.2}", row.self_pct)),
                Cell::Num(format!("{:.2}", row.total_pct)),
                Cell::Text(row.kind.clone()),
                Cell::Wrap(row.frame.clone()),
            ];
            (String::new(), cells)
        })
        .collect();
    table(out, "top-frames", &["self %", "total %", "kind", "function"], &rows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ProfileSummary, TopFrame};

    #[test]
    fn a_profiled_run_links_its_flame_graph_and_lists_top_frames_escaped() {
        let mut run = Run::default();
        let mut out = String::new();
        section(&mut out, &run);
        assert!(out.is_empty(), "no section without a profile");
        run.cpu_profile = Some(ProfileSummary {
            flame_svg: "flame-go-defaults-cpu-1.svg".into(),
            folded: "stacks-go-defaults-cpu-1.folded".into(),
            samples: 400,
            frequency_hz: 99,
            top: vec![TopFrame {
                frame: "Vec<T>::push".into(),
                kind: "native".into(),
                self_pct: 61.5,
                total_pct: 70.0,
                ..TopFrame::default()
            }],
            ..ProfileSummary::default()
        });
        section(&mut out, &run);
        assert!(out.contains(r#"<a href="flame-go-defaults-cpu-1.svg">flame graph</a>"#), "{out}");
        assert!(out.contains("Vec&lt;T&gt;::push") && out.contains("61.50"), "{out}");
    }
}
