//! How a gRPC answer is judged against its `[[call]]`: the request made from
//! the call's JSON (random `{i32}` and `{text}` values, new every call), the
//! status the answer ended with (from the trailers, a Trailers-Only answer,
//! or a reset after the deadline, which the client reports as
//! DEADLINE_EXCEEDED by its own clock, as PROTOCOL-HTTP2.md allows), the
//! number of replies and what each holds (`"=a+b"` from the request, `"=#"`
//! its position), and the end of the call against its deadline.

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use serde_json::{Map, Value};
use stampede_grpc::client::status_of;
use stampede_grpc::{Code, Method};

use stampede_contract::Call;
use stampede_grpc::client::Exchange;

/// A verdict: pass, pass with a warning, or fail, each with a reason.
pub enum Verdict {
    Pass,
    Warn(String),
    Fail(String),
}

/// The call's request JSON with its random values filled in.
pub fn fill(template: &Value, seed: &RandomState, n: u64) -> Value {
    let mut count = 0u64;
    fill_with(template, &mut || {
        count += 1;
        seed.hash_one((n, count))
    })
}

fn fill_with(template: &Value, next: &mut dyn FnMut() -> u64) -> Value {
    match template {
        Value::String(s) if s == "{i32}" => Value::from(next() as u32 as i32),
        // Two bytes and three bytes of UTF-8: echoed unchanged or not at all.
        Value::String(s) if s == "{text}" => Value::from(format!("stampede é ✓ {:016x}", next())),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), fill_with(v, next))).collect()),
        other => other.clone(),
    }
}

/// The verdict on one call's answer.
pub fn judge(call: &Call, method: Option<&Method>, request: &Value, ex: &Exchange) -> Verdict {
    match judge_strict(call, method, request, ex) {
        Err(reason) => Verdict::Fail(reason),
        Ok(Some(warning)) => Verdict::Warn(warning),
        Ok(None) => Verdict::Pass,
    }
}

fn judge_strict(
    call: &Call,
    method: Option<&Method>,
    request: &Value,
    ex: &Exchange,
) -> Result<Option<String>, String> {
    if let Some(error) = &ex.error {
        return Err(error.clone());
    }
    if let Some(status) = ex.http_status.filter(|s| *s != 200) {
        return Err(format!("HTTP status {status}, expected 200 (a gRPC answer's outcome is its grpc-status)"));
    }
    let deadline = call.deadline();
    let (code, said) = status_of(ex, deadline)?;
    let pass = call.statuses().iter().any(|n| Code::from_name(n) == Some(code));
    let warn = call.warn_status.iter().any(|n| Code::from_name(n) == Some(code));
    if !pass && !warn {
        return Err(format!("{said}, expected {}", call.statuses().join(" or ")));
    }
    if let (Some(d), Some(within)) = (deadline, call.within_ms.map(Duration::from_millis)) {
        if ex.elapsed > d + within {
            let late = ex.elapsed - d;
            return Err(format!("the call ended {} after its deadline, more than {}", ms(late), ms(within)));
        }
    }
    // A call that fails may stop mid-message (a deadline inside a flow-control
    // window); an OK one must have sent whole messages.
    if let Some(e) = ex.frame_error.as_ref().filter(|_| code == Code::Ok) {
        return Err(format!("the body is not length-prefixed messages: {e}"));
    }
    if let Some(want) = call.messages {
        if ex.messages.len() != want as usize {
            return Err(format!("{} replies, expected exactly {want}", ex.messages.len()));
        }
    }
    if let (Some(template), Some(method)) = (&call.reply, method) {
        for (i, payload) in ex.messages.iter().enumerate() {
            let reply = method.response_json(payload).map_err(|e| format!("reply {}: {e}", i + 1))?;
            compare(template, request, &reply, i as u64 + 1).map_err(|e| format!("reply {}: {e}", i + 1))?;
        }
    }
    Ok(warn.then(|| format!("{said}, allowed with a warning (expected {})", call.statuses().join(" or "))))
}

/// Each field of `template` against the reply; a field the reply omits has
/// its default value (proto3 JSON leaves out 0 and "").
fn compare(template: &Value, request: &Value, reply: &Value, position: u64) -> Result<(), String> {
    let empty = Map::new();
    let fields = reply.as_object().unwrap_or(&empty);
    for (name, want) in template.as_object().unwrap_or(&empty) {
        let want = expected(want, request, position)?;
        let got = fields.get(name).or_else(|| fields.get(&snake_to_camel(name))).unwrap_or(&Value::Null);
        let same = match (&want, as_int(got)) {
            (Value::String(w), _) => got.as_str().unwrap_or("") == w,
            (w, got_int) => as_int(w).is_some() && as_int(w) == got_int,
        };
        if !same {
            let shown = if got.is_null() { "absent (the default)".to_string() } else { got.to_string() };
            return Err(format!("{name} is {shown}, expected {want}"));
        }
    }
    Ok(())
}

/// A template value: a literal, or `=field+field…` / `=#` computed.
fn expected(want: &Value, request: &Value, position: u64) -> Result<Value, String> {
    let Some(expr) = want.as_str().and_then(|s| s.strip_prefix('=')) else { return Ok(want.clone()) };
    let terms: Vec<&str> = expr.split('+').map(str::trim).collect();
    if let [field] = terms[..] {
        if let Some(Value::String(s)) = request.get(field) {
            return Ok(Value::from(s.clone()));
        }
    }
    let mut sum: i128 = 0;
    for term in terms {
        sum += match term {
            "#" => i128::from(position),
            field => request.get(field).and_then(as_int).ok_or_else(|| format!("{field:?} is not in the request"))?,
        };
    }
    Ok(Value::from(sum as i64))
}

/// A JSON integer, or a proto3 JSON int64 written as a string; null is 0.
fn as_int(v: &Value) -> Option<i128> {
    match v {
        Value::Null => Some(0),
        Value::Number(n) => n.as_i64().map(i128::from),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn snake_to_camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn random_values_differ_per_call_and_keep_their_type() {
        let seed = RandomState::new();
        let template = json!({"text": "{text}", "a": "{i32}", "b": "{i32}", "count": 3});
        let (one, two) = (fill(&template, &seed, 1), fill(&template, &seed, 2));
        assert_ne!(one, two);
        assert!(one["a"].is_i64() && one["text"].as_str().unwrap().contains('✓'));
        assert_eq!(one["count"], 3);
    }

    #[test]
    fn a_reply_is_compared_with_values_computed_from_the_request() {
        let request = json!({"text": "hi", "a": 2147483647, "b": 2147483647});
        let template = json!({"text": "=text", "sum": "=a+b", "seq": 0});
        let right = json!({"text": "hi", "sum": "4294967294"});
        assert!(compare(&template, &request, &right, 1).is_ok());
        let constant = json!({"text": "hi", "sum": "3"});
        let e = compare(&template, &request, &constant, 1).unwrap_err();
        assert_eq!(e, "sum is \"3\", expected 4294967294");
        let streamed = json!({"text": "=text", "seq": "=#"});
        assert!(compare(&streamed, &request, &json!({"text": "hi", "seq": "7"}), 7).is_ok());
        assert!(compare(&streamed, &request, &json!({"text": "hi", "seq": "7"}), 6).is_err());
        assert!(compare(&streamed, &request, &json!({"seq": "1"}), 1).is_err(), "text absent is not hi");
    }
}
