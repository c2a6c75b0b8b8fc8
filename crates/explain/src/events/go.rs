//! Go's `GODEBUG=gctrace=1` lines, printed to stderr at the end of each cycle:
//!
//! ```text
//! gc 7 @1.234s 4%: 0.021+2.1+0.030 ms clock, 0.043+0.50/1.9/0.11+0.061 ms cpu, 4->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P
//! ```
//!
//! `@` is the cycle's start in seconds since the runtime started (printed to
//! the millisecond, truncated); the three wall-clock phases are the
//! stop-the-world sweep termination, the concurrent mark and the
//! stop-the-world mark termination. Each cycle gives three events: the two
//! pauses (the application stopped) and the mark phase, during which a
//! quarter of GOMAXPROCS goes to the collector and allocating goroutines pay
//! mark assists: on a busy server that is where Go's GC tail comes from.

use super::{log_lines, ms_to_ns, Alignment, Parsed};
use crate::error::ExplainError;
use crate::event::{Event, Kind};

/// `@` is printed with three decimals of a second.
const RESOLUTION_NS: u64 = 1_000_000;
/// Allowance for the time between the runtime printing a line and the
/// collector reading it from the pipe (tens of microseconds when measured).
const READ_LAG_NS: u64 = 100_000;

/// One parsed gctrace line, on the runtime's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub number: u64,
    pub start_rel_ns: u64,
    pub sweep_term_ns: u64,
    pub mark_ns: u64,
    pub mark_term_ns: u64,
    pub forced: bool,
    pub read_mono_ns: Option<u64>,
}

impl Cycle {
    pub fn end_rel_ns(&self) -> u64 {
        self.start_rel_ns + self.sweep_term_ns + self.mark_ns + self.mark_term_ns
    }
}

/// Parses one line, or `None` when it is not a gctrace line.
pub fn parse_line(text: &str) -> Option<Cycle> {
    let rest = text.trim_start().strip_prefix("gc ")?;
    let (number, rest) = rest.split_once(' ')?;
    let number = number.parse().ok()?;
    let rest = rest.strip_prefix('@')?;
    let (at, rest) = rest.split_once("s ")?;
    let start_rel_ns = (at.parse::<f64>().ok()? * 1e9).round() as u64;
    let (_, rest) = rest.split_once(": ")?;
    let (clock, _) = rest.split_once(" ms clock")?;
    let phases: Vec<u64> = clock.split('+').map(ms_to_ns).collect::<Option<_>>()?;
    let [sweep_term_ns, mark_ns, mark_term_ns] = phases[..] else { return None };
    Some(Cycle {
        number,
        start_rel_ns,
        sweep_term_ns,
        mark_ns,
        mark_term_ns,
        forced: text.contains("(forced)"),
        read_mono_ns: None,
    })
}

pub fn parse(text: &str, exec_mono_ns: Option<u64>, what: &str) -> Result<Parsed, ExplainError> {
    let cycles: Vec<Cycle> = log_lines(text)
        .filter_map(|line| parse_line(line.text).map(|c| Cycle { read_mono_ns: line.read_mono_ns, ..c }))
        .collect();
    if cycles.is_empty() {
        return Ok(Parsed { events: Vec::new(), clock: "no collection in the log".into(), clock_error_ns: 0 });
    }
    let samples: Vec<(u64, Option<u64>)> = cycles.iter().map(|c| (c.end_rel_ns(), c.read_mono_ns)).collect();
    let align = Alignment::estimate(&samples, RESOLUTION_NS, exec_mono_ns)
        .ok_or_else(|| ExplainError::NoAnchor { what: what.to_string(), runtime: "go" })?;
    let mut events = Vec::with_capacity(cycles.len() * 3);
    for c in &cycles {
        // `@` is truncated to the millisecond, so the cycle ended within 1 ms
        // after `origin + @ + phases`, and before the line was read: the
        // read time narrows the window to what both allow.
        let lo = align.origin_mono_ns + c.end_rel_ns();
        let (end, error_ns) = match c.read_mono_ns {
            Some(read) => {
                let hi = read.min(lo + RESOLUTION_NS).max(lo);
                ((lo + hi) / 2, (hi - lo) / 2 + READ_LAG_NS)
            }
            None => (lo + RESOLUTION_NS / 2, align.error_ns),
        };
        let t0 = end - (c.sweep_term_ns + c.mark_ns + c.mark_term_ns);
        let forced = if c.forced { " (forced)" } else { "" };
        let mark_start = t0 + c.sweep_term_ns;
        let mark_end = mark_start + c.mark_ns;
        let mut push = |start: u64, end: u64, label: String, stopped: bool| {
            events.push(Event {
                start_mono_ns: start,
                end_mono_ns: end,
                kind: Kind::Gc,
                label,
                stopped,
                error_ns,
                owner: None,
            })
        };
        push(t0, mark_start, format!("gc {}{forced}: sweep termination (stop-the-world)", c.number), true);
        push(mark_start, mark_end, format!("gc {}{forced}: concurrent mark and assists", c.number), false);
        push(
            mark_end,
            mark_end + c.mark_term_ns,
            format!("gc {}{forced}: mark termination (stop-the-world)", c.number),
            true,
        );
    }
    let clock_error_ns = events.iter().map(|e| e.error_ns).max().unwrap_or(align.error_ns);
    Ok(Parsed {
        events,
        clock: format!("runtime start at CLOCK_MONOTONIC {} ns, from {}", align.origin_mono_ns, align.method),
        clock_error_ns,
    })
}
