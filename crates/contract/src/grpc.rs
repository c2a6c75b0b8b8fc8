//! The gRPC part of a contract file (`protocol = "grpc"`, docs/contracts.md):
//! the `.proto` the messages are written in and the `[[call]]` list, each one
//! call and what its answer must be (the gRPC status, how many replies, what
//! each holds). The checker knows no gRPC API of its own: contracts/grpc.toml
//! is data like any user's, judged by grpc/judge.rs.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use stampede_grpc::{decode_timeout, Code};

/// What a contract's requests are: HTTP (rules and probes) or gRPC calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    #[default]
    Http,
    Grpc,
}

/// A check judged over every gRPC answer received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallCheck {
    /// `content-type` is `application/grpc`, optionally `+proto` or parameters.
    ContentType,
    /// Exactly one numeric `grpc-status`: in the trailers, or in the headers
    /// of a Trailers-Only answer that sent no message.
    StatusInTrailers,
}

impl CallCheck {
    pub fn id(self) -> &'static str {
        match self {
            CallCheck::ContentType => "content-type",
            CallCheck::StatusInTrailers => "status-in-trailers",
        }
    }
}

/// One gRPC call and what its answer must be.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    /// `/package.Service/Method`.
    pub path: String,
    /// The request message as JSON, with `{i32}` and `{text}` made random per call.
    #[serde(default)]
    pub request: Option<Value>,
    /// Or the message's bytes as hex, sent as they are (a method the
    /// `.proto` does not have, a message that does not parse).
    #[serde(default)]
    pub body_hex: Option<String>,
    /// Sent as `grpc-timeout` as written (`1n`, `300m`, `2S`).
    #[serde(default)]
    pub timeout: Option<String>,
    /// Status names that pass; `["OK"]` when absent.
    #[serde(default)]
    pub status: Vec<String>,
    /// Status names that pass with a warning.
    #[serde(default)]
    pub warn_status: Vec<String>,
    /// Exactly this many replies.
    #[serde(default)]
    pub messages: Option<u32>,
    /// What every reply holds, as JSON: `"=a+b"` from the request, `"=#"` its position.
    #[serde(default)]
    pub reply: Option<Value>,
    /// Read the answer no faster than this many bytes a second (HTTP/2 flow
    /// control holds the server to it): a stream it must stop at its deadline.
    #[serde(default)]
    pub read_rate: Option<u64>,
    /// With `timeout`: the call must end within this long after its deadline.
    #[serde(default)]
    pub within_ms: Option<u64>,
    /// This many calls at once (each with its own random values)…
    #[serde(default)]
    pub calls: Option<u32>,
    /// …over this many connections.
    #[serde(default)]
    pub connections: Option<u32>,
}

impl Call {
    /// Its one-line description, made up when the file gives none.
    pub fn describe(&self) -> String {
        self.description.clone().unwrap_or_else(|| format!("{} answers {}", self.path, self.statuses().join(" or ")))
    }

    /// The status names that pass.
    pub fn statuses(&self) -> Vec<String> {
        if self.status.is_empty() {
            vec!["OK".to_string()]
        } else {
            self.status.clone()
        }
    }

    /// The message's bytes when given as hex.
    pub fn raw_body(&self) -> Option<Vec<u8>> {
        let hex = self.body_hex.as_ref()?;
        (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
    }

    /// How long the check waits for the call to end: its deadline and
    /// `within_ms` (and half a second for the answer to travel), else its
    /// deadline and the check's `timeout`.
    pub fn limit(&self, timeout: Duration) -> Duration {
        match (self.deadline(), self.within_ms) {
            (Some(d), Some(within)) => d + Duration::from_millis(within) + Duration::from_millis(500),
            (Some(d), None) => d + timeout,
            _ => timeout,
        }
    }

    /// The deadline as a duration, when `timeout` is given.
    pub fn deadline(&self) -> Option<Duration> {
        decode_timeout(self.timeout.as_deref()?)
    }
}

/// What serde cannot check in the gRPC part: `Err((field, reason))`. A
/// contract without `proto` is checked with the schema the server gives by
/// reflection.
pub fn validate(calls: &[Call]) -> Result<(), (String, String)> {
    if calls.is_empty() {
        return Err(("call".into(), "no [[call]]: a gRPC contract needs at least one call to make".into()));
    }
    let mut ids = std::collections::BTreeSet::new();
    for (i, call) in calls.iter().enumerate() {
        let at = |field: &str| format!("call[{}].{field} (id {:?})", i + 1, call.id);
        let valid_id =
            !call.id.is_empty() && call.id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid_id {
            return Err((at("id"), "use lower-case letters, digits and '-', such as \"unary\"".into()));
        }
        if !ids.insert(call.id.as_str()) || CALL_CHECK_IDS.contains(&call.id.as_str()) {
            return Err((at("id"), "another call or named check has this id; ids must be unique".into()));
        }
        let parts: Vec<&str> = call.path.strip_prefix('/').unwrap_or("").split('/').collect();
        if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
            return Err((at("path"), format!("{:?} is not /package.Service/Method", call.path)));
        }
        match (&call.request, &call.body_hex) {
            (Some(_), Some(_)) | (None, None) => {
                return Err((at("request"), "give exactly one of request (JSON) and body_hex".into()))
            }
            (Some(v), None) if !v.is_object() => return Err((at("request"), "is not a table of fields".into())),
            (None, Some(_)) if call.raw_body().is_none() => {
                return Err((at("body_hex"), "is not hex digits in pairs, such as \"ffffff\"".into()))
            }
            _ => {}
        }
        if call.timeout.is_some() && call.deadline().is_none() {
            return Err((
                at("timeout"),
                "is not a grpc-timeout such as \"1n\", \"300m\" or \"2S\" (1 to 8 digits, then H, M, S, m, u or n)"
                    .into(),
            ));
        }
        if call.within_ms.is_some() && call.timeout.is_none() {
            return Err((at("timeout"), "is missing: within_ms judges a call against its deadline".into()));
        }
        if call.read_rate == Some(0) {
            return Err((at("read_rate"), "give a rate in bytes a second above 0, such as 655360".into()));
        }
        for name in call.status.iter().chain(&call.warn_status) {
            if Code::from_name(name).is_none() {
                return Err((
                    at("status"),
                    format!("{name:?} is not a gRPC status name such as \"OK\" or \"UNIMPLEMENTED\""),
                ));
            }
        }
        if call.reply.as_ref().is_some_and(|r| !r.is_object()) {
            return Err((at("reply"), "is not a table of fields".into()));
        }
        if call.calls == Some(0) || call.connections == Some(0) || call.connections > call.calls.or(Some(1)) {
            return Err((at("calls"), "give calls >= connections >= 1".into()));
        }
    }
    Ok(())
}

/// The ids the every-call checks report under.
pub const CALL_CHECK_IDS: &[&str] = &["content-type", "status-in-trailers"];

#[cfg(test)]
mod tests {
    #[test]
    fn a_call_timeout_that_is_no_grpc_timeout_is_one_line_naming_the_field() {
        let contract = |timeout: &str| {
            format!("name = \"g\"\nversion = \"1\"\nprotocol = \"grpc\"\nproto = \"x.proto\"\n[[call]]\nid = \"unary\"\npath = \"/p.S/M\"\nrequest = {{}}\ntimeout = \"{timeout}\"\n")
        };
        assert!(crate::model::Contract::parse(&contract("300m"), "g.toml").is_ok());
        let e = crate::model::Contract::parse(&contract("1é"), "g.toml").unwrap_err().to_string();
        assert!(e.starts_with("g.toml: call[1].timeout (id \"unary\"): is not a grpc-timeout such as \"1n\""), "{e}");
    }
}
