//! The short answer `stampede explain` prints by default: one paragraph per
//! run, a few lines each, that says what raises latency for every request
//! (the dominant levels), which causes explain the requests above p99
//! beyond their chance level, or in one line that nothing stands out. The
//! per-cause detail (render.rs) is behind `--detail`; both read the same
//! [`Explanation`].

use std::fmt::Write;

use stampede_schema::explain::{Cause, Dominant, Explanation};

/// A latency in µs, in the unit people read it in.
pub fn duration(us: f64) -> String {
    match us {
        x if x >= 10_000.0 => format!("{:.0} ms", x / 1000.0),
        x if x >= 1000.0 => format!("{:.1} ms", x / 1000.0),
        x => format!("{x:.0} µs"),
    }
}

/// The run's name: app, knobs, path and iteration.
pub fn title(run: &Explanation) -> String {
    let mut title = run.app.clone();
    let knobs: Vec<String> = run.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !knobs.is_empty() {
        let _ = write!(title, " [{}]", knobs.join(" "));
    }
    if let Some(path) = &run.path {
        let _ = write!(title, " {path}");
    }
    if let Some(it) = run.iteration {
        let _ = write!(title, " #{it}");
    }
    title
}

/// One line a user can act on: what every request waits for, its level, and
/// what a typical request took.
pub fn dominant_line(d: &Dominant, p50_us: f64) -> String {
    let level = d.level_pct;
    let what = match d.cause {
        Cause::Lock => {
            format!("requests queue on a lock: with cores to spare, the working threads spend {level:.0}% of their serving time blocked on futexes")
        }
        Cause::Runqueue => format!(
            "every request waits for a CPU: the working threads spend {level:.0}% of their serving time runnable but not running"
        ),
        Cause::CpuSaturation => {
            format!("the server's CPU is at its limit: it used {level:.0}% of the cores it may use, on average")
        }
        Cause::Gc => format!("the runtime's pauses hold every request up: it was stopped {level:.0}% of the time"),
        other => format!("{}: {level:.0}%", other.title()),
    };
    let follows = match d.latency_correlation {
        Some(r) if r >= 0.5 => format!(" (p99 rises with it second by second, r = {r:.2})"),
        _ => String::new(),
    };
    format!("{what}; p50 {}{follows}", duration(p50_us))
}

/// The causes above chance among the requests above p99, with their chance levels.
fn above_chance_line(run: &Explanation) -> String {
    let parts: Vec<String> = run
        .above_chance
        .iter()
        .map(|&c| {
            let name = match (c, run.frames.first(), run.waiters.first()) {
                (Cause::Function, Some(f), _) => format!("{} on the CPU", f.frame),
                (Cause::Waiting, _, Some(w)) => format!("threads waiting in {}", w.frame),
                _ => c.title().to_owned(),
            };
            format!("{name} {:.0}% (by chance {:.0}%)", run.share.of(c) * 100.0, run.chance.of(c) * 100.0)
        })
        .collect();
    format!(
        "above p99 ({}, {} requests): {}; unexplained {:.0}%",
        duration(run.slow_threshold_us),
        run.slow_requests,
        parts.join(", "),
        run.share.unexplained * 100.0
    )
}

/// One paragraph per run, separated by blank lines.
pub fn paragraphs(runs: &[Explanation]) -> String {
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "{}: p50 {}, p99 {}", title(run), duration(run.p50_us), duration(run.slow_threshold_us));
        for d in &run.dominant {
            let _ = writeln!(out, "  {}", capitalised(&dominant_line(d, run.p50_us)));
        }
        if run.slow_requests == 0 {
            let _ = writeln!(out, "  No slow request was logged: run the load with a slow log to explain the tail.");
        } else if !run.above_chance.is_empty() {
            let _ = writeln!(out, "  {}", capitalised(&above_chance_line(run)));
        } else if run.dominant.is_empty() {
            let _ = writeln!(
                out,
                "  Nothing stands out: no level is high and no cause explains the {} requests above p99 beyond chance.",
                run.slow_requests
            );
        } else {
            let _ = writeln!(out, "  No other cause explains the requests above p99 beyond chance.");
        }
        if let Some(f) = run.frames.first() {
            let _ = writeln!(
                out,
                "  On the CPU in the slow windows: {} {:.0}% of the samples ({:.0}% over the run).",
                f.frame, f.slow_pct, f.run_pct
            );
        }
        if let Some(w) = run.waiters.first() {
            let _ = writeln!(
                out,
                "  Off the CPU in the slow windows: threads waiting in {} {:.0}% of the blocked time ({:.0}% over the run){}.",
                w.frame,
                w.slow_pct,
                w.run_pct,
                if w.stack.is_empty() { String::new() } else { format!("; stack: {}", w.stack.join(" ← ")) }
            );
        }
        if let Some(c) = run.profiler_cost.filter(|c| c.beyond_noise) {
            let _ = writeln!(
                out,
                "  Warning: profiling changed this run: {:.0} req/s and p99 {} against {:.0} req/s and p99 {} unprofiled; read its causes with care.",
                c.rps,
                duration(c.p99_us),
                c.unprofiled_rps,
                duration(c.unprofiled_p99_us)
            );
        }
        for n in run.notes.iter().filter(|n| n.starts_with("stampede run marked") || n.starts_with("connect errors")) {
            let _ = writeln!(out, "  Note: {n}.");
        }
    }
    out
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::explain::{Shares, Tier};

    fn run() -> Explanation {
        let tier = Tier {
            threshold_us: 0.0,
            slow_requests: 0,
            expected: 0,
            share: Shares::default(),
            present: Shares::default(),
            chance: Shares::default(),
        };
        Explanation {
            app: "py".into(),
            knobs: Default::default(),
            profile: None,
            path: Some("/".into()),
            iteration: Some(1),
            requests: 1000,
            p50_us: 47_000.0,
            slow_threshold_us: 93_000.0,
            slow_requests: 10,
            share: Shares { unexplained: 1.0, ..Shares::default() },
            present: Shares::default(),
            chance: Shares::default(),
            p999: tier,
            latency: None,
            slowest: Vec::new(),
            events: Default::default(),
            lock_level: None,
            frames: Vec::new(),
            waiters: Vec::new(),
            dominant: Vec::new(),
            profiler_cost: None,
            above_chance: Vec::new(),
            clock: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn a_steady_lock_is_one_line_to_act_on() {
        let mut r = run();
        r.dominant = vec![Dominant { cause: Cause::Lock, level_pct: 47.2, latency_correlation: None }];
        let text = paragraphs(&[r]);
        assert!(
            text.contains("Requests queue on a lock: with cores to spare, the working threads spend 47% of their serving time blocked on futexes; p50 47 ms"),
            "{text}"
        );
        assert!(text.lines().count() <= 3, "{text}");
    }

    #[test]
    fn causes_above_chance_are_named_with_their_chance_and_nothing_else_says_so_in_one_line() {
        let mut r = run();
        r.share = Shares { connection_setup: 0.6, lock: 0.3, unexplained: 0.1, ..Shares::default() };
        r.chance = Shares { lock: 0.25, ..Shares::default() };
        r.above_chance = r.share.above_chance(&r.chance);
        let text = paragraphs(&[r]);
        assert!(text.contains("waiting for a connection to open 60% (by chance 0%)"), "{text}");
        assert!(!text.contains("lock"), "30% against 25% by chance is no evidence: {text}");
        let quiet = paragraphs(&[run()]);
        assert_eq!(quiet.lines().count(), 2, "{quiet}");
        assert!(quiet.contains("Nothing stands out"), "{quiet}");
    }
}
