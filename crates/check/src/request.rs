//! What a rule sends, beyond `GET path`: a method, headers, a body (literal,
//! from a file, or random bytes), framed by `Content-Length` or chunked
//! encoding, and optionally written in pieces with a pause between them, so a
//! server that reads a request in one `read` is caught. Placeholders such as
//! `{rand:100..999}` in the path and body are drawn afresh for every check
//! (a mix's template syntax, `stampede_spec::template`), so a server that caches an answer
//! fails. Arenas check exactly these (HttpArena's validate.sh: POST bodies
//! with Content-Length and chunked, requests split across TCP writes,
//! randomised inputs); the `send` table of a rule describes them as data
//! (docs/contracts.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::RngCore;
use serde::Deserialize;

/// The pause between the pieces of a split request: HttpArena's 30 ms, long
/// enough that each piece reaches the server in a read of its own.
pub const SPLIT_PAUSE: Duration = Duration::from_millis(30);

/// Most random bytes a rule may send (HttpArena's largest upload is 20 MB).
pub const MAX_RANDOM_BYTES: u64 = 64 * 1024 * 1024;

/// Bytes per chunk of a chunked request body.
const CHUNK_BYTES: usize = 16 * 1024;

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

/// A request as it goes on the wire, with what the answer rules read from it.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub method: String,
    /// The path as sent, placeholders expanded (before any URL mapping).
    pub path: String,
    /// The body sent (decoded from its framing).
    pub body: Vec<u8>,
    /// How the body went, after the request line in reports
    /// (` (a 2-byte body, chunked: "20") in 3 writes`).
    pub detail: String,
    /// Headers the rule adds (names as written).
    pub headers: Vec<(String, String)>,
    pub chunked: bool,
    pub split: Vec<Split>,
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

    fn has_body(&self) -> bool {
        self.body.is_some() || self.file.is_some() || self.random_bytes.is_some()
    }

    /// The request header `name` (case-insensitive), if the rule sets it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One expansion of a template, placeholders drawn from `rng`.
pub fn expand(template: &str, rng: &mut SmallRng) -> Result<String, String> {
    stampede_spec::template::expand_random(template, rng)
}

/// Draws this check's request for a rule: its path and body expanded.
pub fn prepare(path: &str, send: Option<&Send>, rng: &mut SmallRng) -> Result<Prepared, String> {
    let default = Send::default();
    let send = send.unwrap_or(&default);
    let path = expand(path, rng)?;
    let body = if let Some(body) = &send.body {
        expand(body, rng)?.into_bytes()
    } else if let Some(file) = &send.file {
        std::fs::read(file).map_err(|e| format!("cannot read the body file {}: {e}", file.display()))?
    } else if let Some(n) = send.random_bytes {
        let mut bytes = vec![0u8; n as usize];
        rng.fill_bytes(&mut bytes);
        bytes
    } else {
        Vec::new()
    };
    let method = send.method.clone().unwrap_or_else(|| "GET".into());
    let mut detail = String::new();
    if send.has_body() || send.chunked {
        let framing = if send.chunked { "chunked" } else { "Content-Length" };
        detail.push_str(&format!(" (a {}-byte body, {framing}", body.len()));
        if body.len() <= 40 {
            detail.push_str(&format!(": \"{}\"", crate::report::escape(&body, 40)));
        }
        detail.push(')');
    }
    if !send.split.is_empty() {
        detail.push_str(&format!(" in {} writes", send.split.len() + 1));
    }
    Ok(Prepared {
        method,
        path,
        body,
        detail,
        headers: send.headers.iter().map(|(n, v)| (n.clone(), v.clone())).collect(),
        chunked: send.chunked,
        split: send.split.clone(),
    })
}

impl Prepared {
    /// `GET path`, nothing more: the request of a rule without `send`.
    pub fn get(path: &str) -> Prepared {
        Prepared {
            method: "GET".into(),
            path: path.to_string(),
            body: Vec::new(),
            detail: String::new(),
            headers: Vec::new(),
            chunked: false,
            split: Vec::new(),
        }
    }

    /// Nothing but `GET path`: what every transport can send.
    pub fn is_plain_get(&self) -> bool {
        self.method == "GET" && self.body.is_empty() && self.headers.is_empty() && !self.chunked
    }

    /// Whether the body goes with Content-Length: 0 when empty (methods
    /// that carry a body), so a server never waits for one.
    fn needs_length(&self) -> bool {
        !self.body.is_empty() || !matches!(self.method.as_str(), "GET" | "HEAD" | "DELETE" | "OPTIONS")
    }

    /// The request bytes, cut at the rule's split points: `head_lines` are
    /// the checker's own header lines (Host, User-Agent, Accept), each
    /// ending in CRLF, and `target` the request target on the wire.
    pub fn pieces(&self, target: &str, version: &str, head_lines: &str) -> Vec<Vec<u8>> {
        let line = format!("{} {target} {version}\r\n", self.method);
        let mut head = format!("{line}{head_lines}");
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if self.chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        } else if self.needs_length() {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("\r\n");
        let mut wire = head.clone().into_bytes();
        if self.chunked {
            for chunk in self.body.chunks(CHUNK_BYTES) {
                wire.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                wire.extend_from_slice(chunk);
                wire.extend_from_slice(b"\r\n");
            }
            wire.extend_from_slice(b"0\r\n\r\n");
        } else {
            wire.extend_from_slice(&self.body);
        }
        let method_len = self.method.len() + 1;
        let mut cuts: Vec<usize> = self
            .split
            .iter()
            .map(|split| match split {
                Split::Target => method_len + target.len() / 2,
                Split::Line => line.len(),
                Split::Head => head.len(),
                Split::Body => head.len() + (wire.len() - head.len()) / 2,
            })
            .filter(|cut| *cut > 0 && *cut < wire.len())
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut pieces = Vec::new();
        let mut from = 0;
        for cut in cuts {
            pieces.push(wire[from..cut].to_vec());
            from = cut;
        }
        pieces.push(wire[from..].to_vec());
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn prepared(send: Send, path: &str) -> Prepared {
        prepare(path, Some(&send), &mut SmallRng::seed_from_u64(1)).unwrap()
    }

    #[test]
    fn a_chunked_body_split_at_every_point_reassembles_to_the_request() {
        let send = Send {
            method: Some("POST".into()),
            body: Some("20".into()),
            chunked: true,
            split: vec![Split::Body, Split::Target, Split::Line, Split::Head],
            ..Send::default()
        };
        let request = prepared(send, "/baseline11?a=13&b=42");
        let pieces = request.pieces("/baseline11?a=13&b=42", "HTTP/1.1", "Host: h\r\n");
        assert_eq!(pieces.len(), 5);
        assert_eq!(pieces[0], b"POST /baseline1");
        assert_eq!(pieces[1], b"1?a=13&b=42 HTTP/1.1\r\n");
        assert!(pieces[2].ends_with(b"Transfer-Encoding: chunked\r\n\r\n"));
        assert_eq!(pieces[3..].concat(), b"2\r\n20\r\n0\r\n\r\n");
        assert_eq!(request.detail, " (a 2-byte body, chunked: \"20\") in 5 writes");
    }

    #[test]
    fn bodies_get_a_content_length_and_placeholders_are_drawn() {
        let send = Send { method: Some("POST".into()), body: Some("{rand:100..999}".into()), ..Send::default() };
        let request = prepared(send, "/user/{rand:1..9}");
        let n: u32 = String::from_utf8(request.body.clone()).unwrap().parse().unwrap();
        assert!((100..=999).contains(&n));
        assert!(request.path.len() == 7 && request.path.starts_with("/user/"), "{}", request.path);
        let wire = request.pieces("/x", "HTTP/1.1", "").concat();
        assert!(wire.ends_with(format!("Content-Length: 3\r\n\r\n{n}").as_bytes()));
        let empty_post = prepared(Send { method: Some("POST".into()), ..Send::default() }, "/user");
        assert!(empty_post.pieces("/user", "HTTP/1.1", "").concat().ends_with(b"Content-Length: 0\r\n\r\n"));
        let get = prepared(Send::default(), "/");
        assert_eq!(get.pieces("/", "HTTP/1.1", "").concat(), b"GET / HTTP/1.1\r\n\r\n");
    }

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
