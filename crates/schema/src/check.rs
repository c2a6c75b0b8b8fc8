//! The `stampede.check/1` document: what `stampede check --json` prints, one
//! verdict per contract rule, with the request and response that show a
//! failure. `stampede check` writes it; `stampede run` reads it to gate a
//! server before loading it (docs/check.md).

use serde::{Deserialize, Serialize};

/// Version of the JSON document; bump it when a field changes.
pub const SCHEMA: &str = "stampede.check/1";

/// The outcome of checking one server.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CheckReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The contract checked, e.g. `stampede` (its `name` field); empty in
    /// files written before contracts were data.
    pub contract: String,
    /// That contract's `version` field.
    pub contract_version: String,
    /// The base URL checked, normalised.
    pub url: String,
    /// The departures from a rule this contract counts as warnings rather
    /// than failures (its `warn` field, docs/contracts.md), e.g.
    /// `close-delimited-error`; empty for a strict contract.
    pub lenient: Vec<String>,
    /// Whose judgement that list follows, one line (the contract's
    /// `warn_note`, e.g. TechEmpower's verifier); empty when it says none.
    pub lenient_note: String,
    /// Number of rules that passed, warnings included.
    pub passed: usize,
    /// Of those, the rules that passed with a warning.
    pub warned: usize,
    /// Number of rules that failed.
    pub failed: usize,
    /// Every rule, in the order run.
    pub results: Vec<RuleResult>,
}

impl CheckReport {
    pub fn new(contract: &str, contract_version: &str, url: String, results: Vec<RuleResult>) -> CheckReport {
        let passed = results.iter().filter(|r| r.passed).count();
        CheckReport {
            schema: SCHEMA.to_string(),
            contract: contract.to_string(),
            contract_version: contract_version.to_string(),
            url,
            lenient: Vec::new(),
            lenient_note: String::new(),
            passed,
            warned: results.iter().filter(|r| r.passed && r.warning).count(),
            failed: results.len() - passed,
            results,
        }
    }

    /// True when no rule failed (warnings allowed: they never invalidate a run).
    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }

    /// The result of rule `id`, if there is such a rule.
    pub fn rule(&self, id: &str) -> Option<&RuleResult> {
        self.results.iter().find(|r| r.id == id)
    }

    /// The failed rules in one line each: `id: reason`.
    pub fn failures(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|r| !r.passed)
            .map(|r| format!("{}: {}", r.id, r.reason.as_deref().unwrap_or("failed")))
            .collect()
    }

    /// The rules that passed with a warning, one line each: `id: reason`.
    pub fn warnings(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|r| r.passed && r.warning)
            .map(|r| format!("{}: {}", r.id, r.reason.as_deref().unwrap_or("warning")))
            .collect()
    }
}

/// One rule's verdict.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RuleResult {
    /// Stable identifier, e.g. `fib-90`.
    pub id: String,
    /// What the rule requires, in one line.
    pub description: String,
    /// True when the rule passed, with or without a warning.
    pub passed: bool,
    /// True when it passed only because the contract counts what was found
    /// as a warning (`reason` says what); false for a clean pass or a failure.
    pub warning: bool,
    /// Why it failed or warned; `None` for a clean pass.
    pub reason: Option<String>,
    /// The offending request line, e.g. `GET /values/-1 HTTP/1.1` (for a
    /// warning, the first request that shows it).
    pub request: Option<String>,
    /// The offending response; `None` when it passed or no response came.
    pub response: Option<ResponseSummary>,
}

impl RuleResult {
    pub fn pass(id: &str, description: &str) -> RuleResult {
        RuleResult { id: id.to_string(), description: description.to_string(), passed: true, ..RuleResult::default() }
    }
}

/// A response as shown in a failure: enough to see what went wrong.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ResponseSummary {
    /// e.g. `HTTP/1.1 200 OK`.
    pub status_line: String,
    /// `Name: value` lines as received, non-printable bytes escaped.
    pub headers: Vec<String>,
    /// Body length in bytes (after removing chunked framing).
    pub body_bytes: usize,
    /// The first bytes of the body, escaped.
    pub body_prefix: String,
    /// From sending the request to the last body byte, milliseconds.
    pub elapsed_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_results_and_failures_name_the_rule() {
        let failed = RuleResult { id: "b".into(), reason: Some("why".into()), ..RuleResult::default() };
        let report = CheckReport::new("c", "1", "http://x/".into(), vec![RuleResult::pass("a", "a"), failed]);
        assert_eq!((report.passed, report.failed, report.all_passed()), (1, 1, false));
        assert_eq!(report.rule("b").unwrap().reason.as_deref(), Some("why"));
        assert_eq!(report.failures(), ["b: why"]);
        let back: CheckReport = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(back.failures(), ["b: why"]);
    }

    #[test]
    fn a_warning_passes_is_counted_and_listed() {
        let warned = RuleResult {
            id: "w".into(),
            passed: true,
            warning: true,
            reason: Some("hm".into()),
            ..RuleResult::default()
        };
        let report = CheckReport::new("c", "1", "http://x/".into(), vec![RuleResult::pass("a", "a"), warned]);
        assert_eq!((report.passed, report.warned, report.failed, report.all_passed()), (2, 1, 0, true));
        assert_eq!(report.warnings(), ["w: hm"]);
        assert!(report.failures().is_empty());
    }
}
