//! The timeline of one run: requests per second and p99 per second (from the
//! load generator's `load.timeline`), server CPU cores and RSS (from the
//! probe's `server.samples`), stacked on one time axis, with markers for
//! events. Events come from the run's `events` list (`{t_s, kind, label,
//! duration_ms}`, e.g. GC pauses) plus the ones derived here: the end of
//! warmup and the seconds that had errors. An event with a duration is drawn
//! as a band, one without as a line.

use std::fmt::Write;

use super::escape::esc;
use super::svg::{self, hover_dot, nice_ticks, polyline, thin, Frame, Scale};
use crate::format::sig;
use crate::schema::{Event, Run, Sample};

const WIDTH: f64 = 860.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 24.0;
const PANEL_H: f64 = 92.0;
const PANEL_GAP: f64 = 34.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 30.0;

/// The events to mark on a run's timeline, given and derived, in time order.
pub fn markers(run: &Run) -> Vec<Event> {
    let mut events = run.events.clone();
    let warmed = run.warmup.is_some() || samples(run).iter().any(|s| s.t_s < 0.0);
    if warmed && !events.iter().any(|e| e.kind == "warmup_end") {
        events.push(Event {
            t_s: 0.0,
            kind: "warmup_end".to_owned(),
            label: "warmup end".to_owned(),
            ..Event::default()
        });
    }
    if let Some(load) = &run.load {
        for point in load.timeline.iter().filter(|p| p.errors > 0) {
            events.push(Event {
                t_s: point.t_s as f64,
                kind: "errors".to_owned(),
                label: format!("{} errors", point.errors),
                ..Event::default()
            });
        }
    }
    events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    events
}

/// The most runtime events drawn one by one; above it the timeline keeps
/// only stop-the-world pauses, then merges neighbours, so a run with
/// thousands of collections still makes a small report.
pub const MAX_DRAWN_EVENTS: usize = 200;

/// The most hover dots per series (the line itself keeps every point): one
/// every 13 px of the 860 px chart. A dot and its tip are about 110 bytes,
/// and the timelines are most of a report's size (2026-11-27, Go with the
/// shootout's profiles: 80 KB a run, 30 KB of it 283 hover dots at 120).
const MAX_HOVER_DOTS: usize = 60;

fn is_runtime(event: &Event) -> bool {
    matches!(event.kind.as_str(), "gc" | "gc_pause" | "safepoint" | "pause")
}

/// The markers actually drawn (and listed) for a run, and, when the run had
/// too many runtime events to draw each, a caption saying what was done.
pub fn drawn(run: &Run) -> (Vec<Event>, Option<String>) {
    let all = markers(run);
    let runtime = all.iter().filter(|e| is_runtime(e)).count();
    if runtime <= MAX_DRAWN_EVENTS {
        return (all, None);
    }
    let (mut kept, others): (Vec<Event>, Vec<Event>) = all.into_iter().partition(is_runtime);
    kept.retain(|e| e.stopped);
    let stopped = kept.len();
    let caption;
    if stopped <= MAX_DRAWN_EVENTS {
        caption = format!(
            "{runtime} runtime events: only the {stopped} stop-the-world pauses are drawn and listed (phases that only compete for CPU are left out)."
        );
    } else {
        kept = merge(&kept, MAX_DRAWN_EVENTS);
        caption = format!(
            "{runtime} runtime events ({stopped} stop-the-world): only stop-the-world pauses are drawn, and neighbouring ones are merged into {} bands, each spanning its first start to its last end; a band's label gives how many pauses it holds and their total time.",
            kept.len()
        );
    }
    let mut events = others;
    events.extend(kept);
    events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    (events, Some(caption))
}

/// Merges events (sorted by start) falling in the same of `slots` equal
/// slices of their span into one band each.
fn merge(events: &[Event], slots: usize) -> Vec<Event> {
    let end = |e: &Event| e.t_s + e.duration_ms / 1000.0;
    let from = events.iter().map(|e| e.t_s).fold(f64::INFINITY, f64::min);
    let to = events.iter().map(end).fold(f64::NEG_INFINITY, f64::max);
    let width = ((to - from) / slots as f64).max(1e-9);
    let mut bands: Vec<(usize, Event, usize, f64)> = Vec::new();
    for e in events {
        let slot = (((e.t_s - from) / width) as usize).min(slots - 1);
        let ms = e.duration_ms;
        match bands.last_mut() {
            Some((s, band, n, total)) if *s == slot => {
                let band_end = end(band).max(end(e));
                band.duration_ms = (band_end - band.t_s) * 1000.0;
                *n += 1;
                *total += ms;
            }
            _ => bands.push((slot, e.clone(), 1, ms)),
        }
    }
    bands
        .into_iter()
        .map(|(_, mut band, n, total)| {
            if n > 1 {
                band.label = format!("{n} pauses, {} ms in total", sig(total));
            }
            band
        })
        .collect()
}

fn samples(run: &Run) -> &[Sample] {
    &run.server.samples
}

fn kind_colour(kind: &str) -> &'static str {
    match kind {
        "warmup_end" => "#6b7280",
        "errors" => "#e15759",
        "gc" | "gc_pause" => "#b07aa1",
        _ => "#9c755f",
    }
}

/// One series of a panel: points in data units, how to draw them.
struct Series<'a> {
    name: &'a str,
    points: Vec<(f64, f64)>,
    colour: &'a str,
    class: &'a str,
}

/// The chart for one run, or a note when it has no time series.
pub fn render(id: &str, run: &Run) -> String {
    let timeline = run.load.as_ref().map(|l| l.timeline.as_slice()).unwrap_or(&[]);
    let server = samples(run);
    let loadgen = &run.loadgen.samples;
    let panels: Vec<(&str, Vec<Series<'_>>)> = vec![
        (
            "requests/s",
            vec![Series {
                name: "requests/s",
                points: timeline.iter().map(|p| (p.t_s as f64, p.requests as f64)).collect(),
                colour: "#4e79a7",
                class: "",
            }],
        ),
        (
            "p99 (ms)",
            vec![Series {
                name: "p99 ms",
                points: timeline.iter().map(|p| (p.t_s as f64, p.p99_us / 1000.0)).collect(),
                colour: "#f28e2b",
                class: "",
            }],
        ),
        (
            "CPU (cores)",
            vec![
                Series {
                    name: "server cores",
                    points: server.iter().map(|s| (s.t_s, s.cpu_cores)).collect(),
                    colour: "#59a14f",
                    class: "",
                },
                Series {
                    name: "load generator cores",
                    points: loadgen.iter().map(|s| (s.t_s, s.cpu_cores)).collect(),
                    colour: "#9ca3af",
                    class: "dashed",
                },
            ],
        ),
        (
            "RSS (MiB)",
            vec![Series {
                name: "server RSS MiB",
                points: server.iter().map(|s| (s.t_s, s.rss_mib)).collect(),
                colour: "#76b7b2",
                class: "",
            }],
        ),
    ];
    let events = drawn(run).0;
    let all_t = panels
        .iter()
        .flat_map(|(_, series)| series.iter().flat_map(|s| s.points.iter().map(|p| p.0)))
        .collect::<Vec<_>>();
    if all_t.is_empty() {
        return r#"<p class="note">No timeline or samples recorded for this run.</p>"#.to_owned();
    }
    let t_min = all_t.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
    let t_max = all_t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let height = TOP + panels.len() as f64 * (PANEL_H + PANEL_GAP) - PANEL_GAP + BOTTOM;
    let x = Scale::new((t_min, t_max), (LEFT, WIDTH - RIGHT));
    let plot_top = TOP;
    let plot_bottom = height - BOTTOM;

    let mut out = String::new();
    svg::open(&mut out, id, WIDTH, height, "Timeline");
    // Event bands and lines go under the data.
    if t_min < 0.0 {
        let _ = write!(
            out,
            r#"<rect class="warmup" x="{:.1}" y="{plot_top:.1}" width="{:.1}" height="{:.1}" data-tip="warmup (not measured)"/>"#,
            x.at(t_min),
            (x.at(0.0) - x.at(t_min)).max(0.0),
            plot_bottom - plot_top
        );
    }
    for event in &events {
        let label = if event.label.is_empty() { event.kind.clone() } else { event.label.clone() };
        let mut tip = format!("{label} at {} s", sig(event.t_s));
        if event.duration_ms > 0.0 {
            let ms = event.duration_ms;
            tip.push_str(&format!(", {} ms", sig(ms)));
        }
        let colour = kind_colour(&event.kind);
        let ex = x.at(event.t_s.clamp(t_min, t_max));
        let width = if event.duration_ms > 0.0 {
            (x.at(event.t_s + event.duration_ms / 1000.0) - x.at(event.t_s)).max(2.0)
        } else {
            0.0
        };
        if width > 0.0 {
            let _ = write!(
                out,
                r#"<rect class="mark event" x="{ex:.1}" y="{plot_top:.1}" width="{width:.1}" height="{:.1}" fill="{colour}" data-kind="{}" data-tip="{}"/>"#,
                plot_bottom - plot_top,
                esc(&event.kind),
                esc(&tip)
            );
        } else {
            let _ = write!(
                out,
                r#"<line class="mark event" x1="{ex:.1}" x2="{ex:.1}" y1="{plot_top:.1}" y2="{plot_bottom:.1}" stroke="{colour}" data-kind="{}" data-tip="{}"/>"#,
                esc(&event.kind),
                esc(&tip)
            );
        }
    }
    for (index, (title, series)) in panels.iter().enumerate() {
        let top = TOP + index as f64 * (PANEL_H + PANEL_GAP);
        let frame = Frame { width: WIDTH, height: top + PANEL_H, left: LEFT, right: RIGHT, top, bottom: 0.0 };
        let y_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0f64, f64::max);
        let ticks = nice_ticks(0.0, y_max, 2);
        let y = Scale::new((0.0, *ticks.last().unwrap_or(&1.0)), (frame.y0(), frame.y1()));
        svg::y_axis(&mut out, &frame, &y, &ticks, title);
        if series.iter().all(|s| s.points.is_empty()) {
            let _ = write!(
                out,
                r#"<text class="note" x="{:.1}" y="{:.1}">not recorded</text>"#,
                LEFT + 8.0,
                top + PANEL_H / 2.0
            );
        }
        for s in series {
            let pixels: Vec<(f64, f64)> = s.points.iter().map(|(t, v)| (x.at(*t), y.at(*v))).collect();
            polyline(&mut out, &pixels, s.colour, s.class, s.name);
            for (t, v) in thin(&s.points, MAX_HOVER_DOTS) {
                let tip = format!("{}: {} at {} s", s.name, sig(v), sig(t));
                hover_dot(&mut out, x.at(t), y.at(v), s.colour, &tip);
            }
        }
    }
    let bottom_frame = Frame { width: WIDTH, height, left: LEFT, right: RIGHT, top: TOP, bottom: BOTTOM };
    let ticks: Vec<f64> =
        nice_ticks(t_min, t_max, 8).into_iter().filter(|t| *t >= t_min - 1e-9 && *t <= t_max + 1e-9).collect();
    svg::x_axis(&mut out, &bottom_frame, &x, &ticks, |t| format!("{} s", sig(t)));
    svg::close(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_include_given_events_warmup_end_and_error_seconds() {
        let text = r#"{"schema":"stampede.run/1","runs":[{"app":"go",
          "load":{"timeline":[{"t_s":0,"requests":10,"errors":0},{"t_s":1,"requests":10,"errors":3}]},
          "server":{"samples":[{"t_s":-0.5,"cpu_cores":1.0},{"t_s":0.5,"cpu_cores":1.0}]},
          "events":[{"t_s":0.7,"kind":"gc","label":"GC <pause>","duration_ms":12}]}]}"#;
        let results = crate::schema::parse(text).unwrap();
        let kinds: Vec<String> = markers(&results.runs[0]).into_iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec!["warmup_end", "gc", "errors"]);
        let svg = render("t", &results.runs[0]);
        assert!(svg.contains("GC &lt;pause&gt; at 0.7 s, 12 ms"), "{svg}");
        assert!(svg.contains(r#"data-kind="errors""#));
        assert!(!svg.contains("<pause>"));
    }

    fn many_events(stopped_every: usize) -> Run {
        let events: Vec<serde_json::Value> = (0..1000)
            .map(|i| {
                serde_json::json!({"t_s": i as f64 * 0.004, "kind": "gc", "label": format!("gc {i}"),
                                   "duration_ms": 0.5, "stopped": i % stopped_every == 0})
            })
            .collect();
        let text = serde_json::json!({"schema": "stampede.run/1", "runs": [{"app": "go",
            "load": {"timeline": [{"t_s": 0, "requests": 10, "errors": 0}, {"t_s": 4, "requests": 10, "errors": 0}]},
            "events": events}]})
        .to_string();
        crate::schema::parse(&text).unwrap().runs.remove(0)
    }

    #[test]
    fn more_than_200_events_keep_only_stop_the_world_ones() {
        let run = many_events(10);
        let (events, caption) = drawn(&run);
        assert_eq!(events.len(), 100);
        assert!(events.iter().all(|e| e.stopped));
        assert!(caption.unwrap().contains("only the 100 stop-the-world pauses"));
        let svg = render("t", &run);
        assert_eq!(svg.matches(r#"data-kind="gc""#).count(), 100);
    }

    #[test]
    fn too_many_stop_the_world_events_are_merged_into_bands() {
        let run = many_events(1);
        let (events, caption) = drawn(&run);
        assert!(events.len() <= MAX_DRAWN_EVENTS && events.len() >= 100, "{}", events.len());
        assert!(caption.unwrap().contains("merged"));
        let held: usize = events
            .iter()
            .map(|e| match e.label.split_once(" pauses, ") {
                Some((n, _)) => n.parse::<usize>().unwrap(),
                None => 1,
            })
            .sum();
        assert_eq!(held, 1000, "every pause is in one band");
        let last = events.last().unwrap();
        assert!((last.t_s + last.duration_ms / 1000.0 - (999.0 * 0.004 + 0.0005)).abs() < 1e-9);
    }

    #[test]
    fn a_few_events_are_drawn_as_they_are() {
        let run = Run {
            events: vec![Event { t_s: 1.0, kind: "gc".into(), stopped: false, ..Event::default() }],
            ..Run::default()
        };
        let (events, caption) = drawn(&run);
        assert_eq!(events.len(), 1);
        assert!(caption.is_none());
    }

    #[test]
    fn a_run_without_series_gets_a_note() {
        let run = Run::default();
        assert!(render("t", &run).contains("No timeline"));
    }
}
