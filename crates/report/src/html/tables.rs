//! The report's tables, crank-style: the application (CPU, working set,
//! build and start time, runtime version), the load (first request,
//! requests, RPS, latency percentiles, errors, throughput, generator CPU),
//! each run's threads, and the environment the results were made in. Every
//! cell is escaped here; callers pass plain text.

use std::fmt::Write;

use super::escape::esc;
use crate::crank;
use crate::format::{count, num, sig};
use crate::schema::{Results, Run};
use crate::summary::ConfigKey;

/// A table cell: text, and whether it is a number (right-aligned).
pub enum Cell {
    Text(String),
    Num(String),
    /// Long text that may wrap (reasons, status codes).
    Wrap(String),
}

fn text(s: impl Into<String>) -> Cell {
    Cell::Text(s.into())
}

fn n(s: String) -> Cell {
    Cell::Num(s)
}

/// Writes a table; `rows` pairs a row class with its cells.
pub fn table(out: &mut String, class: &str, headers: &[&str], rows: &[(String, Vec<Cell>)]) {
    let _ = write!(out, r#"<div class="table-wrap"><table class="{}"><thead><tr>"#, esc(class));
    for h in headers {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for (row_class, cells) in rows {
        if row_class.is_empty() {
            out.push_str("<tr>");
        } else {
            let _ = write!(out, r#"<tr class="{}">"#, esc(row_class));
        }
        for cell in cells {
            match cell {
                Cell::Text(t) => {
                    let _ = write!(out, "<td>{}</td>", esc(t));
                }
                Cell::Num(t) => {
                    let _ = write!(out, r#"<td class="n">{}</td>"#, esc(t));
                }
                Cell::Wrap(t) => {
                    let _ = write!(out, r#"<td class="wrap">{}</td>"#, esc(t));
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

/// Writes a [`crate::table::Table`] as it is laid out for every view.
pub fn model(out: &mut String, class: &str, model: &crate::table::Table) {
    let headers: Vec<&str> = model.columns.iter().map(|c| c.title.as_str()).collect();
    let rows: Vec<(String, Vec<Cell>)> = model
        .rows
        .iter()
        .map(|row| {
            let cells = row
                .cells
                .iter()
                .zip(&model.columns)
                .map(|(cell, column)| if column.numeric { n(cell.text.clone()) } else { text(cell.text.clone()) })
                .collect();
            (if row.invalid { "invalid".to_owned() } else { String::new() }, cells)
        })
        .collect();
    table(out, class, &headers, &rows);
}

fn run_cells(run: &Run) -> Vec<Cell> {
    let key = ConfigKey::of(run);
    vec![
        text(key.app.clone()),
        text(key.knobs_label()),
        text(key.profile.clone()),
        n(count(Some(run.iteration.into()))),
    ]
}

fn status(run: &Run) -> Cell {
    if run.is_valid() {
        text("valid")
    } else {
        let reason = run.invalid_reason.clone().unwrap_or_else(|| "no reason given".to_owned());
        Cell::Wrap(format!("invalid: {reason}"))
    }
}

fn row_class(run: &Run) -> String {
    if run.is_valid() {
        String::new()
    } else {
        "invalid".to_owned()
    }
}

/// The application table: one row per run, a column per figure of
/// [`crate::crank::application_figures`] (the terminal shows the same figures).
pub fn application(out: &mut String, results: &Results) {
    let mut headers = vec!["app", "knobs", "profile", "iter"];
    headers.extend(crank::APPLICATION_TITLES);
    headers.push("status");
    let rows: Vec<(String, Vec<Cell>)> = results
        .runs
        .iter()
        .map(|run| {
            let runtime = results.environment.runtimes.get(&run.app).map_or("", String::as_str);
            let mut cells = run_cells(run);
            let figures = crank::application_figures(run, runtime, results.environment.cores);
            let last = figures.len() - 1;
            cells
                .extend(figures.into_iter().enumerate().map(|(i, f)| if i == last { text(f.text) } else { n(f.text) }));
            cells.push(status(run));
            (row_class(run), cells)
        })
        .collect();
    table(out, "runs", &headers, &rows);
}

/// The load table: one row per run, a column per figure of
/// [`crate::crank::load_figures`] (the terminal shows the same figures).
pub fn load(out: &mut String, results: &Results) {
    let mut headers = vec!["app", "knobs", "profile", "iter"];
    headers.extend(crank::TITLES);
    let rows: Vec<(String, Vec<Cell>)> = results
        .runs
        .iter()
        .map(|run| {
            let mut cells = run_cells(run);
            let mut figures = crank::load_figures(run).into_iter();
            cells.extend(figures.next().map(|f| n(f.text)));
            if run.load.is_none() {
                cells.push(Cell::Wrap(match &run.invalid_reason {
                    Some(reason) => format!("no load measured: {reason}"),
                    None => "no load measured".to_owned(),
                }));
                cells.extend((2..crank::TITLES.len()).map(|_| text("")));
                return (row_class(run), cells);
            }
            let last = crank::TITLES.len() - 2;
            cells.extend(figures.enumerate().map(|(i, f)| if i == last { Cell::Wrap(f.text) } else { n(f.text) }));
            (row_class(run), cells)
        })
        .collect();
    table(out, "runs", &headers, &rows);
}

/// One run's threads, busiest first.
pub fn threads(out: &mut String, run: &Run) {
    let server = &run.server;
    if server.threads_table.is_empty() {
        out.push_str(r#"<p class="note">No per-thread table recorded.</p>"#);
        return;
    }
    let mut rows: Vec<_> = server.threads_table.iter().collect();
    let busy = |r: &&crate::schema::ThreadRow| r.user_s + r.sys_s;
    rows.sort_by(|a, b| busy(b).total_cmp(&busy(a)));
    let headers =
        ["tid", "name", "user (s)", "sys (s)", "run-queue wait (ms)", "voluntary switches", "involuntary switches"];
    let rows: Vec<(String, Vec<Cell>)> = rows
        .into_iter()
        .map(|r| {
            (
                String::new(),
                vec![
                    n(r.tid.to_string()),
                    text(r.name.clone()),
                    n(num(Some(r.user_s))),
                    n(num(Some(r.sys_s))),
                    n(num(Some(r.runqueue_wait_ms))),
                    n(count(Some(r.ctx_voluntary))),
                    n(count(Some(r.ctx_involuntary))),
                ],
            )
        })
        .collect();
    table(out, "threads", &headers, &rows);
}

/// The environment as a two-column table.
pub fn environment(out: &mut String, results: &Results) {
    let env = &results.environment;
    let or_dash = |v: &str| if v.is_empty() { "–".to_owned() } else { v.to_owned() };
    let mut rows: Vec<(String, String)> = vec![
        ("tool version".into(), or_dash(&env.tool_version)),
        ("git commit".into(), or_dash(env.git_commit.as_deref().unwrap_or(""))),
        ("command line".into(), or_dash(&env.command_line)),
        ("CPU".into(), or_dash(&env.cpu_model)),
        ("cores".into(), if env.cores > 0 { env.cores.to_string() } else { "–".into() }),
        ("kernel".into(), or_dash(&env.kernel)),
        ("started".into(), if env.started_unix_s > 0 { utc(env.started_unix_s as f64) } else { "–".into() }),
    ];
    for (role, cpus) in [("server", &env.pinning.server), ("load generator", &env.pinning.loadgen)] {
        rows.push((format!("pinning: {role}"), cpus.clone().unwrap_or_else(|| "not pinned".into())));
    }
    for (app, version) in &env.runtimes {
        rows.push((format!("runtime: {app}"), or_dash(version)));
    }
    out.push_str(r#"<div class="table-wrap"><table class="env"><tbody>"#);
    for (key, value) in rows {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(&key), esc(&value));
    }
    out.push_str("</tbody></table></div>");
}

/// A Unix time as `YYYY-MM-DD HH:MM:SS UTC` (civil-from-days, no time zone database needed).
pub fn utc(unix_s: f64) -> String {
    if !unix_s.is_finite() {
        return "–".into();
    }
    let secs = unix_s.floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A short summary line for a run's heading.
pub fn run_heading(run: &Run) -> String {
    let key = ConfigKey::of(run);
    let mut heading = format!("{} · iteration {}", key.label(), run.iteration);
    if let Some(load) = &run.load {
        heading.push_str(&format!(" · {} req/s", num(Some(load.rps))));
        heading.push_str(&format!(" · p99 {} ms", sig(load.latency_us.p99 / 1000.0)));
    }
    if !run.is_valid() {
        heading.push_str(" · invalid");
    }
    heading
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_time_formats_as_utc() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_763_769_600.5), "2025-11-22 00:00:00 UTC");
    }
}
