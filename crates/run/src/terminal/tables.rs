//! What a person sees: crank's two tables after each run (the application's
//! cost, then the load's figures) and, at the end, the summary: one row per
//! app × knobs × profile with the median over iterations and its spread.
//! The figures, titles and number format come from the report's one table
//! model (`stampede_report::crank`, `stampede_report::summary::table`), the
//! same the HTML report, Markdown and CSV use; this module only lays them out
//! for a terminal.

use std::collections::BTreeMap;

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, Table};

use crate::record::RunRecord;
use stampede_report::crank::{application_figures, latency_figures, load_figures, Figure};
use stampede_report::summary::{summarize_runs, table as summary_model};
use stampede_report::targets;

fn two_columns(header: [&str; 2], figures: Vec<Figure>) -> Table {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(header.to_vec());
    for figure in figures {
        t.add_row(vec![figure.title.to_string(), figure.text]);
    }
    if let Some(col) = t.column_mut(1) {
        col.set_cell_alignment(CellAlignment::Right);
    }
    t
}

/// `db fail: a, b`, `tfb warn: c` or `tfb pass`.
fn verdict_cell(v: &stampede_schema::run::ContractVerdict) -> String {
    let rules = if v.failed.is_empty() { &v.warned } else { &v.failed };
    match rules.is_empty() {
        true => format!("{} {}", v.contract, v.verdict),
        false => format!("{} {}: {}", v.contract, v.verdict, rules.join(", ")),
    }
}

/// The two tables for one run.
pub fn run_tables(run: &RunRecord, runtime_version: &str, cores: usize) -> String {
    let knobs = if run.knobs.is_empty() { String::new() } else { format!(" ({})", label(&run.knobs)) };
    let app =
        two_columns(["application", &format!("{}{knobs}", run.app)], application_figures(run, runtime_version, cores));
    let mut load = two_columns(["load", &format!("{} {}", run.profile, run.path)], load_figures(run));
    let contract = match (run.contract.as_str(), run.verdicts.is_empty()) {
        ("none", true) => "none (not checked)".into(),
        (claimed, true) => claimed.to_string(),
        // The verdicts of the contracts that judged this profile (`tfb pass`, `db fail: queries-20, …`).
        (_, false) => run.verdicts.iter().map(verdict_cell).collect::<Vec<_>>().join("; "),
    };
    load.add_row(vec!["Contract".to_string(), contract]);
    let reason = run.invalid_reason.as_deref().unwrap_or("");
    let valid = match (run.valid, run.load_is_valid()) {
        (true, _) => "yes".to_owned(),
        (false, true) => format!("closed loop only ({reason})"),
        (false, false) => format!("no: {reason}"),
    };
    load.add_row(vec!["Valid".to_string(), valid]);
    let mut text = format!("{app}\n\n{load}\n");
    // The open-loop phase the run's latency comes from, when the profile has one.
    if let Some(figures) = latency_figures(run) {
        let header = format!("{} (open loop, from intended send times)", run.path);
        text.push_str(&format!("\n{}\n", two_columns(["latency", &header], figures)));
    }
    if targets::has_mix(run) {
        text.push_str(&format!("\n{}\n", terminal(&targets::table([run], false))));
    }
    if stampede_report::stages::has_stages(run) {
        text.push_str(&format!("\n{}\n", terminal(&stampede_report::stages::table([run], false))));
    }
    text
}

pub fn label(knobs: &BTreeMap<String, String>) -> String {
    knobs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// One row per app × knobs × profile; medians over the valid iterations.
pub fn summary_table(runs: &[RunRecord]) -> String {
    terminal(&summary_model(&summarize_runs(runs)))
}

/// A table of the report's model for a terminal, numbers right-aligned.
fn terminal(model: &stampede_report::table::Table) -> String {
    let mut t = Table::new();
    t.load_preset(ASCII_MARKDOWN).set_header(model.columns.iter().map(|c| c.title.clone()));
    for row in &model.rows {
        t.add_row(row.cells.iter().map(|c| c.text.clone()));
    }
    for (i, column) in model.columns.iter().enumerate() {
        if let Some(col) = t.column_mut(i).filter(|_| column.numeric) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::fake_load;

    fn run(rps: f64, valid: bool) -> RunRecord {
        let profile: crate::scenario::Profile = toml::from_str("path = \"/json\"").unwrap();
        let mut r = crate::record::failed(
            "go",
            &BTreeMap::from([("gc".to_string(), "off".to_string())]),
            &profile,
            1,
            1234.0,
            String::new(),
        );
        r.valid = valid;
        r.invalid_reason = if valid { None } else { Some("crashed".into()) };
        r.load = Some(fake_load(rps, 0));
        r.server.cpu_cores_avg = 0.5;
        r.rps_per_server_core = rps / 0.5;
        r
    }

    #[test]
    fn the_summary_lays_out_the_report_model() {
        let runs = [run(1000.0, true), run(3000.0, true), run(2000.0, true), run(9.0, false)];
        let text = summary_table(&runs);
        let model = summary_model(&summarize_runs(&runs));
        for column in &model.columns {
            assert!(text.contains(&column.title), "missing {:?} in\n{text}", column.title);
        }
        for cell in &model.rows[0].cells {
            assert!(text.contains(&cell.text), "missing {:?} in\n{text}", cell.text);
        }
        assert!(text.contains("2,000 (1,000–3,000)"), "{text}");
    }

    #[test]
    fn the_two_run_tables_name_their_figures() {
        let text = run_tables(&run(1500.0, false), "go1.22", 2);
        for needle in [
            "go (gc=off)",
            "Build time (ms)",
            "1,234",
            "go1.22",
            "Mean RPS",
            "1,500",
            "Latency 99th (ms)",
            "0.4",
            "Socket errors",
            "Bad responses",
            "no: crashed",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
    }

    #[test]
    fn a_run_invalid_in_its_latency_phase_only_says_its_closed_loop_stands() {
        let mut r = run(1500.0, false);
        r.invalid_reason = Some("latency phase: late".into());
        r.load_valid = Some(true);
        let text = run_tables(&r, "go1.22", 2);
        assert!(text.contains("closed loop only (latency phase: late)"), "{text}");
        assert!(!run_tables(&run(1500.0, false), "go1.22", 2).contains("closed loop only"));
    }
}
