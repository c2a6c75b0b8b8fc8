//! The endpoint rules of apps/CONTRACT.md as a table: one request each, with
//! the status, media type, body and timing it must produce. Keeping the rules
//! as data makes the table easy to read against the contract, and keeps the
//! judging code (below) the same for every endpoint.

use std::time::Duration;

use serde_json::Value;

use crate::client::{Exchange, Response};
use crate::expect;

/// Slack for event-loop timers with millisecond resolution. libuv (Node.js)
/// starts a timer from its loop clock, read after the poll that delivered the
/// request and truncated to whole milliseconds (from CLOCK_MONOTONIC_COARSE
/// when that ticks every millisecond), so a correct `setTimeout(…, 100)` can
/// end up to 2 ms before 100 ms have passed on a precise clock.
const TIMER_GRANULARITY: Duration = Duration::from_millis(2);

/// What the body must be.
#[derive(Debug, Clone)]
pub enum Body {
    /// These bytes exactly.
    Exact(&'static [u8]),
    /// This JSON value, numbers compared digit for digit.
    Json(String),
    /// Anything (error responses).
    Any,
}

/// One endpoint rule: `GET path` must answer like this.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: &'static str,
    pub description: String,
    /// Contract path, e.g. `/values/007`.
    pub path: String,
    pub status: u16,
    /// Required media type (parameters allowed); `None` for error responses.
    pub media_type: Option<&'static str>,
    pub body: Body,
    /// The response must not arrive sooner than this after the request.
    pub min_elapsed: Option<Duration>,
}

fn ok_json(id: &'static str, path: &str, body: String, what: &str) -> Case {
    Case {
        id,
        description: format!("GET {path} answers 200 application/json {what}"),
        path: path.to_string(),
        status: 200,
        media_type: Some("application/json"),
        body: Body::Json(body),
        min_elapsed: None,
    }
}

fn error(id: &'static str, path: &str, status: u16, why: &str) -> Case {
    Case {
        id,
        description: format!("GET {path} answers {status} ({why})"),
        path: path.to_string(),
        status,
        media_type: None,
        body: Body::Any,
        min_elapsed: None,
    }
}

fn plaintext(id: &'static str, path: &str, what: &str) -> Case {
    Case {
        id,
        description: format!("GET {path} answers 200 text/plain, exactly \"Hello, World!\" {what}"),
        path: path.to_string(),
        status: 200,
        media_type: Some("text/plain"),
        body: Body::Exact(b"Hello, World!"),
        min_elapsed: None,
    }
}

/// Every endpoint rule, in the order they are run. The first is
/// `GET /plaintext`, which doubles as the "is anything there" probe.
pub fn all() -> Vec<Case> {
    let cpu = |id, iters: u64| {
        ok_json(
            id,
            &format!("/cpu/{iters}"),
            expect::cpu_body(iters),
            "with the contract's xorshift result",
        )
    };
    let mut sleep = ok_json(
        "sleep-100",
        "/sleep/100",
        r#"{"slept_ms":100}"#.into(),
        "{\"slept_ms\":100}, after at least 100 ms",
    );
    sleep.min_elapsed = Some(Duration::from_millis(100));
    vec![
        plaintext("plaintext", "/plaintext", "(13 bytes, no newline)"),
        plaintext(
            "plaintext-query",
            "/plaintext?x=1&y=%20",
            "(the query string is ignored)",
        ),
        ok_json(
            "json",
            "/json",
            r#"{"message":"Hello, World!"}"#.into(),
            r#"{"message":"Hello, World!"}"#,
        ),
        ok_json("values", "/values/5", "5".into(), "5"),
        ok_json("values-zero", "/values/0", "0".into(), "0"),
        ok_json(
            "values-leading-zeros",
            "/values/007",
            "7".into(),
            "7 (leading zeros are allowed)",
        ),
        ok_json(
            "values-max",
            "/values/2147483647",
            "2147483647".into(),
            "2147483647 (the maximum)",
        ),
        ok_json("count-empty", "/api/count/0", "[]".into(), "[]"),
        ok_json("count", "/api/count/10", expect::count_body(10), "[1,…,10]"),
        ok_json(
            "count-max",
            "/api/count/10000",
            expect::count_body(10000),
            "[1,…,10000] (the maximum)",
        ),
        ok_json("fib-empty", "/api/fib/0", "[]".into(), "[]"),
        ok_json("fib", "/api/fib/10", expect::fib_body(10), "[0,1,1,…,34]"),
        ok_json(
            "fib-90",
            "/api/fib/90",
            expect::fib_body(90),
            "F0…F89 exactly, ending 1779979416004714189 (above 2^53)",
        ),
        cpu("cpu-0", 0),
        cpu("cpu-1", 1),
        cpu("cpu-1000", 1000),
        cpu("cpu-100000", 100_000),
        ok_json(
            "lock-1000",
            "/lock/1000",
            expect::cpu_body(1000),
            "the same result as /cpu/1000",
        ),
        ok_json(
            "alloc-0",
            "/alloc/0",
            r#"{"allocated_kib":0}"#.into(),
            r#"{"allocated_kib":0}"#,
        ),
        ok_json(
            "alloc-1024",
            "/alloc/1024",
            r#"{"allocated_kib":1024}"#.into(),
            r#"{"allocated_kib":1024}"#,
        ),
        ok_json(
            "sleep-0",
            "/sleep/0",
            r#"{"slept_ms":0}"#.into(),
            r#"{"slept_ms":0}"#,
        ),
        sleep,
        error(
            "values-negative",
            "/values/-1",
            400,
            "a sign is not a digit",
        ),
        error(
            "values-plus-sign",
            "/values/+1",
            400,
            "a sign is not a digit",
        ),
        error(
            "values-letter",
            "/values/1a",
            400,
            "a letter is not a digit",
        ),
        error(
            "values-decimal-point",
            "/values/1.5",
            400,
            "a decimal point is not a digit",
        ),
        error("values-hex", "/values/0x1F", 400, "hex is not decimal"),
        error(
            "values-over-max",
            "/values/2147483648",
            400,
            "above 2147483647",
        ),
        error(
            "values-over-64-bit",
            "/values/99999999999999999999999",
            400,
            "too big for 64 bits",
        ),
        error("count-over-max", "/api/count/10001", 400, "above 10000"),
        error("fib-over-max", "/api/fib/91", 400, "above 90"),
        error("cpu-over-max", "/cpu/10000001", 400, "above 10000000"),
        error("lock-over-max", "/lock/10000001", 400, "above 10000000"),
        error("alloc-over-max", "/alloc/65537", 400, "above 65536"),
        error("sleep-over-max", "/sleep/10001", 400, "above 10000"),
        error("unknown-path", "/nope", 404, "an unknown path"),
        error(
            "values-empty-segment",
            "/values/",
            404,
            "an empty segment is an unknown path",
        ),
        error(
            "values-extra-segment",
            "/values/5/6",
            404,
            "an extra segment is an unknown path",
        ),
    ]
}

impl Case {
    /// `Err(reason)` when the exchange breaks this rule.
    pub fn judge(&self, exchange: &Exchange) -> Result<(), String> {
        let response = exchange.result.as_ref().map_err(|e| e.to_string())?;
        if response.status != self.status {
            return Err(format!(
                "status {}, expected {}",
                response.status, self.status
            ));
        }
        if let Some(want) = self.media_type {
            check_media_type(response, want)?;
        }
        match &self.body {
            Body::Any => {}
            Body::Exact(want) if response.body != *want => {
                return Err(format!(
                    "body is \"{}\" ({} bytes), expected exactly \"{}\" ({} bytes)",
                    crate::report::escape(&response.body, 60),
                    response.body.len(),
                    crate::report::escape(want, 60),
                    want.len()
                ));
            }
            Body::Exact(_) => {}
            Body::Json(want) => {
                let want: Value =
                    serde_json::from_str(want).expect("expected bodies are valid JSON");
                let got: Value = serde_json::from_slice(&response.body)
                    .map_err(|e| format!("body is not JSON: {e}"))?;
                if let Some(difference) = first_difference(&want, &got, &mut String::new()) {
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

/// The one `Content-Type` must name `want` (parameters such as charset allowed).
fn check_media_type(response: &Response, want: &str) -> Result<(), String> {
    let values: Vec<&[u8]> = response.header_values("content-type").collect();
    let value = match values.as_slice() {
        [] => return Err(format!("no Content-Type header, expected {want}")),
        [one] => String::from_utf8_lossy(one).into_owned(),
        _ => {
            return Err(format!(
                "{} Content-Type headers, expected one",
                values.len()
            ))
        }
    };
    let parsed: mime::Mime = value
        .trim()
        .parse()
        .map_err(|_| format!("Content-Type {value:?} is not a media type, expected {want}"))?;
    if !parsed.essence_str().eq_ignore_ascii_case(want) {
        return Err(format!("Content-Type {value:?}, expected {want}"));
    }
    Ok(())
}

/// Where `got` first departs from `want`, as `at <path>: expected …, got …`.
/// Numbers compare exactly: integers up to 64 bits are kept as integers by
/// serde_json, so a Fibonacci number rounded through a double differs in its
/// digits, and `7.0` (a float) is not `7` (an integer).
fn first_difference(want: &Value, got: &Value, path: &mut String) -> Option<String> {
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
                let found = first_difference(wi, gi, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            (w.len() != g.len()).then(|| {
                format!(
                    "at {}: expected {} items, got {}",
                    here(path),
                    w.len(),
                    g.len()
                )
            })
        }
        (Value::Object(w), Value::Object(g)) => {
            if let Some(key) = w.keys().find(|k| !g.contains_key(*k)) {
                return Some(format!("at {}: missing key {key:?}", here(path)));
            }
            if let Some(key) = g.keys().find(|k| !w.contains_key(*k)) {
                return Some(format!("at {}: unexpected key {key:?}", here(path)));
            }
            for (key, wv) in w {
                let len = path.len();
                path.push_str(&format!(".{key}"));
                let found = first_difference(wv, &g[key], path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        _ if want == got => None,
        _ => Some(format!(
            "at {}: expected {}, got {}",
            here(path),
            short(want),
            short(got)
        )),
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
        first_difference(&want, &got, &mut String::new())
    }

    #[test]
    fn numbers_compare_digit_for_digit() {
        assert_eq!(diff("[1, 2]", "[1,2]"), None);
        assert_eq!(
            diff("7", "7.0").unwrap(),
            "at the top level: expected 7, got 7.0"
        );
        let rounded = diff("[0,1779979416004714189]", "[0,1779979416004714200]").unwrap();
        assert_eq!(
            rounded,
            "at [1]: expected 1779979416004714189, got 1779979416004714200"
        );
    }

    #[test]
    fn objects_must_have_exactly_the_keys() {
        assert_eq!(diff(r#"{"a":1}"#, r#"{ "a" : 1 }"#), None);
        assert!(diff(r#"{"a":1}"#, r#"{"a":1,"b":2}"#)
            .unwrap()
            .contains("unexpected key \"b\""));
        assert!(diff(r#"{"a":1}"#, r#"{"b":1}"#)
            .unwrap()
            .contains("missing key \"a\""));
        assert_eq!(
            diff(r#"{"r":"1"}"#, r#"{"r":1}"#).unwrap(),
            "at .r: expected \"1\", got 1"
        );
    }

    #[test]
    fn arrays_report_length_after_common_prefix() {
        assert_eq!(
            diff("[1,2,3]", "[1,2]").unwrap(),
            "at the top level: expected 3 items, got 2"
        );
    }

    fn exchange(status: u16, content_type: &str, body: &[u8], elapsed: Duration) -> Exchange {
        let now = std::time::SystemTime::now();
        Exchange {
            request_line: "GET / HTTP/1.1".into(),
            result: Ok(Response {
                version_minor: 1,
                status,
                reason: "OK".into(),
                headers: vec![("Content-Type".into(), content_type.as_bytes().to_vec())],
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
        let case = all().into_iter().find(|c| c.id == "sleep-100").unwrap();
        let body = br#"{"slept_ms":100}"#;
        let at = |ms: f64| {
            exchange(
                200,
                "application/json",
                body,
                Duration::from_secs_f64(ms / 1000.0),
            )
        };
        assert_eq!(case.judge(&at(100.2)), Ok(()));
        assert_eq!(case.judge(&at(98.4)), Ok(()));
        assert_eq!(
            case.judge(&at(97.5)).unwrap_err(),
            "answered after 97.5 ms, expected at least 100 ms"
        );
    }

    #[test]
    fn media_type_parameters_are_allowed_but_the_type_must_match() {
        let case = all().into_iter().find(|c| c.id == "plaintext").unwrap();
        let with = |ct: &str| case.judge(&exchange(200, ct, b"Hello, World!", Duration::ZERO));
        assert_eq!(with("text/plain; charset=utf-8"), Ok(()));
        assert_eq!(with("Text/Plain"), Ok(()));
        assert!(with("text/html")
            .unwrap_err()
            .contains("expected text/plain"));
        assert!(with("plain").unwrap_err().contains("is not a media type"));
    }

    #[test]
    fn ids_are_unique_and_plaintext_comes_first() {
        let cases = all();
        assert_eq!(cases[0].path, "/plaintext");
        let mut ids: Vec<_> = cases.iter().map(|c| c.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), cases.len());
    }
}
