//! Explanations for people (aligned text) and for programs (the
//! `stampede.explain/1` JSON document, documented in docs/explain.md).

use std::fmt::Write;

use crate::attribution::Shares;
use crate::explanation::{Explanation, SCHEMA};
use crate::summary;
use stampede_schema::explain::{Cause, ExplainDoc};

pub fn json(runs: &[Explanation]) -> String {
    let doc = ExplainDoc { schema: SCHEMA.to_owned(), runs: runs.to_vec() };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn shares_line(s: &Shares) -> String {
    let mut parts: Vec<String> =
        Shares::shown(&[s]).into_iter().map(|c| format!("{} {}", c.title(), pct(s.of(c)))).collect();
    parts.push(format!("unexplained {}", pct(s.unexplained)));
    parts.join(", ")
}

/// The short answer (one paragraph per run, [`summary`]), or with `detail`
/// every cause's share, its chance level, the slowest requests and the notes.
pub fn human(runs: &[Explanation], detail: bool) -> String {
    if !detail {
        return summary::paragraphs(runs);
    }
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let title = summary::title(run);
        let _ = writeln!(out, "{title}");
        for d in &run.dominant {
            let _ = writeln!(out, "  dominant: {}", summary::dominant_line(d, run.p50_us));
        }
        if let Some(c) = &run.profiler_cost {
            let _ = writeln!(
                out,
                "  profiled: {:.0} req/s, p99 {}; unprofiled ({} runs): {:.0} req/s, p99 {}; {} the noise ({:.0}%)",
                c.rps,
                summary::duration(c.p99_us),
                c.unprofiled_runs,
                c.unprofiled_rps,
                summary::duration(c.unprofiled_p99_us),
                if c.beyond_noise { "beyond" } else { "within" },
                c.noise * 100.0
            );
        }
        let events: Vec<String> = run.events.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(out, "  events known: {}", if events.is_empty() { "none".into() } else { events.join(", ") });
        let _ = writeln!(
            out,
            "  above p99 ({:.0} µs): {} slow requests: {}",
            run.slow_threshold_us,
            run.slow_requests,
            shares_line(&run.share)
        );
        let _ = writeln!(out, "    by chance (same requests at other times): {}", shares_line(&run.chance));
        let _ = writeln!(
            out,
            "  above p99.9 ({:.0} µs): {} slow requests: {}",
            run.p999.threshold_us,
            run.p999.slow_requests,
            shares_line(&run.p999.share)
        );
        if let Some(l) = &run.lock_level {
            let slow = l.slow_windows_pct.map_or("no sample".to_string(), |p| format!("{p:.0}%"));
            let _ = writeln!(
                out,
                "  lock level: working threads ({:.1} on average) blocked on futexes {slow} of their time in the slow windows, {:.0}% over the run",
                l.working_threads, l.run_pct
            );
        }
        let shifts = [
            ("frames", "share of on-CPU samples there", &run.frames),
            ("waiter frames", "share of the time blocked there", &run.waiters),
        ];
        for (what, share, frames) in shifts.into_iter().filter(|s| !s.2.is_empty()) {
            let _ = writeln!(out, "  {what} over-represented in the slow windows ({share}; over the run):");
            for f in frames {
                let _ = writeln!(out, "    {:>5.1}% ({:>5.1}%)  {}", f.slow_pct, f.run_pct, f.frame);
            }
        }
        if let Some(stack) = run.waiters.first().map(|w| &w.stack).filter(|s| !s.is_empty()) {
            let _ = writeln!(out, "    stack of the first waiter frame: {}", stack.join(" ← "));
        }
        if let Some(l) = &run.latency {
            let _ = writeln!(
                out,
                "  latency: p50 {:.0} µs, p99 {:.0} µs; without the {} requests that met a pause: p50 {:.0} µs, p99 {:.0} µs{}",
                l.all.p50_us,
                l.all.p99_us,
                l.removed,
                l.without_pauses.p50_us,
                l.without_pauses.p99_us,
                if l.exact { "" } else { " (approximate: the slow log stops above it)" }
            );
        }
        if !run.slowest.is_empty() {
            let _ = writeln!(out, "  slowest:");
        }
        for s in &run.slowest {
            let cause = s.cause.map_or("unexplained", |c| c.name());
            let _ = writeln!(out, "    {:>9.0} µs  {cause}", s.latency_us);
            let (shown, more) = s.shown_events();
            for e in shown {
                let _ = writeln!(
                    out,
                    "                  {} {:+.2} ms for {:.2} ms: {}",
                    e.kind.name(),
                    e.offset_ms,
                    e.duration_ms,
                    e.label
                );
            }
            if let Some(more) = more {
                let _ = writeln!(out, "                  … and {more}");
            }
        }
        for c in &run.clock {
            let _ = writeln!(out, "  clock: {c}");
        }
        for n in &run.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    if runs.len() > 1 {
        out.push('\n');
        out.push_str(&table(runs));
    }
    out
}

/// One line per run: p99 and the share of the tail each cause explains, the
/// table to read a GC scenario by (each app under each GC setting).
pub fn table(runs: &[Explanation]) -> String {
    let mut sorted: Vec<&Explanation> = runs.iter().collect();
    sorted.sort_by(|a, b| (&a.app, &a.knobs, a.iteration).cmp(&(&b.app, &b.knobs, b.iteration)));
    let causes = Shares::shown(&sorted.iter().map(|r| &r.share).collect::<Vec<_>>());
    let mut header: Vec<String> = ["app", "knobs", "p99 µs", "slow"].map(String::from).into();
    for c in &causes {
        header.push(c.title().to_owned());
        if *c == Cause::Gc {
            header.push("gc by chance".into());
        }
    }
    header.push("unexplained".into());
    let mut rows = vec![header];
    for r in sorted {
        let knobs: Vec<String> = r.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut row =
            vec![r.app.clone(), knobs.join(" "), format!("{:.0}", r.slow_threshold_us), r.slow_requests.to_string()];
        for c in &causes {
            row.push(pct(r.share.of(*c)));
            if *c == Cause::Gc {
                row.push(pct(r.chance.gc));
            }
        }
        row.push(pct(r.share.unexplained));
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}
