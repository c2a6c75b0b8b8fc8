//! Parsers for the GC and safepoint logs of each runtime, and the clock
//! alignment they share.
//!
//! A log line may carry the CLOCK_MONOTONIC time at which the collector read
//! it, written as `<mono_ns>\t<line>` (the orchestrator and the tests stamp
//! lines this way as they read the server's stderr). JVM and Python lines are
//! already on CLOCK_MONOTONIC; Go and Node count from the runtime's start, and
//! [`Alignment`] turns that into CLOCK_MONOTONIC with an error bound.

pub mod generic;
pub mod go;
pub mod jvm;
pub mod node;
pub mod python;

use std::path::Path;

use crate::error::ExplainError;
use crate::event::Event;

/// One line of a log, with the time it was read when the log carries it.
#[derive(Debug, Clone, Copy)]
pub struct LogLine<'a> {
    /// 1-based line number in the file, for error messages.
    pub number: usize,
    pub read_mono_ns: Option<u64>,
    pub text: &'a str,
}

/// Splits a log into lines, taking off the optional `<mono_ns>\t` read stamp.
pub fn log_lines(text: &str) -> impl Iterator<Item = LogLine<'_>> {
    text.lines().enumerate().map(|(i, line)| {
        let (read_mono_ns, text) = match line.split_once('\t') {
            Some((stamp, rest)) if !stamp.is_empty() && stamp.bytes().all(|b| b.is_ascii_digit()) => {
                (stamp.parse().ok(), rest)
            }
            _ => (None, line),
        };
        LogLine { number: i + 1, read_mono_ns, text: text.trim_end_matches('\r') }
    })
}

/// The runtimes whose logs `stampede explain` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Go,
    Jvm,
    Node,
    Python,
    /// `<start_mono_ns> <end_mono_ns> <kind> <label…>` per line: events a
    /// test injected itself (SIGSTOP windows, CPU hogs).
    Generic,
}

impl Runtime {
    pub fn parse(name: &str) -> Result<Runtime, ExplainError> {
        Ok(match name {
            "go" => Runtime::Go,
            "jvm" | "java" => Runtime::Jvm,
            "node" | "nodejs" => Runtime::Node,
            "python" => Runtime::Python,
            "generic" => Runtime::Generic,
            other => return Err(ExplainError::Runtime(other.to_string())),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Runtime::Go => "go",
            Runtime::Jvm => "jvm",
            Runtime::Node => "node",
            Runtime::Python => "python",
            Runtime::Generic => "generic",
        }
    }
}

/// Events parsed from one log, and how their clock was aligned.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub events: Vec<Event>,
    /// How the log's times were put on CLOCK_MONOTONIC, for the report.
    pub clock: String,
    /// The alignment's error bound (0 for logs already on CLOCK_MONOTONIC).
    pub clock_error_ns: u64,
}

/// Parses the log at `path` written by `runtime`. `exec_mono_ns` is the
/// CLOCK_MONOTONIC time at which the server was exec'ed, when known: the
/// anchor for runtimes whose log counts from their own start.
pub fn parse_file(path: &Path, runtime: Runtime, exec_mono_ns: Option<u64>) -> Result<Parsed, ExplainError> {
    let text = std::fs::read_to_string(path).map_err(|cause| ExplainError::Read { path: path.to_path_buf(), cause })?;
    parse_text(&text, runtime, exec_mono_ns, &path.display().to_string())
}

/// Parses log text; `what` names its source in errors.
pub fn parse_text(text: &str, runtime: Runtime, exec_mono_ns: Option<u64>, what: &str) -> Result<Parsed, ExplainError> {
    match runtime {
        Runtime::Go => go::parse(text, exec_mono_ns, what),
        Runtime::Jvm => Ok(jvm::parse(text)),
        Runtime::Node => node::parse(text, exec_mono_ns, what),
        Runtime::Python => Ok(python::parse(text)),
        Runtime::Generic => generic::parse(text, what),
    }
}

/// Puts a runtime-relative clock on CLOCK_MONOTONIC.
///
/// A line read at `read` (monotonic) reporting an event that ended at `rel`
/// (runtime-relative, truncated to `resolution`) bounds the runtime's origin
/// from above: `origin ≤ read − rel`. The exec time bounds it from below (the
/// runtime cannot start before its process). The estimate is the tightest
/// upper bound less half the print resolution, kept above the exec time; the
/// error bound is half the resolution plus the spread the bounds leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alignment {
    pub origin_mono_ns: u64,
    pub error_ns: u64,
    pub method: &'static str,
}

impl Alignment {
    pub fn estimate(
        samples: &[(u64, Option<u64>)],
        resolution_ns: u64,
        exec_mono_ns: Option<u64>,
    ) -> Option<Alignment> {
        let upper = samples.iter().filter_map(|&(rel, read)| read.map(|r| r.saturating_sub(rel))).min();
        let half = resolution_ns / 2;
        match (upper, exec_mono_ns) {
            (Some(upper), Some(exec)) => Some(Alignment {
                origin_mono_ns: upper.saturating_sub(half).max(exec),
                error_ns: resolution_ns,
                method: "read times of the log lines, bounded below by the exec time",
            }),
            (Some(upper), None) => Some(Alignment {
                origin_mono_ns: upper.saturating_sub(half),
                error_ns: resolution_ns,
                method: "read times of the log lines",
            }),
            (None, Some(exec)) => Some(Alignment {
                origin_mono_ns: exec,
                // The runtime's clock starts after exec by the time to load and
                // initialise it: measured at a few milliseconds (docs/explain.md),
                // which is why read-stamped logs are preferred.
                error_ns: resolution_ns + 5_000_000,
                method: "the exec time of the server process",
            }),
            (None, None) => None,
        }
    }
}

/// Parses a decimal number of milliseconds (`0.018`, `12`) into nanoseconds.
pub(crate) fn ms_to_ns(text: &str) -> Option<u64> {
    let value: f64 = text.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then(|| (value * 1e6).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_stamps_are_split_off_and_other_tabs_kept() {
        let lines: Vec<_> = log_lines("123\tgc 1 @0.1s\nplain\tline\n").collect();
        assert_eq!(lines[0].read_mono_ns, Some(123));
        assert_eq!(lines[0].text, "gc 1 @0.1s");
        assert_eq!(lines[1].read_mono_ns, None);
        assert_eq!(lines[1].text, "plain\tline");
    }

    #[test]
    fn alignment_takes_the_tightest_read_bound_within_the_exec_bound() {
        // Origin truly at 1_000_000_000; reads lag by 30 µs and 2 ms.
        let samples = [(5_000_000, Some(1_005_030_000)), (9_000_000, Some(1_011_000_000))];
        let a = Alignment::estimate(&samples, 1_000_000, Some(999_800_000)).unwrap();
        assert!(a.origin_mono_ns.abs_diff(1_000_000_000) <= a.error_ns, "{a:?}");
        assert!(a.error_ns <= 1_000_000, "{a:?}");
        // A read bound below the exec time (a clock mix-up) never moves the origin before exec.
        let b = Alignment::estimate(&[(5_000_000, Some(1_004_000_000))], 1_000_000, Some(1_000_000_000)).unwrap();
        assert_eq!(b.origin_mono_ns, 1_000_000_000);
        let exec_only = Alignment::estimate(&[(5_000_000, None)], 1_000_000, Some(999_800_000)).unwrap();
        assert_eq!(exec_only.origin_mono_ns, 999_800_000);
        assert!(Alignment::estimate(&[(5, None)], 1, None).is_none());
    }
}
