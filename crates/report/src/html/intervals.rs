//! Latency over time from a run's HdrHistogram interval log (the `.hlog`
//! that `stampede run` keeps beside results.json): p50, p99, p99.9 and max of
//! each interval, on one chart. The per-second p99 of the timeline says when
//! the tail moved; this says how the whole distribution moved with it, and
//! the log itself stays readable by every HdrHistogram tool.

use std::fmt::Write;
use std::path::Path;

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::svg::{self, hover_dot, nice_ticks, polyline, thin, Frame, Scale};
use crate::format::sig;
use stampede_schema::histogram::decode_histogram;

/// The largest interval log read (a day of one-second intervals is ~20 MiB).
const MAX_LOG_BYTES: u64 = 64 << 20;

/// One interval's latency figures, milliseconds, at `t_s` from the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalPoint {
    pub t_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

/// Reads an interval log written in nanoseconds (`stampede load --hdr-log`);
/// the error says what is wrong, for the caller to prefix with the file.
pub fn read(path: &Path) -> Result<Vec<IntervalPoint>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_LOG_BYTES {
        return Err(format!("larger than {} MiB", MAX_LOG_BYTES >> 20));
    }
    let mut points = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let LogEntry::Interval(interval) = entry.map_err(|e| format!("not an HdrHistogram interval log ({e:?})"))?
        else {
            continue;
        };
        let h = decode_histogram(interval.encoded_histogram()).map_err(|e| format!("a bad histogram: {e}"))?;
        let ms = |ns: u64| ns as f64 / 1e6;
        points.push(IntervalPoint {
            t_s: interval.start_timestamp().as_secs_f64(),
            p50_ms: ms(h.value_at_quantile(0.5)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p999_ms: ms(h.value_at_quantile(0.999)),
            max_ms: ms(h.max()),
        });
    }
    Ok(points)
}

/// The interval log a run names (`hdr_log`, a plain file name in `dir`,
/// the results file's folder), read; empty when there is none or it cannot
/// be read, so the run goes without the chart as a run without samples has
/// no CPU line.
pub fn of_run(dir: Option<&Path>, run: &crate::schema::Run) -> Vec<IntervalPoint> {
    let (Some(dir), Some(name)) = (dir, run.hdr_log.as_deref()) else { return Vec::new() };
    // Only a file beside results.json: the name comes from the file.
    if Path::new(name).file_name().and_then(|f| f.to_str()) != Some(name) {
        return Vec::new();
    }
    read(&dir.join(name)).unwrap_or_default()
}

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 200.0;
const SERIES: [(&str, &str); 4] = [("p50", "#4e79a7"), ("p99", "#f28e2b"), ("p99.9", "#e15759"), ("max", "#6b7280")];

/// The chart: one line per percentile, time along the bottom.
pub fn render(id: &str, points: &[IntervalPoint]) -> String {
    let frame = Frame { width: WIDTH, height: HEIGHT, left: 56.0, right: 24.0, top: 22.0, bottom: 30.0 };
    let t_max = points.iter().map(|p| p.t_s).fold(0.0, f64::max).max(1.0);
    let y_max = points.iter().map(|p| p.max_ms).fold(0.0, f64::max);
    let x = Scale::new((0.0, t_max), (frame.x0(), frame.x1()));
    let y_ticks = nice_ticks(0.0, y_max, 4);
    let y = Scale::new((0.0, *y_ticks.last().unwrap_or(&1.0)), (frame.y0(), frame.y1()));
    let mut out = String::new();
    svg::open(&mut out, id, WIDTH, HEIGHT, "Latency percentiles per interval");
    svg::y_axis(&mut out, &frame, &y, &y_ticks, "latency (ms)");
    for (i, (name, colour)) in SERIES.iter().enumerate() {
        let series: Vec<(f64, f64)> =
            points.iter().map(|p| (p.t_s, [p.p50_ms, p.p99_ms, p.p999_ms, p.max_ms][i])).collect();
        let pixels: Vec<(f64, f64)> = series.iter().map(|(t, v)| (x.at(*t), y.at(*v))).collect();
        polyline(&mut out, &pixels, colour, "", name);
        for (t, v) in thin(&series, 120) {
            hover_dot(&mut out, x.at(t), y.at(v), colour, &format!("{name}: {} ms at {} s", sig(v), sig(t)));
        }
    }
    let x_ticks: Vec<f64> = nice_ticks(0.0, t_max, 8).into_iter().filter(|t| *t <= t_max + 1e-9).collect();
    svg::x_axis(&mut out, &frame, &x, &x_ticks, |t| format!("{} s", sig(t)));
    svg::close(&mut out);
    let _ = write!(
        out,
        r#"<div class="legend">{}</div>"#,
        SERIES.iter().map(|(n, c)| format!(r#"<span style="--swatch:{c}">{n}</span>"#)).collect::<String>()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
    use hdrhistogram::serialization::V2DeflateSerializer;
    use hdrhistogram::Histogram;
    use std::time::{Duration, SystemTime};

    #[test]
    fn reads_each_intervals_percentiles_and_draws_four_lines() {
        let mut log = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        let start = SystemTime::now();
        let mut w = IntervalLogWriterBuilder::new().with_base_time(start).begin_log_with(&mut log, &mut ser).unwrap();
        for s in 0..3u64 {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
            for v in 1..=1000u64 {
                h.record(v * 1000 * (s + 1)).unwrap();
            }
            w.write_histogram(&h, Duration::from_secs(s), Duration::from_secs(1), None).unwrap();
        }
        drop(w);
        let path = std::env::temp_dir().join(format!("stampede-intervals-{}.hlog", std::process::id()));
        std::fs::write(&path, &log).unwrap();
        let points = read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(points.len(), 3);
        assert_eq!(points[2].t_s, 2.0);
        assert!((points[1].p50_ms - 1.0).abs() < 0.01 && (points[1].max_ms - 2.0).abs() < 0.01, "{points:?}");
        let svg = render("c", &points);
        assert_eq!(svg.matches("<path").count(), 4);
        std::fs::write(&path, b"not a log\n").unwrap();
        assert!(read(&path).is_err());
        let _ = std::fs::remove_file(&path);
    }
}
