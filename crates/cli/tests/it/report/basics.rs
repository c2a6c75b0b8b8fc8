//! `stampede report` through the real binary: the demo report drawn in
//! headless Chromium, hostile strings shown as text, the Markdown, CSV and
//! JSON exports, lenient parsing of partial results, and one-line errors.

use stampede_testkit::report;

use report::chromium::render_in_chromium;
use report::*;
use serde_json::json;

#[test]
fn demo_report_draws_every_chart_in_headless_chromium_without_script_errors() {
    let dir = scratch("demo");
    let page = dir.join("demo.html");
    let out = run(&["report", "--demo", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let rendered = render_in_chromium(&page, &dir, 1280, 2400);
    let dom = &rendered.dom;
    assert_eq!(selftest_attr(dom, "data-status"), "done", "the page script did not finish");
    assert_eq!(selftest_attr(dom, "data-js-errors"), "0", "the page raised JavaScript errors");
    // Efficiency + one spectrum (one profile) + one timeline per run (12).
    let charts: usize = selftest_attr(dom, "data-charts").parse().unwrap();
    assert_eq!(charts, 14, "unexpected number of charts");
    assert_eq!(selftest_attr(dom, "data-empty-charts"), "", "charts with nothing drawn");
    for id in ["chart-efficiency", "chart-spectrum-0", "chart-timeline-0"] {
        let start = dom.find(&format!(r#"id="{id}""#)).unwrap_or_else(|| panic!("no {id} in DOM"));
        let svg = &dom[start..start + dom[start..].find("</svg>").unwrap()];
        let drawn: usize = svg
            .split(r#"data-drawn=""#)
            .nth(1)
            .and_then(|s| s.split('"').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(drawn > 0, "{id} has no mark with a size after layout");
        assert!(svg.contains("<path") || svg.contains("<rect"), "{id} has no shapes");
    }
    // Timeline markers: warmup end, GC events and the invalid run's error seconds.
    for kind in ["warmup_end", "gc", "errors"] {
        assert!(dom.contains(&format!(r#"data-kind="{kind}""#)), "no {kind} marker");
    }
    assert_eq!(png_size(&rendered.screenshot), (1280, 2400));
    // A blank 1280×2400 page compresses to a few KB; charts and tables do not.
    let bytes = std::fs::metadata(&rendered.screenshot).unwrap().len();
    assert!(bytes > 60_000, "screenshot is suspiciously small ({bytes} bytes): did anything draw?");
    eprintln!("screenshot: {}", rendered.screenshot.display());
}

#[test]
fn script_in_app_name_and_response_header_shows_as_text() {
    let dir = scratch("hostile");
    let evil = "<script>document.documentElement.setAttribute('data-pwned','1')</script>";
    let mut results = results_json(&[("go", "1", &[1000.0, 1010.0, 990.0])]);
    results["runs"][0]["app"] = json!(evil);
    results["runs"][1]["valid"] = json!(false);
    results["runs"][1]["invalid_reason"] = json!(format!("contract: response header X-Evil: {evil}"));
    results["runs"][2]["knobs"] = json!({"threads": evil});
    results["scenario"]["profiles"] = json!([{"name": "steady", "headers": {"X-Evil": evil}}]);
    results["environment"]["command_line"] = json!(format!("stampede run '{evil}'"));
    let input = write_json(&dir, "results.json", &results);
    let page = dir.join("report.html");
    let out = run(&["report", &input, "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script>document"), "a value reached the page unescaped");
    assert!(html.contains("&lt;script&gt;document.documentElement"));
    assert!(html.contains("response header X-Evil: &lt;script&gt;"));

    let rendered = render_in_chromium(&page, &dir, 1024, 800);
    let html_tag = &rendered.dom[rendered.dom.find("<html").unwrap()..];
    let html_tag = &html_tag[..html_tag.find('>').unwrap()];
    assert!(!html_tag.contains("data-pwned"), "the injected script ran: {html_tag}");
    assert_eq!(selftest_attr(&rendered.dom, "data-js-errors"), "0");
    // Shown as text: the serialised DOM has it escaped inside text nodes.
    assert!(rendered.dom.contains("&lt;script&gt;document.documentElement.setAttribute"));
}

#[test]
fn markdown_csv_and_json_summaries() {
    let dir = scratch("exports");
    let input = write_json(
        &dir,
        "results.json",
        &results_json(&[("go", "1", &[1000.0, 3000.0, 2000.0]), ("node", "2", &[500.0])]),
    );

    let md = run(&["report", &input, "--format", "md"]);
    assert_eq!(md.status.code(), Some(0), "{}", stderr(&md));
    let md = stdout(&md);
    assert!(md.contains("| app | knobs | profile | runs | valid runs | requests/s (min–max) |"), "{md}");
    assert!(md.contains("| go | threads=1 | steady | 3 | 3 | 2,000 (1,000–3,000) |"), "{md}");

    let csv_path = dir.join("summary.csv");
    let csv = run(&["report", &input, "--format", "csv", "-o", csv_path.to_str().unwrap()]);
    assert_eq!(csv.status.code(), Some(0), "{}", stderr(&csv));
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("app,knobs,profile,runs,valid_runs,rps,"));
    assert!(lines[1].starts_with("go,threads=1,steady,3,3,2000,"), "{csv}");

    let js = run(&["report", &input, "--format", "json"]);
    // Read through the one declaration of the document, as a script in Rust would.
    let summary: stampede_schema::summary::SummaryDoc = serde_json::from_slice(&js.stdout).expect("JSON summary");
    assert_eq!(summary.schema, stampede_schema::summary::SUMMARY_SCHEMA);
    assert_eq!(summary.rows[0].rps, Some(2000.0));
    assert_eq!(summary.rows[1].app, "node");
}

#[test]
fn html_goes_beside_results_json_by_default() {
    let dir = scratch("default-output");
    let input = write_json(&dir, "results.json", &results_json(&[("go", "1", &[1000.0])]));
    let out = run(&["report", &input]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(dir.join("report.html").is_file());
    assert!(stderr(&out).contains("report.html"));
}

#[test]
fn partial_results_render_null_load_missing_samples_and_no_runs() {
    let dir = scratch("partial");
    let results = json!({
        "schema": "stampede.run/1",
        "environment": {"tool_version": "0.1.0"},
        "runs": [
            {"app": "go", "knobs": {}, "profile": "p", "iteration": 1, "valid": false,
             "invalid_reason": "server crashed before the first response", "load": null,
             "server": {"cpu_cores_avg": null}},
            {"app": "go", "knobs": {}, "profile": "p", "iteration": 2, "valid": true,
             "load": {"rps": 100.0}}
        ]
    });
    let input = write_json(&dir, "results.json", &results);
    for format in ["html", "md", "csv", "json"] {
        let out = run(&["report", &input, "--format", format, "-o", "-"]);
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
    }
    let empty = write_json(&dir, "empty.json", &json!({"schema": "stampede.run/1", "runs": []}));
    let out = run(&["report", &empty, "-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("No runs in this file."));
}

#[test]
fn bad_input_is_a_one_line_error_with_exit_code_2() {
    let dir = scratch("errors");
    let missing = dir.join("nope.json");
    let out = run(&["report", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.starts_with("stampede: error: cannot read") && err.contains("nope.json"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");

    let wrong = write_json(&dir, "wrong.json", &json!({"schema": "other/1"}));
    let err = stderr(&run(&["report", &wrong]));
    assert!(err.contains("wrong.json") && err.contains("\"other/1\""), "{err}");

    let bad_field = write_json(
        &dir,
        "bad.json",
        &json!({"schema": "stampede.run/1", "runs": [{"app": "go", "load": {"rps": "fast"}}]}),
    );
    let out = run(&["report", &bad_field]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad.json") && err.contains("runs[0].load.rps"), "{err}");

    let not_json = dir.join("garbage.json");
    std::fs::write(&not_json, "{not json").unwrap();
    let out = run(&["report", not_json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("garbage.json"), "{}", stderr(&out));

    let out = run(&["report", "--format", "pdf", "--demo"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["report"]);
    assert_eq!(out.status.code(), Some(2), "RESULTS or --demo is required");
}

#[test]
fn json_summary_matches_the_documented_schema() {
    let out = run(&["report", "--demo", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut documented = documented_fields("report.md", "### `stampede.summary/1`");
    documented.sort();
    assert_eq!(keys(&json), documented, "docs/report.md and --format json disagree");
    assert_eq!(
        keys(&json["rows"][0]),
        [
            "app",
            "bad_responses",
            "invalid_reasons",
            "knobs",
            "load_valid_runs",
            "loadgen_cpu_cores",
            "p50_ms",
            "p999_ms",
            "p99_ms",
            "p99_reproducible",
            "p99_spread",
            "profile",
            "rps",
            "rps_per_core",
            "runs",
            "server_cpu_cores",
            "server_rss_max_mib",
            "socket_errors",
            "valid_runs"
        ]
    );
}

/// The Explain section of a rendered report: from its heading to the next section.
fn explain_section(html: &str) -> &str {
    let start = html.find(r#"<section id="explain">"#).expect("the report has an Explain section");
    let end = start + html[start..].find("</section>").unwrap();
    &html[start..end]
}

#[test]
fn explain_section_shows_cause_shares_and_escapes_event_labels() {
    // The explain crate's hand-built run: one slow request above p99 for
    // each cause (a GC pause, a saturated CPU sample, a run-queue spike,
    // nothing), so each explains a quarter; the slowest (above p99.9) met
    // the GC pause, whose label here is hostile.
    let dir = scratch("explain");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../explain/testdata/results-synthetic.json");
    let mut results: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let evil = "<script>document.title='pwned'</script>";
    results["runs"][0]["events"][0]["label"] = json!(evil);
    let input = write_json(&dir, "results.json", &results);
    let page = dir.join("report.html");
    let out = run(&["report", &input, "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r##"<a href="#explain">Explain</a>"##));
    let section = explain_section(&html);

    let row = |name: &str| -> Vec<String> {
        let at = section.find(name).unwrap_or_else(|| panic!("no row {name}: {section}"));
        let row = &section[at..at + section[at..].find("</tr>").unwrap()];
        row.split("<td")
            .skip(1)
            .map(|cell| {
                let text = &cell[cell.find('>').unwrap() + 1..];
                text[..text.find("</td>").unwrap()].to_owned()
            })
            .collect()
    };
    // The cells after the name: measured, logged of expected, then the
    // causes `stampede explain` prints for this run, in its order and words
    // (gc, lock, run-queue, cpu saturation: the ones always shown; none of
    // the others occurred), and the unexplained.
    assert!(
        section.contains("<th>gc</th><th>lock</th><th>run-queue</th><th>cpu saturation</th><th>unexplained</th>"),
        "{section}"
    );
    let p99 = row("above p99 (5,000 µs)");
    assert_eq!(p99[0], "measured");
    assert_eq!(p99[1], "4 of ~10");
    assert_eq!(&p99[2..], ["25%", "0%", "25%", "25%", "25%"], "{section}");
    let p999 = row("above p99.9 (20,000 µs)");
    assert_eq!(p999[1], "1 of ~1");
    assert_eq!(&p999[2..], ["100%", "0%", "0%", "0%", "0%"], "{section}");
    assert!(section.contains("by chance"));
    assert!(section.contains("Events known: 1 cpu_saturation, 1 gc, 1 runqueue."), "{section}");

    // The slowest request met the GC pause; its label shows as text.
    let slowest = &section[section.find("explain-slowest").unwrap()..];
    let first = &slowest[slowest.find("<tbody><tr>").unwrap()..];
    let first = &first[..first.find("</tr>").unwrap()];
    assert!(first.contains(">gc<"), "{first}");
    assert!(first.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"), "{first}");
    assert!(!html.contains("<script>document"), "a label reached the page unescaped");
}

#[test]
fn runs_without_a_slow_log_get_one_line_instead_of_an_explanation() {
    let dir = scratch("explain-none");
    let results = results_json(&[("go", "1", &[1000.0])]);
    let input = write_json(&dir, "results.json", &results);
    let page = dir.join("report.html");
    let out = run(&["report", &input, "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let section = explain_section(&html);
    assert!(section.contains("No run logged its slow requests"), "{section}");
    assert!(section.contains("slow_log"));
    assert!(!section.contains("explain-shares"));
}

/// Every (label, colour) the report's charts and legends draw a
/// configuration with: efficiency bars, spectrum lines, legend swatches.
/// Labels are `app knobs`, the profile stripped.
fn drawn_colours(html: &str) -> Vec<(String, String)> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let rest = &tag[tag.find(&format!(r#" {name}=""#))? + name.len() + 3..];
        Some(rest[..rest.find('"')?].to_owned())
    };
    let app_knobs = |label: &str| label.rsplit_once(" (").map_or(label, |(head, _)| head).to_owned();
    let mut drawn = Vec::new();
    for piece in html.split('<').skip(1) {
        let (tag, text) = piece.split_once('>').unwrap_or((piece, ""));
        if tag.starts_with(r#"rect class="mark bar""#) {
            let tip = attr(tag, "data-tip").unwrap();
            drawn.push((app_knobs(tip.split(": median").next().unwrap()), attr(tag, "fill").unwrap()));
        } else if tag.starts_with(r#"path class="mark line"#) && tag.contains("iteration") {
            let tip = attr(tag, "data-tip").unwrap();
            drawn.push((app_knobs(tip.rsplit_once(" iteration").unwrap().0), attr(tag, "stroke").unwrap()));
        } else if let Some(swatch) = tag.strip_prefix(r#"span style="--swatch:"#) {
            drawn.push((text.to_owned(), swatch.trim_end_matches('"').to_owned()));
        }
    }
    drawn
}

/// Was: go blue in one profile's latency chart and orange in the next,
/// because colours went by configuration (app × knobs × profile) and each
/// chart counted its own.
#[test]
fn an_app_has_the_same_colour_in_every_chart_and_legend() {
    let dir = scratch("colours");
    let mut results = results_json(&[
        ("go", "1", &[1000.0, 1100.0]),
        ("node", "1", &[800.0, 850.0]),
        ("rust", "1", &[3000.0, 3100.0]),
        ("go", "2", &[1500.0]),
    ]);
    let mut json_runs = results["runs"].as_array().unwrap().clone();
    for run in &mut json_runs {
        run["profile"] = json!("json");
    }
    // The second profile lists its apps in another order.
    json_runs.reverse();
    results["runs"].as_array_mut().unwrap().extend(json_runs);
    let input = write_json(&dir, "results.json", &results);
    let page = dir.join("report.html");
    let out = run(&["report", &input, "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();

    let drawn = drawn_colours(&html);
    let mut colours: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for (label, colour) in &drawn {
        colours.entry(label.clone()).or_default().insert(colour.clone());
    }
    for label in ["go threads=1", "go threads=2", "node threads=1", "rust threads=1"] {
        let count = drawn.iter().filter(|(l, _)| l == label).count();
        // 2 bars per efficiency panel (3 panels), spectrum lines and 3 legends at least.
        assert!(count >= 5, "{label} drawn {count} times: {drawn:?}");
        assert_eq!(colours[label].len(), 1, "{label} in several colours: {:?}", colours[label]);
    }
    let apps: std::collections::BTreeSet<&String> =
        ["go threads=1", "node threads=1", "rust threads=1"].iter().map(|l| colours[*l].first().unwrap()).collect();
    assert_eq!(apps.len(), 3, "apps share a colour: {colours:?}");
    assert_ne!(colours["go threads=1"], colours["go threads=2"], "knob settings of an app are told apart");
}
