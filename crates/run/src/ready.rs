//! When a started server counts as up. `stampede run` polls one path until it
//! answers, and that moment is the run's start time, so the path must be one
//! the app actually serves: an app that implements only the `sequence` API has
//! no `/plaintext`. The path comes from the app's manifest (`ready`), else
//! from the contract it claims (the contract file's `ready`, so each built-in
//! contract says it in one place), else any HTTP response on `/`, whatever
//! its status, for an app that claims no contract.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::manifest::Manifest;

/// The request that tells a server is ready, and what answer counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyCheck {
    /// The request target, e.g. `/plaintext`.
    pub path: String,
    /// True: any HTTP status counts (the server answers at all); false: `200` only.
    pub any_status: bool,
}

impl ReadyCheck {
    /// `200` on `path`.
    pub fn ok_on(path: &str) -> ReadyCheck {
        ReadyCheck { path: path.to_string(), any_status: false }
    }

    /// Any HTTP response on `/`.
    pub fn any_answer() -> ReadyCheck {
        ReadyCheck { path: "/".into(), any_status: true }
    }

    /// The app's manifest `ready`, else its contract's, else any answer on `/`.
    /// Fails (one line naming the contract) when the claimed contract cannot be read.
    pub fn for_app(app: &Manifest) -> Result<ReadyCheck, String> {
        if let Some(path) = app.ready.as_deref() {
            return Ok(ReadyCheck::ok_on(path));
        }
        let Some(claimed) = app.contract() else {
            return Ok(ReadyCheck::any_answer());
        };
        let contract = stampede_check::resolve(&claimed).map_err(|e| format!("{}: contract: {e}", app.name))?;
        Ok(contract.ready.as_deref().map(ReadyCheck::ok_on).unwrap_or_else(ReadyCheck::any_answer))
    }

    /// Whether a response with this status means the server is ready.
    pub fn accepts(&self, status: u16) -> bool {
        self.any_status || status == 200
    }
}

impl fmt::Display for ReadyCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.any_status {
            write!(f, "any HTTP response on {}", self.path)
        } else {
            write!(f, "200 on {}", self.path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Manifest {
        let mut m: Manifest = toml::from_str(&format!("name = \"a\"\nrun = \"r\"\n{text}")).unwrap();
        m.dir = "apps/a".into();
        m
    }

    #[test]
    fn the_manifest_then_the_contract_then_any_answer_on_root() {
        assert_eq!(ReadyCheck::for_app(&manifest("")).unwrap(), ReadyCheck::ok_on("/plaintext"));
        assert_eq!(ReadyCheck::for_app(&manifest("contract = \"tfb\"")).unwrap(), ReadyCheck::ok_on("/plaintext"));
        assert_eq!(
            ReadyCheck::for_app(&manifest("contract = \"sequence\"")).unwrap(),
            ReadyCheck::ok_on("/api/count/1")
        );
        let none = ReadyCheck::for_app(&manifest("contract = \"none\"")).unwrap();
        assert_eq!(none, ReadyCheck::any_answer());
        assert!(none.accepts(404) && none.accepts(500));
        assert_eq!(none.to_string(), "any HTTP response on /");
        let own = ReadyCheck::for_app(&manifest("contract = \"sequence\"\nready = \"/health\"")).unwrap();
        assert_eq!(own, ReadyCheck::ok_on("/health"));
        assert!(own.accepts(200) && !own.accepts(404));
        assert_eq!(own.to_string(), "200 on /health");
    }

    #[test]
    fn an_unreadable_contract_is_one_line_naming_the_app() {
        let e = ReadyCheck::for_app(&manifest("contract = \"missing.toml\"")).unwrap_err();
        assert!(e.starts_with("a: contract: cannot read contract file apps/a/missing.toml"), "{e}");
        assert!(!e.contains('\n'));
    }
}
