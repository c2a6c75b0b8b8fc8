//! A contract as data: the API a server claims to implement, read from a TOML
//! file (format in docs/contracts.md). It lists the requests to send and what
//! each response must be (status, content type, headers, an exact, JSON or
//! generated body, a minimum time), plus the named checks that judge every
//! response (`Server`, `Date`, framing, …) and those that take several
//! requests (`keep-alive`, `date-ticks`, probe.rs). The checker knows no API
//! of its own: `stampede`, `sequence` and `tfb` are contract files like any
//! user's. Reading and validating a file is parse.rs.

use std::collections::BTreeMap;
use std::fmt;

use serde::{de, Deserialize, Deserializer};

use crate::answer::Answer;
use crate::generate::Generator;
pub use crate::grpc::{Call, CallCheck, Protocol};
pub use crate::lenience::Leniency;
pub use crate::probe::Probe;
use crate::send::Send;

/// One contract: its identity, the rules run on every response, the probes
/// and the per-request rules, in file order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// Short name, e.g. `sequence`; shown in reports and results.
    pub name: String,
    /// The contract's own version, e.g. `"2"`; bump it when a rule changes.
    pub version: String,
    /// One line saying what API this is.
    #[serde(default)]
    pub description: String,
    /// The path that answers `200` once a server is up: `stampede run` polls
    /// it before anything else. Absent: any response on `/` counts.
    #[serde(default)]
    pub ready: Option<String>,
    /// Named checks judged on every response received.
    #[serde(default)]
    pub every_response: Vec<ResponseCheck>,
    /// Departures from a rule that this contract counts as warnings, not
    /// failures: valid HTTP that a strict contract refuses for its form alone.
    /// Empty (the default) judges strictly.
    #[serde(default)]
    pub warn: Vec<Leniency>,
    /// One line saying whose judgement the `warn` list follows, shown with
    /// it (`tfb`: TechEmpower's verifier).
    #[serde(default)]
    pub warn_note: String,
    /// Named checks that take more than one request.
    #[serde(default, rename = "probe")]
    pub probes: Vec<Probe>,
    /// One request each; the first also tells whether anything answers.
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
    /// `grpc`: the contract is `[[call]]`s, not rules (grpc.rs).
    #[serde(default)]
    pub protocol: Protocol,
    /// gRPC: the `.proto` file, relative to the contract file.
    #[serde(default)]
    pub proto: Option<String>,
    /// gRPC: the `.proto` file's path, for a contract read from a file.
    #[serde(skip)]
    pub proto_path: Option<std::path::PathBuf>,
    /// gRPC: the `.proto`'s text, for a built-in contract.
    #[serde(skip)]
    pub proto_text: Option<String>,
    /// gRPC: named checks judged over every answer.
    #[serde(default)]
    pub every_call: Vec<CallCheck>,
    /// gRPC: one call each, in order.
    #[serde(default, rename = "call")]
    pub calls: Vec<Call>,
}

/// A check judged on every response (see docs/contracts.md for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResponseCheck {
    HeaderServer,
    HeaderDate,
    DateClock,
    HeaderContentType,
    Framing,
    HttpVersion,
}

/// One request and what its response must be.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable identifier, lower-case letters, digits and `-`.
    pub id: String,
    /// One line; made from the other fields when absent.
    #[serde(default)]
    pub description: Option<String>,
    /// Request target, e.g. `/api/fib/4000` (a query string is allowed;
    /// `{rand:LOW..HIGH}` placeholders are drawn afresh for every check).
    pub path: String,
    /// What to send beyond `GET path`: method, headers, body, framing, split
    /// writes (send.rs).
    #[serde(default)]
    pub send: Option<Send>,
    #[serde(default)]
    pub status: Status,
    /// Media type of the one `Content-Type` header (parameters allowed).
    #[serde(default)]
    pub content_type: Option<String>,
    /// If set, `charset` with this value is the only parameter allowed.
    #[serde(default)]
    pub charset: Option<String>,
    /// With `charset`: the parameter must be there (TechEmpower's fortunes).
    #[serde(default)]
    pub charset_required: bool,
    /// Headers that must be present and non-empty.
    #[serde(default)]
    pub has_headers: Vec<String>,
    /// Headers that must have exactly this value.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The body, byte for byte.
    #[serde(default)]
    pub body: Option<String>,
    /// The body as JSON, compared as JSON (numbers digit for digit).
    #[serde(default)]
    pub json: Option<String>,
    /// The body, computed by a named generator.
    #[serde(default)]
    pub generate: Option<Generate>,
    /// The body, computed from the request sent (a sum, a length, an echo).
    #[serde(default)]
    pub answer: Option<Answer>,
    /// The response's `Content-Encoding`: `identity` (none), `gzip` or
    /// `deflate`; the body is judged decoded.
    #[serde(default)]
    pub content_encoding: Option<String>,
    /// The response must not arrive sooner than this, milliseconds.
    #[serde(default)]
    pub min_elapsed_ms: Option<u64>,
}

/// `generate = { name = "fib", n = 4000 }`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Generate {
    pub name: Generator,
    pub n: u64,
}

/// An exact status (`404`) or a class (`"4xx"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Exact(u16),
    /// The first digit: `4` for `"4xx"`.
    Class(u16),
}

impl Default for Status {
    fn default() -> Status {
        Status::Exact(200)
    }
}

impl Status {
    pub fn matches(self, status: u16) -> bool {
        match self {
            Status::Exact(want) => status == want,
            Status::Class(class) => status / 100 == class,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Exact(code) => write!(f, "{code}"),
            Status::Class(class) => write!(f, "{class}xx"),
        }
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Status, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Status;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a status code from 100 to 599 (404) or a class such as \"4xx\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Status, E> {
                match u16::try_from(v) {
                    Ok(code) if (100..=599).contains(&code) => Ok(Status::Exact(code)),
                    _ => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Status, E> {
                let b = v.as_bytes();
                if b.len() == 3 && (b'1'..=b'5').contains(&b[0]) && v[1..].eq_ignore_ascii_case("xx") {
                    return Ok(Status::Class(u16::from(b[0] - b'0')));
                }
                Err(E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl Contract {
    /// True when this contract counts `departure` as a warning.
    pub fn warns(&self, departure: Leniency) -> bool {
        self.warn.contains(&departure)
    }

    /// True when a probe reads the database, so a check needs `--database`.
    pub fn needs_database(&self) -> bool {
        self.probes.iter().any(|p| p.check.needs_database())
    }

    /// The path of the first rule: the request that tells whether anything answers.
    pub fn first_path(&self) -> &str {
        &self.rules[0].path
    }
}

impl Rule {
    /// The rule's one-line description, made up when the file gives none.
    pub fn describe(&self) -> String {
        if let Some(d) = &self.description {
            return d.clone();
        }
        let method = self.send.as_ref().and_then(|s| s.method.as_deref()).unwrap_or("GET");
        let mut out = format!("{method} {} answers {}", self.path, self.status);
        if let Some(media) = &self.content_type {
            out.push_str(&format!(" {media}"));
        }
        if let Some(body) = &self.body {
            out.push_str(&format!(", exactly {:?}", crate::escape::escape(body.as_bytes(), 60)));
        } else if let Some(json) = &self.json {
            out.push_str(&format!(", JSON equal to {json}"));
        } else if let Some(g) = self.generate {
            out.push_str(&format!(", the {} generator's body for n = {}", g.name.name(), g.n));
        } else if let Some(answer) = self.answer {
            out.push_str(&format!(", {}", answer.describe()));
        }
        if let Some(ms) = self.min_elapsed_ms {
            out.push_str(&format!(", after at least {ms} ms"));
        }
        out
    }
}
