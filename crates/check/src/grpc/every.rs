//! The checks judged over every gRPC answer of a check (a contract's
//! `every_call`), and a gRPC answer as a failure shows it: the HTTP status,
//! the headers, the trailers (marked), and the replies' bytes.

use stampede_grpc::{is_grpc_content_type, parse_status};

use crate::report::{escape, ResponseSummary, RuleResult, RuleVerdict, BODY_PREFIX_BYTES};
use stampede_contract::CallCheck;
use stampede_grpc::client::Exchange;

/// A check of one answer: `Err` says what is wrong with it.
type AnswerCheck = fn(&Exchange) -> Result<(), String>;

/// One result for `check` over all the answers in `log`.
pub fn judge(check: CallCheck, log: &[Exchange]) -> RuleResult {
    let (description, verdict): (&str, AnswerCheck) = match check {
        CallCheck::ContentType => {
            ("every answer has content-type application/grpc (or application/grpc+proto)", content_type)
        }
        CallCheck::StatusInTrailers => (
            "every answer ends with one grpc-status: in the trailers, or in a Trailers-Only answer's headers when no reply was sent",
            status_in_trailers,
        ),
    };
    let answered: Vec<&Exchange> =
        log.iter().filter(|e| e.http_status == Some(200) && e.reset.is_none() && e.error.is_none()).collect();
    let failures: Vec<(&Exchange, String)> =
        answered.iter().filter_map(|e| verdict(e).err().map(|why| (*e, why))).collect();
    match failures.first() {
        None => RuleResult::pass(check.id(), description),
        Some((ex, why)) => {
            let reason = format!("{} of {} answers: {why}", failures.len(), answered.len());
            result(check.id(), description, Err(reason), ex)
        }
    }
}

fn content_type(ex: &Exchange) -> Result<(), String> {
    match ex.values("content-type", false)[..] {
        [one] if is_grpc_content_type(one.as_bytes()) => Ok(()),
        [one] => Err(format!("content-type {one:?}, expected application/grpc")),
        [] => Err("no content-type".into()),
        _ => Err("more than one content-type".into()),
    }
}

fn status_in_trailers(ex: &Exchange) -> Result<(), String> {
    let (in_headers, in_trailers) = (ex.values("grpc-status", false), ex.values("grpc-status", true));
    let (place, values) = match &ex.trailers {
        Some(_) if !in_headers.is_empty() => return Err("grpc-status in the headers of an answer with trailers".into()),
        Some(_) => ("trailers", in_trailers),
        None if !ex.messages.is_empty() => {
            return Err(format!("{} replies and no trailers (the status must follow the replies)", ex.messages.len()))
        }
        None => ("Trailers-Only headers", in_headers),
    };
    match values[..] {
        [one] if parse_status(one.as_bytes()).is_some() => Ok(()),
        [one] => Err(format!("grpc-status {one:?} in the {place} is not a number")),
        [] => Err(format!("no grpc-status in the {place}")),
        _ => Err(format!("{} grpc-status fields in the {place}", values.len())),
    }
}

/// A result showing `ex`: a failure (`Err`), or a pass with a warning.
pub fn result(id: &str, description: &str, verdict: Result<Option<String>, String>, ex: &Exchange) -> RuleResult {
    let mut result = match verdict {
        Ok(None) => return RuleResult::pass(id, description),
        Ok(Some(warning)) => RuleResult::warned(id, description, warning, None),
        Err(reason) => RuleResult::fail(id, description, reason, None),
    };
    result.request = Some(ex.request_line.clone());
    result.response = Some(summary(ex));
    result
}

/// What the server sent, as a failure shows it.
fn summary(ex: &Exchange) -> ResponseSummary {
    let status_line = match (ex.http_status, &ex.error, ex.reset) {
        (_, Some(error), _) => format!("(no complete answer: {error})"),
        (Some(s), _, Some(reason)) => format!("HTTP/2 {s}, then RST_STREAM {reason:?}"),
        (None, _, Some(reason)) => format!("RST_STREAM {reason:?}"),
        (Some(s), _, None) => format!("HTTP/2 {s}"),
        (None, None, None) => "(no answer)".into(),
    };
    let mut headers: Vec<String> =
        ex.headers.iter().map(|(n, v)| format!("{n}: {}", escape(v.as_bytes(), usize::MAX))).collect();
    for (n, v) in ex.trailers.iter().flatten() {
        headers.push(format!("{n}: {} (trailer)", escape(v.as_bytes(), usize::MAX)));
    }
    let body: Vec<u8> = ex.messages.iter().flat_map(|m| stampede_grpc::frame(m)).collect();
    ResponseSummary {
        status_line,
        headers,
        body_bytes: body.len(),
        body_prefix: escape(&body, BODY_PREFIX_BYTES),
        elapsed_ms: ex.elapsed.as_secs_f64() * 1000.0,
    }
}
