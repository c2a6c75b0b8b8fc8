//! Node.js `--trace-gc` lines on stdout, one per collection, printed when it
//! ends:
//!
//! ```text
//! [4187:0x6b1e6a0]     1051 ms: Scavenge 6.1 (8.8) -> 5.3 (9.8) MB, 0.84 / 0.00 ms  (average mu = 0.995, current mu = 0.993) allocation failure;
//! [4187:0x6b1e6a0]     1802 ms: Mark-Compact 21.0 (37.4) -> 12.5 (38.2) MB, 4.62 / 0.01 ms  (+ 2.3 ms in 21 steps since start of marking, …) …
//! ```
//!
//! The time is milliseconds since the isolate started, printed without
//! decimals; the first duration is the main thread's pause. Scavenges and the
//! final pause of a mark-compact stop JavaScript, so each line is one pause
//! ending at the printed time. The isolate's clock is aligned to
//! CLOCK_MONOTONIC like Go's (see [`super::Alignment`]).

use super::{log_lines, ms_to_ns, Alignment, Parsed};
use crate::error::ExplainError;
use crate::event::{Event, Kind};

/// The time is printed to the millisecond.
const RESOLUTION_NS: u64 = 1_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Collection {
    pub end_rel_ns: u64,
    pub kind: String,
    pub pause_ns: u64,
    pub read_mono_ns: Option<u64>,
}

pub fn parse_line(text: &str) -> Option<Collection> {
    let rest = text.trim_start().strip_prefix('[')?;
    let (_isolate, rest) = rest.split_once(']')?;
    let (time, rest) = rest.split_once(" ms: ")?;
    let end_rel_ns = ms_to_ns(time)?;
    // The collector's name runs up to the first heap figure.
    let name_end = rest.find(|c: char| c.is_ascii_digit())?;
    let kind = rest[..name_end].trim().to_string();
    let (_, after_heap) = rest.split_once(" MB, ")?;
    let (pause, _) = after_heap.split_once(" / ")?;
    if kind.is_empty() {
        return None;
    }
    Some(Collection { end_rel_ns, kind, pause_ns: ms_to_ns(pause)?, read_mono_ns: None })
}

pub fn parse(text: &str, exec_mono_ns: Option<u64>, what: &str) -> Result<Parsed, ExplainError> {
    let collections: Vec<Collection> = log_lines(text)
        .filter_map(|l| parse_line(l.text).map(|c| Collection { read_mono_ns: l.read_mono_ns, ..c }))
        .collect();
    if collections.is_empty() {
        return Ok(Parsed { events: Vec::new(), clock: "no collection in the log".into(), clock_error_ns: 0 });
    }
    let samples: Vec<(u64, Option<u64>)> = collections.iter().map(|c| (c.end_rel_ns, c.read_mono_ns)).collect();
    let align = Alignment::estimate(&samples, RESOLUTION_NS, exec_mono_ns)
        .ok_or_else(|| ExplainError::NoAnchor { what: what.to_string(), runtime: "node" })?;
    let events = collections
        .iter()
        .map(|c| {
            let end = align.origin_mono_ns + c.end_rel_ns;
            Event {
                start_mono_ns: end.saturating_sub(c.pause_ns),
                end_mono_ns: end,
                kind: Kind::Gc,
                label: format!("{} {:.2} ms", c.kind, c.pause_ns as f64 / 1e6),
                stopped: true,
                error_ns: align.error_ns,
                owner: None,
            }
        })
        .collect();
    Ok(Parsed {
        events,
        clock: format!("isolate start at CLOCK_MONOTONIC {} ns, from {}", align.origin_mono_ns, align.method),
        clock_error_ns: align.error_ns,
    })
}
