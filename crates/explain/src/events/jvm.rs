//! HotSpot unified logging, `-Xlog:gc*,safepoint:file=<path>:uptime,timenanos,level,tags`
//! (JDK 17 and later). `timenanos` is `System.nanoTime()`, which on Linux is
//! CLOCK_MONOTONIC, so no alignment is needed.
//!
//! Two kinds of lines matter, both printed when the pause ends:
//!
//! ```text
//! [1.618s][2931446718121ns][info][safepoint] Safepoint "G1CollectForAllocation", Time since last: 402044306 ns, Reaching safepoint: 73170 ns, At safepoint: 2513549 ns, Total: 2586719 ns
//! [1.618s][2931446690281ns][info][gc       ] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 25M->3M(64M) 2.492ms
//! ```
//!
//! The safepoint line is the better window: its `Total` includes the time to
//! reach the safepoint, during which threads stop one by one. When the log has
//! safepoint lines they make the events, labelled with the GC pause they
//! contain; without them (`-Xlog:gc` only) the `Pause` lines do. Collector
//! phases logged as `Concurrent …` with a duration (G1's marking, every ZGC
//! phase but its three short pauses) become events that compete for CPU
//! without stopping the application.

use super::{log_lines, ms_to_ns, Parsed};
use crate::event::{Event, Kind};

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub time_mono_ns: u64,
    pub tags: String,
    pub message: String,
}

/// Splits the `[…]` decorations off a line. The first decoration of the form
/// `<digits>ns` is `timenanos` (HotSpot prints decorations in a fixed order,
/// `timenanos` before `uptimenanos`); the last one is the tag set.
pub fn parse_line(text: &str) -> Option<Line> {
    let mut rest = text.trim_start();
    let mut time_mono_ns = None;
    let mut tags = String::new();
    while let Some(body) = rest.strip_prefix('[') {
        let (field, after) = body.split_once(']')?;
        let field = field.trim();
        if time_mono_ns.is_none() {
            if let Some(ns) = field.strip_suffix("ns").and_then(|d| d.parse::<u64>().ok()) {
                time_mono_ns = Some(ns);
            }
        }
        tags = field.to_string();
        rest = after;
    }
    Some(Line { time_mono_ns: time_mono_ns?, tags, message: rest.trim().to_string() })
}

/// `Safepoint "Name", … Total: N ns` → (name, total ns).
fn safepoint(message: &str) -> Option<(&str, u64)> {
    let rest = message.strip_prefix("Safepoint \"")?;
    let (name, rest) = rest.split_once('"')?;
    let total = rest.rsplit_once("Total: ")?.1.trim().strip_suffix("ns")?.trim().parse().ok()?;
    Some((name, total))
}

/// `GC(3) Pause Young (Normal) (G1 Evacuation Pause) 25M->3M(64M) 2.492ms` →
/// (label, duration ns, is_pause). Lines without a trailing duration (the
/// `gc,start` lines) are not events.
fn collector_phase(message: &str) -> Option<(String, u64, bool)> {
    let rest = message.strip_prefix("GC(")?;
    let (_, what) = rest.split_once(") ")?;
    let (head, last) = what.rsplit_once(' ')?;
    let duration = ms_to_ns(last.strip_suffix("ms")?)?;
    let is_pause = head.starts_with("Pause");
    if !is_pause && !head.starts_with("Concurrent") {
        return None;
    }
    // Drop the heap figures (`25M->3M(64M)`) from the label.
    let label = head.split(' ').filter(|w| !w.contains("->")).collect::<Vec<_>>().join(" ");
    Some((format!("{} {label}", &message[..message.find(' ').unwrap_or(0)]), duration, is_pause))
}

/// Safepoint operations that are collections.
fn is_gc_operation(name: &str) -> bool {
    ["GC", "Collect", "G1", "ZMark", "ZRelocate", "ZVerify", "Shenandoah"].iter().any(|m| name.contains(m))
}

pub fn parse(text: &str) -> Parsed {
    let lines: Vec<Line> = log_lines(text).filter_map(|l| parse_line(l.text)).collect();
    let mut safepoints = Vec::new();
    let mut pauses = Vec::new();
    let mut concurrent = Vec::new();
    for line in &lines {
        if let Some((name, total)) = safepoint(&line.message) {
            safepoints.push((line.time_mono_ns.saturating_sub(total), line.time_mono_ns, name.to_string()));
        } else if let Some((label, duration, is_pause)) = collector_phase(&line.message) {
            let window = (line.time_mono_ns.saturating_sub(duration), line.time_mono_ns, label);
            if is_pause {
                pauses.push(window)
            } else {
                concurrent.push(window)
            }
        }
    }
    let mut events: Vec<Event> = Vec::new();
    let event = |start, end, kind, label, stopped| Event {
        start_mono_ns: start,
        end_mono_ns: end,
        kind,
        label,
        stopped,
        error_ns: 0,
        owner: None,
    };
    if safepoints.is_empty() {
        events.extend(pauses.into_iter().map(|(s, e, label)| event(s, e, Kind::Gc, label, true)));
    } else {
        for (start, end, name) in safepoints {
            // A GC pause printed while this safepoint was held.
            let inner: Vec<&str> = pauses
                .iter()
                .filter(|(_, e, _)| (start..=end).contains(e))
                .map(|(_, _, label)| label.as_str())
                .collect();
            let gc = is_gc_operation(&name) || !inner.is_empty();
            let label = if inner.is_empty() {
                format!("safepoint {name}")
            } else {
                format!("safepoint {name}: {}", inner.join("; "))
            };
            events.push(event(start, end, if gc { Kind::Gc } else { Kind::Safepoint }, label, true));
        }
    }
    events.extend(concurrent.into_iter().map(|(s, e, label)| event(s, e, Kind::Gc, label, false)));
    events.sort_by_key(|e| e.start_mono_ns);
    Parsed { events, clock: "the timenanos decoration (System.nanoTime, CLOCK_MONOTONIC)".into(), clock_error_ns: 0 }
}
