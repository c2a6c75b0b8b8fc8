//! Why a contract could not be had, as a caller tells the cases apart: a
//! name that is neither built in nor a file, a file that cannot be read, a
//! file that does not hold a valid contract.

/// Why a contract could not be had. Each message names the file (or the
/// `--contract` value) and, for a bad file, the field and what to change.
#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    #[error("unknown contract {name:?}: not built in ({builtins}) and no such file; give a built-in name or the path of a contract file (docs/contracts.md)")]
    Unknown { name: String, builtins: String },

    #[error("cannot read contract file {path}: {reason}")]
    Read { path: String, reason: String },

    #[error("{file}: {field}: {reason} (see docs/contracts.md)")]
    Invalid {
        file: String,
        /// The field, e.g. `rule[3].status` (TOML path, rules counted from 1),
        /// with its line when known.
        field: String,
        reason: String,
    },
}
