//! What a check found, as data: one [`RuleResult`] per rule, and for a failure
//! the request and response that show it. The same structure is printed as a
//! table for people and serialised as `stampede.check/1` JSON for machines
//! (`stampede check --json`, and `stampede run`, which refuses to benchmark a
//! server that fails).

use crate::client::{Exchange, Response};
use crate::lenience::Lenience;

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
}
