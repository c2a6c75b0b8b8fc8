//! Deciding, for each slow request, which server-side events overlapped it.
//!
//! A request's window runs from its intended send time (open-loop latency
//! counts from there) to its last response byte. An event's window is
//! widened on both sides by its clock error, and after its end by a
//! spill-over margin: a request that arrives just after a pause still waits
//! while the backlog the pause left drains. The margin is the pause's own
//! length, at least `min_spill_ns` (a server that was idle for `d` needs about
//! as long again to work off the queue when it runs near half its capacity).
//!
//! Overlap alone is not enough: a 0.3 ms collection every 10 ms overlaps most
//! 4 ms requests whatever made them slow. A cause explains a request only
//! when the delay it can account for is at least half the request's excess
//! over the median: a stop of `d` can delay a request by up to `2d` (the stop
//! and the drain after it), an event that only slows the server (a
//! concurrent GC phase, a saturated or run-queue-bound sample) by as long as
//! it overlapped the request. A packet the kernel dropped or retransmitted
//! (`kernel_drops`) can account for up to a second: the retransmission
//! timeout of a SYN. A request's own waits (for a connection, for the load
//! generator: `Event::owner`) meet that request only.

use crate::event::{Cause, Event, Kind};

/// The most a counted drop or retransmission can delay a request: the
/// initial SYN retransmission timeout.
const KERNEL_DROP_DELAY_NS: u64 = 1_000_000_000;

/// A slow request as the load generator logged it, on CLOCK_MONOTONIC
/// (the `slow_requests` entries of `stampede.load/1`).
pub use stampede_schema::load::SlowRequest as Request;

/// How generously events are matched to requests.
#[derive(Debug, Clone, Copy)]
pub struct Margins {
    /// The least spill-over after an event's end.
    pub min_spill_ns: u64,
    /// The run's median latency: a request's excess is its latency above it.
    pub median_us: f64,
    /// The share of a request's excess a cause must account for.
    pub explain_fraction: f64,
}

impl Default for Margins {
    fn default() -> Self {
        Margins { min_spill_ns: 1_000_000, median_us: 0.0, explain_fraction: 0.5 }
    }
}

/// The delay (ns) an event can have added to a request spanning `[from, to]`.
fn delay_budget(event: &Event, from: u64, to: u64) -> u64 {
    if event.kind == Kind::KernelDrops {
        // A dropped SYN is sent again after 1 s, a lost segment after the
        // retransmission timeout (200 ms or more): one drop can account
        // for up to a second, however short the interval it was counted in.
        KERNEL_DROP_DELAY_NS
    } else if event.stopped {
        2 * event.duration_ns()
    } else {
        let (s, e) = (event.start_mono_ns.saturating_sub(event.error_ns), event.end_mono_ns + event.error_ns);
        to.min(e).saturating_sub(from.max(s))
    }
}

/// One request and the events it met.
#[derive(Debug, Clone)]
pub struct Attributed<'a> {
    pub request: Request,
    /// The first cause in [`Cause`]'s precedence among the events met.
    pub cause: Option<Cause>,
    pub events: Vec<&'a Event>,
}

/// The window in which an event can have delayed a request.
pub fn influence(event: &Event, margins: Margins) -> (u64, u64) {
    let own = if event.stopped { event.duration_ns() } else { 0 };
    let spill = own.max(margins.min_spill_ns);
    (event.start_mono_ns.saturating_sub(event.error_ns), event.end_mono_ns + spill + event.error_ns)
}

/// Attributes each request; `events` need not be sorted.
pub fn attribute<'a>(requests: &[Request], events: &'a [Event], margins: Margins) -> Vec<Attributed<'a>> {
    let mut sorted: Vec<(u64, u64, &Event)> = events
        .iter()
        .map(|e| {
            let (s, t) = influence(e, margins);
            (s, t, e)
        })
        .collect();
    sorted.sort_by_key(|&(s, _, _)| s);
    // The longest influence window bounds how far back an overlapping event can start.
    let longest = sorted.iter().map(|&(s, t, _)| t - s).max().unwrap_or(0);
    requests
        .iter()
        .map(|&request| {
            let (from, to) = (request.intended_mono_ns.min(request.start_mono_ns), request.end_mono_ns);
            let first = sorted.partition_point(|&(s, _, _)| s < from.saturating_sub(longest));
            let met: Vec<&Event> = sorted[first..]
                .iter()
                .take_while(|&&(s, _, _)| s <= to)
                .filter(|&&(_, t, e)| t >= from && e.can_touch(&request))
                .map(|&(_, _, e)| e)
                .collect();
            let excess_ns = ((request.latency_us - margins.median_us).max(0.0) * 1000.0) as u64;
            let need = (excess_ns as f64 * margins.explain_fraction) as u64;
            let cause = Cause::ALL.into_iter().find(|&cause| {
                let budget: u64 =
                    met.iter().filter(|e| e.kind.cause() == cause).map(|e| delay_budget(e, from, to)).sum();
                met.iter().any(|e| e.kind.cause() == cause) && budget >= need
            });
            Attributed { request, cause, events: met }
        })
        .collect()
}

/// Shares of a set of slow requests (declared once with the document).
pub use stampede_schema::explain::Shares;

/// Each request counted once, under its first cause: the shares add up to 1.
pub fn primary_shares(attributed: &[Attributed<'_>]) -> Shares {
    count_shares(attributed, |a, cause| a.cause == Some(cause))
}

/// Each request counted under every cause it met: the shares can add up
/// to more than 1, and say how often each cause was present at all.
pub fn any_shares(attributed: &[Attributed<'_>]) -> Shares {
    count_shares(attributed, |a, cause| a.events.iter().any(|e| e.kind.cause() == cause))
}

fn count_shares(attributed: &[Attributed<'_>], has: impl Fn(&Attributed<'_>, Cause) -> bool) -> Shares {
    let n = attributed.len();
    if n == 0 {
        return Shares::default();
    }
    let share = |cause| attributed.iter().filter(|a| has(a, cause)).count() as f64 / n as f64;
    Shares {
        gc: share(Cause::Gc),
        pause: share(Cause::Pause),
        runqueue: share(Cause::Runqueue),
        cpu_saturation: share(Cause::CpuSaturation),
        lock: share(Cause::Lock),
        blocked_io: share(Cause::BlockedIo),
        send_delay: share(Cause::SendDelay),
        kernel_drops: share(Cause::KernelDrops),
        connection_busy: share(Cause::ConnectionBusy),
        connection_setup: share(Cause::ConnectionSetup),
        function: share(Cause::Function),
        waiting: share(Cause::Waiting),
        unexplained: attributed.iter().filter(|a| a.cause.is_none()).count() as f64 / n as f64,
    }
}

/// The shares that the same slow requests would get by chance: each one
/// moved by the same offset to 64 evenly spread places in `span` (wrapping
/// round), attributed again, the shares averaged. When events cover much of
/// the time, a cause meets many requests whatever their latency; a share
/// well above its chance level is evidence, one near it is not. A moved
/// request is no longer the owner of its own waits, so their chance level is
/// 0: a request's wait is measured on that request, not met by coincidence.
pub fn chance(requests: &[Request], events: &[Event], margins: Margins, span: (u64, u64)) -> Shares {
    const PLACES: u64 = 64;
    let (from, to) = span;
    let width = to.saturating_sub(from);
    if requests.is_empty() || width == 0 {
        return Shares::default();
    }
    let mut total = Shares::default();
    for k in 1..=PLACES {
        let shift = width * k / (PLACES + 1);
        let moved: Vec<Request> = requests
            .iter()
            .map(|r| {
                let wrap = |t: u64| from + (t.saturating_sub(from) + shift) % width;
                let intended = wrap(r.intended_mono_ns);
                let length = r.end_mono_ns.saturating_sub(r.intended_mono_ns);
                let sent = r.start_mono_ns.saturating_sub(r.intended_mono_ns);
                Request {
                    intended_mono_ns: intended,
                    start_mono_ns: intended + sent,
                    end_mono_ns: intended + length,
                    ..*r
                }
            })
            .collect();
        total.add_scaled(&primary_shares(&attribute(&moved, events, margins)), 1.0 / PLACES as f64);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(intended_ms: u64, end_ms: u64) -> Request {
        Request {
            latency_us: ((end_ms - intended_ms) * 1000) as f64,
            intended_mono_ns: intended_ms * 1_000_000,
            start_mono_ns: intended_ms * 1_000_000,
            end_mono_ns: end_ms * 1_000_000,
            ..Request::default()
        }
    }

    fn event(start_ms: u64, end_ms: u64, kind: Kind) -> Event {
        Event {
            start_mono_ns: start_ms * 1_000_000,
            end_mono_ns: end_ms * 1_000_000,
            kind,
            label: kind.name().into(),
            stopped: true,
            error_ns: 0,
            owner: None,
        }
    }

    #[test]
    fn during_spill_over_and_far_away() {
        let events = [event(100, 110, Kind::Gc)];
        let requests = [
            request(105, 112), // arrived during the pause
            request(115, 119), // arrived after it, while the backlog drained (spill = 10 ms)
            request(125, 130), // after the spill-over: not the pause's doing
            request(90, 99),   // ended before it
        ];
        let causes: Vec<_> = attribute(&requests, &events, Margins::default()).iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::Gc), Some(Cause::Gc), None, None]);
    }

    #[test]
    fn precedence_and_shares() {
        let mut saturated = event(0, 1000, Kind::CpuSaturation);
        saturated.stopped = false;
        let events = [saturated, event(100, 101, Kind::Gc), event(500, 501, Kind::Runqueue)];
        let requests = [request(100, 103), request(500, 502), request(800, 805), request(2000, 2005)];
        let attributed = attribute(&requests, &events, Margins::default());
        let causes: Vec<_> = attributed.iter().map(|a| a.cause).collect();
        assert_eq!(causes, [Some(Cause::Gc), Some(Cause::Runqueue), Some(Cause::CpuSaturation), None]);
        let primary = primary_shares(&attributed);
        assert_eq!(
            (primary.gc, primary.runqueue, primary.cpu_saturation, primary.unexplained),
            (0.25, 0.25, 0.25, 0.25)
        );
        assert_eq!(any_shares(&attributed).cpu_saturation, 0.75);
    }

    #[test]
    fn chance_is_low_for_rare_events_and_high_for_dense_ones() {
        let requests: Vec<Request> = (0..10).map(|i| request(1000 + i * 7, 1000 + i * 7 + 5)).collect();
        let rare = [event(1003, 1010, Kind::Gc)];
        let span = (0, 10_000 * 1_000_000);
        assert!(chance(&requests, &rare, Margins::default(), span).gc < 0.01);
        let dense: Vec<Event> = (0..1000).map(|i| event(i * 10, i * 10 + 4, Kind::Gc)).collect();
        assert!(chance(&requests, &dense, Margins::default(), span).gc > 0.9);
    }

    #[test]
    fn a_short_event_does_not_explain_a_long_delay() {
        // A 0.3 ms stop inside a 10 ms request: it accounts for 0.6 ms of 9.5.
        let mut short = event(100, 100, Kind::Gc);
        short.end_mono_ns += 300_000;
        let margins = Margins { median_us: 500.0, ..Margins::default() };
        let r = [request(98, 108)];
        let a = attribute(&r, std::slice::from_ref(&short), margins);
        assert_eq!(a[0].cause, None);
        assert_eq!(a[0].events.len(), 1, "it is still listed as met");
        // A concurrent phase that slowed the server for 6 of those 10 ms does.
        let mut slow = event(100, 106, Kind::Gc);
        slow.stopped = false;
        assert_eq!(attribute(&r, std::slice::from_ref(&slow), margins)[0].cause, Some(Cause::Gc));
    }

    #[test]
    fn clock_error_widens_the_window() {
        let mut e = event(100, 101, Kind::Gc);
        let r = [request(97, 99)];
        assert_eq!(attribute(&r, std::slice::from_ref(&e), Margins::default())[0].cause, None);
        e.error_ns = 2_000_000;
        assert_eq!(attribute(&r, std::slice::from_ref(&e), Margins::default())[0].cause, Some(Cause::Gc));
    }
}
