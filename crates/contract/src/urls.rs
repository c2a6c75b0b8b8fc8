//! A server's own URLs for a contract's endpoints. Contracts are written with
//! one shape of URL (`/queries?queries=20`, `/updates?queries=20`), but a
//! server we did not write serves its own: TechEmpower lets each
//! implementation declare them (`/queries?q=`, `?n=`, `/queries/` with the
//! count as a path suffix, `/update`, `/dbs`), and 69 of 113 of its Go, Rust
//! and Python PostgreSQL implementations use another shape. A [`UrlMap`] says,
//! per endpoint, which URL the server answers it on; the checker rewrites every
//! request through it, and `stampede run` rewrites its profiles' paths and the
//! readiness path with the same map (an app manifest's `[urls]`, `check --url`).
//!
//! An endpoint is named by a contract path's first segment (`queries` for
//! `/queries?queries=20`, `sleep` for `/sleep/100`). Its URL either ends in
//! `=` or `/`, and then the contract's count (the query value or the rest of
//! the path) is appended to it, as TechEmpower's toolset appends the count to
//! `query_url`; or it replaces the segment and the query string is kept.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::Contract;

/// Endpoint name → the server's URL for it (a path, with a query if it has one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, String>", into = "BTreeMap<String, String>")]
pub struct UrlMap(BTreeMap<String, String>);

/// The endpoint of a contract or profile path: its first segment, without the
/// query (`queries` for `/queries?queries=20`, empty for `/`).
pub fn endpoint_of(path: &str) -> &str {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    path.trim_start_matches('/').split('/').next().unwrap_or_default()
}

impl UrlMap {
    /// A map checked entry by entry: each name is lower-case letters, digits,
    /// `-` or `_`; each URL starts with `/` and has no space or control byte.
    /// The error is one line naming the entry.
    pub fn new(entries: BTreeMap<String, String>) -> Result<UrlMap, String> {
        for (name, url) in &entries {
            let good_name = !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
            if !good_name {
                return Err(format!(
                    "url name {name:?}: name an endpoint by its contract path's first segment, such as queries for /queries"
                ));
            }
            if !url.starts_with('/') || url.bytes().any(|b| !b.is_ascii_graphic()) {
                return Err(format!(
                    "url {name}={url:?}: give the server's path starting with /, such as /queries?q= or /queries/"
                ));
            }
        }
        Ok(UrlMap(entries))
    }

    /// Reads `name=url` pairs (`queries=/queries?q=`), as `--url` gives them.
    pub fn parse_pairs<S: AsRef<str>>(pairs: &[S]) -> Result<UrlMap, String> {
        let mut entries = BTreeMap::new();
        for pair in pairs {
            let pair = pair.as_ref();
            let Some((name, url)) = pair.split_once('=') else {
                return Err(format!("--url {pair:?}: write NAME=URL, such as queries=/queries?q="));
            };
            entries.insert(name.to_string(), url.to_string());
        }
        UrlMap::new(entries)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The mapped endpoints and their URLs, by name.
    pub fn entries(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// `name=url` pairs, as `--url` takes them.
    pub fn pairs(&self) -> Vec<String> {
        self.0.iter().map(|(name, url)| format!("{name}={url}")).collect()
    }

    /// The server's request target for a contract path (unchanged when its
    /// endpoint is not mapped): `/queries?queries=20` with `queries=/queries?q=`
    /// is `/queries?q=20`, with `queries=/queries/` it is `/queries/20`. A
    /// bare `/queries` (no count) is the URL as given: TechEmpower never asks
    /// one without its count, and `/queries` may not exist.
    pub fn rewrite(&self, path: &str) -> String {
        let Some(url) = self.0.get(endpoint_of(path)) else {
            return path.to_string();
        };
        let (before_query, query) = match path.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path, None),
        };
        let appends = url.ends_with('=') || url.ends_with('/');
        let rest = before_query.trim_start_matches('/').split_once('/').map(|(_, rest)| rest);
        match (rest, query) {
            (Some(rest), query) => {
                let joined = if url.ends_with('/') { format!("{url}{rest}") } else { format!("{url}/{rest}") };
                match query {
                    Some(q) => format!("{joined}?{q}"),
                    None => joined,
                }
            }
            (None, Some(q)) if appends => {
                // The count is the one parameter's value (`queries=20` → `20`).
                let count = q.split_once('=').map_or(q, |(_, value)| value);
                format!("{url}{count}")
            }
            (None, Some(q)) => {
                let separator = if url.contains('?') { '&' } else { '?' };
                format!("{url}{separator}{q}")
            }
            (None, None) => url.clone(),
        }
    }

    /// A rule's description naming the request it sends: each `GET <path>`
    /// of `path` (the whole path, not a longer one) becomes `GET <its own
    /// URL>`, so `queries-20` reads `GET /queries?q=20 answers 20 row(s)…`
    /// where the server's URL is `/queries?q=`, not the contract's path.
    pub fn describe(&self, description: &str, path: &str) -> String {
        let own = self.rewrite(path);
        if own == path {
            return description.to_string();
        }
        let from = format!("GET {path}");
        let mut out = String::with_capacity(description.len());
        let mut rest = description;
        while let Some(at) = rest.find(&from) {
            let end = at + from.len();
            let whole = rest[end..].chars().next().is_none_or(|c| c.is_whitespace() || matches!(c, ')' | ',' | ':'));
            out.push_str(&rest[..at]);
            out.push_str(if whole { "GET " } else { &from });
            if whole {
                out.push_str(&own);
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }

    /// `contract` with only the rules and probes whose endpoint is mapped:
    /// what a server that declares only some endpoints (a TechEmpower test
    /// entry with `db_url` alone) can be checked on.
    pub fn restrict(&self, contract: &Contract) -> Contract {
        let mut only = contract.clone();
        only.rules.retain(|rule| self.0.contains_key(endpoint_of(&rule.path)));
        only.probes.retain(|probe| self.0.contains_key(endpoint_of(&probe.path)));
        only
    }
}

impl Contract {
    /// The endpoints its rules and probes ask (`plaintext`, `queries`, …):
    /// the profiles whose path is one of them are the ones it governs.
    pub fn endpoints(&self) -> BTreeSet<String> {
        let rules = self.rules.iter().map(|r| r.path.as_str());
        let probes = self.probes.iter().map(|p| p.path.as_str());
        rules.chain(probes).map(|path| endpoint_of(path).to_string()).collect()
    }
}

impl TryFrom<BTreeMap<String, String>> for UrlMap {
    type Error = String;

    fn try_from(entries: BTreeMap<String, String>) -> Result<UrlMap, String> {
        UrlMap::new(entries)
    }
}

impl From<UrlMap> for BTreeMap<String, String> {
    fn from(map: UrlMap) -> BTreeMap<String, String> {
        map.0
    }
}

impl fmt::Display for UrlMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pairs().join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[&str]) -> UrlMap {
        UrlMap::parse_pairs(pairs).unwrap()
    }

    #[test]
    fn techempower_shapes_get_the_count_appended() {
        let q = map(&["queries=/queries?q=", "updates=/update?queries=", "db=/dbs"]);
        assert_eq!(q.rewrite("/queries?queries=20"), "/queries?q=20");
        assert_eq!(q.rewrite("/queries?queries="), "/queries?q=");
        assert_eq!(q.rewrite("/queries?queries=foo"), "/queries?q=foo");
        assert_eq!(q.rewrite("/queries"), "/queries?q=", "no count: the URL as given");
        assert_eq!(q.rewrite("/updates?queries=501"), "/update?queries=501");
        assert_eq!(q.rewrite("/db"), "/dbs");
        assert_eq!(q.rewrite("/fortunes"), "/fortunes", "an endpoint not mapped is unchanged");
        let n = map(&["queries=/db?n=", "updates=/x?a=1&n="]);
        assert_eq!(n.rewrite("/queries?queries=2"), "/db?n=2");
        assert_eq!(n.rewrite("/updates"), "/x?a=1&n=");
    }

    #[test]
    fn descriptions_name_the_request_sent() {
        let q = map(&["queries=/queries?q=", "db=/dbs"]);
        let said = q.describe("GET /queries?queries=20 answers 20 row(s) of world", "/queries?queries=20");
        assert_eq!(said, "GET /queries?q=20 answers 20 row(s) of world");
        assert_eq!(q.describe("GET /queries answers 1 row(s)", "/queries"), "GET /queries?q= answers 1 row(s)");
        assert_eq!(q.describe("Date changes (GET /db)", "/db"), "Date changes (GET /dbs)");
        let longer = "GET /queries?queries=2 answers, unlike GET /queries alone";
        assert_eq!(q.describe(longer, "/queries"), "GET /queries?queries=2 answers, unlike GET /queries?q= alone");
        assert_eq!(q.describe("GET /fortunes is a page", "/fortunes"), "GET /fortunes is a page");
    }

    #[test]
    fn a_path_suffix_count_and_a_replaced_segment() {
        let m = map(&["queries=/queries/", "sleep=/v2/wait", "json=/j"]);
        assert_eq!(m.rewrite("/queries?queries=20"), "/queries/20");
        assert_eq!(m.rewrite("/queries?queries="), "/queries/");
        assert_eq!(m.rewrite("/queries"), "/queries/");
        assert_eq!(m.rewrite("/sleep/100"), "/v2/wait/100");
        assert_eq!(m.rewrite("/json"), "/j");
        assert_eq!(m.rewrite("/json?pretty=1"), "/j?pretty=1");
        assert_eq!(endpoint_of("/api/fib/4000"), "api");
        assert_eq!(endpoint_of("/"), "");
    }

    #[test]
    fn bad_entries_are_one_line_naming_them() {
        let e = UrlMap::parse_pairs(&["queries"]).unwrap_err();
        assert!(e.contains("--url \"queries\"") && e.contains("NAME=URL"), "{e}");
        let e = UrlMap::parse_pairs(&["queries=queries?q="]).unwrap_err();
        assert!(e.contains("queries=\"queries?q=\"") && e.contains("starting with /"), "{e}");
        let e = UrlMap::parse_pairs(&["Que ries=/q"]).unwrap_err();
        assert!(e.contains("\"Que ries\""), "{e}");
        let parsed = toml::from_str::<BTreeMap<String, UrlMap>>("urls = { db = \"db\" }");
        assert!(parsed.unwrap_err().to_string().contains("url db=\"db\""));
    }

    #[test]
    fn restrict_keeps_the_mapped_endpoints_only() {
        let tfb = crate::builtin::builtin("tfb").unwrap();
        let only_json = map(&["json=/j"]).restrict(&tfb);
        assert!(!only_json.rules.is_empty());
        assert_eq!(only_json.endpoints(), BTreeSet::from(["json".to_string()]));
        assert_eq!(tfb.endpoints(), BTreeSet::from(["json".to_string(), "plaintext".to_string()]));
    }
}
