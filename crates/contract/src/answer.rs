//! Answers a rule computes from the request it sent (`answer = "sum"`,
//! docs/contracts.md), for rules whose request changes per check: the sum of
//! the integers in the query and body (HttpArena's `/baseline11`), the
//! body's length, the body echoed, the path's last segment, or a JSON list
//! of items whose totals follow from the query. The checker's answer.rs
//! computes each for one request.

use serde::Deserialize;

/// `answer = "sum"`: what the body must be, computed from the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// The decimal sum of every integer value in the query and of the body.
    Sum,
    /// The decimal number of body bytes sent.
    Length,
    /// The body sent, byte for byte.
    Echo,
    /// The path's last segment (`/user/42` → `42`).
    LastSegment,
    /// `{"count": N, "items": [...]}` for `/…/{N}?m=M`, every item's `total`
    /// equal to `price * quantity * M`.
    ItemTotals,
}

impl Answer {
    /// For a rule's description.
    pub fn describe(self) -> &'static str {
        match self {
            Answer::Sum => "the sum of the integers in its query and body",
            Answer::Length => "the number of body bytes it sent",
            Answer::Echo => "the body it sent",
            Answer::LastSegment => "its path's last segment",
            Answer::ItemTotals => "{count, items} with each total = price × quantity × m",
        }
    }
}
