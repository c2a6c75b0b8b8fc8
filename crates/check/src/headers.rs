//! The "every response" rules of the contract: `Server`, `Date`, `Content-Type`,
//! body framing and the HTTP version, judged on every response the check
//! received, errors (400, 404) included. A server often gets these right on
//! its happy path and wrong in a hand-written error branch, so each rule looks
//! at all responses and shows the first that breaks it.
//!
//! Some answers are valid HTTP in a form a strict rule refuses (an error
//! delimited by closing the connection, an error in HTTP/1.0). Such a
//! [`Leniency`] fails under a contract that does not name it in `warn`, and
//! is a warning naming every path that shows it under one that does.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::client::{Exchange, Framing, Response};
use crate::report::RuleResult;
use crate::report::RuleVerdict;
use stampede_contract::{Contract, Leniency, ResponseCheck};

/// How far the server's `Date` may be from the checker's clock.
pub const DATE_TOLERANCE: Duration = Duration::from_secs(2);

/// What one rule says about one response.
enum Verdict {
    Pass,
    Fail(String),
    /// Valid HTTP in a form the rule does not ask for: a failure unless the
    /// contract counts this departure as a warning.
    Departs(Leniency, String),
    /// The rule cannot be judged on this response (another rule covers why).
    NotApplicable,
}

type Judge = fn(&Response) -> Verdict;

const RULES: &[(ResponseCheck, &str, &str, Judge)] = &[
    (ResponseCheck::HeaderServer, "header-server", "every response carries a non-empty Server header", server),
    (ResponseCheck::HeaderDate, "header-date", "every response carries one Date header, an IMF-fixdate", date_format),
    (ResponseCheck::DateClock, "date-clock", "every Date is within 2 s of the checker's clock", date_clock),
    (
        ResponseCheck::HeaderContentType,
        "header-content-type",
        "every response carries a Content-Type header",
        content_type,
    ),
    (
        ResponseCheck::Framing,
        "framing",
        "every body is framed by Content-Length or Transfer-Encoding: chunked",
        framing,
    ),
    (ResponseCheck::HttpVersion, "http-version", "every response is HTTP/1.1 or newer (not HTTP/1.0)", http_version),
];

/// Judges every response in `exchanges` by each of the contract's
/// `every_response` checks, in the order it lists them.
pub fn rules(contract: &Contract, exchanges: &[Exchange]) -> Vec<RuleResult> {
    contract
        .every_response
        .iter()
        .filter_map(|check| RULES.iter().find(|(c, ..)| c == check))
        .map(|(_, id, description, judge)| aggregate(id, description, *judge, contract, exchanges))
        .collect()
}

fn aggregate(
    id: &'static str,
    description: &str,
    judge: Judge,
    contract: &Contract,
    exchanges: &[Exchange],
) -> RuleResult {
    let mut judged = 0;
    let mut failed: Vec<(&Exchange, String)> = Vec::new();
    let mut departed: Vec<(&Exchange, Leniency, String)> = Vec::new();
    for exchange in exchanges {
        let Some(response) = exchange.response() else {
            continue;
        };
        match judge(response) {
            Verdict::Pass => judged += 1,
            Verdict::Departs(departure, reason) if contract.warns(departure) => {
                judged += 1;
                departed.push((exchange, departure, reason));
            }
            Verdict::Departs(departure, reason) => {
                judged += 1;
                let reason = format!("{reason}; this contract requires it (its `warn` lacks {})", departure.name());
                failed.push((exchange, reason));
            }
            Verdict::Fail(reason) => {
                judged += 1;
                failed.push((exchange, reason));
            }
            Verdict::NotApplicable => {}
        }
    }
    if judged == 0 {
        let reason = "no response could be judged by this rule (see the rules above)".to_string();
        return RuleResult::fail(id, description, reason, exchanges.first());
    }
    if let Some((exchange, reason)) = failed.first() {
        let reason = format!("{reason} ({} of {judged} responses fail; the first is shown)", failed.len());
        return RuleResult::fail(id, description, reason, Some(exchange));
    }
    match departed.first() {
        None => RuleResult::pass(id, description),
        Some((exchange, departure, reason)) => {
            let mut paths: Vec<&str> = departed.iter().map(|(e, ..)| e.request_line.as_str()).collect();
            paths.dedup();
            let reason = format!(
                "{reason}: {} ({} of {judged} responses; a warning, as this contract's `warn` has {})",
                paths.join(", "),
                departed.len(),
                departure.name()
            );
            RuleResult::warned(id, description, reason, Some(exchange))
        }
    }
}

fn server(r: &Response) -> Verdict {
    let values: Vec<&[u8]> = r.header_values("server").collect();
    if values.is_empty() {
        Verdict::Fail("no Server header".into())
    } else if values.iter().all(|v| v.trim_ascii().is_empty()) {
        Verdict::Fail("the Server header is empty".into())
    } else {
        Verdict::Pass
    }
}

/// The one `Date` value as a time, if it is an IMF-fixdate.
pub fn parse_date(r: &Response) -> Result<SystemTime, String> {
    let values: Vec<&[u8]> = r.header_values("date").collect();
    let value = match values.as_slice() {
        [] => return Err("no Date header".into()),
        [one] => String::from_utf8_lossy(one).trim().to_string(),
        _ => return Err(format!("{} Date headers, expected one", values.len())),
    };
    // httpdate also accepts the obsolete RFC 850 and asctime forms; formatting
    // the parsed time back and comparing keeps only IMF-fixdate.
    match httpdate::parse_http_date(&value) {
        Ok(time) if httpdate::fmt_http_date(time) == value => Ok(time),
        _ => Err(format!("Date {value:?} is not an IMF-fixdate such as \"Sun, 06 Nov 1994 08:49:37 GMT\"")),
    }
}

/// A missing Date fails; one in another format, or two, is a departure
/// (TechEmpower's verifier only warns about the format).
fn date_format(r: &Response) -> Verdict {
    match parse_date(r) {
        Ok(_) => Verdict::Pass,
        Err(reason) if r.header_values("date").next().is_none() => Verdict::Fail(reason),
        Err(reason) => Verdict::Departs(Leniency::DateFormat, reason),
    }
}

fn date_clock(r: &Response) -> Verdict {
    let Ok(date) = parse_date(r) else {
        return Verdict::NotApplicable;
    };
    // The server stamped the response between sending and receiving, and a
    // Date has whole seconds, so the earliest honest value is the sending
    // second, truncated.
    let sent_s = r.sent_at.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let earliest = UNIX_EPOCH + Duration::from_secs(sent_s) - DATE_TOLERANCE;
    let latest = r.received_at + DATE_TOLERANCE;
    let value = r.header("date").unwrap_or_default();
    if date < earliest {
        let behind = r.sent_at.duration_since(date).unwrap_or_default().as_secs();
        Verdict::Fail(format!("Date {value:?} is {} behind the checker's clock", human_seconds(behind)))
    } else if date > latest {
        let ahead = date.duration_since(r.received_at).unwrap_or_default().as_secs();
        Verdict::Fail(format!("Date {value:?} is {} ahead of the checker's clock", human_seconds(ahead)))
    } else {
        Verdict::Pass
    }
}

fn human_seconds(s: u64) -> String {
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} days", s / 86_400),
    }
}

fn content_type(r: &Response) -> Verdict {
    match r.header_values("content-type").next() {
        None => Verdict::Fail("no Content-Type header".into()),
        Some(v) if v.trim_ascii().is_empty() => Verdict::Fail("the Content-Type header is empty".into()),
        Some(_) => Verdict::Pass,
    }
}

/// An error status: where a close-delimited or HTTP/1.0 answer is a
/// departure of form rather than a broken answer.
fn is_error(r: &Response) -> bool {
    r.status >= 400
}

fn framing(r: &Response) -> Verdict {
    match &r.framing {
        Framing::Length(_) | Framing::Chunked => Verdict::Pass,
        Framing::NoBody => Verdict::NotApplicable,
        Framing::Unframed if is_error(r) => Verdict::Departs(
            Leniency::CloseDelimitedError,
            "error answers delimited by closing the connection (valid HTTP, but each costs a reconnect when it is loaded)"
                .into(),
        ),
        Framing::Unframed => Verdict::Fail(
            "neither Content-Length nor Transfer-Encoding: chunked; the body ends only when the connection closes"
                .into(),
        ),
        Framing::Invalid(reason) => Verdict::Fail(reason.clone()),
    }
}

fn http_version(r: &Response) -> Verdict {
    if r.version_minor == 1 {
        Verdict::Pass
    } else if is_error(r) {
        Verdict::Departs(Leniency::Http10Error, "error answers in HTTP/1.0".into())
    } else {
        Verdict::Fail(format!("answered {}", r.status_line()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(headers: &[(&str, &str)]) -> Response {
        let now = SystemTime::now();
        Response {
            version_minor: 1,
            status: 404,
            reason: "Not Found".into(),
            headers: headers.iter().map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())).collect(),
            body: vec![],
            framing: Framing::Length(0),
            sent_at: now,
            received_at: now,
            elapsed: Duration::ZERO,
            reused_connection: false,
        }
    }

    #[test]
    fn only_imf_fixdate_is_accepted() {
        let ok = response(&[("Date", "Sun, 06 Nov 1994 08:49:37 GMT")]);
        assert!(parse_date(&ok).is_ok());
        for bad in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37Z", ""] {
            assert!(parse_date(&response(&[("Date", bad)])).is_err(), "{bad}");
        }
        assert!(parse_date(&response(&[])).unwrap_err().contains("no Date"));
    }

    #[test]
    fn date_must_be_near_the_local_clock() {
        let now = httpdate::fmt_http_date(SystemTime::now());
        assert!(matches!(date_clock(&response(&[("Date", &now)])), Verdict::Pass));
        let stale = response(&[("Date", "Sun, 06 Nov 1994 08:49:37 GMT")]);
        let Verdict::Fail(reason) = date_clock(&stale) else { panic!("a 1994 date passed") };
        assert!(reason.contains("days behind"), "{reason}");
        let future = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(5));
        assert!(matches!(date_clock(&response(&[("Date", &future)])), Verdict::Fail(_)));
    }

    #[test]
    fn server_must_be_present_and_non_empty() {
        assert!(matches!(server(&response(&[("server", "x")])), Verdict::Pass));
        assert!(matches!(server(&response(&[("Server", "  ")])), Verdict::Fail(_)));
        assert!(matches!(server(&response(&[])), Verdict::Fail(_)));
    }
}
