//! Assembles the report page: header, warnings about invalid runs, the
//! summary, the charts (efficiency, latency spectrum, one timeline per run),
//! the Explain section (slow requests attributed to their causes), the
//! crank-style tables and the environment, with the stylesheet and
//! scripts from `assets/` embedded.

use std::fmt::Write;

use super::escape::esc;
use super::palette::Palette;
use super::tables;
use super::{efficiency, intervals, spectrum, timeline};
use crate::schema::{Results, Run};
use crate::summary::{self, group, summarize, ConfigKey};
use crate::targets;

const CSS: &str = include_str!("../../assets/report.css");
const GUARD_JS: &str = include_str!("../../assets/guard.js");
const REPORT_JS: &str = include_str!("../../assets/report.js");

/// Renders the whole report.
pub fn render(results: &Results) -> String {
    let groups = group(results);
    let keys: Vec<ConfigKey> = groups.iter().map(|g| g.key.clone()).collect();
    let palette = Palette::of(results);
    let env = &results.environment;
    let scenario_name = results.scenario.get("name").and_then(|n| n.as_str()).unwrap_or("results");

    let mixed = results.runs.iter().any(targets::has_mix);
    let staged = results.runs.iter().any(crate::stages::has_stages);
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="stampede report">
<title>Stampede report: {}</title>
<style>{CSS}</style>
<script>{GUARD_JS}</script>
</head><body>
"#,
        esc(scenario_name)
    );
    let mut sub = vec![format!("scenario {scenario_name}")];
    if env.started_unix_s > 0 {
        sub.push(format!("started {}", tables::utc(env.started_unix_s as f64)));
    }
    sub.push(format!("stampede {}", if env.tool_version.is_empty() { "?" } else { &env.tool_version }));
    if let Some(commit) = &env.git_commit {
        sub.push(format!("commit {commit}"));
    }
    if !env.cpu_model.is_empty() {
        sub.push(env.cpu_model.clone());
    }
    let _ = write!(
        out,
        r##"<header><h1>Stampede report</h1><p class="sub">{}</p>
<nav><a href="#summary">Summary</a><a href="#efficiency">Efficiency</a><a href="#latency">Latency</a><a href="#timelines">Timelines</a>{}<a href="#application">Application</a><a href="#load">Load</a>{}{}<a href="#environment">Environment</a></nav>
<div id="js-errors" class="js-errors" hidden></div></header><main>
"##,
        esc(&sub.join(" · ")),
        if super::explain::present(results) { r##"<a href="#explain">Explain</a>"## } else { "" },
        if mixed { r##"<a href="#targets">Targets</a>"## } else { "" },
        if staged { r##"<a href="#stages">Stages</a>"## } else { "" }
    );

    summary_section(&mut out, results);

    out.push_str(r#"<section id="efficiency"><h2>Efficiency</h2><p class="note">Requests per second for each core of server CPU used, beside raw requests per second and what the load generator itself spent. Bars are medians of valid iterations; dots are single iterations.</p><div class="chart-box">"#);
    out.push_str(&efficiency::render(&groups, &palette));
    legend(&mut out, keys.iter(), &palette);
    out.push_str("</div></section>\n");

    out.push_str(r#"<section id="latency"><h2>Latency by percentile</h2><p class="note">HdrHistogram percentile spectrum: x is 1/(1 − percentile) on a log scale, so each step to the right is ten times rarer. One line per run; dotted lines are invalid runs.</p>"#);
    let mut profiles: Vec<String> = Vec::new();
    for run in &results.runs {
        let profile = run.profile.clone();
        if !profiles.contains(&profile) {
            profiles.push(profile);
        }
    }
    for (i, profile) in profiles.iter().enumerate() {
        let runs: Vec<&Run> = results.runs.iter().filter(|r| r.profile == *profile).collect();
        if profiles.len() > 1 {
            let _ = write!(out, "<h3>Profile {}</h3>", esc(profile));
        }
        out.push_str(r#"<div class="chart-box">"#);
        out.push_str(&spectrum::render(&format!("chart-spectrum-{i}"), profile, &runs, &palette));
        legend(&mut out, keys.iter().filter(|k| k.profile == *profile), &palette);
        out.push_str("</div>");
    }
    out.push_str("</section>\n");

    out.push_str(r#"<section id="timelines"><h2>Timelines</h2><p class="note">Per run: requests and p99 per second from the load generator, CPU and RSS from the probe. Shaded: warmup. Grey line: warmup end; red: seconds with errors; purple: GC pauses and other events from the run.</p>"#);
    for (i, run) in results.runs.iter().enumerate() {
        run_section(&mut out, run, i, results.dir.as_deref());
    }
    out.push_str("</section>\n");
    super::explain::section(&mut out, results);

    out.push_str(r#"<section id="application"><h2>Application</h2>"#);
    tables::application(&mut out, results);
    out.push_str(r#"</section><section id="load"><h2>Load</h2>"#);
    tables::load(&mut out, results);
    if mixed {
        out.push_str(r#"</section><section id="targets"><h2>Targets</h2><p class="note">Runs with a request mix: what each target got.</p>"#);
        tables::model(&mut out, "runs", &targets::table(&results.runs, true));
    }
    if staged {
        out.push_str(r#"</section><section id="stages"><h2>Stages</h2><p class="note">Ramped runs: what each stage asked for and what it got.</p>"#);
        tables::model(&mut out, "runs", &crate::stages::table(&results.runs, true));
    }
    out.push_str(r#"</section><section id="environment"><h2>Environment</h2>"#);
    tables::environment(&mut out, results);
    if !results.scenario.is_null() {
        let scenario = serde_json::to_string_pretty(&results.scenario).unwrap_or_default();
        let _ = write!(out, "<details><summary>Scenario as run</summary><pre>{}</pre></details>", esc(&scenario));
    }
    out.push_str("</section></main>\n");
    let _ = write!(
        out,
        r#"<footer>Generated by <code>stampede report</code> from {} run(s). Self-contained: no network access needed.</footer>
<div id="tip" class="tip" hidden></div>
<div id="selftest" hidden data-status="pending" data-js-errors="0"></div>
<script>{REPORT_JS}</script>
</body></html>
"#,
        results.runs.len()
    );
    out
}

fn summary_section(out: &mut String, results: &Results) {
    out.push_str(r#"<section id="summary"><h2>Summary</h2>"#);
    if !results.skipped.is_empty() {
        out.push_str(r#"<div class="warnings"><strong>Apps not run</strong>:<ul>"#);
        for skipped in &results.skipped {
            let _ = write!(out, "<li>{}: {}</li>", esc(&skipped.app), esc(&skipped.reason));
        }
        out.push_str("</ul></div>");
    }
    let invalid: Vec<&Run> = results.runs.iter().filter(|r| !r.is_valid()).collect();
    if !invalid.is_empty() {
        out.push_str(
            r#"<div class="warnings"><strong>Invalid runs</strong> (left out of medians and charts of medians):<ul>"#,
        );
        for run in invalid {
            let reason = run.invalid_reason.as_deref().unwrap_or("no reason given");
            let _ = write!(
                out,
                "<li>{} iteration {}: {}</li>",
                esc(&ConfigKey::of(run).label()),
                run.iteration,
                esc(reason)
            );
        }
        out.push_str("</ul></div>");
    }
    tables::model(out, "summary", &summary::table(&summarize(results)));
    out.push_str(r#"<p class="note">Medians over valid iterations.</p></section>"#);
    out.push('\n');
}

/// The legend of a chart: each app and knob setting drawn in it, once, in
/// the palette's colour.
fn legend<'a>(out: &mut String, keys: impl Iterator<Item = &'a ConfigKey>, palette: &Palette) {
    out.push_str(r#"<div class="legend">"#);
    let mut shown: Vec<String> = Vec::new();
    for key in keys {
        let label = key.app_knobs();
        if !shown.contains(&label) {
            let _ = write!(out, r#"<span style="--swatch:{}">{}</span>"#, palette.colour(key), esc(&label));
            shown.push(label);
        }
    }
    out.push_str("</div>");
}

fn run_section(out: &mut String, run: &Run, index: usize, dir: Option<&std::path::Path>) {
    let class = if run.is_valid() { "run" } else { "run invalid" };
    let open = if index == 0 { " open" } else { "" };
    let _ = write!(out, r#"<details class="{class}"{open}><summary>{}</summary>"#, esc(&tables::run_heading(run)));
    if let Some(reason) = &run.invalid_reason {
        let _ = write!(out, r#"<p class="warnings">Invalid: {}</p>"#, esc(reason));
    }
    out.push_str(&timeline::render(&format!("chart-timeline-{index}"), run));
    out.push_str(
        r#"<div class="legend"><span style="--swatch:#4e79a7">requests/s</span><span style="--swatch:#f28e2b">p99</span><span style="--swatch:#59a14f">server cores</span><span style="--swatch:#9ca3af">load generator cores</span><span style="--swatch:#76b7b2">server RSS</span></div>"#,
    );
    let points = intervals::of_run(dir, run);
    if !points.is_empty() {
        out.push_str(&intervals::render(&format!("chart-intervals-{index}"), &points));
    }
    let (markers, caption) = timeline::drawn(run);
    if let Some(caption) = &caption {
        let _ = write!(out, r#"<p class="note caption">{}</p>"#, esc(caption));
    }
    if !markers.is_empty() {
        out.push_str("<h3>Events</h3><ul>");
        for event in markers {
            let mut line = format!("{:.2} s · {}", event.t_s, event.kind);
            if !event.label.is_empty() {
                line.push_str(&format!(" · {}", event.label));
            }
            if event.duration_ms > 0.0 {
                line.push_str(&format!(" · {} ms", crate::format::sig(event.duration_ms)));
            }
            let _ = write!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>");
    }
    out.push_str("<h3>Threads</h3>");
    tables::threads(out, run);
    super::microstates::section(out, run);
    super::profile::section(out, run);
    super::offcpu::section(out, run);
    out.push_str("</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_cannot_close_their_script_or_style_element() {
        for asset in [CSS, GUARD_JS, REPORT_JS] {
            assert!(!asset.to_ascii_lowercase().contains("</script"));
            assert!(!asset.to_ascii_lowercase().contains("</style"));
        }
    }

    #[test]
    fn hostile_strings_are_escaped_everywhere() {
        let evil = "<script>alert(1)</script>";
        let text = serde_json::json!({
            "schema": "stampede.run/1",
            "environment": {"command_line": evil, "runtimes": {evil: evil}, "pinning": {"server": evil}},
            "scenario": {"name": evil, "headers": {"X-Evil": evil}},
            "skipped": [{"app": evil, "reason": evil}],
            "runs": [{"app": evil, "knobs": {evil: evil}, "profile": evil, "valid": false,
                      "invalid_reason": evil,
                      "load": {"rps": 1.0, "status_codes": {evil: 1},
                               "latency_spectrum": [{"percentile": 50.0, "us": 100.0}],
                               "timeline": [{"t_s": 0, "requests": 1, "errors": 0}],
                               "targets": [{"name": evil, "weight": 1, "requests": 1, "errors": {}, "latency_us": {}},
                                           {"name": format!("GET /{evil}"), "weight": 1, "requests": 1,
                                            "errors": {}, "latency_us": {}}]},
                      "server": {"threads_table": [{"tid": 1, "name": evil}]},
                      "events": [{"t_s": 0.1, "kind": evil, "label": evil}]}]
        })
        .to_string();
        let results = crate::schema::parse(&text).unwrap();
        let html = render(&results);
        assert!(!html.contains("<script>alert"), "unescaped value in report");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        // Only our own two script elements.
        assert_eq!(html.matches("<script>").count(), 2);
    }

    #[test]
    fn a_mixed_run_gets_a_targets_section_and_a_plain_one_does_not() {
        let html = render(&crate::targets::tests::mixed_results());
        assert!(html.contains(r#"<section id="targets">"#) && html.contains(r##"href="#targets""##));
        assert!(html.contains("GET /api/fib/{1..100}"));
        assert!(html.contains("GET /&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert_eq!(html.matches("<script>").count(), 2, "only our own scripts");
        let plain =
            crate::schema::parse(r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"rps":1.0}}]}"#).unwrap();
        assert!(!render(&plain).contains(r#"<section id="targets">"#));
    }
}
