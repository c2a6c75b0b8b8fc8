//! The summary as a Markdown table, for pasting into an issue or a pull
//! request: the columns and texts of [`crate::summary::table`], and per
//! target for runs with a request mix ([`crate::targets`]). Cells are escaped so a `|` or a newline in an app name or a
//! reason cannot break the table.

use std::fmt::Write;

use super::Exporter;
use crate::error::ReportError;
use crate::schema::Results;
use crate::summary::{summarize, table, ConfigKey};
use crate::table::Table;
use crate::targets::{self, has_mix};

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

/// Writes a table of the one model, every cell escaped.
fn write_table(out: &mut String, model: &Table) {
    let titles: Vec<String> = model.columns.iter().map(|c| cell(&c.title)).collect();
    let _ = writeln!(out, "| {} |", titles.join(" | "));
    let rules: Vec<&str> = model.columns.iter().map(|c| if c.numeric { "--:" } else { "---" }).collect();
    let _ = writeln!(out, "|{}|", rules.join("|"));
    for row in &model.rows {
        let cells: Vec<String> = row.cells.iter().map(|c| cell(&c.text)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

impl Exporter for MarkdownExporter {
    fn export(&self, results: &Results) -> Result<Vec<u8>, ReportError> {
        let mut out = String::new();
        let env = &results.environment;
        let or = |text: &str, missing: &'static str| if text.is_empty() { missing.to_owned() } else { text.to_owned() };
        let version = or(&env.tool_version, "?");
        let commit = env.git_commit.as_deref().unwrap_or("?");
        let cpu = or(&env.cpu_model, "unknown CPU");
        let _ = writeln!(out, "stampede {} (commit {}) on {}\n", cell(&version), cell(commit), cell(&cpu));
        let rows = summarize(results);
        write_table(&mut out, &table(&rows));
        if results.runs.iter().any(has_mix) {
            out.push_str("\nPer target (runs with several targets):\n\n");
            write_table(&mut out, &targets::table(&results.runs, true));
        }
        if results.runs.iter().any(crate::stages::has_stages) {
            out.push_str("\nPer stage (ramped runs):\n\n");
            write_table(&mut out, &crate::stages::table(&results.runs, true));
        }
        let invalid: Vec<_> = rows.iter().flat_map(|row| row.invalid_reasons.iter().map(move |r| (row, r))).collect();
        if !invalid.is_empty() {
            out.push_str("\nInvalid runs (left out of the medians):\n\n");
            for (row, reason) in invalid {
                let _ = writeln!(out, "- {}: {}", cell(&ConfigKey::of_row(row).label()), cell(reason));
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
        let results = crate::schema::parse(text).unwrap();
        let out = String::from_utf8(MarkdownExporter.export(&results).unwrap()).unwrap();
        assert!(out.contains("| a\\|&lt;b&gt; | - | p | 1 | 1 | 10 |"), "{out}");
        assert!(out.contains("- c: iteration 0: x y"), "{out}");
    }

    #[test]
    fn targets_get_their_own_escaped_table_only_when_a_run_has_several() {
        let results = crate::targets::tests::mixed_results();
        let out = String::from_utf8(MarkdownExporter.export(&results).unwrap()).unwrap();
        assert!(out.contains("Per target"), "{out}");
        assert!(out.contains("| GET /api/fib/{1..100} | 3 | 300 | 1 | 2 |"), "{out}");
        assert!(out.contains("GET /&lt;script&gt;alert(1)&lt;/script&gt;"), "{out}");
        assert!(!out.contains("<script>"), "{out}");
        let plain =
            crate::schema::parse(r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"rps":1.0}}]}"#).unwrap();
        let out = String::from_utf8(MarkdownExporter.export(&plain).unwrap()).unwrap();
        assert!(!out.contains("Per target"), "{out}");
    }
}
