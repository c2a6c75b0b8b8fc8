//! The contracts that ship inside the binary, from the repository's
//! `contracts/` folder: `stampede` (the reference apps' API, apps/CONTRACT.md),
//! `sequence` (the original api_runtime_compare API), `tfb` and `db`
//! (TechEmpower's tests), `httparena` (HttpArena's HTTP/1.1 profiles) and
//! `web-frameworks` (the-benchmarker's three routes). They are ordinary contract files, embedded so
//! that `stampede check` works from any directory, and parsed by the same code
//! as a user's file.

use std::path::Path;

use crate::error::ContractError;
use crate::model::Contract;

/// The contract `stampede check` uses when none is named.
pub const DEFAULT: &str = "stampede";

/// Name and text of each built-in contract, in the order listed.
const BUILTIN: &[(&str, &str)] = &[
    ("stampede", include_str!("../../../contracts/stampede.toml")),
    ("sequence", include_str!("../../../contracts/sequence.toml")),
    ("tfb", include_str!("../../../contracts/tfb.toml")),
    ("db", include_str!("../../../contracts/db.toml")),
    ("grpc", include_str!("../../../contracts/grpc.toml")),
    ("httparena", include_str!("../../../contracts/httparena.toml")),
    ("web-frameworks", include_str!("../../../contracts/web-frameworks.toml")),
];

/// The `.proto` files the built-in contracts name (`proto = …`), by that name.
const PROTOS: &[(&str, &str)] = &[("grpc/bench.proto", include_str!("../../../contracts/grpc/bench.proto"))];

/// The names of the built-in contracts.
pub fn names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// Every built-in contract, parsed.
pub fn all() -> Vec<Contract> {
    names().into_iter().map(|name| builtin(name).expect("a built-in name")).collect()
}

/// The built-in contract `name`, if there is one.
pub fn builtin(name: &str) -> Option<Contract> {
    let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
    let file = format!("contracts/{name}.toml (built in)");
    // The built-in files are tested to parse (tests below), so this holds.
    let mut contract = Contract::parse(text, &file).expect("built-in contracts are valid");
    if let Some(proto) = &contract.proto {
        let found = PROTOS.iter().find(|(name, _)| name == proto);
        contract.proto_text = Some(found.expect("a built-in contract's .proto is built in").1.to_string());
    }
    Some(contract)
}

/// A built-in name or a contract file's path, as given to `--contract` or in
/// an app manifest. A name wins over a file of the same name in the current
/// directory unless the value looks like a path (has a `/` or ends `.toml`).
pub fn resolve(name_or_file: &str) -> Result<Contract, ContractError> {
    let looks_like_path = name_or_file.contains('/') || name_or_file.ends_with(".toml");
    if !looks_like_path {
        if let Some(contract) = builtin(name_or_file) {
            return Ok(contract);
        }
    }
    let path = Path::new(name_or_file);
    if looks_like_path || path.is_file() {
        return Contract::load(path);
    }
    Err(ContractError::Unknown { name: name_or_file.to_string(), builtins: names().join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_is_named_after_its_file() {
        for (name, text) in BUILTIN {
            let contract = Contract::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(contract.name, *name);
        }
        assert_eq!(names(), ["stampede", "sequence", "tfb", "db", "grpc", "httparena", "web-frameworks"]);
        assert_eq!(all().len(), 7);
    }

    #[test]
    fn every_builtin_says_where_it_is_ready() {
        let ready = |name| builtin(name).and_then(|c| c.ready);
        assert_eq!(ready("stampede").as_deref(), Some("/plaintext"));
        assert_eq!(ready("tfb").as_deref(), Some("/plaintext"));
        assert_eq!(ready("sequence").as_deref(), Some("/api/count/1"));
        assert_eq!(ready("grpc").as_deref(), Some("/stampede.bench.v1.Bench/Unary"));
        assert_eq!(ready("httparena").as_deref(), Some("/baseline11?a=1&b=1"));
        assert_eq!(ready("web-frameworks").as_deref(), Some("/"));
    }

    #[test]
    fn unknown_names_and_missing_files_say_what_exists() {
        let e = resolve("nope").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "unknown contract \"nope\": not built in (stampede, sequence, tfb, db, grpc, httparena, web-frameworks)"
            ),
            "{e}"
        );
        let e = resolve("missing/contract.toml").unwrap_err().to_string();
        assert!(e.starts_with("cannot read contract file missing/contract.toml: "), "{e}");
        assert_eq!(resolve("sequence").unwrap().name, "sequence");
    }
}
