//! The summary as CSV, one row per configuration, plain numbers in the units
//! named by the header, for a spreadsheet: the columns of
//! [`crate::summary::table`] under their machine keys, raw values.

use super::Exporter;
use crate::error::ReportError;
use crate::schema::Results;
use crate::summary::{summarize, table};

pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let csv_error = |err: csv::Error| ReportError::Csv(err.to_string());
        let mut writer = csv::Writer::from_writer(Vec::new());
        let rows = summarize(results);
        let model = table(&rows);
        let header = model.columns.iter().map(|c| c.key).chain(["invalid_reasons"]);
        writer.write_record(header).map_err(csv_error)?;
        for (row, summary) in model.rows.iter().zip(&rows) {
            let reasons = summary.invalid_reasons.join("; ");
            let record = row.cells.iter().map(|c| c.raw.as_str()).chain([reasons.as_str()]);
            writer.write_record(record).map_err(csv_error)?;
        }
        writer.into_inner().map_err(|err| ReportError::Csv(err.into_error().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_fields_with_commas_and_quotes() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"a,\"b\"","knobs":{},"profile":"p","load":{"rps":10.5}}]}"#;
        let results = crate::schema::parse(text).unwrap();
        let out = String::from_utf8(CsvExporter.export(&results).unwrap()).unwrap();
        let mut lines = out.lines();
        assert!(lines.next().unwrap().starts_with("app,knobs,profile,runs"));
        assert!(lines.next().unwrap().starts_with("\"a,\"\"b\"\"\",-,p,1,1,10.5,"));
    }
}
