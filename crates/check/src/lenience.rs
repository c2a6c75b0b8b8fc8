//! Judging with a contract's `warn` list: a rule that meets a departure of
//! form (a lower-case JSON key, an unclamped 501, a raw quote in a fortune)
//! asks the [`Lenience`] whether the contract lets it pass. If it does, the
//! departure is noted and the rule goes on, to pass with a warning that names
//! each; if not, the rule fails with its own reason, as under a strict
//! contract. One place decides, so every rule softens the same way; the
//! departures themselves ([`Leniency`]) are the contract's (stampede_contract).

use stampede_contract::Leniency;

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
