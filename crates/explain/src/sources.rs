//! Building the [`Source`] of each run to explain, from either input: the
//! runs of a results file, with the events `stampede run` stored and the
//! probe's samples turned into CPU-saturation and run-queue events; or one
//! load document with event logs parsed beside it. A run also brings the
//! working threads' futex level (microstates) and the over-represented
//! frames of its slow-window profile (`run --profile`).

use crate::events::Parsed;
use crate::explanation::Source;
use crate::input;
use crate::{blocked, windows};
use stampede_schema::run::{ResultsDoc, RunRecord};
use stampede_schema::LoadResult;

/// Over-represented frames of the slow-window profile shown by explain.
const TOP_FRAMES: usize = 5;

/// One source per run that has a measured load phase.
pub fn from_results(doc: &ResultsDoc) -> Vec<Source> {
    doc.runs.iter().filter_map(|run| from_run(doc, run)).collect()
}

/// The source of one run of `doc`, or `None` when it has no measured load.
pub fn from_run(doc: &ResultsDoc, run: &RunRecord) -> Option<Source> {
    let load = run.load.clone()?;
    let mut events = input::runtime_events(run);
    let mut clock = Vec::new();
    if !events.is_empty() {
        clock.push("runtime events as stored by stampede run".to_string());
    }
    let samples = &run.server.samples;
    match (run.clock.measured_start_mono_ns, input::server_cores(doc)) {
        (Some(t0), Some(cores)) if !samples.is_empty() => {
            events.extend(windows::events(samples, t0, cores));
            clock.push(format!(
                "probe samples placed from the measured phase's start (CLOCK_MONOTONIC {t0} ns), {cores} server cores"
            ));
        }
        (None, _) if !samples.is_empty() => {
            clock.push("probe samples left out: the run has no clock.measured_start_mono_ns anchor".to_string());
        }
        _ => {}
    }
    let micro = run.server.microstates.as_ref().filter(|m| !m.samples.is_empty());
    let mut lock_level = None;
    if let (Some(t0), Some(m)) = (run.clock.measured_start_mono_ns, micro) {
        events.extend(blocked::events(&m.samples, t0));
        let slow: Vec<_> = load.slow_requests.iter().filter(|r| r.latency_us > load.latency_us.p99).copied().collect();
        lock_level = blocked::lock_level(&m.samples, t0, &slow);
        clock.push("thread microstates placed from the measured phase's start".to_string());
    }
    let frames = run
        .cpu_profile
        .as_ref()
        .and_then(|p| p.slow_window.as_ref())
        .map(|w| w.over_represented.iter().filter(|f| f.slow_pct > f.run_pct).take(TOP_FRAMES).cloned().collect())
        .unwrap_or_default();
    events.extend(blocked::send_delays(&load.slow_requests));
    let notes = match (run.valid, &run.invalid_reason) {
        (false, Some(reason)) => vec![format!("stampede run marked this run invalid: {reason}")],
        (false, None) => vec!["stampede run marked this run invalid".to_string()],
        _ => Vec::new(),
    };
    Some(Source {
        notes,
        app: run.app.clone(),
        knobs: run.knobs.clone(),
        profile: Some(run.profile.clone()).filter(|p| !p.is_empty()),
        path: Some(run.path.clone()).filter(|p| !p.is_empty()),
        iteration: (run.iteration > 0).then_some(u64::from(run.iteration)),
        load,
        events,
        clock,
        lock_level,
        frames,
    })
}

/// A load document explained with parsed event logs.
pub fn from_load(app: &str, load: LoadResult, logs: Vec<(String, Parsed)>) -> Source {
    let path = load.url.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()));
    let events = blocked::send_delays(&load.slow_requests);
    let mut source = Source { app: app.to_string(), path, load, events, ..Source::default() };
    for (name, parsed) in logs {
        source.clock.push(format!(
            "{name}: {} ({} events, ±{:.1} ms)",
            parsed.clock,
            parsed.events.len(),
            parsed.clock_error_ns as f64 / 1e6
        ));
        source.events.extend(parsed.events);
    }
    source
}
