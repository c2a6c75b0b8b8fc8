//! The report as people read it: which contract was checked, one line per
//! rule with PASS or FAIL, the offending request and response under each
//! failure, and a count at the end.
//! Colour only when the caller says the output is a terminal that wants it.

use std::fmt::Write;

use crate::report::{Report, RuleResult};

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";
const INDENT: &str = "      ";

/// Renders `report` as a text table ending with `N passed, M failed`.
pub fn text(report: &Report, color: bool) -> String {
    let width = report.results.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(out, "contract {} (version {}), {}", report.contract, report.contract_version, report.url);
    for result in &report.results {
        let (word, paint) = if result.passed { ("PASS", GREEN) } else { ("FAIL", RED) };
        let word = if color { format!("{paint}{word}{RESET}") } else { word.to_string() };
        let _ = writeln!(out, "{word}  {:width$}  {}", result.id, result.description);
        if !result.passed {
            failure(&mut out, result);
        }
    }
    let _ = writeln!(out, "{} passed, {} failed", report.passed, report.failed);
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
}
