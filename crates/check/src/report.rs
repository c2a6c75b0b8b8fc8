//! What a check found, as data: the contract checked (name and version), one
//! [`RuleResult`] per rule, and for a failure the request and response that
//! show it. The same structure is printed as a
//! table for people and serialised as `stampede.check/1` JSON for machines
//! (`stampede check --json`, and `stampede run`, which refuses to benchmark a
//! server that fails).

use serde::Serialize;

use crate::client::{Exchange, Response};
use crate::contract::Contract;

/// Version of the JSON document; bump it when a field changes.
pub const SCHEMA: &str = "stampede.check/1";

/// How many body bytes a failure shows.
pub const BODY_PREFIX_BYTES: usize = 200;

/// The outcome of checking one server.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The contract checked, e.g. `stampede` (its `name` field).
    pub contract: String,
    /// That contract's `version` field.
    pub contract_version: String,
    /// The base URL checked, normalised.
    pub url: String,
    /// Number of rules that passed.
    pub passed: usize,
    /// Number of rules that failed.
    pub failed: usize,
    /// Every rule, in the order run.
    pub results: Vec<RuleResult>,
}

impl Report {
    pub fn new(contract: &Contract, url: String, results: Vec<RuleResult>) -> Report {
        let passed = results.iter().filter(|r| r.passed).count();
        Report {
            schema: SCHEMA,
            contract: contract.name.clone(),
            contract_version: contract.version.clone(),
            url,
            passed,
            failed: results.len() - passed,
            results,
        }
    }

    /// True when every rule passed.
    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }

    /// The result of rule `id`, if there is such a rule.
    pub fn rule(&self, id: &str) -> Option<&RuleResult> {
        self.results.iter().find(|r| r.id == id)
    }
}

/// One rule's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    /// Stable identifier, e.g. `fib-4000`.
    pub id: String,
    /// What the rule requires, in one line.
    pub description: String,
    pub passed: bool,
    /// Why it failed; `None` when it passed.
    pub reason: Option<String>,
    /// The offending request line, e.g. `GET /values/-1 HTTP/1.1`.
    pub request: Option<String>,
    /// The offending response; `None` when it passed or no response came.
    pub response: Option<ResponseSummary>,
}

impl RuleResult {
    pub fn pass(id: &str, description: &str) -> RuleResult {
        RuleResult {
            id: id.to_string(),
            description: description.to_string(),
            passed: true,
            reason: None,
            request: None,
            response: None,
        }
    }

    pub fn fail(
        id: &str,
        description: &str,
        reason: String,
        exchange: Option<&Exchange>,
    ) -> RuleResult {
        RuleResult {
            id: id.to_string(),
            description: description.to_string(),
            passed: false,
            reason: Some(reason),
            request: exchange.map(|e| e.request_line.clone()),
            response: exchange
                .and_then(Exchange::response)
                .map(ResponseSummary::of),
        }
    }

    /// Pass or fail by `verdict`, showing `exchange` on failure.
    pub fn judged(
        id: &str,
        description: &str,
        verdict: Result<(), String>,
        exchange: &Exchange,
    ) -> RuleResult {
        match verdict {
            Ok(()) => RuleResult::pass(id, description),
            Err(reason) => RuleResult::fail(id, description, reason, Some(exchange)),
        }
    }
}

/// A response as shown in a failure: enough to see what went wrong.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseSummary {
    /// e.g. `HTTP/1.1 200 OK`.
    pub status_line: String,
    /// `Name: value` lines as received, non-printable bytes escaped.
    pub headers: Vec<String>,
    /// Body length in bytes (after removing chunked framing).
    pub body_bytes: usize,
    /// The first [`BODY_PREFIX_BYTES`] bytes of the body, escaped.
    pub body_prefix: String,
    /// From sending the request to the last body byte, milliseconds.
    pub elapsed_ms: f64,
}

impl ResponseSummary {
    pub fn of(r: &Response) -> ResponseSummary {
        ResponseSummary {
            status_line: r.status_line(),
            headers: r
                .headers
                .iter()
                .map(|(n, v)| format!("{n}: {}", escape(v, usize::MAX)))
                .collect(),
            body_bytes: r.body.len(),
            body_prefix: escape(&r.body, BODY_PREFIX_BYTES),
            elapsed_ms: r.elapsed.as_secs_f64() * 1000.0,
        }
    }
}

/// The first `limit` bytes, printable ASCII as is, everything else escaped
/// (`\n`, `\r`, `\t`, `\\`, `\xNN`), so every byte is visible and exact.
pub fn escape(bytes: &[u8], limit: usize) -> String {
    let mut out = String::new();
    for &b in bytes.iter().take(limit) {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    if bytes.len() > limit {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_shows_every_byte() {
        assert_eq!(escape(b"Hello, World!\n", 200), "Hello, World!\\n");
        assert_eq!(escape(b"a\\b\x00\xc3\xa9", 200), "a\\\\b\\x00\\xc3\\xa9");
        assert_eq!(escape(b"abcdef", 3), "abc…");
    }

    #[test]
    fn counts_follow_results() {
        let report = Report::new(
            &crate::builtin::builtin("sequence").unwrap(),
            "http://x/".into(),
            vec![
                RuleResult::pass("a", "a"),
                RuleResult::fail("b", "b", "why".into(), None),
            ],
        );
        assert_eq!(
            (report.passed, report.failed, report.all_passed()),
            (1, 1, false)
        );
        assert_eq!(report.rule("b").unwrap().reason.as_deref(), Some("why"));
    }
}
