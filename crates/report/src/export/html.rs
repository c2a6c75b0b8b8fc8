//! The HTML exporter: the self-contained report (see `crate::html`).

use super::Exporter;
use crate::error::ReportError;
use crate::schema::Results;

pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        Ok(crate::html::render(results).into_bytes())
    }
}
