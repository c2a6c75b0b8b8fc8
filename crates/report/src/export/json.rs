//! The summary as JSON (`stampede.summary/1`), for scripts that want the
//! medians without re-deriving them from every run.

use serde::Serialize;

use super::Exporter;
use crate::error::ReportError;
use crate::schema::Results;
use crate::summary::{summarize, SummaryRow};

pub const SUMMARY_SCHEMA: &str = "stampede.summary/1";

pub struct JsonExporter;

#[derive(Serialize)]
struct Summary {
    schema: &'static str,
    tool_version: Option<String>,
    git_commit: Option<String>,
    rows: Vec<SummaryRow>,
}

impl Exporter for JsonExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let summary = Summary {
            schema: SUMMARY_SCHEMA,
            tool_version: Some(results.environment.tool_version.clone()).filter(|v| !v.is_empty()),
            git_commit: results.environment.git_commit.clone(),
            rows: summarize(results),
        };
        let mut out = serde_json::to_vec_pretty(&summary).expect("summary serialises");
        out.push(b'\n');
        Ok(out)
    }
}
