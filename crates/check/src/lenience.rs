//! Judging with a contract's `warn` list: a rule that meets a departure of
//! form (a lower-case JSON key, an unclamped 501, a raw quote in a fortune)
//! asks the [`Lenience`] whether the contract lets it pass. If it does, the
//! departure is noted and the rule goes on, to pass with a warning that names
//! each; if not, the rule fails with its own reason, as under a strict
//! contract. One place decides, so every rule softens the same way; the
//! departures themselves ([`Leniency`]) are declared here too.

use serde::Deserialize;

/// A departure a contract may count as a warning (its `warn` list): the
/// answer is valid HTTP and does the work, but not in the form a strict rule
/// asks for. docs/contracts.md lists each with the rules it softens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Leniency {
    /// An error answer (4xx, 5xx) with neither `Content-Length` nor chunked
    /// encoding, its body ended by closing the connection (RFC 9112 §6.3):
    /// softens `framing`.
    CloseDelimitedError,
    /// An error answer in HTTP/1.0: softens `http-version`.
    #[serde(rename = "http-1.0-error")]
    Http10Error,
    /// A JSON key in another case (`randomnumber` for `randomNumber`).
    KeyCase,
    /// A JSON object with keys beyond those asked for.
    ExtraKeys,
    /// An exact body or JSON string in another case (`Hello, world!`).
    MessageCase,
    /// An exact body found inside a longer one (`Hello, World!\n`).
    ExtraBytes,
    /// A `db-rows`/`db-updates` probe asking for 500 rows (N = 501) answered
    /// with another count of valid rows: the upper clamp missed.
    UpperClamp,
    /// `db-row` answered with a one-element array instead of the object.
    RowInArray,
    /// A raw `'`, `"` or `>` in a fortune's message (`<` and `&` still fail).
    UnescapedQuotes,
    /// A `Date` that is not one IMF-fixdate (another format, or two Date
    /// headers); a missing Date still fails: softens `header-date`.
    DateFormat,
    /// An exact body followed by a line ending (`55\n`): HttpArena compares
    /// the last line curl printed.
    TrailingNewline,
    /// Another 2xx status for a rule that asks 200: the-benchmarker's
    /// `Net::HTTPSuccess`.
    SuccessStatus,
    /// An `item-totals` answer whose `items` are not `count` long: HttpArena's
    /// json check reads only `count` and each total.
    ItemCount,
}

impl Leniency {
    /// Its name as written in a contract's `warn` list.
    pub fn name(self) -> &'static str {
        match self {
            Leniency::CloseDelimitedError => "close-delimited-error",
            Leniency::Http10Error => "http-1.0-error",
            Leniency::KeyCase => "key-case",
            Leniency::ExtraKeys => "extra-keys",
            Leniency::MessageCase => "message-case",
            Leniency::ExtraBytes => "extra-bytes",
            Leniency::UpperClamp => "upper-clamp",
            Leniency::RowInArray => "row-in-array",
            Leniency::UnescapedQuotes => "unescaped-quotes",
            Leniency::DateFormat => "date-format",
            Leniency::TrailingNewline => "trailing-newline",
            Leniency::SuccessStatus => "success-status",
            Leniency::ItemCount => "item-count",
        }
    }
}

/// The contract's `warn` list and what one rule found under it.
#[derive(Debug)]
pub struct Lenience<'a> {
    allowed: &'a [Leniency],
    found: Vec<String>,
}

impl<'a> Lenience<'a> {
    pub fn new(allowed: &'a [Leniency]) -> Lenience<'a> {
        Lenience { allowed, found: Vec::new() }
    }

    /// True (and noted) when the contract counts `departure`, described by
    /// `what`, as a warning; false when the rule must fail with its own reason.
    pub fn allow(&mut self, departure: Leniency, what: impl FnOnce() -> String) -> bool {
        if !self.allowed.contains(&departure) {
            return false;
        }
        let noted = format!("{} ({})", what(), departure.name());
        if !self.found.contains(&noted) {
            self.found.push(noted);
        }
        true
    }

    /// The warning, when something was noted: each departure, `; `-separated.
    pub fn warning(&self) -> Option<String> {
        (!self.found.is_empty()).then(|| self.found.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowed_departure_is_noted_once_and_another_is_refused() {
        let mut lenience = Lenience::new(&[Leniency::KeyCase]);
        assert_eq!(lenience.warning(), None);
        assert!(lenience.allow(Leniency::KeyCase, || "key \"randomnumber\"".into()));
        assert!(lenience.allow(Leniency::KeyCase, || "key \"randomnumber\"".into()));
        assert!(!lenience.allow(Leniency::ExtraKeys, || "unexpected key \"x\"".into()));
        assert_eq!(lenience.warning().as_deref(), Some("key \"randomnumber\" (key-case)"));
    }
}
