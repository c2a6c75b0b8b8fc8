//! The report as people read it: which contract was checked, one line per
//! rule with PASS, WARN or FAIL, the offending request and response under
//! each failure or warning, and a count at the end. A contract with a `warn`
//! list says so under its name, so a reader knows which departures it lets
//! pass.
//! Colour only when the caller says the output is a terminal that wants it.

use std::fmt::Write;

use crate::report::{Report, RuleResult};

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";
const INDENT: &str = "      ";

/// Renders `report` as a text table ending with `N passed, M failed`.
pub fn text(report: &Report, color: bool) -> String {
    let width = report.results.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(out, "contract {} (version {}), {}", report.contract, report.contract_version, report.url);
    if !report.lenient.is_empty() {
        let note = if report.lenient_note.is_empty() { String::new() } else { format!(" ({})", report.lenient_note) };
        let _ = writeln!(out, "warnings, not failures, under this contract{note}: {}", report.lenient.join(", "));
    }
    for result in &report.results {
        let (word, paint) = match (result.passed, result.warning) {
            (true, false) => ("PASS", GREEN),
            (true, true) => ("WARN", YELLOW),
            (false, _) => ("FAIL", RED),
        };
        let word = if color { format!("{paint}{word}{RESET}") } else { word.to_string() };
        let _ = writeln!(out, "{word}  {:width$}  {}", result.id, result.description);
        if !result.passed || result.warning {
            failure(&mut out, result);
        }
    }
    let warned = if report.warned > 0 { format!(" ({} with a warning)", report.warned) } else { String::new() };
    let _ = writeln!(out, "{} passed{warned}, {} failed", report.passed, report.failed);
    out
}

fn failure(out: &mut String, result: &RuleResult) {
    if let Some(reason) = &result.reason {
        let _ = writeln!(out, "{INDENT}{reason}");
    }
    if let Some(request) = &result.request {
        let _ = writeln!(out, "{INDENT}> {request}");
    }
    if let Some(response) = &result.response {
        let _ = writeln!(out, "{INDENT}< {}", response.status_line);
        for header in &response.headers {
            let _ = writeln!(out, "{INDENT}< {header}");
        }
        let _ = writeln!(out, "{INDENT}< (body, {} bytes) \"{}\"", response.body_bytes, response.body_prefix);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RuleVerdict;

    #[test]
    fn failures_show_reason_and_request_and_end_with_counts() {
        let report = Report::new(
            "stampede",
            "2",
            "http://x/".into(),
            vec![
                RuleResult::pass("plaintext", "GET /plaintext answers 200"),
                RuleResult::fail(
                    "values-negative",
                    "GET /values/-1 answers 400",
                    "status 200, expected 400".into(),
                    None,
                ),
            ],
        );
        let text = text(&report, false);
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert!(text.starts_with("contract stampede (version "), "{text}");
        assert_eq!(lines[0], "PASS  plaintext        GET /plaintext answers 200");
        assert_eq!(lines[1], "FAIL  values-negative  GET /values/-1 answers 400");
        assert_eq!(lines[2], "      status 200, expected 400");
        assert_eq!(lines.last(), Some(&"1 passed, 1 failed"));
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn warnings_show_their_reason_and_the_lenient_contract_says_so() {
        let mut report = Report::new(
            "sequence",
            "2",
            "http://x/".into(),
            vec![RuleResult::warned("framing", "every body is framed", "close-delimited: GET /x".into(), None)],
        );
        report.lenient = vec!["close-delimited-error".into()];
        let text = text(&report, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "warnings, not failures, under this contract: close-delimited-error");
        assert_eq!(lines[2], "WARN  framing  every body is framed");
        assert_eq!(lines[3], "      close-delimited: GET /x");
        assert_eq!(lines.last(), Some(&"1 passed (1 with a warning), 0 failed"));
    }
}
