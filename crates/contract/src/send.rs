//! What a rule sends, beyond `GET path`, as a contract file writes it (the
//! `send` table, docs/contracts.md): a method, headers, a body (literal,
//! from a file, or random bytes), framed by `Content-Length` or chunked
//! encoding, and optionally written in pieces with a pause between them.
//! Placeholders such as `{rand:100..999}` in the path and body are the load
//! engine's template syntax, drawn afresh for every check; the checker's
//! request.rs puts a `Send` on the wire.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::SmallRng;
use serde::Deserialize;

/// The pause between the pieces of a split request: HttpArena's 30 ms, long
/// enough that each piece reaches the server in a read of its own.
pub const SPLIT_PAUSE: Duration = Duration::from_millis(30);

/// Most random bytes a rule may send (HttpArena's largest upload is 20 MB).
pub const MAX_RANDOM_BYTES: u64 = 64 * 1024 * 1024;

/// `send = { method = "POST", body = "20", chunked = true, … }`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Send {
    /// `GET` when absent.
    #[serde(default)]
    pub method: Option<String>,
    /// Request headers beyond Host, User-Agent and Accept.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body, placeholders expanded per check.
    #[serde(default)]
    pub body: Option<String>,
    /// The body read from this file (relative to the contract file).
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// A body of this many random bytes.
    #[serde(default)]
    pub random_bytes: Option<u64>,
    /// Frame the body by chunked encoding instead of Content-Length.
    #[serde(default)]
    pub chunked: bool,
    /// Where to cut the request into separate writes.
    #[serde(default)]
    pub split: Vec<Split>,
}

/// A place to cut a request, each a separate TCP write [`SPLIT_PAUSE`] apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Split {
    /// In the middle of the request target (`GET /basel` + `ine11?…`).
    Target,
    /// After the request line, before the headers.
    Line,
    /// After the head, before the body.
    Head,
    /// In the middle of the body (its framing included).
    Body,
}

impl Send {
    /// Checks what serde cannot; `Err((field, reason))`, the field relative
    /// to `send`. `dir` is the contract file's folder, for `file`.
    pub fn validate(&mut self, dir: Option<&Path>) -> Result<(), (String, String)> {
        if let Some(method) = &self.method {
            if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(("method".into(), format!("{method:?} is not a method such as \"POST\"")));
            }
        }
        let bodies = [self.body.is_some(), self.file.is_some(), self.random_bytes.is_some()];
        if bodies.iter().filter(|b| **b).count() > 1 {
            return Err(("body".into(), "give at most one of body, file and random_bytes".into()));
        }
        if let Some(body) = &self.body {
            expand(body, &mut rand::SeedableRng::seed_from_u64(0)).map_err(|e| ("body".into(), e))?;
        }
        if self.random_bytes.is_some_and(|n| n > MAX_RANDOM_BYTES) {
            return Err(("random_bytes".into(), format!("is above {MAX_RANDOM_BYTES}, the most a rule sends")));
        }
        if let Some(file) = &mut self.file {
            if let Some(dir) = dir.filter(|_| file.is_relative()) {
                *file = dir.join(&*file);
            }
            std::fs::metadata(&*file).map_err(|e| ("file".into(), format!("{}: {e}", file.display())))?;
        }
        for name in self.headers.keys() {
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                return Err(("headers".into(), format!("{name:?} is not a header name")));
            }
            if ["content-length", "transfer-encoding", "host"].contains(&name.to_ascii_lowercase().as_str()) {
                return Err((
                    "headers".into(),
                    format!("{name} is set by the checker (the body's framing: chunked = true; the URL's host)"),
                ));
            }
        }
        if self.split.contains(&Split::Body) && !self.has_body() {
            return Err(("split".into(), "\"body\" needs a body to split".into()));
        }
        Ok(())
    }

    /// Whether it sends a body (literal, from a file or random).
    pub fn has_body(&self) -> bool {
        self.body.is_some() || self.file.is_some() || self.random_bytes.is_some()
    }

    /// The request header `name` (case-insensitive), if the rule sets it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One expansion of a template, placeholders drawn from `rng`.
pub fn expand(template: &str, rng: &mut SmallRng) -> Result<String, String> {
    // The load spec's template grammar, declared once in the load crate;
    // it moves to the spec crate (stampede-spec) with the rest of the load
    // vocabulary, and this line with it.
    stampede_spec::template::expand_random(template, rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let bad = |send: Send| send.clone().validate(None).unwrap_err().0;
        assert_eq!(bad(Send { method: Some("post".into()), ..Send::default() }), "method");
        assert_eq!(bad(Send { body: Some("a".into()), random_bytes: Some(3), ..Send::default() }), "body");
        assert_eq!(bad(Send { body: Some("{rand:x}".into()), ..Send::default() }), "body");
        assert_eq!(bad(Send { split: vec![Split::Body], ..Send::default() }), "split");
        let headers = [("Content-Length".to_string(), "2".to_string())].into();
        assert_eq!(bad(Send { headers, ..Send::default() }), "headers");
        assert_eq!(bad(Send { file: Some("no/such/file".into()), ..Send::default() }), "file");
    }
}
