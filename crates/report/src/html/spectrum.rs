//! The latency percentile spectrum, HdrHistogram's classic plot: latency
//! against percentile with the x axis at 1/(1 − percentile) on a log scale,
//! so 90 %, 99 %, 99.9 % and 99.99 % are equally far apart and the tail gets
//! the room it deserves. One chart per load profile, one line per run, from
//! the load the run's latency comes from (its open-loop `latency` phase when
//! the profile has one).

use super::palette::Palette;
use super::svg::{self, hover_dot, nice_ticks, polyline, thin, Frame, Scale};
use crate::format::sig;
use crate::schema::Run;
use crate::summary::ConfigKey;

const FRAME: Frame = Frame { width: 860.0, height: 320.0, left: 56.0, right: 34.0, top: 26.0, bottom: 30.0 };

/// One point of a line: (x position, latency in ms, percentile).
type Point = (f64, f64, f64);

/// Position of a percentile (0–100) on the x axis: log10(1/(1 − p)).
pub fn x_of_percentile(percentile: f64) -> Option<f64> {
    let remaining = 1.0 - percentile / 100.0;
    (remaining > 0.0 && percentile >= 0.0).then(|| (1.0 / remaining).log10())
}

/// The label of a whole-decade tick: 0 → "0%", 1 → "90%", 3 → "99.9%".
pub fn tick_label(decade: f64) -> String {
    let k = decade.round() as i32;
    match k {
        i32::MIN..=0 => "0%".to_owned(),
        1 => "90%".to_owned(),
        2 => "99%".to_owned(),
        _ => format!("99.{}%", "9".repeat((k - 2) as usize)),
    }
}

/// One chart for the runs of a profile, each in its configuration's colour.
pub fn render(id: &str, profile: &str, runs: &[&Run], palette: &Palette) -> String {
    let lines: Vec<(&Run, Vec<Point>)> = runs
        .iter()
        .filter_map(|run| {
            let load = run.latency_load()?;
            let points: Vec<Point> = load
                .latency_spectrum
                .iter()
                .filter_map(|p| Some((x_of_percentile(p.percentile)?, p.us / 1000.0, p.percentile)))
                .filter(|(x, y, _)| x.is_finite() && y.is_finite())
                .collect();
            (!points.is_empty()).then_some((*run, points))
        })
        .collect();
    if lines.is_empty() {
        return r#"<p class="note">No latency spectrum in these runs.</p>"#.to_owned();
    }
    let x_max = lines.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.0)).fold(4.0f64, f64::max).ceil();
    let y_max = lines.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.1)).fold(0.0f64, f64::max);
    let y_ticks = nice_ticks(0.0, y_max, 5);
    let x = Scale::new((0.0, x_max), (FRAME.x0(), FRAME.x1()));
    let y = Scale::new((0.0, *y_ticks.last().unwrap_or(&1.0)), (FRAME.y0(), FRAME.y1()));

    let mut out = String::new();
    let title = format!("Latency by percentile, profile {profile}");
    svg::open(&mut out, id, FRAME.width, FRAME.height, &title);
    svg::y_axis(&mut out, &FRAME, &y, &y_ticks, "latency (ms)");
    let x_ticks: Vec<f64> = (0..=x_max as i32).map(f64::from).collect();
    svg::x_axis(&mut out, &FRAME, &x, &x_ticks, tick_label);
    for (run, points) in &lines {
        let key = ConfigKey::of(run);
        let c = palette.colour(&key);
        let name = format!("{} iteration {}", key.label(), run.iteration);
        let pixels: Vec<(f64, f64)> = points.iter().map(|(px, py, _)| (x.at(*px), y.at(*py))).collect();
        let class = if run.is_valid() { "" } else { "invalid" };
        polyline(&mut out, &pixels, &c, class, &name);
        let tips: Vec<(usize, (f64, f64))> = pixels.iter().copied().enumerate().collect();
        for (i, (px, py)) in thin(&tips, 40) {
            let (_, ms, percentile) = points[i];
            let tip = format!("{name}: p{} = {} ms", trim_percentile(percentile), sig(ms));
            hover_dot(&mut out, px, py, &c, &tip);
        }
    }
    svg::close(&mut out);
    out
}

fn trim_percentile(p: f64) -> String {
    let text = format!("{p:.5}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_map_to_decades() {
        assert_eq!(x_of_percentile(0.0), Some(0.0));
        assert!((x_of_percentile(90.0).unwrap() - 1.0).abs() < 1e-9);
        assert!((x_of_percentile(99.9).unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(x_of_percentile(100.0), None);
        assert_eq!(tick_label(4.0), "99.99%");
        assert_eq!(trim_percentile(99.9), "99.9");
    }
}
