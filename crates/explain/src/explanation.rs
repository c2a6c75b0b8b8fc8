//! One run explained: its slow requests above p99 and p99.9, the share of
//! each cause, the latency with and without the requests that met a pause,
//! and the slowest requests with the events they met. This is the data
//! `stampede explain` prints, as text or as JSON (`stampede.explain/1`).

use std::collections::BTreeMap;

use crate::attribution::{any_shares, attribute, chance, primary_shares, Attributed, Margins, Request};
use crate::event::{Cause, Event};
use crate::latency;
use stampede_schema::LoadResult;

/// Everything needed to explain one run.
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub app: String,
    pub knobs: BTreeMap<String, String>,
    pub profile: Option<String>,
    pub path: Option<String>,
    pub iteration: Option<u64>,
    pub load: LoadResult,
    pub events: Vec<Event>,
    /// How each event source's clock was aligned.
    pub clock: Vec<String>,
    /// Caveats from the input (an invalid run, say).
    pub notes: Vec<String>,
    /// The working threads' futex share (from microstates).
    pub lock_level: Option<LockLevel>,
    /// Over-represented frames of the slow-window profile.
    pub frames: Vec<FrameShift>,
    /// Over-represented waiter frames of its off-CPU time.
    pub waiters: Vec<FrameShift>,
    /// What raises latency for every request (from the probe's levels).
    pub dominant: Vec<Dominant>,
    /// A profiled run against the same run unprofiled.
    pub profiler_cost: Option<ProfilerCost>,
}

/// The document's types, declared once in stampede-schema.
pub use stampede_schema::explain::{
    Dominant, Explanation, FrameShift, LockLevel, Met, ProfilerCost, Slowest, Tier, SCHEMA,
};

struct Context<'a> {
    events: &'a [Event],
    margins: Margins,
    span: (u64, u64),
}

fn tier(attributed: &[Attributed<'_>], threshold_us: f64, expected: u64, cx: &Context<'_>) -> Tier {
    let above: Vec<Attributed<'_>> =
        attributed.iter().filter(|a| a.request.latency_us > threshold_us).cloned().collect();
    let requests: Vec<Request> = above.iter().map(|a| a.request).collect();
    Tier {
        threshold_us,
        slow_requests: above.len(),
        expected,
        share: primary_shares(&above),
        present: any_shares(&above),
        chance: chance(&requests, cx.events, cx.margins, cx.span),
    }
}

/// The stretch of time the slow requests were drawn from: from the first to
/// the last logged one, widened to at least a second.
fn span(requests: &[Request]) -> (u64, u64) {
    let from = requests.iter().map(|r| r.intended_mono_ns).min().unwrap_or(0);
    let to = requests.iter().map(|r| r.end_mono_ns).max().unwrap_or(0);
    let short = 1_000_000_000u64.saturating_sub(to.saturating_sub(from));
    (from.saturating_sub(short / 2), to + short / 2)
}

pub fn explain(source: &Source, margins: Margins) -> Explanation {
    let load = &source.load;
    let lat = load.latency_us;
    let margins = Margins { median_us: lat.p50, ..margins };
    let attributed = attribute(&load.slow_requests, &source.events, margins);
    let expected = |q: f64| (load.requests as f64 * (1.0 - q)).floor() as u64;
    let cx = Context { events: &source.events, margins, span: span(&load.slow_requests) };
    let p99 = tier(&attributed, lat.p99, expected(0.99), &cx);
    let p999 = tier(&attributed, lat.p999, expected(0.999), &cx);

    let mut notes = source.notes.clone();
    if load.slow_requests.is_empty() {
        notes.push("no slow requests were logged: run the load with --slow-log N (N ≥ 1% of the requests)".to_string());
    } else if let Some(fastest) = load.slow_requests.iter().map(|r| r.latency_us).reduce(f64::min) {
        if fastest > lat.p99 {
            notes.push(format!(
                "the slow log holds the {} slowest requests, all above p99 ({:.0} µs); about {} were above it: raise --slow-log to attribute them all",
                load.slow_requests.len(),
                lat.p99,
                p99.expected
            ));
        }
    }
    if load.mode == "closed" {
        notes.push("closed-loop run: latency is measured from the send, so requests queued behind a pause are undercounted (coordinated omission); prefer --rate".to_string());
    }
    if source.events.iter().all(|e| e.kind.cause() != Cause::Gc) {
        notes.push(
            "no GC or safepoint event is known for this run (no event log, or no collection happened)".to_string(),
        );
    }

    let paused = |a: &Attributed<'_>| matches!(a.cause, Some(Cause::Gc | Cause::Pause));
    let removed: Vec<f64> = attributed.iter().filter(|a| paused(a)).map(|a| a.request.latency_us).collect();
    let logged_min = load.slow_requests.iter().map(|r| r.latency_us).fold(f64::INFINITY, f64::min);
    let latency = latency::decode(&load.histogram).and_then(|h| latency::with_without(&h, &removed, logged_min));

    let mut slowest: Vec<&Attributed<'_>> = attributed.iter().collect();
    slowest.sort_by(|a, b| b.request.latency_us.total_cmp(&a.request.latency_us));
    let slowest = slowest.into_iter().take(5).map(|a| slowest_row(a)).collect();

    let mut events = BTreeMap::new();
    for e in &source.events {
        *events.entry(e.kind.name().to_owned()).or_insert(0) += 1;
    }
    Explanation {
        app: source.app.clone(),
        knobs: source.knobs.clone(),
        profile: source.profile.clone(),
        path: source.path.clone(),
        iteration: source.iteration,
        requests: load.requests,
        p50_us: lat.p50,
        above_chance: p99.share.above_chance(&p99.chance),
        dominant: source.dominant.clone(),
        profiler_cost: source.profiler_cost,
        slow_threshold_us: p99.threshold_us,
        slow_requests: p99.slow_requests,
        share: p99.share,
        present: p99.present,
        chance: p99.chance,
        p999,
        latency,
        slowest,
        events,
        lock_level: source.lock_level,
        frames: source.frames.clone(),
        waiters: source.waiters.clone(),
        clock: source.clock.clone(),
        notes,
    }
}

fn slowest_row(a: &Attributed<'_>) -> Slowest {
    let r: &Request = &a.request;
    Slowest {
        latency_us: r.latency_us,
        intended_mono_ns: r.intended_mono_ns,
        cause: a.cause,
        events: a
            .events
            .iter()
            .map(|e| Met {
                kind: e.kind,
                label: e.label.clone(),
                offset_ms: (e.start_mono_ns as f64 - r.intended_mono_ns as f64) / 1e6,
                duration_ms: e.duration_ns() as f64 / 1e6,
            })
            .collect(),
    }
}
