//! The documents the report reads, as stampede-schema declares them (once,
//! for the writer and every reader): a `stampede.run/1` results.json, or a
//! single `stampede.load/1` document read as a one-run results file.
//! Reading is lenient (docs/results.md, "Reading older files"): missing
//! fields and `null` read as their defaults, unknown fields are ignored.

use std::path::Path;

use stampede_schema::document::{self, DocumentError};

use stampede_schema::document::MAX_DOCUMENT_BYTES;
pub use stampede_schema::process::{Sample, ThreadRow, TreeSummary as Process};
pub use stampede_schema::profile::{ProfileSummary, TopFrame};
pub use stampede_schema::run::{EventRecord as Event, ResultsDoc as Results, RunRecord as Run};
pub use stampede_schema::LoadResult;

use crate::error::ReportError;

/// Parses a results document held in memory.
pub fn parse(text: &str) -> Result<Results, ReportError> {
    document::parse(text).map(document::Document::into_results).map_err(|e| from_document(e, None))
}

/// Reads and checks a results file with its slow requests; errors name
/// the file and the field.
pub fn read(path: &Path) -> Result<Results, ReportError> {
    located(document::read(path), path)
}

/// Reads and checks a results file without the slow requests kept beside
/// it (`document::read_figures`): what `compare` needs.
pub fn read_figures(path: &Path) -> Result<Results, ReportError> {
    located(document::read_figures(path), path)
}

fn located(read: Result<document::Document, DocumentError>, path: &Path) -> Result<Results, ReportError> {
    let mut results = read.map(document::Document::into_results).map_err(|e| from_document(e, Some(path)))?;
    results.dir = Some(path.parent().unwrap_or(Path::new(".")).to_path_buf());
    Ok(results)
}

fn from_document(err: DocumentError, path: Option<&Path>) -> ReportError {
    let file = || path.map(Path::to_path_buf).unwrap_or_default();
    match err {
        DocumentError::Read(cause) => ReportError::Read { path: file(), cause },
        DocumentError::TooLarge => ReportError::TooLarge { path: file(), max_mib: MAX_DOCUMENT_BYTES >> 20 },
        DocumentError::NotJson(cause) => {
            ReportError::Json { path: path.map(Path::to_path_buf), field: String::new(), message: cause.to_string() }
        }
        DocumentError::Json { field, message } => {
            ReportError::Json { path: path.map(Path::to_path_buf), field, message }
        }
        err @ DocumentError::SlowLog { .. } => ReportError::SlowLog(err.to_string()),
        DocumentError::Schema { found } => ReportError::Schema { path: path.map(Path::to_path_buf), found },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_run_with_null_load_and_no_samples_parses() {
        let text = r#"{"schema":"stampede.run/1","environment":{},"runs":[
            {"app":"go","knobs":{"threads":2},"valid":false,"invalid_reason":"crashed",
             "load":null,"server":{"cpu_cores_avg":null}}]}"#;
        let results = parse(text).unwrap();
        let run = &results.runs[0];
        assert!(!run.is_valid());
        assert_eq!(run.knobs["threads"], "2");
        assert!(run.server.samples.is_empty());
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let dir = std::env::temp_dir().join(format!("stampede-report-schema-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.json");
        std::fs::write(&path, r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"rps":"fast"}}]}"#).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("results.json") && err.contains("runs[0].load.rps"), "{err}");
        std::fs::write(&path, r#"{"schema":"other/9"}"#).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("results.json") && err.contains("other/9"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
