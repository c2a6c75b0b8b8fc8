//! The summary as CSV, one row per configuration, plain numbers in the units
//! named by the header, for a spreadsheet.

use super::Exporter;
use crate::error::ReportError;
use crate::format::raw;
use crate::schema::Results;
use crate::summary::summarize;

pub struct CsvExporter;

const HEADER: [&str; 15] = [
    "app",
    "knobs",
    "profile",
    "runs",
    "valid_runs",
    "rps",
    "rps_per_core",
    "p50_ms",
    "p99_ms",
    "server_cpu_cores",
    "server_rss_max_mib",
    "loadgen_cpu_cores",
    "bad_responses",
    "socket_errors",
    "invalid_reasons",
];

impl Exporter for CsvExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let csv_error = |err: csv::Error| ReportError::Csv(err.to_string());
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.write_record(HEADER).map_err(csv_error)?;
        for row in summarize(results) {
            let knobs = row.key().knobs_label();
            writer
                .write_record([
                    row.app.clone(),
                    knobs,
                    row.profile.clone(),
                    row.runs.to_string(),
                    row.valid_runs.to_string(),
                    raw(row.rps),
                    raw(row.rps_per_core),
                    raw(row.p50_ms),
                    raw(row.p99_ms),
                    raw(row.server_cpu_cores),
                    raw(row.server_rss_max_mib),
                    raw(row.loadgen_cpu_cores),
                    row.bad_responses.to_string(),
                    row.socket_errors.to_string(),
                    row.invalid_reasons.join("; "),
                ])
                .map_err(csv_error)?;
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
        let results = Results::from_json(text).unwrap();
        let out = String::from_utf8(CsvExporter.export(&results).unwrap()).unwrap();
        let mut lines = out.lines();
        assert!(lines.next().unwrap().starts_with("app,knobs,profile,runs"));
        assert!(lines.next().unwrap().starts_with("\"a,\"\"b\"\"\",-,p,1,1,10.5,"));
    }
}
