//! One way to count errors: a server that answers some requests with bytes
//! that are not HTTP and some with a 500, run through `stampede run`; the
//! terminal table, results.json, the Markdown and CSV exports and the HTML
//! report must give the same socket errors and bad responses under the same
//! names (docs/results.md, "Error categories").
//!
//! Regression: a malformed response was a "socket error" in the terminal
//! table and a "bad response" in the HTML report.

use stampede_testkit::run;

use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::Duration;

use run::{assert_nothing_left, stampede, text, wait_for, Scratch};

/// The names every view prints, as docs/results.md documents them.
const SOCKET: &str = "Socket errors";
const BAD: &str = "Bad responses";

/// A count as any view prints it: digits with thousands separators.
fn count(cell: &str) -> u64 {
    let digits: String = cell.chars().filter(|c| !matches!(c, ',' | ' ' | '\u{202f}' | '\u{a0}')).collect();
    digits.parse().unwrap_or_else(|_| panic!("not a count: {cell:?}"))
}

/// `stampede report FILE --format FORMAT -o -`, which must succeed.
fn report(file: &std::path::Path, format: &str) -> String {
    let out = stampede().args(["report", file.to_str().unwrap(), "--format", format, "-o", "-"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "report --format {format}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// The cells of a `| a | b |` table line.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_string()).collect()
}

/// In a Markdown table, the value of column `name` in the first data row.
fn markdown_column(table: &str, name: &str) -> String {
    markdown_rows(table, name).remove(0)
}

/// In the first Markdown table of `text`, column `name` of every data row.
fn markdown_rows(text: &str, name: &str) -> Vec<String> {
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('|'))
        .take_while(|l| l.trim_start().starts_with('|'))
        .collect();
    let header = cells(lines[0]);
    let at = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name:?} in {header:?}"));
    lines[2..].iter().map(|l| cells(l)[at].clone()).collect()
}

/// The text between `<tag…>` and `</tag>` of every `tag` element in `html`.
fn elements<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&open) {
        let body = &rest[start..];
        let Some(gt) = body.find('>') else { break };
        let Some(end) = body.find(&close) else { break };
        out.push(&body[gt + 1..end]);
        rest = &body[end + close.len()..];
    }
    out
}

/// In every HTML table with a column `name`, that column of the first row.
fn html_columns(html: &str, name: &str) -> Vec<String> {
    elements(html, "table").into_iter().filter_map(|table| html_rows(table, name).into_iter().next()).collect()
}

/// In one HTML table, column `name` of every row.
fn html_rows(table: &str, name: &str) -> Vec<String> {
    let headers = elements(table, "th");
    let Some(at) = headers.iter().position(|h| *h == name) else { return Vec::new() };
    let Some(body) = elements(table, "tbody").into_iter().next() else { return Vec::new() };
    elements(body, "tr").into_iter().filter_map(|row| Some(elements(row, "td").get(at)?.to_string())).collect()
}

#[test]
fn a_malformed_response_is_a_socket_error_in_every_view() {
    let s = Scratch::new("errcount");
    let app = s.app("flaky", "MALFORMED_EVERY=7 BAD_STATUS_EVERY=5");
    let scenario = s.scenario(&format!(
        r#"
apps = ["{}"]
check = false
[[profiles]]
path = "/plaintext"
connections = 2
duration = "1s"
warmup = "0s"
"#,
        app.display()
    ));
    let out = s.run(&[scenario.to_str().unwrap(), "--out", s.out().to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_nothing_left(&s);

    // results.json: the counts per cause, summed as docs/results.md says.
    let doc = s.results().unwrap_or_else(|| panic!("no results.json\nstdout:\n{stdout}\nstderr:\n{stderr}"));
    let run = &doc["runs"][0];
    let errors = &run["load"]["errors"];
    let n = |k: &str| errors[k].as_u64().unwrap_or_else(|| panic!("errors.{k}: {errors}"));
    assert!(n("parse") > 0, "the server's malformed answers were counted as parse errors: {errors}");
    assert!(n("status") > 0, "the server's 500s were counted: {errors}");
    let socket = n("connect") + n("read") + n("write") + n("timeout") + n("parse") + n("tls");
    let bad = n("status");
    assert_eq!(run["valid"], false, "errors make the run invalid");
    let reason = run["invalid_reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("{socket} socket errors")) && reason.contains(&format!("{bad} bad responses")),
        "{reason}"
    );

    // The terminal table of `stampede run`.
    let row = |name: &str| {
        let line = stdout.lines().find(|l| cells(l).first().map(String::as_str) == Some(name));
        count(&cells(line.unwrap_or_else(|| panic!("no {name:?} row in\n{stdout}")))[1])
    };
    assert_eq!((row(SOCKET), row(BAD)), (socket, bad), "terminal table\n{stdout}");
    // The terminal summary at the end, under the same column names.
    let summary = &stdout[stdout.rfind("| app").unwrap_or_else(|| panic!("no summary in\n{stdout}"))..];
    assert_eq!(count(&markdown_column(summary, SOCKET)), socket, "terminal summary\n{summary}");
    assert_eq!(count(&markdown_column(summary, BAD)), bad, "terminal summary\n{summary}");

    let results =
        s.out().join(std::fs::read_dir(s.out()).unwrap().next().unwrap().unwrap().file_name()).join("results.json");
    let report = |format: &str| report(&results, format);

    // The Markdown export.
    let md = report("md");
    assert_eq!(count(&markdown_column(&md, SOCKET)), socket, "{md}");
    assert_eq!(count(&markdown_column(&md, BAD)), bad, "{md}");

    // The CSV export, under the documented keys.
    let csv = report("csv");
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let at =
        |key: &str| header.iter().position(|h| *h == key).unwrap_or_else(|| panic!("no {key} column: {}", lines[0]));
    let values: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(values[at("socket_errors")].parse::<u64>().unwrap(), socket, "{csv}");
    assert_eq!(values[at("bad_responses")].parse::<u64>().unwrap(), bad, "{csv}");

    // The HTML report: the summary and the load table, same names, same counts.
    let html = report("html");
    let socket_cells = html_columns(&html, SOCKET);
    let bad_cells = html_columns(&html, BAD);
    assert_eq!(socket_cells.len(), 2, "the summary and the load table show socket errors: {socket_cells:?}");
    assert_eq!(bad_cells.len(), 2, "the summary and the load table show bad responses: {bad_cells:?}");
    for cell in &socket_cells {
        assert_eq!(count(cell), socket, "HTML socket errors {socket_cells:?}");
    }
    for cell in &bad_cells {
        assert_eq!(count(cell), bad, "HTML bad responses {bad_cells:?}");
    }
}

/// The contract server on a free port with a fault, stopped on drop.
struct Flaky(Child);

impl Flaky {
    fn start(env: &[(&str, &str)]) -> (Flaky, u16) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = stampede_testkit::fixture("contract_server.py");
        let child = Command::new("python3").arg(server).env("PORT", port.to_string()).envs(env.iter().copied()).spawn();
        let flaky = Flaky(child.expect("python3 runs"));
        let up = wait_for(Duration::from_secs(10), || TcpStream::connect(("127.0.0.1", port)).is_ok());
        assert!(up, "the contract server did not listen on {port}");
        (flaky, port)
    }
}

impl Drop for Flaky {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn per_target_errors_read_the_same_in_the_load_document_markdown_and_html() {
    let (_server, port) = Flaky::start(&[("MALFORMED_EVERY", "7"), ("BAD_STATUS_EVERY", "5")]);
    let s = Scratch::new("errtargets");
    let urls = [format!("http://127.0.0.1:{port}/plaintext"), format!("http://127.0.0.1:{port}/json")];
    let out = stampede().args(["load", "--json", "-n", "600", "-c", "2"]).args(&urls).output().unwrap();
    assert!(out.status.code().is_some(), "stampede load ended by a signal");
    let load_path = s.dir.join("load.json");
    std::fs::write(&load_path, &out.stdout).unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let targets = doc["targets"].as_array().unwrap_or_else(|| panic!("no targets: {doc}"));
    assert_eq!(targets.len(), 2, "{doc}");
    let sums = |t: &serde_json::Value| {
        let n = |k: &str| t["errors"][k].as_u64().unwrap_or(0);
        (n("connect") + n("read") + n("write") + n("timeout") + n("parse") + n("tls"), n("status"))
    };
    let per_target: Vec<(u64, u64)> = targets.iter().map(sums).collect();
    let (socket, bad) = sums(&doc);
    assert!(socket > 0 && bad > 0, "the faults were counted: {}", doc["errors"]);
    assert_eq!(per_target.iter().map(|p| p.0).sum::<u64>(), socket, "targets add up to the socket errors");
    assert_eq!(per_target.iter().map(|p| p.1).sum::<u64>(), bad, "targets add up to the bad responses");

    let report = |format: &str| report(&load_path, format);
    let md = report("md");
    assert_eq!(count(&markdown_column(&md, SOCKET)), socket, "{md}");
    let per_target_md = &md[md.find("Per target").unwrap_or_else(|| panic!("no per-target table in\n{md}"))..];
    let md_counts: Vec<(u64, u64)> = markdown_rows(per_target_md, SOCKET)
        .iter()
        .zip(markdown_rows(per_target_md, BAD))
        .map(|(s, b)| (count(s), count(&b)))
        .collect();
    assert_eq!(md_counts, per_target, "{md}");

    let html = report("html");
    let section = &html[html.find(r#"<section id="targets">"#).unwrap_or_else(|| panic!("no targets section"))..];
    let table = elements(section, "table").into_iter().next().unwrap();
    let html_counts: Vec<(u64, u64)> =
        html_rows(table, SOCKET).iter().zip(html_rows(table, BAD)).map(|(s, b)| (count(s), count(&b))).collect();
    assert_eq!(html_counts, per_target, "HTML targets table");
}
