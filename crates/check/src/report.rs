//! What a check found, as data: one [`RuleResult`] per rule, and for a failure
//! the request and response that show it. The same structure is printed as a
//! table for people and serialised as `stampede.check/1` JSON for machines
//! (`stampede check --json`, and `stampede run`, which refuses to benchmark a
//! server that fails).

use crate::client::{Exchange, Response};
use crate::lenience::Lenience;
pub use stampede_contract::escape;

/// The document, declared once in stampede-schema (`stampede run` reads it).
pub use stampede_schema::check::{CheckReport as Report, ResponseSummary, RuleResult, SCHEMA};

/// How many body bytes a failure shows.
pub const BODY_PREFIX_BYTES: usize = 200;

/// Verdicts made from what the checker saw on the wire.
pub trait RuleVerdict {
    /// A failure, showing `exchange` when there is one.
    fn fail(id: &str, description: &str, reason: String, exchange: Option<&Exchange>) -> Self;
    /// A pass with a warning: `reason` says what was found, `exchange` shows it.
    fn warned(id: &str, description: &str, reason: String, exchange: Option<&Exchange>) -> Self;
}

impl RuleVerdict for RuleResult {
    fn fail(id: &str, description: &str, reason: String, exchange: Option<&Exchange>) -> RuleResult {
        RuleResult {
            id: id.to_string(),
            description: description.to_string(),
            passed: false,
            warning: false,
            reason: Some(reason),
            request: exchange.map(|e| e.request_line.clone()),
            response: exchange.and_then(Exchange::response).map(summary),
        }
    }

    fn warned(id: &str, description: &str, reason: String, exchange: Option<&Exchange>) -> RuleResult {
        RuleResult { passed: true, warning: true, ..RuleResult::fail(id, description, reason, exchange) }
    }
}

/// Pass or fail by `verdict`, showing `exchange` on failure; a pass with a
/// warning when `lenience` noted a departure the contract allows.
pub fn judged(
    id: &str,
    description: &str,
    verdict: Result<(), String>,
    lenience: &Lenience,
    exchange: &Exchange,
) -> RuleResult {
    match (verdict, lenience.warning()) {
        (Ok(()), None) => RuleResult::pass(id, description),
        (Ok(()), Some(warning)) => RuleResult::warned(id, description, warning, Some(exchange)),
        (Err(reason), _) => RuleResult::fail(id, description, reason, Some(exchange)),
    }
}

/// A response as a failure shows it.
pub fn summary(r: &Response) -> ResponseSummary {
    ResponseSummary {
        status_line: r.status_line(),
        headers: r.headers.iter().map(|(n, v)| format!("{n}: {}", escape(v, usize::MAX))).collect(),
        body_bytes: r.body.len(),
        body_prefix: escape(&r.body, BODY_PREFIX_BYTES),
        elapsed_ms: r.elapsed.as_secs_f64() * 1000.0,
    }
}
