//! The efficiency chart: for each app and knob setting, requests per second
//! per server CPU core beside raw requests per second and the load
//! generator's CPU. A bar is the median of the valid iterations; a dot is one
//! iteration, so the spread is visible at a glance.

use std::fmt::Write;

use super::escape::esc;
use super::palette::Palette;
use super::svg::{self, nice_ticks, Scale};
use crate::format::sig;
use crate::stats::median;
use crate::summary::{ConfigRuns, Metric};

const LABEL_W: f64 = 210.0;
const PANEL_W: f64 = 200.0;
const GAP: f64 = 44.0;
const ROW_H: f64 = 26.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 24.0;

const PANELS: [Metric; 3] = [Metric::RpsPerCore, Metric::Rps, Metric::LoadgenCpu];

/// The chart, or a note when no run has data.
pub fn render(groups: &[ConfigRuns<'_>], palette: &Palette) -> String {
    let mut out = String::new();
    if groups.is_empty() {
        return r#"<p class="note">No runs in this file.</p>"#.to_owned();
    }
    let width = LABEL_W + PANELS.len() as f64 * (PANEL_W + GAP);
    let height = TOP + ROW_H * groups.len() as f64 + BOTTOM;
    svg::open(&mut out, "chart-efficiency", width, height, "Efficiency: requests per second per server core");

    for (row, group) in groups.iter().enumerate() {
        let y = TOP + ROW_H * row as f64 + ROW_H / 2.0;
        let valid = group.load_valid().count();
        let mut label = group.key.app_knobs();
        if !group.key.profile.is_empty() {
            label.push_str(&format!(" · {}", group.key.profile));
        }
        let _ = write!(
            out,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 8.0,
            y + 4.0,
            esc(&label)
        );
        if valid == 0 {
            let _ =
                write!(out, r#"<text class="note" x="{:.1}" y="{:.1}">no valid runs</text>"#, LABEL_W + 4.0, y + 4.0);
        }
    }

    for (p, metric) in PANELS.iter().enumerate() {
        let x0 = LABEL_W + p as f64 * (PANEL_W + GAP);
        let max = groups.iter().flat_map(|g| g.values(*metric)).fold(0.0f64, f64::max);
        let ticks = nice_ticks(0.0, max, 3);
        let top_tick = *ticks.last().unwrap_or(&1.0);
        let scale = Scale::new((0.0, top_tick), (x0, x0 + PANEL_W));
        let _ = write!(out, r#"<text class="panel-title" x="{x0:.1}" y="16">{}</text>"#, esc(metric.title()));
        let y_bottom = height - BOTTOM;
        for &t in &ticks {
            let x = scale.at(t);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{TOP:.1}" y2="{y_bottom:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                y_bottom + 14.0,
                esc(&sig(t))
            );
        }
        for (row, group) in groups.iter().enumerate() {
            let values = group.values(*metric);
            let Some(med) = median(&values) else { continue };
            let y = TOP + ROW_H * row as f64;
            let fill = palette.colour(&group.key);
            let tip = format!(
                "{}: median {} {} over {} valid run(s)",
                group.key.label(),
                sig(med),
                metric.title(),
                values.len()
            );
            let _ = write!(
                out,
                r#"<rect class="mark bar" x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}" data-tip="{}"/>"#,
                y + 5.0,
                (scale.at(med) - x0).max(1.0),
                ROW_H - 10.0,
                esc(&tip)
            );
            let counted = group.runs.iter().copied().filter(|r| metric.is_valid_in(r));
            for (i, (run, value)) in counted.filter_map(|r| metric.of(r).map(|v| (r, v))).enumerate() {
                let tip = format!(
                    "{} iteration {}: {} {}",
                    group.key.label(),
                    if run.iteration > 0 { u64::from(run.iteration) } else { i as u64 + 1 },
                    sig(value),
                    metric.title()
                );
                let _ = write!(
                    out,
                    r#"<circle class="mark iter" cx="{:.1}" cy="{:.1}" r="3" data-tip="{}"/>"#,
                    scale.at(value),
                    y + ROW_H / 2.0,
                    esc(&tip)
                );
            }
        }
    }
    svg::close(&mut out);
    out
}
