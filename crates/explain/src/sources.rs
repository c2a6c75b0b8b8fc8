//! Building the [`Source`] of each run to explain, from either input: the
//! runs of a results file, with the events `stampede run` stored and the
//! probe's samples turned into CPU-saturation and run-queue events; or one
//! load document with event logs parsed beside it. A run also brings the
//! working threads' futex level (microstates) and the over-represented
//! frames of its slow-window profile (`run --profile`).

use crate::event::{Event, Kind};
use crate::events::Parsed;
use crate::explanation::{FrameShift, Source};
use crate::input;
use crate::{blocked, dominant, parking, profiled, windows};
use stampede_schema::run::{ResultsDoc, RunRecord};
use stampede_schema::LoadResult;

/// Over-represented frames of the slow-window profile shown by explain.
const TOP_FRAMES: usize = 5;

/// One source per run that has a measured load phase; a profiled run is
/// compared with the unprofiled runs like it in `doc` and in `unprofiled`.
pub fn from_results(doc: &ResultsDoc, unprofiled: &[RunRecord]) -> Vec<Source> {
    let others: Vec<&RunRecord> = doc.runs.iter().chain(unprofiled).collect();
    doc.runs
        .iter()
        .filter_map(|run| {
            let mut source = from_run(doc, run)?;
            source.profiler_cost = profiled::cost(run, &others);
            Some(source)
        })
        .collect()
}

/// The source of one run of `doc`, or `None` when it has no measured load.
pub fn from_run(doc: &ResultsDoc, run: &RunRecord) -> Option<Source> {
    // The open-loop latency phase, when the run has one with a slow log: its
    // latency counts from intended send times and its requests are the ones
    // the run's latency figures come from.
    let latency_phase = run.latency.as_ref().filter(|l| !l.slow_requests.is_empty());
    let load = latency_phase.or(run.load.as_ref())?.clone();
    let mut events = input::runtime_events(run);
    let mut clock = Vec::new();
    if !events.is_empty() {
        clock.push("runtime events as stored by stampede run".to_string());
    }
    let samples = &run.server.samples;
    match (run.clock.measured_start_mono_ns, input::server_cores(doc)) {
        (Some(t0), Some(cores)) if !samples.is_empty() => {
            let measured_s = run.load.as_ref().map_or(0.0, |l| l.duration_s);
            let listener = windows::Listener { drops: run.listen_drops, measured_s };
            events.extend(windows::events(samples, t0, cores, listener));
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
    let mut notes = Vec::new();
    // Futex waits without requests queued behind them, with cores to
    // spare, are idle threads parked, not a lock (parking.rs); judged on
    // the measured load, the phase the microstates cover.
    let covered = run.load.as_ref().unwrap_or(&load);
    let no_lock = micro.and_then(|m| parking::no_lock(m, covered, input::server_cores(doc)));
    if let (Some(t0), Some(m)) = (run.clock.measured_start_mono_ns, micro) {
        events.extend(blocked::events(&m.samples, t0, no_lock.is_none()));
        let slow: Vec<_> = load.slow_requests.iter().filter(|r| r.latency_us > load.latency_us.p99).copied().collect();
        lock_level = blocked::lock_level(&m.samples, t0, &slow);
        clock.push("thread microstates placed from the measured phase's start".to_string());
    }
    let window = run.cpu_profile.as_ref().and_then(|p| p.slow_window.as_ref());
    let top = |shifts: &[FrameShift]| -> Vec<FrameShift> {
        shifts.iter().filter(|f| f.slow_pct > f.run_pct).take(TOP_FRAMES).cloned().collect()
    };
    let frames = window.map(|w| top(&w.over_represented)).unwrap_or_default();
    let waiters = window.map(|w| top(&w.blocked_over_represented)).unwrap_or_default();
    // The most over-represented frame is a cause of its own, request by
    // request, where it ran: the frames that call it share its share and
    // follow it in the list, so only the first is used. The same for the
    // off-CPU profile's first frame, where threads waited under it.
    if let Some(top) = frames.first() {
        events.extend(bursts(top, Kind::Function, "on the CPU", "samples"));
    }
    if let Some(top) = waiters.first() {
        events.extend(bursts(top, Kind::Waiting, "blocked under", "intervals"));
    }
    // The levels over the phase explained: the measured load (from t_s = 0
    // to its duration), or, for the latency phase that follows it, every
    // sample from t_s = 0 on.
    let sampled_s = samples.iter().map(|s| s.t_s).fold(0.0, f64::max);
    let duration_s = if latency_phase.is_some() { sampled_s } else { load.duration_s };
    let dominant = match run.clock.measured_start_mono_ns {
        Some(t0_mono_ns) => dominant::dominant(&dominant::Levels {
            states: micro.map_or(&[], |m| &m.samples),
            samples,
            cores: input::server_cores(doc),
            events: &events,
            t0_mono_ns,
            duration_s,
            // The latency phase's seconds count from its own start, not t_s = 0.
            timeline: if latency_phase.is_some() { &[] } else { &load.timeline },
            no_lock: no_lock.is_some(),
        }),
        None => Vec::new(),
    };
    events.extend(blocked::send_delays(&load.slow_requests, granularity_us(&load)));
    match (run.valid, &run.invalid_reason) {
        (false, Some(reason)) => notes.push(format!("stampede run marked this run invalid: {reason}")),
        (false, None) => notes.push("stampede run marked this run invalid".to_string()),
        _ => {}
    }
    notes.extend(no_lock);
    notes.extend(backlog_note(run, &load, latency_phase.is_some()));
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
        waiters,
        dominant,
        profiler_cost: None,
    })
}

/// A frame's bursts (when it was on the CPU, or threads were blocked under
/// it) as events that slow the server without stopping it.
fn bursts<'a>(f: &'a FrameShift, kind: Kind, what: &'a str, unit: &'a str) -> impl Iterator<Item = Event> + 'a {
    f.bursts.iter().map(move |b| Event {
        start_mono_ns: b.start_mono_ns,
        end_mono_ns: b.end_mono_ns,
        kind,
        label: match kind {
            Kind::Function => format!("{} {what} ({} {unit})", f.frame, b.samples),
            _ => format!("{what} {} ({} {unit})", f.frame, b.samples),
        },
        stopped: false,
        error_ns: 0,
        owner: None,
    })
}

/// Connect errors that came with a full accept queue are the server's: its
/// listen backlog was too short for the connections opened at once, and the
/// kernel dropped their SYNs. Says so when the server's own listen socket
/// dropped connection attempts in the phase explained (`listen_drops`, as
/// `stampede run` judges it); the host's `net_drops` count every program's
/// listeners and are never taken as the server's.
fn backlog_note(run: &RunRecord, load: &LoadResult, latency_phase: bool) -> Option<String> {
    let connect = load.errors.connect;
    let own = if latency_phase { run.listen_drops.after } else { run.listen_drops.measured };
    let dropped = own.filter(|d| *d > 0)?;
    (connect > 0).then(|| {
        format!(
            "connect errors are the server's: the {connect} came with its own listen socket dropping {dropped} connection attempts (a backlog too short for the connections), not with the load generator"
        )
    })
}

/// The open loop's designed wait for its next wake-up (0 in closed loop).
fn granularity_us(load: &LoadResult) -> f64 {
    load.open.as_ref().map_or(0.0, |o| o.wake_granularity_us)
}

/// A load document explained with parsed event logs.
pub fn from_load(app: &str, load: LoadResult, logs: Vec<(String, Parsed)>) -> Source {
    let path = load.url.split_once("://").and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()));
    let events = blocked::send_delays(&load.slow_requests, granularity_us(&load));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A results document of one run of 2 s with 12 connect errors, during
    /// which the host's counters saw 686 accept-queue overflows; its own
    /// listener's drops in the measured phase are `own`.
    fn doc(own: serde_json::Value) -> ResultsDoc {
        let samples: Vec<_> = (0..20)
            .map(|i| {
                let mut s = json!({"t_s": f64::from(i) * 0.1, "cpu_cores": 0.3});
                if i == 5 {
                    s["net_drops"] = json!({"listen_overflows": 686, "listen_drops": 686});
                }
                s
            })
            .collect();
        serde_json::from_value(json!({
            "environment": {"cores": 2},
            "runs": [{
                "app": "healthy",
                "load": {"duration_s": 2.0, "errors": {"connect": 12}},
                "server": {"samples": samples},
                "clock": {"measured_start_mono_ns": 1_000_000_000u64},
                "listen_drops": {"measured": own},
            }],
        }))
        .unwrap()
    }

    fn explained(own: serde_json::Value) -> Source {
        let doc = doc(own);
        from_run(&doc, &doc.runs[0]).unwrap()
    }

    fn blames_the_accept_queue(source: &Source) -> bool {
        source.notes.iter().any(|n| n.contains("connect errors are the server's"))
            || source.events.iter().any(|e| e.kind == Kind::KernelDrops)
    }

    #[test]
    fn the_hosts_overflowing_listeners_are_not_the_servers_accept_queue() {
        for own in [json!(0), json!(null)] {
            let source = explained(own.clone());
            assert!(!blames_the_accept_queue(&source), "own drops {own}: {:?} {:?}", source.notes, source.events);
        }
    }

    #[test]
    fn the_servers_own_listener_dropping_connections_is_named() {
        let source = explained(json!(40));
        let note = source.notes.iter().find(|n| n.contains("connect errors are the server's"));
        assert!(
            note.is_some_and(|n| n.contains("the 12 came with its own listen socket dropping 40")),
            "{:?}",
            source.notes
        );
        assert!(source.events.iter().any(|e| e.kind == Kind::KernelDrops), "{:?}", source.events);
    }
}
