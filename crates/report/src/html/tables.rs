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

fn run_cells(run: &Run) -> Vec<Cell> {
    let key = ConfigKey::of(run);
    vec![text(key.app.clone()), text(key.knobs_label()), text(key.profile.clone()), n(count(run.iteration))]
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

/// The application table: one row per run.
pub fn application(out: &mut String, results: &Results) {
    let headers = [
        "app",
        "knobs",
        "profile",
        "iter",
        "CPU % of machine (max)",
        "cores (avg)",
        "working set (MiB)",
        "threads",
        "build time (ms)",
        "start time (ms)",
        "runtime version",
        "status",
    ];
    let rows: Vec<(String, Vec<Cell>)> = results
        .runs
        .iter()
        .map(|run| {
            let server = run.server.clone().unwrap_or_default();
            let runtime =
                results.environment.runtimes.get(&run.app).cloned().flatten().unwrap_or_else(|| "–".to_owned());
            let mut cells = run_cells(run);
            cells.extend([
                n(num(server.cpu_pct_max)),
                n(num(server.cpu_cores_avg)),
                n(num(server.rss_max_mib)),
                n(count(server.threads_max)),
                n(num(run.build_time_ms)),
                n(num(run.start_time_ms)),
                text(runtime),
                status(run),
            ]);
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
            if run.load.is_none() {
                cells.push(n(num(run.first_request_ms)));
                cells.push(Cell::Wrap(match &run.invalid_reason {
                    Some(reason) => format!("no load measured: {reason}"),
                    None => "no load measured".to_owned(),
                }));
                cells.extend((2..crank::TITLES.len()).map(|_| text("")));
                return (row_class(run), cells);
            }
            let row = crank::LoadRow {
                load: run.load.as_ref(),
                first_request_ms: run.first_request_ms,
                rps_per_server_core: run.rps_per_core(),
                loadgen_cores: crate::summary::Metric::LoadgenCpu.of(run),
            };
            let last = crank::TITLES.len() - 1;
            cells.extend(crank::load_figures(&row).into_iter().enumerate().map(|(i, f)| {
                if i == last {
                    Cell::Wrap(f.text)
                } else {
                    n(f.text)
                }
            }));
            (row_class(run), cells)
        })
        .collect();
    table(out, "runs", &headers, &rows);
}

/// One run's threads, busiest first.
pub fn threads(out: &mut String, run: &Run) {
    let Some(server) = &run.server else { return };
    if server.threads_table.is_empty() {
        out.push_str(r#"<p class="note">No per-thread table recorded.</p>"#);
        return;
    }
    let mut rows: Vec<_> = server.threads_table.iter().collect();
    let busy = |r: &&crate::schema::ThreadRow| r.user_s.unwrap_or(0.0) + r.sys_s.unwrap_or(0.0);
    rows.sort_by(|a, b| busy(b).total_cmp(&busy(a)));
    let headers =
        ["tid", "name", "user (s)", "sys (s)", "run-queue wait (ms)", "voluntary switches", "involuntary switches"];
    let rows: Vec<(String, Vec<Cell>)> = rows
        .into_iter()
        .map(|r| {
            (
                String::new(),
                vec![
                    n(count(r.tid)),
                    text(r.name.clone().unwrap_or_default()),
                    n(num(r.user_s)),
                    n(num(r.sys_s)),
                    n(num(r.runqueue_wait_ms)),
                    n(count(r.ctx_voluntary)),
                    n(count(r.ctx_involuntary)),
                ],
            )
        })
        .collect();
    table(out, "threads", &headers, &rows);
}

/// The environment as a two-column table.
pub fn environment(out: &mut String, results: &Results) {
    let env = &results.environment;
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "–".to_owned());
    let mut rows: Vec<(String, String)> = vec![
        ("tool version".into(), or_dash(&env.tool_version)),
        ("git commit".into(), or_dash(&env.git_commit)),
        ("command line".into(), env.command_line.as_ref().map(|c| c.to_line()).unwrap_or_else(|| "–".into())),
        ("CPU".into(), or_dash(&env.cpu_model)),
        ("cores".into(), count(env.cores)),
        ("kernel".into(), or_dash(&env.kernel)),
        ("started".into(), env.started_unix_s.map(utc).unwrap_or_else(|| "–".into())),
    ];
    match &env.pinning {
        Some(pinning) if !pinning.is_empty() => {
            for (role, cpus) in pinning {
                rows.push((format!("pinning: {role}"), cpus.clone().unwrap_or_else(|| "not pinned".into())));
            }
        }
        _ => rows.push(("pinning".into(), "not pinned".into())),
    }
    for (app, version) in &env.runtimes {
        rows.push((format!("runtime: {app}"), version.clone().unwrap_or_else(|| "–".into())));
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
    let mut heading = format!("{} · iteration {}", key.label(), run.iteration.unwrap_or(0));
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
