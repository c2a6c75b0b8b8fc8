//! The summary as a Markdown table, for pasting into an issue or a pull
//! request. Cells are escaped so a `|` or a newline in an app name or a
//! reason cannot break the table.

use std::fmt::Write;

use super::Exporter;
use crate::error::ReportError;
use crate::format::{count, num};
use crate::schema::Results;
use crate::summary::summarize;

pub struct MarkdownExporter;

/// Makes text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' | '*' | '_' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

impl Exporter for MarkdownExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let mut out = String::new();
        let env = &results.environment;
        let version = env.tool_version.as_deref().unwrap_or("?");
        let commit = env.git_commit.as_deref().unwrap_or("?");
        let cpu = env.cpu_model.as_deref().unwrap_or("unknown CPU");
        let _ = writeln!(out, "stampede {} (commit {}) on {}\n", cell(version), cell(commit), cell(cpu));
        out.push_str("| app | knobs | profile | valid | req/s | req/s per core | p50 ms | p99 ms | server cores | RSS MiB | loadgen cores | Bad responses | Socket errors |\n");
        out.push_str("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        let rows = summarize(results);
        for row in &rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                cell(&row.app),
                cell(&row.key().knobs_label()),
                cell(&row.profile),
                row.valid_runs,
                row.runs,
                num(row.rps),
                num(row.rps_per_core),
                num(row.p50_ms),
                num(row.p99_ms),
                num(row.server_cpu_cores),
                num(row.server_rss_max_mib),
                num(row.loadgen_cpu_cores),
                count(Some(row.bad_responses)),
                count(Some(row.socket_errors)),
            );
        }
        let invalid: Vec<_> = rows.iter().flat_map(|row| row.invalid_reasons.iter().map(move |r| (row, r))).collect();
        if !invalid.is_empty() {
            out.push_str("\nInvalid runs (left out of the medians):\n\n");
            for (row, reason) in invalid {
                let _ = writeln!(out, "- {}: {}", cell(&row.key().label()), cell(reason));
            }
        }
        if !results.skipped.is_empty() {
            out.push_str("\nApps not run:\n\n");
            for skipped in &results.skipped {
                let _ = writeln!(out, "- {}: {}", cell(&skipped.app), cell(&skipped.reason));
            }
        }
        out.push_str("\nMedians over valid iterations.\n");
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_and_html_in_names_do_not_break_the_table() {
        let text = r#"{"schema":"stampede.run/1","runs":[
          {"app":"a|<b>","knobs":{},"profile":"p","load":{"rps":10.0}},
          {"app":"c","valid":false,"invalid_reason":"x\ny","load":null}]}"#;
        let results = Results::from_json(text).unwrap();
        let out = String::from_utf8(MarkdownExporter.export(&results).unwrap()).unwrap();
        assert!(out.contains("| a\\|&lt;b&gt; | - | p | 1/1 | 10 |"), "{out}");
        assert!(out.contains("- c: iteration 0: x y"), "{out}");
    }
}
