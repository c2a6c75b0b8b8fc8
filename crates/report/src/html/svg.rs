//! The small plotting kit behind the report's charts: scales (linear and
//! logarithmic), "nice" tick values, axes, polylines, and a categorical
//! palette. Charts are inline SVG written at render time, so the report shows
//! its data without JavaScript; the embedded script only adds hover values,
//! read from each mark's `data-tip`.

use std::fmt::Write;

use super::escape::esc;
use crate::format::sig;

/// Colour-blind-friendly categorical colours (Tableau 10); which
/// configuration gets which is [`super::palette::Palette`]'s decision.
pub const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/// Maps a data interval onto a pixel interval.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub d0: f64,
    pub d1: f64,
    pub p0: f64,
    pub p1: f64,
}

impl Scale {
    pub fn new(domain: (f64, f64), pixels: (f64, f64)) -> Scale {
        let (mut d0, mut d1) = domain;
        if !(d1 - d0).is_normal() || d1 < d0 {
            // A flat or empty series still gets an axis.
            d0 = if d0.is_finite() { d0 } else { 0.0 };
            d1 = d0 + 1.0;
        }
        Scale { d0, d1, p0: pixels.0, p1: pixels.1 }
    }

    pub fn at(&self, v: f64) -> f64 {
        self.p0 + (v - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0)
    }
}

/// About `n` round tick values covering `[lo, hi]`, and the rounded domain.
pub fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    let mut ticks = Vec::new();
    let mut v = start;
    while v < hi + step * 0.999 {
        ticks.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    ticks
}

/// The plotting area of a chart inside its SVG viewBox.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
}

impl Frame {
    pub fn x0(&self) -> f64 {
        self.left
    }
    pub fn x1(&self) -> f64 {
        self.width - self.right
    }
    pub fn y0(&self) -> f64 {
        self.height - self.bottom
    }
    pub fn y1(&self) -> f64 {
        self.top
    }
}

/// Opens an `<svg class="chart">` scaled to its container's width.
pub fn open(out: &mut String, id: &str, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart" id="{}" viewBox="0 0 {width} {height}" role="img" aria-label="{}" preserveAspectRatio="xMinYMin meet">"#,
        esc(id),
        esc(title)
    );
}

pub fn close(out: &mut String) {
    out.push_str("</svg>");
}

/// Horizontal grid lines and labels for a value axis on the left.
pub fn y_axis(out: &mut String, frame: &Frame, scale: &Scale, ticks: &[f64], unit: &str) {
    for &t in ticks {
        let y = scale.at(t);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            frame.x0(),
            frame.x1(),
            frame.x0() - 4.0,
            y + 3.5,
            esc(&sig(t))
        );
    }
    if !unit.is_empty() {
        let _ =
            write!(out, r#"<text class="unit" x="{:.1}" y="{:.1}">{}</text>"#, frame.x0(), frame.y1() - 6.0, esc(unit));
    }
}

/// Tick labels along the bottom; `label` formats a tick value.
pub fn x_axis(out: &mut String, frame: &Frame, scale: &Scale, ticks: &[f64], label: impl Fn(f64) -> String) {
    let _ = write!(
        out,
        r#"<line class="axis" x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}"/>"#,
        frame.x0(),
        frame.x1(),
        frame.y0(),
        frame.y0()
    );
    for &t in ticks {
        let x = scale.at(t);
        let _ = write!(
            out,
            r#"<line class="axis" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}"/><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            frame.y0(),
            frame.y0() + 4.0,
            frame.y0() + 15.0,
            esc(&label(t))
        );
    }
}

/// A polyline through points already in pixels.
pub fn polyline(out: &mut String, points: &[(f64, f64)], colour: &str, extra_class: &str, tip: &str) {
    if points.is_empty() {
        return;
    }
    let mut d = String::new();
    for (i, (x, y)) in points.iter().enumerate() {
        let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { " L" });
    }
    let _ = write!(
        out,
        r#"<path class="mark line {}" d="{d}" stroke="{colour}" data-tip="{}"/>"#,
        esc(extra_class),
        esc(tip)
    );
}

/// An invisible hover target with a value to show.
pub fn hover_dot(out: &mut String, x: f64, y: f64, colour: &str, tip: &str) {
    let _ =
        write!(out, r#"<circle class="dot" cx="{x:.1}" cy="{y:.1}" r="4" fill="{colour}" data-tip="{}"/>"#, esc(tip));
}

/// Keeps at most `max` evenly spread items, always including the last.
pub fn thin<T: Copy>(items: &[T], max: usize) -> Vec<T> {
    if items.len() <= max || max < 2 {
        return items.to_vec();
    }
    let step = (items.len() - 1) as f64 / (max - 1) as f64;
    (0..max).map(|i| items[((i as f64) * step).round() as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(nice_ticks(0.0, 9.3, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = nice_ticks(0.0, 47000.0, 4);
        assert_eq!(t.first(), Some(&0.0));
        assert!(*t.last().unwrap() >= 47000.0);
        assert!(nice_ticks(5.0, 5.0, 4).len() >= 2);
    }

    #[test]
    fn scale_maps_ends_and_survives_flat_domains() {
        let s = Scale::new((0.0, 10.0), (100.0, 0.0));
        assert_eq!(s.at(0.0), 100.0);
        assert_eq!(s.at(10.0), 0.0);
        let flat = Scale::new((3.0, 3.0), (0.0, 10.0));
        assert!(flat.at(3.0).is_finite());
    }

    #[test]
    fn thinning_keeps_ends() {
        let items: Vec<u32> = (0..100).collect();
        let kept = thin(&items, 10);
        assert_eq!(kept.len(), 10);
        assert_eq!((kept[0], kept[9]), (0, 99));
    }
}
