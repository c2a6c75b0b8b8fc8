//! Events written by hand or by a test that injects trouble it knows about:
//! `<start_mono_ns> <end_mono_ns> <kind> <label…>` per line, `#` comments
//! allowed, kind one of `gc`, `safepoint`, `pause`, `cpu_saturation`,
//! `runqueue`. The validation tests write SIGSTOP/SIGCONT windows this way.

use super::{log_lines, Parsed};
use crate::error::ExplainError;
use crate::event::{Event, Kind};

pub fn parse(text: &str, what: &str) -> Result<Parsed, ExplainError> {
    let mut events = Vec::new();
    for line in log_lines(text) {
        let body = line.text.trim();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let bad =
            |reason: &str| ExplainError::Line { path: what.into(), line: line.number, reason: reason.to_string() };
        let mut fields = body.splitn(4, char::is_whitespace);
        let start: u64 = fields
            .next()
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| bad("expected <start_mono_ns> <end_mono_ns> <kind> <label>"))?;
        let end: u64 =
            fields.next().and_then(|f| f.parse().ok()).ok_or_else(|| bad("the second field must be <end_mono_ns>"))?;
        if end < start {
            return Err(bad("end_mono_ns is before start_mono_ns"));
        }
        let kind = fields
            .next()
            .and_then(Kind::parse)
            .ok_or_else(|| bad("kind must be gc, safepoint, pause, cpu_saturation or runqueue"))?;
        let label = fields.next().unwrap_or(kind.name()).trim().to_string();
        let stopped = matches!(kind, Kind::Gc | Kind::Safepoint | Kind::Pause);
        events.push(Event { start_mono_ns: start, end_mono_ns: end, kind, label, stopped, error_ns: 0, owner: None });
    }
    Ok(Parsed { events, clock: "given on CLOCK_MONOTONIC".into(), clock_error_ns: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_injected_windows_and_names_the_bad_line() {
        let parsed = parse("# injected\n100 200 pause SIGSTOP 0.1 ms\n", "x.log").unwrap();
        assert_eq!(parsed.events.len(), 1);
        assert_eq!(parsed.events[0].label, "SIGSTOP 0.1 ms");
        assert_eq!(parsed.events[0].kind, Kind::Pause);
        let err = parse("1 2 gc\n5 3 gc\n", "x.log").unwrap_err().to_string();
        assert_eq!(err, "x.log:2: end_mono_ns is before start_mono_ns");
        assert!(parse("1 2 tea\n", "x.log").is_err());
    }
}
