//! The errors of this crate: one enum, each variant saying what went wrong,
//! where, and what to do about it, so the binary can print it on one line.

use std::path::{Path, PathBuf};

// The I/O causes are part of each message rather than error sources, so the
// binary's `{:#}` prints them once.

/// Why a results file could not be read, rendered, exported or compared.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read {}: {cause} (check the path; it should be the results.json written by `stampede run`)", path.display())]
    Read { path: PathBuf, cause: std::io::Error },
    #[error("{} is larger than {max_mib} MiB, the most a results file may be (docs/report.md); is it the results.json written by `stampede run`?", path.display())]
    TooLarge { path: PathBuf, max_mib: u64 },
    #[error("{}{}{message} (the format is described in docs/results.md)", in_path(path), in_field(field))]
    Json { path: Option<PathBuf>, field: String, message: String },
    #[error("{}schema is {found:?}, expected \"stampede.run/1\" (a results.json from `stampede run`) or \"stampede.load/1\" (from `stampede load --json`)", in_path(path))]
    Schema { path: Option<PathBuf>, found: String },
    /// A slow-request file results.json names, missing or corrupt; the
    /// message names it and says what to do.
    #[error("{0}")]
    SlowLog(String),
    #[error("cannot write {}: {cause} (check that the directory exists and is writable)", path.display())]
    Write { path: PathBuf, cause: std::io::Error },
    #[error("cannot write CSV: {0}")]
    Csv(String),
    #[error("invalid --fail-if {expr:?}: {reason}; write it as METRIC<-N% or METRIC>+N%, e.g. 'rps<-5%' or 'p99>10%', with METRIC one of rps, rps_per_core, p50, p99, cpu, rss")]
    FailIf { expr: String, reason: String },
}

impl ReportError {
    /// Attaches the file name to an error found while parsing it.
    pub fn in_file(self, file: &Path) -> ReportError {
        match self {
            ReportError::Json { field, message, .. } => {
                ReportError::Json { path: Some(file.to_path_buf()), field, message }
            }
            ReportError::Schema { found, .. } => ReportError::Schema { path: Some(file.to_path_buf()), found },
            other => other,
        }
    }
}

fn in_path(path: &Option<PathBuf>) -> String {
    match path {
        Some(path) => format!("{}: ", path.display()),
        None => String::new(),
    }
}

fn in_field(field: &str) -> String {
    if field.is_empty() || field == "." {
        String::new()
    } else {
        format!("field {field}: ")
    }
}
