//! The output formats of `stampede report`, one exporter per file behind one
//! trait (as hyperfine's `src/export/` does), chosen with `--format`.

mod csv;
mod html;
mod json;
mod markdown;
mod openmetrics;

pub use self::csv::CsvExporter;
pub use self::html::HtmlExporter;
pub use self::json::JsonExporter;
pub use self::markdown::MarkdownExporter;
pub use self::openmetrics::OpenMetricsExporter;

use crate::error::ReportError;
use crate::schema::Results;

/// Turns a results file into bytes in one format.
pub trait Exporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError>;
}

/// The formats `--format` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
    Csv,
    Json,
    OpenMetrics,
}

impl Format {
    /// Parses a `--format` value.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "html" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Markdown),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "openmetrics" => Some(Format::OpenMetrics),
            _ => None,
        }
    }

    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Html => Box::new(HtmlExporter),
            Format::Markdown => Box::new(MarkdownExporter),
            Format::Csv => Box::new(CsvExporter),
            Format::Json => Box::new(JsonExporter),
            Format::OpenMetrics => Box::new(OpenMetricsExporter),
        }
    }
}
