//! The targets file of `stampede load --targets FILE`: a request mix written
//! down, one block per target, in the spirit of vegeta's `http` format so
//! that its users can bring their files:
//!
//! ```text
//! # comments and blank lines are ignored
//! GET http://127.0.0.1:8080/api/fib/{1..100}
//! POST http://127.0.0.1:8080/items weight=3
//! Content-Type: application/json
//! body {"name": "x"}
//! PUT http://127.0.0.1:8080/items/{rand:1..1000}
//! body @item.json
//! ```
//!
//! A line `METHOD URL [weight=N]` starts a target; `Name: value` lines add
//! headers to it; `body TEXT` gives its body inline and `body @FILE` (or a
//! bare `@FILE`, as vegeta writes it) from a file, relative to the targets
//! file. In a scenario, where `stampede run` picks the server's address, a
//! URL may be a path (`GET /api/fib/{1..100}`). Every mistake is reported
//! with the file and line.

use stampede_schema::mix::TargetSpec;
use std::path::Path;

/// Methods a target may use (RFC 9110, and PATCH).
const METHODS: [&str; 9] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"];
/// The most targets a mix may have (each keeps its own histograms).
pub const MAX_TARGETS: usize = 1000;

/// A parsed target and the line it started on.
pub struct Parsed {
    pub spec: TargetSpec,
    pub line: usize,
}

/// Parses the text of a targets file named `origin` (for messages), reading
/// body files relative to `dir`.
pub fn parse(text: &str, origin: &str, dir: &Path) -> Result<Vec<Parsed>, String> {
    let mut out: Vec<Parsed> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let at = |why: String| format!("{origin}:{line}: {why}");
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(spec) = target_line(l).map_err(at)? {
            if out.len() == MAX_TARGETS {
                return Err(at(format!("more than {MAX_TARGETS} targets")));
            }
            out.push(Parsed { spec, line });
            continue;
        }
        let Some(current) = out.last_mut() else {
            return Err(at("expected a target first: METHOD URL (e.g. GET http://127.0.0.1:8080/)".into()));
        };
        let body_file = l.strip_prefix("body @").or_else(|| l.strip_prefix('@'));
        if let Some(file) = body_file {
            current.spec.body = crate::limits::read_capped(&dir.join(file.trim()), crate::limits::MAX_BODY_BYTES)
                .map_err(|e| at(format!("body file {}: {e}", file.trim())))?;
        } else if let Some(text) = l.strip_prefix("body ") {
            current.spec.body = text.as_bytes().to_vec();
        } else if let Some((name, value)) =
            l.split_once(':').filter(|(n, _)| http::HeaderName::from_bytes(n.as_bytes()).is_ok())
        {
            let value = value.trim();
            if let Some(why) = crate::headers::header_problem(name, value) {
                return Err(at(format!("header {name}: {why}")));
            }
            current.spec.headers.push((name.to_string(), value.to_string()));
        } else {
            return Err(at(format!(
                "{l:?} is not a target (METHOD URL), a header (Name: value) or a body (body TEXT, body @FILE)"
            )));
        }
    }
    if out.is_empty() {
        return Err(format!("{origin}: no targets; write one per block, e.g. GET http://127.0.0.1:8080/"));
    }
    Ok(out)
}

/// `METHOD URL [weight=N]`, or `None` when the line is not a target line.
fn target_line(l: &str) -> Result<Option<TargetSpec>, String> {
    let mut words = l.split_whitespace();
    let (Some(first), second) = (words.next(), words.next()) else { return Ok(None) };
    let (method, url) = match second {
        Some(url) if url.contains("://") || url.starts_with('/') => (first, url),
        _ if first.contains("://") => return Err(format!("{first}: a method comes first, e.g. GET {first}")),
        _ => return Ok(None),
    };
    if !METHODS.contains(&method) {
        return Err(format!("unknown method {method:?}; use one of {}", METHODS.join(", ")));
    }
    let mut weight = 1;
    for option in words {
        let w =
            option.strip_prefix("weight=").ok_or_else(|| format!("{option:?}: only weight=N may follow the URL"))?;
        weight = w
            .parse()
            .ok()
            .filter(|w| (1..=1_000_000).contains(w))
            .ok_or_else(|| format!("weight={w}: a whole number from 1 to 1000000"))?;
    }
    Ok(Some(TargetSpec {
        method: method.to_string(),
        url: url.to_string(),
        headers: Vec::new(),
        body: Vec::new(),
        weight,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_give_methods_headers_bodies_and_weights() {
        let dir = std::env::temp_dir().join(format!("stampede-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("item.json"), b"{\"a\":1}").unwrap();
        let text = "# a mix\nGET http://h:1/a/{1..3}\n\nPOST http://h:1/items weight=3\nContent-Type: application/json\nbody {\"n\": 1}\nPUT http://h:1/x\n@item.json\n";
        let got = parse(text, "t.txt", &dir).unwrap();
        assert_eq!(got.iter().map(|p| p.line).collect::<Vec<_>>(), [2, 4, 7]);
        assert_eq!(got[1].spec.weight, 3);
        assert_eq!(got[1].spec.headers, [("Content-Type".to_string(), "application/json".to_string())]);
        assert_eq!(got[1].spec.body, b"{\"n\": 1}");
        assert_eq!(got[2].spec.body, b"{\"a\":1}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mistakes_name_the_file_and_line() {
        let dir = Path::new("/nonexistent");
        for (text, want) in [
            ("FETCH http://h:1/\n", "t:1: unknown method \"FETCH\""),
            ("GET http://h:1/\n@missing.json\n", "t:2: body file missing.json"),
            ("", "t: no targets"),
            ("# only a comment\n", "t: no targets"),
            ("Accept: */*\n", "t:1: expected a target first"),
            ("GET http://h:1/ weight=0\n", "t:1: weight=0"),
            ("GET http://h:1/\nnonsense here\n", "t:2: \"nonsense here\" is not a target"),
            ("http://h:1/\n", "t:1: http://h:1/: a method comes first"),
            ("GET http://h:1/\nX-A: a\u{1}b\n", "t:2: header X-A: the value must not contain"),
        ] {
            let err = parse(text, "t", dir).err().unwrap_or_default();
            assert!(err.starts_with(want), "{text:?}: {err}");
        }
    }
}
