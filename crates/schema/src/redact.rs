//! What is secret in a document made to be shared, declared once. A
//! results.json, its HTML report and `stampede load --json` travel: they are
//! attached to issues, pasted in chats, committed beside a benchmark. The
//! credentials a load needs must not travel with them: a URL's password, a
//! database URL's password, and the values of the `Authorization`,
//! `Proxy-Authorization` and `Cookie` headers (and of any header the user
//! names, a scenario's `redact_headers`). Every writer of a shared document
//! and every reader that renders one masks them through [`Redaction`], so a
//! secret is written as `***` whichever view shows it.
//!
//! Specs are not shared documents: a load spec handed to `stampede load
//! --spec -` (by `stampede run`, by a load host's controller, by
//! `--print-spec` for a replay) keeps the real values, or the replayed load
//! would send `***`.

use serde_json::Value;

/// What a secret is replaced with.
pub const MASK: &str = "***";

/// Headers whose values are credentials whatever the user says.
pub const SECRET_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// Which headers are secret: [`SECRET_HEADERS`] and the names the user
/// added. URL passwords and `…password=` values are always secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction {
    /// Lower-case header names.
    headers: Vec<String>,
}

impl Default for Redaction {
    fn default() -> Redaction {
        Redaction::new(std::iter::empty::<&str>())
    }
}

impl Redaction {
    /// The built-in secret headers and `extra` (names, any case).
    pub fn new<S: AsRef<str>>(extra: impl IntoIterator<Item = S>) -> Redaction {
        let mut headers: Vec<String> = SECRET_HEADERS.iter().map(|h| h.to_string()).collect();
        for name in extra {
            let name = name.as_ref().trim().to_ascii_lowercase();
            if !name.is_empty() && !headers.contains(&name) {
                headers.push(name);
            }
        }
        Redaction { headers }
    }

    /// Whether a header of this name has a secret value.
    pub fn is_secret_header(&self, name: &str) -> bool {
        self.headers.iter().any(|h| h.eq_ignore_ascii_case(name.trim()))
    }

    /// `text` with every secret in it masked: URL passwords
    /// (`postgres://u:***@h/d`), `…password=***` pairs (libpq's key/value
    /// form, a URL's query, an environment variable) and the value of every
    /// secret `Name: value` header it holds (a `--header` argument, a
    /// profile's `headers`), up to the end of the text, a quote or a line
    /// break. Masking masked text changes nothing.
    pub fn text(&self, text: &str) -> String {
        let text = mask_url_passwords(text);
        let text = mask_password_pairs(&text);
        self.mask_headers(&text)
    }

    /// Every string of `value` through [`Redaction::text`], and the value of
    /// every member named after a secret header or a password masked whole.
    pub fn json(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                let masked = self.text(s);
                if masked != *s {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(members) => {
                for (name, v) in members.iter_mut() {
                    match v {
                        Value::String(s) if self.is_secret_header(name) || is_password_key(name) => {
                            *s = MASK.to_string()
                        }
                        _ => self.json(v),
                    }
                }
            }
            _ => {}
        }
    }

    fn mask_headers(&self, text: &str) -> String {
        let lower = text.to_ascii_lowercase();
        // (start, end) byte ranges of secret values, in order, not overlapping.
        let mut values: Vec<(usize, usize)> = Vec::new();
        for name in &self.headers {
            let mut from = 0;
            while let Some(found) = lower[from..].find(name.as_str()) {
                let start = from + found;
                from = start + name.len();
                // Part of a longer name (`X-Authorization-Hint`)?
                if lower[..start].chars().next_back().is_some_and(is_key_char) {
                    continue;
                }
                let rest = &text[from..];
                let Some(after_colon) = rest.trim_start_matches([' ', '\t']).strip_prefix(':') else {
                    continue;
                };
                let value_start = text.len() - after_colon.trim_start_matches([' ', '\t']).len();
                if text[value_start..].starts_with(MASK) {
                    continue;
                }
                let value_end =
                    text[value_start..].find(['"', '\'', '\n', '\r']).map_or(text.len(), |n| value_start + n);
                if value_end > value_start {
                    values.push((value_start, value_end));
                }
            }
        }
        splice(text, values)
    }
}

/// The userinfo of a URL (`scheme://user:password@host…`), as written
/// (percent-encoded), with where it lies in the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Userinfo<'a> {
    pub user: &'a str,
    pub password: Option<&'a str>,
    /// Byte range of `user:password@` (the `@` included) in the URL.
    pub range: std::ops::Range<usize>,
}

/// The userinfo of the first URL in `text` that has one, searched from `from`.
fn userinfo_from(text: &str, from: usize) -> Option<Userinfo<'_>> {
    let mut at = from;
    while let Some(found) = text[at..].find("://") {
        let start = at + found + 3;
        let authority_len = text[start..].find(|c: char| AUTHORITY_END.contains(&c)).unwrap_or(text.len() - start);
        let authority = &text[start..start + authority_len];
        if let Some(sign) = authority.rfind('@') {
            let info = &authority[..sign];
            let (user, password) = match info.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (info, None),
            };
            return Some(Userinfo { user, password, range: start..start + sign + 1 });
        }
        at = start;
    }
    None
}

/// Where an authority ends: the path, query or fragment, or the end of the
/// URL in running text.
const AUTHORITY_END: [char; 11] = ['/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>'];

/// The userinfo of `url`, if it has one.
pub fn userinfo(url: &str) -> Option<Userinfo<'_>> {
    userinfo_from(url, 0)
}

/// `url` with its password masked: `https://u:secret@h/` → `https://u:***@h/`.
pub fn url(url: &str) -> String {
    mask_url_passwords(url)
}

fn mask_url_passwords(text: &str) -> String {
    let mut values = Vec::new();
    let mut from = 0;
    while let Some(info) = userinfo_from(text, from) {
        if let Some(password) = info.password.filter(|p| !p.is_empty()) {
            let end = info.range.end - 1;
            values.push((end - password.len(), end));
        }
        from = info.range.end;
    }
    splice(text, values)
}

/// A key whose value is a password: `password`, `PGPASSWORD`, `db_password`.
fn is_password_key(key: &str) -> bool {
    key.to_ascii_lowercase().ends_with("password")
}

fn mask_password_pairs(text: &str) -> String {
    let mut values = Vec::new();
    for (eq, _) in text.match_indices('=') {
        let key_start =
            text[..eq].char_indices().rev().find(|&(_, c)| !is_key_char(c)).map_or(0, |(i, c)| i + c.len_utf8());
        if !is_password_key(&text[key_start..eq]) {
            continue;
        }
        let start = eq + 1;
        let end = text[start..].find([' ', '\t', '\n', '\r', '&', '"', '\'', ';']).map_or(text.len(), |n| start + n);
        if end > start {
            values.push((start, end));
        }
    }
    splice(text, values)
}

/// A character of a key or of a header name as people write them.
fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// `text` with each range replaced by [`MASK`] (overlaps merged).
fn splice(text: &str, mut ranges: Vec<(usize, usize)>) -> String {
    if ranges.is_empty() {
        return text.to_string();
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in ranges {
        if end <= at {
            continue;
        }
        out.push_str(&text[at..start.max(at)]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// The shared documents, masked where they can hold a secret. Their writers
/// call these before writing, and [`crate::document`]'s reader after
/// reading, so a file written before masking existed renders masked too.
impl crate::run::ResultsDoc {
    /// What is secret in this document: [`SECRET_HEADERS`] and the headers
    /// its scenario names in `redact_headers`.
    pub fn redaction(&self) -> Redaction {
        let named = self.scenario.get("redact_headers").and_then(Value::as_array);
        Redaction::new(named.into_iter().flatten().filter_map(Value::as_str))
    }

    /// Masks the scenario as run, the command line, every run and every
    /// skipped app's reason.
    pub fn redact(&mut self) {
        let r = self.redaction();
        r.json(&mut self.scenario);
        self.environment.command_line = r.text(&self.environment.command_line);
        self.runs.iter_mut().for_each(|run| run.redact(&r));
        for skipped in &mut self.skipped {
            skipped.reason = r.text(&skipped.reason);
        }
    }
}

impl crate::run::RunRecord {
    /// Masks what a run's text can hold: its app (a URL for a load
    /// document), its invalid reason and its loads' URLs.
    pub fn redact(&mut self, r: &Redaction) {
        self.app = r.text(&self.app);
        if let Some(reason) = &mut self.invalid_reason {
            *reason = r.text(reason);
        }
        for load in [&mut self.warmup, &mut self.load, &mut self.latency].into_iter().flatten() {
            load.redact(r);
        }
    }
}

impl crate::load::LoadResult {
    /// Masks the URL's password and the reasons a load host failed.
    pub fn redact(&mut self, r: &Redaction) {
        self.url = r.text(&self.url);
        if let Some(multi) = &mut self.multi_host {
            for failure in &mut multi.failed_hosts {
                failure.reason = r.text(&failure.reason);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_are_masked_and_the_rest_kept() {
        assert_eq!(url("postgres://u:secret@h:1/d"), "postgres://u:***@h:1/d");
        assert_eq!(url("http://u:p%40ss@h/x?y=1"), "http://u:***@h/x?y=1");
        assert_eq!(url("http://u:p@ss@h/"), "http://u:***@h/", "the last @ ends the userinfo, as in url");
        assert_eq!(url("postgres://h/d"), "postgres://h/d");
        assert_eq!(url("http://user@h/"), "http://user@h/", "a user alone is no secret");
        assert_eq!(url("http://h/a@b"), "http://h/a@b", "an @ in the path is not userinfo");
        let r = Redaction::default();
        assert_eq!(r.text("from http://a:1@x/ and https://b:2@y/"), "from http://a:***@x/ and https://b:***@y/");
    }

    #[test]
    fn password_pairs_are_masked() {
        let r = Redaction::default();
        assert_eq!(r.text("host=h password=s3cret dbname=d"), "host=h password=*** dbname=d");
        assert_eq!(r.text("postgres://h/d?user=u&password=s3&x=1"), "postgres://h/d?user=u&password=***&x=1");
        assert_eq!(r.text("PGPASSWORD=s3 PGUSER=u"), "PGPASSWORD=*** PGUSER=u");
        assert_eq!(r.text("passwords are fine; a=b"), "passwords are fine; a=b");
        assert_eq!(r.text("é password=x"), "é password=***");
        assert_eq!(r.text("'Authorization: t'"), "'Authorization: ***'");
    }

    #[test]
    fn secret_header_values_are_masked_in_any_case_and_others_kept() {
        let r = Redaction::new(["X-Api-Key"]);
        assert_eq!(r.text("Authorization: Bearer abc def"), "Authorization: ***");
        assert_eq!(r.text("proxy-authorization:Basic xyz"), "proxy-authorization:***");
        assert_eq!(r.text("COOKIE: a=1; b=2"), "COOKIE: ***");
        assert_eq!(r.text("x-api-key: k"), "x-api-key: ***");
        assert_eq!(r.text("Accept: */*"), "Accept: */*");
        assert_eq!(r.text("X-Authorization-Hint: no"), "X-Authorization-Hint: no", "another header's name");
        assert_eq!(
            r.text(r#"profiles.0.headers=["Authorization: Bearer t", "Accept: y"]"#),
            r#"profiles.0.headers=["Authorization: ***", "Accept: y"]"#
        );
        assert_eq!(Redaction::default().text("x-api-key: k"), "x-api-key: k", "named only when the user names it");
        assert_eq!(r.text(&r.text("Cookie: c")), "Cookie: ***", "masking twice is masking once");
        assert_eq!(r.text("-H Cookie:*** http://h/"), "-H Cookie:*** http://h/", "nor does it reach further");
    }

    #[test]
    fn json_strings_and_secret_members_are_masked() {
        let r = Redaction::default();
        let mut doc = serde_json::json!({
            "database": {"url": "postgres://u:pw@h/d"},
            "profiles": [{"headers": ["Authorization: Bearer t", "Accept: a"]}],
            "headers": {"Cookie": "c=1", "Accept": "a"},
            "password": "pw",
            "count": 3
        });
        r.json(&mut doc);
        assert_eq!(doc["database"]["url"], "postgres://u:***@h/d");
        assert_eq!(doc["profiles"][0]["headers"], serde_json::json!(["Authorization: ***", "Accept: a"]));
        assert_eq!(doc["headers"], serde_json::json!({"Cookie": "***", "Accept": "a"}));
        assert_eq!((doc["password"].as_str(), doc["count"].as_u64()), (Some("***"), Some(3)));
    }

    #[test]
    fn userinfo_is_found_with_its_range() {
        let u = "http://me:p%3A@h:8/x";
        let info = userinfo(u).unwrap();
        assert_eq!((info.user, info.password), ("me", Some("p%3A")));
        assert_eq!(&u[info.range.clone()], "me:p%3A@");
        assert_eq!(userinfo("http://h/").map(|i| i.user), None);
    }
}
