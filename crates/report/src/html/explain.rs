//! The report's Explain section: for each run whose load logged its slow
//! requests, what `stampede explain` would say about it, computed with the
//! `stampede-explain` library on the same results file. It shows the share
//! of the requests above p99 and above p99.9 each cause explains (the causes
//! and words of `stampede explain`, from `stampede_schema::explain::Cause`)
//! beside the share they get by chance, the lock level and the frames
//! over-represented in the slow windows when the run has them, the
//! median and p99 with and without the requests that met a pause, and the
//! five slowest requests with the events they overlapped.

use std::fmt::Write;

use stampede_explain::explanation::Tier;
use stampede_explain::{explain, sources, Explanation, Margins, Shares};
use stampede_schema::explain::{Cause, FrameShift};

use super::escape::esc;
use super::tables::{self, Cell};
use crate::format::sig;
use crate::schema::{Results, Run};

/// What the section says about one run.
enum Verdict {
    /// No load phase: nothing to explain, nothing shown.
    NoLoad,
    /// A load phase without a slow-request log.
    NoSlowLog,
    Explained(Box<Explanation>),
}

fn verdict(doc: &Results, run: &Run) -> Verdict {
    match &run.load {
        None => Verdict::NoLoad,
        Some(load) if load.slow_requests.is_empty() => Verdict::NoSlowLog,
        Some(_) => match sources::from_run(doc, run) {
            Some(source) => Verdict::Explained(Box::new(explain(&source, Margins::default()))),
            None => Verdict::NoLoad,
        },
    }
}

/// Whether the report gets an Explain section: some run had a load phase.
pub fn present(results: &Results) -> bool {
    results.runs.iter().any(|r| r.load.is_some())
}

/// Writes the Explain section, or nothing when no run had a load phase.
pub fn section(out: &mut String, results: &Results) {
    let verdicts: Vec<(&Run, Verdict)> = results
        .runs
        .iter()
        .map(|run| (run, verdict(results, run)))
        .filter(|(_, v)| !matches!(v, Verdict::NoLoad))
        .collect();
    if verdicts.is_empty() {
        return;
    }
    out.push_str(r#"<section id="explain"><h2>Explain</h2><p class="note">Why the tail is slow, as <code>stampede explain</code> computes it: each slow request (above the run's p99, and above its p99.9) is attributed to the first cause it overlapped (a GC or safepoint pause, another pause, the load generator's late send, kernel drops, a contended lock, blocked I/O, a run-queue spike, CPU saturation), when that event can account for at least half its excess over the median. "By chance" is the share the same requests get when moved to other times of the run: a share is evidence only well above it. Method and limits: docs/explain.md.</p>"#);
    if verdicts.iter().all(|(_, v)| matches!(v, Verdict::NoSlowLog)) {
        out.push_str(r#"<p class="note">No run logged its slow requests: give the profile a <code>rate</code> and <code>slow_log = N</code> (N at least 1% of the requests; <code>stampede load --rate R --slow-log N</code>) to explain the tail.</p></section>"#);
        out.push('\n');
        return;
    }
    for (run, verdict) in &verdicts {
        match verdict {
            Verdict::NoLoad => {}
            Verdict::NoSlowLog => {
                let _ = write!(
                    out,
                    r#"<p class="note">{}: no slow requests logged (needs a <code>rate</code> and <code>slow_log</code> in the profile, or <code>--slow-log</code>).</p>"#,
                    esc(&tables::run_heading(run))
                );
            }
            Verdict::Explained(explanation) => run_block(out, run, explanation),
        }
    }
    out.push_str("</section>\n");
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The shares of `causes` (the columns: every cause `stampede explain`
/// prints for this run, in the same order and words), then the unexplained.
fn share_cells(shares: &Shares, causes: &[Cause]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = causes.iter().map(|&c| Cell::Num(pct(shares.of(c)))).collect();
    cells.push(Cell::Num(pct(shares.unexplained)));
    cells
}

fn tier_rows(rows: &mut Vec<(String, Vec<Cell>)>, name: &str, tier: &Tier, causes: &[Cause]) {
    let mut cells = vec![
        Cell::Text(format!("{name} ({} µs)", sig(tier.threshold_us))),
        Cell::Text("measured".to_owned()),
        Cell::Num(format!("{} of ~{}", tier.slow_requests, tier.expected)),
    ];
    cells.extend(share_cells(&tier.share, causes));
    rows.push((String::new(), cells));
    let mut cells = vec![Cell::Text(String::new()), Cell::Text("by chance".to_owned()), Cell::Text(String::new())];
    cells.extend(share_cells(&tier.chance, causes));
    rows.push(("chance".to_owned(), cells));
}

fn run_block(out: &mut String, run: &Run, ex: &Explanation) {
    let _ = write!(out, r#"<details class="run explain" open><summary>{}</summary>"#, esc(&tables::run_heading(run)));
    let known: Vec<String> = ex.events.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    let _ = write!(
        out,
        r#"<p>Events known: {}.</p>"#,
        esc(&if known.is_empty() { "none".to_owned() } else { known.join(", ") })
    );

    let p99 = Tier {
        threshold_us: ex.slow_threshold_us,
        slow_requests: ex.slow_requests,
        expected: (ex.requests as f64 * 0.01).floor() as u64,
        share: ex.share,
        present: ex.present,
        chance: ex.chance,
    };
    let causes = Shares::shown(&[&p99.share, &p99.chance, &ex.p999.share, &ex.p999.chance]);
    let mut headers = vec!["slow requests", "", "logged of expected"];
    headers.extend(causes.iter().map(|c| c.title()));
    headers.push("unexplained");
    let mut rows = Vec::new();
    tier_rows(&mut rows, "above p99", &p99, &causes);
    tier_rows(&mut rows, "above p99.9", &ex.p999, &causes);
    tables::table(out, "explain-shares", &headers, &rows);
    if let Some(l) = &ex.lock_level {
        let slow = l.slow_windows_pct.map_or("no sample".to_owned(), |p| format!("{p:.0}%"));
        let _ = write!(
            out,
            "<p>{}</p>",
            esc(&format!(
                "Lock level: the working threads ({:.1} on average) were blocked on futexes {slow} of their time in the slow requests' windows, {:.0}% over the run.",
                l.working_threads, l.run_pct
            ))
        );
    }
    let shifts: [(&str, &[FrameShift], &str, &str); 2] = [
        (
            "Frames over-represented in the slow windows",
            &ex.frames,
            "explain-frames",
            "on-CPU samples in the slow windows",
        ),
        (
            "Waiter frames over-represented in the slow windows (off the CPU)",
            &ex.waiters,
            "explain-waiters",
            "time blocked in the slow windows",
        ),
    ];
    for (heading, frames, class, what) in shifts.into_iter().filter(|s| !s.1.is_empty()) {
        let _ = write!(out, "<h3>{}</h3>", esc(heading));
        let rows: Vec<(String, Vec<Cell>)> = frames
            .iter()
            .map(|f| {
                (
                    String::new(),
                    vec![
                        Cell::Num(format!("{:.1}%", f.slow_pct)),
                        Cell::Num(format!("{:.1}%", f.run_pct)),
                        Cell::Wrap(f.frame.clone()),
                    ],
                )
            })
            .collect();
        tables::table(out, class, &[what, "over the run (by chance)", "frame"], &rows);
    }

    match &ex.latency {
        Some(l) => {
            let _ = write!(
                out,
                "<p>{}</p>",
                esc(&format!(
                    "Latency: p50 {} µs, p99 {} µs; without the {} requests that met a pause: p50 {} µs, p99 {} µs{}.",
                    sig(l.all.p50_us),
                    sig(l.all.p99_us),
                    l.removed,
                    sig(l.without_pauses.p50_us),
                    sig(l.without_pauses.p99_us),
                    if l.exact { "" } else { " (approximate: the slow log does not reach below that p99)" }
                ))
            );
        }
        None => out.push_str(r#"<p class="note">Latency with and without pauses: the run has no HDR histogram.</p>"#),
    }

    if !ex.slowest.is_empty() {
        out.push_str("<h3>Slowest requests</h3>");
        let rows: Vec<(String, Vec<Cell>)> = ex
            .slowest
            .iter()
            .map(|s| {
                // The first few events and a count of the rest, by kind:
                // every one made the section grow with the slow requests.
                let (shown, more) = s.shown_events();
                let mut met: Vec<String> = shown
                    .iter()
                    .map(|e| {
                        format!("{} {:+.2} ms for {:.2} ms: {}", e.kind.name(), e.offset_ms, e.duration_ms, e.label)
                    })
                    .collect();
                met.extend(more.map(|more| format!("and {more}")));
                (
                    String::new(),
                    vec![
                        Cell::Num(sig(s.latency_us)),
                        Cell::Text(s.cause.map(|c| c.name()).unwrap_or("unexplained").to_owned()),
                        Cell::Wrap(if met.is_empty() { "none".to_owned() } else { met.join("; ") }),
                    ],
                )
            })
            .collect();
        tables::table(
            out,
            "explain-slowest",
            &["latency (µs)", "cause", "events met (start relative to the intended send, duration)"],
            &rows,
        );
    }
    if !ex.notes.is_empty() {
        out.push_str(r#"<ul class="note">"#);
        for note in &ex.notes {
            let _ = write!(out, "<li>{}</li>", esc(note));
        }
        out.push_str("</ul>");
    }
    if !ex.clock.is_empty() {
        out.push_str("<details><summary>Clock alignment</summary><ul>");
        for line in &ex.clock {
            let _ = write!(out, "<li>{}</li>", esc(line));
        }
        out.push_str("</ul></details>");
    }
    out.push_str("</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYNTHETIC: &str = include_str!("../../../explain/testdata/results-synthetic.json");

    fn rendered(text: &str) -> String {
        let results = crate::schema::parse(text).unwrap();
        let mut out = String::new();
        section(&mut out, &results);
        out
    }

    #[test]
    fn synthetic_run_shows_a_quarter_for_each_cause() {
        let html = rendered(SYNTHETIC);
        let shares = &html[html.find("explain-shares").unwrap()..];
        let first_row = &shares[shares.find("above p99 (5,000 µs)").unwrap()..];
        let first_row = &first_row[..first_row.find("</tr>").unwrap()];
        assert_eq!(first_row.matches(">25%<").count(), 4, "{first_row}");
        assert!(first_row.contains("4 of ~10"), "{first_row}");
        assert!(html.contains("GC(7) Pause Young"));
        // The second run has no load phase and gets no block.
        assert_eq!(html.matches("<details class=\"run explain\"").count(), 1);
    }

    /// Regression: the report showed only GC, pause, CPU saturation and
    /// run-queue while `stampede explain` also named locks, blocked I/O, late
    /// sends, kernel drops and the slow-window frames.
    #[test]
    fn every_cause_explain_names_and_its_frames_are_in_the_report() {
        let results = crate::schema::parse(SYNTHETIC).unwrap();
        let run = &results.runs[0];
        let Verdict::Explained(mut ex) = verdict(&results, run) else { panic!("the synthetic run is explained") };
        ex.share.lock = 0.5;
        ex.chance.kernel_drops = 0.1;
        ex.lock_level = Some(stampede_schema::explain::LockLevel {
            slow_windows_pct: Some(70.0),
            run_pct: 61.0,
            working_threads: 5.4,
        });
        ex.frames = vec![stampede_schema::explain::FrameShift {
            frame: "<script>spin</script>".into(),
            kind: "cpu".into(),
            slow_pct: 72.5,
            run_pct: 36.4,
            ..Default::default()
        }];
        let mut html = String::new();
        run_block(&mut html, run, &ex);
        let header = &html[html.find("explain-shares").unwrap()..];
        let header = &header[..header.find("</tr>").unwrap()];
        for title in ["gc", "kernel drops", "lock", "run-queue", "cpu saturation", "unexplained"] {
            assert!(header.contains(&format!(">{title}<")), "{title} in {header}");
        }
        assert!(!header.contains("blocked I/O"), "a cause at 0 everywhere is left out: {header}");
        assert!(html.contains(">50%<"), "the lock's share: {html}");
        assert!(html.contains("blocked on futexes 70% of their time"), "{html}");
        assert!(html.contains("&lt;script&gt;spin&lt;/script&gt;") && !html.contains("<script>spin"), "{html}");
        assert!(html.contains("72.5%") && html.contains("36.4%"), "{html}");
    }

    /// Regression: a slow request queued behind hundreds of others met each
    /// one's wait, and the report listed them all (1.5 MB for 3 short runs).
    #[test]
    fn a_slowest_request_lists_a_few_events_and_counts_the_rest_by_kind() {
        use stampede_schema::explain::{Kind, Met, Slowest};
        let results = crate::schema::parse(SYNTHETIC).unwrap();
        let run = &results.runs[0];
        let Verdict::Explained(mut ex) = verdict(&results, run) else { panic!("the synthetic run is explained") };
        let met = |i: usize, kind| Met { kind, label: format!("evt~{i}"), offset_ms: 0.0, duration_ms: 1.0 };
        let mut events: Vec<Met> = (0..300).map(|i| met(i, Kind::ConnectionBusy)).collect();
        events.extend((300..303).map(|i| met(i, Kind::Gc)));
        ex.slowest = vec![Slowest { latency_us: 9000.0, intended_mono_ns: 1, cause: None, events }];
        let mut html = String::new();
        run_block(&mut html, run, &ex);
        let listed = html.matches("evt~").count();
        assert_eq!(listed, Slowest::EVENTS_SHOWN, "{html}");
        assert!(html.contains("and 299 more: 296 connection_busy, 3 gc"), "{html}");

        ex.slowest[0].events.truncate(2);
        let mut html = String::new();
        run_block(&mut html, run, &ex);
        assert_eq!(html.matches("evt~").count(), 2);
        assert!(!html.contains("more:"), "nothing left to count: {html}");
    }

    #[test]
    fn runs_without_slow_log_get_one_line_and_runs_without_load_nothing() {
        let no_log = r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"requests":10,"slow_requests":[]}}]}"#;
        let html = rendered(no_log);
        assert!(html.contains("No run logged its slow requests"), "{html}");
        assert!(!html.contains("explain-shares"));
        let no_load = r#"{"schema":"stampede.run/1","runs":[{"app":"go"}]}"#;
        assert_eq!(rendered(no_load), "");
    }
}
