//! The summary as JSON (`stampede.summary/1`, declared in
//! `stampede_schema::summary`), for scripts that want the medians without
//! re-deriving them from every run.

use super::Exporter;
use crate::error::ReportError;
use crate::schema::Results;
use crate::summary::summarize;
use stampede_schema::summary::{SummaryDoc, SUMMARY_SCHEMA};

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let summary = SummaryDoc {
            schema: SUMMARY_SCHEMA.to_owned(),
            tool_version: Some(results.environment.tool_version.clone()).filter(|v| !v.is_empty()),
            git_commit: results.environment.git_commit.clone(),
            rows: summarize(results),
        };
        let mut out = serde_json::to_vec_pretty(&summary).expect("summary serialises");
        out.push(b'\n');
        Ok(out)
    }
}
