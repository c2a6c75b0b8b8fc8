//! Results schema, exporters (JSON, Markdown, CSV, HTML) and comparison
//! statistics: everything that turns a `results.json` written by
//! `stampede run` into something a person or a CI job can read. The binary
//! only parses flags; [`write_html`] is what the orchestrator calls at the end
//! of a run.

pub mod compare;
pub mod crank;
pub mod error;
pub mod export;
pub mod format;
pub mod html;
pub mod latency;
pub mod schema;
pub mod stages;
pub mod stats;
pub mod summary;
pub mod table;
pub mod targets;

use std::path::Path;

pub use error::ReportError;
pub use export::{Exporter, Format};
pub use schema::Results;

/// A small results file shipped with the tool, rendered by `stampede report --demo`.
pub const DEMO_RESULTS: &str = include_str!("../demo/results.json");

/// Reads `results_json_path` and writes the self-contained HTML report to `out`.
pub fn write_html(results_json_path: &Path, out: &Path) -> Result<(), ReportError> {
    let results = crate::schema::read(results_json_path)?;
    write_bytes(out, &export::HtmlExporter.export(&results)?)
}

/// Writes bytes to a file, naming the file in the error.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    std::fs::write(path, bytes).map_err(|cause| ReportError::Write { path: path.to_path_buf(), cause })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_results_parse_and_render() {
        let results = crate::schema::parse(DEMO_RESULTS).unwrap();
        assert!(results.runs.len() >= 12);
        assert!(results.runs.iter().any(|r| !r.is_valid() && r.invalid_reason.is_some()));
        let html = html::render(&results);
        assert!(html.contains("chart-efficiency"));
        assert!(html.contains("chart-spectrum-0"));
        assert!(html.contains("chart-timeline-0"));
    }
}
