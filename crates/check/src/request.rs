//! A rule's request as it goes on the wire: what its `send` table asks
//! (stampede_contract's `Send`: a method, headers, a body, its framing, split
//! writes) drawn for this check, so a server that reads a request in one
//! `read` is caught. Placeholders such as
//! `{rand:100..999}` in the path and body are drawn afresh for every check
//! (a mix's template syntax, `stampede_spec::template`), so a server that caches an answer
//! fails. Arenas check exactly these (HttpArena's validate.sh: POST bodies
//! with Content-Length and chunked, requests split across TCP writes,
//! randomised inputs); the `send` table of a rule describes them as data
//! (docs/contracts.md).

use rand::rngs::SmallRng;
use rand::RngCore;
use stampede_contract::{expand, Send, Split};

/// Bytes per chunk of a chunked request body.
const CHUNK_BYTES: usize = 16 * 1024;

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
            detail.push_str(&format!(": \"{}\"", stampede_contract::escape(&body, 40)));
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
}
