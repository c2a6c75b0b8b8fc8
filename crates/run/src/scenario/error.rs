//! Errors that stop `stampede run` before it starts: a scenario file or an
//! override that cannot be read, an app that cannot be found. Each says which
//! file, field or flag is wrong and what to do. Problems of one app or one run
//! (a missing toolchain, a crash, a taken port) are not errors: they are
//! reported and the scenario goes on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error(
        "cannot read scenario file {path}: {source} (give an existing .toml file, or none for scenarios/shootout.toml)"
    )]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("scenario file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("--set {arg}: {reason}")]
    Override { arg: String, reason: String },
    #[error("{field}: {reason}")]
    Field { field: String, reason: String },
    #[error("scenario file {path}: {field}: {reason}")]
    FieldInFile { path: PathBuf, field: String, reason: String },
    #[error("app {name:?}: no manifest at {looked} (name an app in apps/, or give the path of an app.toml)")]
    UnknownApp { name: String, looked: PathBuf },
    /// An arena folder's line Stampede cannot replay: `file:line: what; what to add`.
    #[error("{0}")]
    Arena(String),
    #[error("manifest {path}: {message}")]
    Manifest { path: PathBuf, message: String },
}
