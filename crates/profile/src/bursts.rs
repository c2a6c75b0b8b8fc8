//! When a frame ran: the stretches of the phase in which the on-CPU samples
//! have a given frame on their stack. A frame over-represented in the slow
//! requests' windows is only a suspect; its bursts, on CLOCK_MONOTONIC like
//! the slow log, let `stampede explain` decide request by request whether
//! the function was running while the request waited (a periodic CPU burn
//! on the request path explains the requests it overlapped, and the same
//! requests moved to other times give its chance level).
//!
//! Samples of the frame closer together than [`GAP_NS`] belong to one
//! burst; a burst ends half a gap after its last sample (the sample stands
//! for the time until the next one). A frame is matched by its name
//! anywhere in a stack line of `perf script`, the way the folded stacks
//! name it.

use stampede_schema::profile::Burst;

use crate::offcpu::header_parts;

/// Samples of one frame this close together are one burst: 10 ms, a few
/// sample periods at the default 99 Hz per thread on a busy server.
pub const GAP_NS: u64 = 10_000_000;

/// The bursts in which `frame` was on the stack of the on-CPU samples of
/// `script` (`perf script --ns` text), in time order.
pub fn of(script: &str, frame: &str) -> Vec<Burst> {
    let mut times = Vec::new();
    let mut current: Option<u64> = None;
    let mut seen = false;
    for line in script.lines() {
        if !line.is_empty() && !line.starts_with(char::is_whitespace) {
            if let (Some(t), true) = (current, seen) {
                times.push(t);
            }
            current = header_parts(line).map(|(_, t, _)| t);
            seen = false;
        } else if current.is_some() && !seen && symbol(line).is_some_and(|s| names(s, frame)) {
            seen = true;
        }
    }
    if let (Some(t), true) = (current, seen) {
        times.push(t);
    }
    times.sort_unstable();
    let mut bursts: Vec<Burst> = Vec::new();
    for t in times {
        match bursts.last_mut() {
            Some(b) if t <= b.end_mono_ns + GAP_NS / 2 => {
                b.end_mono_ns = t + GAP_NS / 2;
                b.samples += 1;
            }
            _ => bursts.push(Burst {
                start_mono_ns: t.saturating_sub(GAP_NS / 2),
                end_mono_ns: t + GAP_NS / 2,
                samples: 1,
            }),
        }
    }
    bursts
}

/// Whether a raw symbol is the folded stacks' `frame`: the same, or the same
/// with a Rust hash suffix (`::h0123…`), which folding drops.
pub(crate) fn names(symbol: &str, frame: &str) -> bool {
    symbol.strip_prefix(frame).is_some_and(|rest| rest.is_empty() || rest.starts_with("::h"))
}

/// The symbol of a stack line (`\t  55d1 name+0x1f (/path/dso)`): the words
/// after the address, without the offset and the object.
pub(crate) fn symbol(line: &str) -> Option<&str> {
    let rest = line.trim_start().split_once(char::is_whitespace)?.1.trim_start();
    let name = rest.rsplit_once(" (").map_or(rest, |(name, _)| name);
    Some(name.rsplit_once("+0x").map_or(name, |(name, _)| name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_of_a_frame_close_together_are_one_burst() {
        let sample = |ms: u64, frames: &str| format!("srv 1/1 0.{:09}: cpu-clock:\n{frames}\n", ms * 1_000_000);
        let burn = "\t  20 burn+0x1a (/srv)\n\t  10 serve (/srv)";
        let other = "\t  10 serve (/srv)";
        let script =
            [sample(100, burn), sample(105, burn), sample(110, other), sample(112, burn), sample(300, burn)].concat();
        let bursts = of(&script, "burn");
        assert_eq!(bursts.len(), 2, "{bursts:?}");
        assert_eq!((bursts[0].start_mono_ns, bursts[0].end_mono_ns, bursts[0].samples), (95_000_000, 117_000_000, 3));
        assert_eq!(bursts[1].samples, 1);
        assert!(of(&script, "bur").is_empty(), "a frame is matched by its whole name");
    }
}
