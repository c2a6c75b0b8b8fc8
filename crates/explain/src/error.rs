//! Errors of reading event logs and results files, one enum for the crate's
//! single operation (explaining a run). Each variant names the file, line or
//! field at fault and what to do about it, so the binary can print it as is.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("cannot read {path}: {cause}")]
    Read { path: PathBuf, cause: std::io::Error },

    #[error("{path} is larger than {max_mib} MiB, the most an input file may be (docs/explain.md); give a results.json or a `stampede load --json` file")]
    TooLarge { path: PathBuf, max_mib: u64 },

    #[error("{path}: not JSON ({cause}); give a results.json from `stampede run` or a `stampede load --json` file")]
    Json { path: PathBuf, cause: serde_json::Error },

    #[error("{path}: schema {found:?} is not {expected:?}")]
    Schema { path: PathBuf, found: String, expected: &'static str },

    /// A slow-request file results.json names, missing or corrupt; the
    /// message names it and says what to do.
    #[error("{0}")]
    SlowLog(String),

    #[error("{path}: {field}: {reason}")]
    Field { path: PathBuf, field: String, reason: String },

    #[error("{path}:{line}: {reason}")]
    Line { path: PathBuf, line: usize, reason: String },

    #[error("unknown runtime {0:?}: use go, jvm, node, python or generic")]
    Runtime(String),

    #[error("{what}: the {runtime} log counts time from the runtime's start; give --exec-mono-ns or a log whose lines carry read times (docs/explain.md, \"Clocks\")")]
    NoAnchor { what: String, runtime: &'static str },
}
