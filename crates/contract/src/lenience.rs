//! The departures of form a contract may count as warnings (its `warn`
//! list): valid HTTP that does the work, but not in the form a strict rule
//! asks for. The checker's lenience.rs decides with them, rule by rule.

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
