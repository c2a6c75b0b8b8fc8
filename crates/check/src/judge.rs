//! Judging one response against one rule of a contract: the status (a code
//! or a class), the media type of the one `Content-Type`, required headers,
//! the body (exact bytes, JSON-equal, or a named generator's output) and a
//! minimum time. A failure says where the response first departs from the
//! rule, down to the byte or JSON element, so a wrong digit in a 10 MB body
//! is found without a diff tool.

use std::time::Duration;

use serde_json::Value;

use crate::answer::Expected;
use crate::client::{Exchange, Response};
use crate::lenience::Lenience;
use crate::request::Prepared;
use stampede_contract::Answer;
use stampede_contract::{Leniency, Rule, Status};

/// Slack for event-loop timers with millisecond resolution. libuv (Node.js)
/// starts a timer from its loop clock, read after the poll that delivered the
/// request and truncated to whole milliseconds (from CLOCK_MONOTONIC_COARSE
/// when that ticks every millisecond), so a correct `setTimeout(…, 100)` can
/// end up to 2 ms before 100 ms have passed on a precise clock.
const TIMER_GRANULARITY: Duration = Duration::from_millis(2);

/// Bytes of context shown either side of the first difference in a body.
const CONTEXT_BYTES: usize = 24;

/// What the body must be.
#[derive(Debug, Clone)]
pub enum Body {
    /// These bytes exactly.
    Exact(Vec<u8>),
    /// This JSON value, numbers compared digit for digit.
    Json(Value),
    /// Anything.
    Any,
}

/// A rule ready to judge: the contract's [`Rule`] with its body computed.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub description: String,
    pub path: String,
    pub status: Status,
    pub media_type: Option<String>,
    pub charset: Option<String>,
    pub charset_required: bool,
    pub has_headers: Vec<String>,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// The response must not arrive sooner than this after the request.
    pub min_elapsed: Option<Duration>,
    /// The body computed from the request sent, when the rule says how.
    pub answer: Option<Answer>,
    /// The `Content-Encoding` required (answer.rs).
    pub content_encoding: Option<String>,
}

impl Case {
    /// Computes the expected body (generators run here, once per check).
    pub fn from_rule(rule: &Rule) -> Case {
        let body = if let Some(text) = &rule.body {
            Body::Exact(text.as_bytes().to_vec())
        } else if let Some(json) = &rule.json {
            Body::Json(serde_json::from_str(json).expect("validated when the contract was loaded"))
        } else if let Some(g) = rule.generate {
            let bytes = g.name.body(g.n);
            if g.name.is_json() {
                Body::Json(serde_json::from_slice(&bytes).expect("generators write valid JSON"))
            } else {
                Body::Exact(bytes)
            }
        } else {
            Body::Any
        };
        Case {
            id: rule.id.clone(),
            description: rule.describe(),
            path: rule.path.clone(),
            status: rule.status,
            media_type: rule.content_type.clone(),
            charset: rule.charset.clone(),
            charset_required: rule.charset_required,
            has_headers: rule.has_headers.clone(),
            headers: rule.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            body,
            min_elapsed: rule.min_elapsed_ms.map(Duration::from_millis),
            answer: rule.answer,
            content_encoding: rule.content_encoding.clone(),
        }
    }

    /// `Err(reason)` when the exchange breaks this rule; departures the
    /// contract allows are noted in `lenience` instead.
    /// `request` is what was sent, which an `answer` is computed from.
    pub fn judge(&self, request: &Prepared, exchange: &Exchange, lenience: &mut Lenience) -> Result<(), String> {
        let response = exchange.result.as_ref().map_err(|e| e.to_string())?;
        let success = self.status == Status::Exact(200) && response.status / 100 == 2;
        let allowed = |lenience: &mut Lenience| {
            success && lenience.allow(Leniency::SuccessStatus, || format!("status {}, expected 200", response.status))
        };
        if !self.status.matches(response.status) && !allowed(lenience) {
            return Err(format!("status {}, expected {}", response.status, self.status));
        }
        if let Some(want) = &self.media_type {
            check_media_type(response, want, self.charset.as_deref(), self.charset_required)?;
        }
        for name in &self.has_headers {
            match response.header_values(name).next() {
                None => return Err(format!("no {name} header")),
                Some(v) if v.trim_ascii().is_empty() => return Err(format!("the {name} header is empty")),
                Some(_) => {}
            }
        }
        for (name, want) in &self.headers {
            match response.header(name) {
                None => return Err(format!("no {name} header, expected {name}: {want}")),
                Some(got) if got.trim() != want => return Err(format!("{name}: {:?}, expected {want:?}", got.trim())),
                Some(_) => {}
            }
        }
        let body = crate::answer::decoded(response, self.content_encoding.as_deref())?;
        match self.answer.map(|a| crate::answer::expected(a, request)).transpose()? {
            Some(Expected::Exact(want)) => exact_body(&want, &body, lenience)?,
            Some(Expected::Items { count, m }) => crate::answer::item_totals(&body, count, m, lenience)?,
            None => {}
        }
        match &self.body {
            Body::Any => {}
            Body::Exact(want) => exact_body(want, &body, lenience)?,
            Body::Json(want) => {
                let got: Value = serde_json::from_slice(&body).map_err(|e| format!("body is not JSON: {e}"))?;
                if let Some(difference) = first_difference(want, &got, &mut String::new(), lenience) {
                    return Err(format!("JSON body differs {difference}"));
                }
            }
        }
        if let Some(min) = self.min_elapsed {
            if response.elapsed + TIMER_GRANULARITY < min {
                return Err(format!(
                    "answered after {:.1} ms, expected at least {} ms",
                    response.elapsed.as_secs_f64() * 1000.0,
                    min.as_millis()
                ));
            }
        }
        Ok(())
    }
}

/// The body is `want` exactly or, under a contract that allows it, in
/// another case (`message-case`) or inside a longer body (`extra-bytes`):
/// TechEmpower's verifier looks for the lower-cased message in the lower-cased
/// body.
fn exact_body(want: &[u8], got: &[u8], lenience: &mut Lenience) -> Result<(), String> {
    if want == got {
        return Ok(());
    }
    let shown = |bytes: &[u8]| crate::report::escape(bytes, 60);
    let line_ending = got.strip_prefix(want).is_some_and(|rest| rest == b"\n" || rest == b"\r\n");
    if line_ending
        && lenience.allow(Leniency::TrailingNewline, || format!("\"{}\" for \"{}\"", shown(got), shown(want)))
    {
        return Ok(());
    }
    let (want_lower, got_lower) = (want.to_ascii_lowercase(), got.to_ascii_lowercase());
    let at = got_lower.windows(want.len().max(1)).position(|w| w == want_lower.as_slice());
    let allowed = match at {
        Some(at) if !want.is_empty() => {
            let case_ok = &got[at..at + want.len()] == want
                || lenience.allow(Leniency::MessageCase, || {
                    format!("\"{}\" for \"{}\"", shown(&got[at..at + want.len()]), shown(want))
                });
            let bytes_ok = got.len() == want.len()
                || lenience.allow(Leniency::ExtraBytes, || {
                    format!("{} bytes around the expected body: \"{}\"", got.len() - want.len(), shown(got))
                });
            case_ok && bytes_ok
        }
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        exact_difference(want, got)
    }
}

/// `Err` naming the first differing byte, with context, and for a
/// space-separated list the item it falls in.
fn exact_difference(want: &[u8], got: &[u8]) -> Result<(), String> {
    if want == got {
        return Ok(());
    }
    let short = |bytes: &[u8]| crate::report::escape(bytes, 60);
    if want.len() <= 60 && got.len() <= 60 {
        return Err(format!(
            "body is \"{}\" ({} bytes), expected exactly \"{}\" ({} bytes)",
            short(got),
            got.len(),
            short(want),
            want.len()
        ));
    }
    let at = want.iter().zip(got).position(|(w, g)| w != g).unwrap_or(want.len().min(got.len()));
    let from = at.saturating_sub(CONTEXT_BYTES);
    let window = |bytes: &[u8]| {
        let end = (at + CONTEXT_BYTES).min(bytes.len());
        let prefix = if from > 0 { "…" } else { "" };
        let suffix = if end < bytes.len() { "…" } else { "" };
        format!("\"{prefix}{}{suffix}\"", crate::report::escape(&bytes[from.min(end)..end], usize::MAX))
    };
    let item = if want.contains(&b' ') {
        let index = want[..at.min(want.len())].iter().filter(|b| **b == b' ').count();
        format!(" (item {index}, counting from 0, of the space-separated list)")
    } else {
        String::new()
    };
    Err(format!(
        "body differs from byte {at}{item}: got {}, expected {} ({} bytes received, {} expected)",
        window(got),
        window(want),
        got.len(),
        want.len()
    ))
}

/// The one `Content-Type` must name `want`; with `charset`, that is the only
/// parameter allowed and it must have this value (case-insensitive); with
/// `required`, it must be there.
fn check_media_type(response: &Response, want: &str, charset: Option<&str>, required: bool) -> Result<(), String> {
    let values: Vec<&[u8]> = response.header_values("content-type").collect();
    let value = match values.as_slice() {
        [] => return Err(format!("no Content-Type header, expected {want}")),
        [one] => String::from_utf8_lossy(one).into_owned(),
        _ => return Err(format!("{} Content-Type headers, expected one", values.len())),
    };
    let parsed: mime::Mime =
        value.trim().parse().map_err(|_| format!("Content-Type {value:?} is not a media type, expected {want}"))?;
    if !parsed.essence_str().eq_ignore_ascii_case(want) {
        return Err(format!("Content-Type {value:?}, expected {want}"));
    }
    if let Some(charset) = charset {
        if required && parsed.get_param(mime::CHARSET).is_none() {
            return Err(format!("Content-Type {value:?} has no charset, expected {want}; charset={charset}"));
        }
        for (name, param) in parsed.params() {
            if name != mime::CHARSET || !param.as_str().eq_ignore_ascii_case(charset) {
                return Err(format!("Content-Type {value:?}: the only parameter allowed is charset={charset}"));
            }
        }
    }
    Ok(())
}

/// Where `got` first departs from `want`, as `at <path>: expected …, got …`.
/// Numbers compare exactly: integers up to 64 bits are kept as integers by
/// serde_json, so a Fibonacci number rounded through a double differs in its
/// digits, and `7.0` (a float) is not `7` (an integer). A key in another case,
/// an extra key and a string in another case are departures `lenience` may
/// allow (TechEmpower's verifier lower-cases keys and the message).
fn first_difference(want: &Value, got: &Value, path: &mut String, lenience: &mut Lenience) -> Option<String> {
    let here = |path: &str| {
        if path.is_empty() {
            "the top level".to_string()
        } else {
            path.to_string()
        }
    };
    match (want, got) {
        (Value::Array(w), Value::Array(g)) => {
            for (i, (wi, gi)) in w.iter().zip(g).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = first_difference(wi, gi, path, lenience);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            (w.len() != g.len()).then(|| format!("at {}: expected {} items, got {}", here(path), w.len(), g.len()))
        }
        (Value::Object(w), Value::Object(g)) => {
            let mut matched = Vec::new();
            for (key, wv) in w {
                let got_key = match g.get_key_value(key) {
                    Some((k, _)) => k,
                    None => match g.keys().find(|k| k.eq_ignore_ascii_case(key)) {
                        Some(k) if lenience.allow(Leniency::KeyCase, || format!("key {k:?} for {key:?}")) => k,
                        _ => return Some(format!("at {}: missing key {key:?}", here(path))),
                    },
                };
                matched.push(got_key.as_str());
                let len = path.len();
                path.push_str(&format!(".{key}"));
                let found = first_difference(wv, &g[got_key], path, lenience);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            let extra = g.keys().find(|k| !matched.contains(&k.as_str()))?;
            if lenience.allow(Leniency::ExtraKeys, || format!("unexpected key {extra:?}")) {
                return None;
            }
            Some(format!("at {}: unexpected key {extra:?}", here(path)))
        }
        // Only a string that differs, and only in case, is the departure:
        // an exact one is no warning (fasthttp's exact "Hello, World!" was
        // warned as message-case before this guard).
        (Value::String(w), Value::String(g))
            if w != g
                && w.eq_ignore_ascii_case(g)
                && lenience.allow(Leniency::MessageCase, || format!("{g:?} for {w:?}")) =>
        {
            None
        }
        _ if want == got => None,
        _ => Some(format!("at {}: expected {}, got {}", here(path), short(want), short(got))),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(want: &str, got: &str) -> Option<String> {
        let want: Value = serde_json::from_str(want).unwrap();
        let got: Value = serde_json::from_str(got).unwrap();
        first_difference(&want, &got, &mut String::new(), &mut Lenience::new(&[]))
    }

    impl Case {
        fn judge_strict(&self, exchange: &Exchange) -> Result<(), String> {
            let request = crate::request::prepare(&self.path, None, &mut rand::SeedableRng::seed_from_u64(0)).unwrap();
            self.judge(&request, exchange, &mut Lenience::new(&[]))
        }
    }

    #[test]
    fn key_case_extra_keys_and_message_case_are_warnings_only_where_allowed() {
        let want: Value = serde_json::from_str(r#"{"id":1,"randomNumber":2}"#).unwrap();
        let got: Value = serde_json::from_str(r#"{"id":1,"randomnumber":2,"x":0}"#).unwrap();
        let all = [Leniency::KeyCase, Leniency::ExtraKeys];
        let mut lenient = Lenience::new(&all);
        assert_eq!(first_difference(&want, &got, &mut String::new(), &mut lenient), None);
        let warning = lenient.warning().unwrap();
        assert!(warning.contains("key \"randomnumber\" for \"randomNumber\" (key-case)"), "{warning}");
        assert!(warning.contains("unexpected key \"x\" (extra-keys)"), "{warning}");
        let mut strict = Lenience::new(&all[..1]);
        let found = first_difference(&want, &got, &mut String::new(), &mut strict).unwrap();
        assert_eq!(found, "at the top level: unexpected key \"x\"");
        assert!(diff(r#"{"m":"Hello, World!"}"#, r#"{"m":"Hello, world!"}"#).is_some());
        let mut lenient = Lenience::new(&[Leniency::MessageCase]);
        assert_eq!(exact_body(b"Hello, World!", b"Hello, world!", &mut lenient), Ok(()));
        assert!(exact_body(b"Hello, World!", b"Hello, world!\n", &mut lenient).is_err());
        let mut lenient = Lenience::new(&[Leniency::MessageCase, Leniency::ExtraBytes]);
        assert_eq!(exact_body(b"Hello, World!", b"Hello, world!\n", &mut lenient), Ok(()));
        assert!(exact_body(b"Hello, World!", b"Hello, Word!", &mut lenient).is_err());
    }

    #[test]
    fn an_exact_message_is_no_message_case_warning() {
        let want: Value = serde_json::from_str(r#"{"message":"Hello, World!"}"#).unwrap();
        let mut lenient = Lenience::new(&[Leniency::MessageCase, Leniency::KeyCase, Leniency::ExtraKeys]);
        assert_eq!(first_difference(&want, &want.clone(), &mut String::new(), &mut lenient), None);
        assert_eq!(lenient.warning(), None, "Go fasthttp's exact answer was warned as message-case");
        let mut lenient = Lenience::new(&[Leniency::MessageCase, Leniency::ExtraBytes]);
        assert_eq!(exact_body(b"Hello, World!", b"Hello, World!", &mut lenient), Ok(()));
        assert_eq!(lenient.warning(), None);
    }

    #[test]
    fn numbers_compare_digit_for_digit() {
        assert_eq!(diff("[1, 2]", "[1,2]"), None);
        assert_eq!(diff("7", "7.0").unwrap(), "at the top level: expected 7, got 7.0");
        let rounded = diff("[0,1779979416004714189]", "[0,1779979416004714200]").unwrap();
        assert_eq!(rounded, "at [1]: expected 1779979416004714189, got 1779979416004714200");
    }

    #[test]
    fn objects_must_have_exactly_the_keys() {
        assert_eq!(diff(r#"{"a":1}"#, r#"{ "a" : 1 }"#), None);
        assert!(diff(r#"{"a":1}"#, r#"{"a":1,"b":2}"#).unwrap().contains("unexpected key \"b\""));
        assert!(diff(r#"{"a":1}"#, r#"{"b":1}"#).unwrap().contains("missing key \"a\""));
        assert_eq!(diff(r#"{"r":"1"}"#, r#"{"r":1}"#).unwrap(), "at .r: expected \"1\", got 1");
    }

    #[test]
    fn arrays_report_length_after_common_prefix() {
        assert_eq!(diff("[1,2,3]", "[1,2]").unwrap(), "at the top level: expected 3 items, got 2");
    }

    fn exchange(status: u16, content_type: &str, body: &[u8], elapsed: Duration) -> Exchange {
        let now = std::time::SystemTime::now();
        Exchange {
            request_line: "GET / HTTP/1.1".into(),
            result: Ok(Response {
                version_minor: 1,
                status,
                reason: "OK".into(),
                headers: vec![
                    ("Server".into(), b"t".to_vec()),
                    ("Date".into(), b"Sun, 06 Nov 1994 08:49:37 GMT".to_vec()),
                    ("Content-Type".into(), content_type.as_bytes().to_vec()),
                ],
                body: body.to_vec(),
                framing: crate::client::Framing::Length(body.len() as u64),
                sent_at: now,
                received_at: now,
                elapsed,
                reused_connection: false,
            }),
        }
    }

    #[test]
    fn sleep_must_last_its_time_less_two_milliseconds_of_timer_granularity() {
        let case = stampede_case("sleep-100");
        let body = br#"{"slept_ms":100}"#;
        let at = |ms: f64| exchange(200, "application/json", body, Duration::from_secs_f64(ms / 1000.0));
        assert_eq!(case.judge_strict(&at(100.2)), Ok(()));
        assert_eq!(case.judge_strict(&at(98.4)), Ok(()));
        assert_eq!(case.judge_strict(&at(97.5)).unwrap_err(), "answered after 97.5 ms, expected at least 100 ms");
    }

    #[test]
    fn media_type_parameters_are_allowed_but_the_type_must_match() {
        let case = stampede_case("plaintext");
        let with = |ct: &str| case.judge_strict(&exchange(200, ct, b"Hello, World!", Duration::ZERO));
        assert_eq!(with("text/plain; charset=utf-8"), Ok(()));
        assert_eq!(with("Text/Plain"), Ok(()));
        assert!(with("text/html").unwrap_err().contains("expected text/plain"));
        assert!(with("plain").unwrap_err().contains("is not a media type"));
    }

    fn stampede_case(id: &str) -> Case {
        let contract = stampede_contract::builtin("stampede").unwrap();
        Case::from_rule(contract.rules.iter().find(|r| r.id == id).unwrap())
    }

    #[test]
    fn tfb_charset_allows_only_utf_8() {
        let contract = stampede_contract::builtin("tfb").unwrap();
        let case = Case::from_rule(contract.rules.iter().find(|r| r.id == "plaintext").unwrap());
        let with = |ct: &str| case.judge_strict(&exchange(200, ct, b"Hello, World!", Duration::ZERO));
        assert_eq!(with("text/plain"), Ok(()));
        assert_eq!(with("text/plain; charset=UTF-8"), Ok(()));
        assert!(with("text/plain; charset=iso-8859-1")
            .unwrap_err()
            .contains("only parameter allowed is charset=utf-8"));
    }

    #[test]
    fn a_long_body_names_the_first_differing_byte_and_item() {
        let want = stampede_contract::generate::fib_text(100).into_bytes();
        let mut got = want.clone();
        let last = got.len() - 1;
        got[last] = if got[last] == b'5' { b'6' } else { b'5' };
        let reason = exact_difference(&want, &got).unwrap_err();
        assert!(reason.starts_with(&format!("body differs from byte {last} (item 100, counting from 0, ")), "{reason}");
        let mut trailing = want.clone();
        trailing.push(b' ');
        let reason = exact_difference(&want, &trailing).unwrap_err();
        assert!(reason.contains(&format!("({} bytes received, {} expected)", want.len() + 1, want.len())), "{reason}");
        assert_eq!(
            exact_difference(b"1 2", b"1 2 ").unwrap_err(),
            "body is \"1 2 \" (4 bytes), expected exactly \"1 2\" (3 bytes)"
        );
    }
}
