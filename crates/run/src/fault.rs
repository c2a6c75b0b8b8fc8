//! Whose fault an invalid run is. A load's own rules (`LoadResult::
//! invalid_reasons`, stampede-schema) see connect errors and a generator
//! that fell behind its schedule, and word them as the generator's trouble.
//! When the server's listen socket overflowed in the same phase (the
//! probe's `net_drops`: accept-queue overflows and dropped SYNs), the
//! connect errors are the server's (its backlog was too short for the
//! connections opened at once), and so are sends made late by connections
//! still opening, unless the generator's threads were busy (then it lacked
//! CPU as well, and the reason stays its own). This module rewords those
//! reasons and says which are the server's.

use stampede_schema::process::Sample;
use stampede_schema::LoadResult;

/// A generator whose threads were busier than this lacked CPU itself
/// (`open.generator_busy`: the share of a thread's time on or waiting for
/// a CPU; the load crate's own saturation rule uses the same 0.9).
const GENERATOR_BUSY: f64 = 0.9;

/// The server's listen socket's trouble in a phase, from the probe's samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Backlog {
    pub overflows: u64,
    pub dropped: u64,
}

impl Backlog {
    /// The counts of the samples in `(from_s, to_s]` (seconds from the
    /// measured phase's start); `None` when there were none.
    pub fn of(samples: &[Sample], from_s: f64, to_s: f64) -> Option<Backlog> {
        let b = samples.iter().filter(|s| s.t_s > from_s && s.t_s <= to_s).fold(Backlog::default(), |b, s| Backlog {
            overflows: b.overflows + s.net_drops.listen_overflows,
            dropped: b.dropped + s.net_drops.listen_drops,
        });
        (b.overflows + b.dropped > 0).then_some(b)
    }

    fn said(&self) -> String {
        format!("the server's accept queue overflowed ({} SYNs dropped)", self.dropped.max(self.overflows))
    }
}

/// The load's invalid reasons, those the server's backlog caused said so
/// and marked `true` (the server's).
pub fn reasons(load: &LoadResult, backlog: Option<Backlog>) -> Vec<(String, bool)> {
    let mut found = reasons_of_load(load, backlog);
    stopped_answering_first(load, &mut found);
    found
}

/// A server that stopped answering (`LoadResult::stalled`) is the server's
/// fault, whatever else went wrong, and is said first.
fn stopped_answering_first(load: &LoadResult, found: &mut Vec<(String, bool)>) {
    let Some(said) = load.stalled.map(|s| s.said()) else { return };
    found.retain(|(r, _)| *r != said);
    found.insert(0, (said, true));
}

fn reasons_of_load(load: &LoadResult, backlog: Option<Backlog>) -> Vec<(String, bool)> {
    let plain = load.invalid_reasons();
    let Some(b) = backlog else { return plain.into_iter().map(|r| (r, false)).collect() };
    let socket = format!("{} socket errors", load.socket_errors());
    let connect_only = load.errors.connect > 0 && load.errors.connect == load.socket_errors();
    let generator_busy = load.open.as_ref().is_some_and(|o| o.generator_busy > GENERATOR_BUSY);
    plain
        .into_iter()
        .map(|reason| {
            if reason == socket && connect_only {
                (format!("{} connect errors: {}", load.errors.connect, b.said()), true)
            } else if load.saturated() && !generator_busy && reason.starts_with("load generator saturated") {
                let late = "requests were sent late waiting for connections to open, not for the load generator's CPU";
                (format!("{}: {late}", b.said()), true)
            } else {
                (reason, false)
            }
        })
        .collect()
}

/// Whether every reason a run is invalid for (`invalid_reason`, joined by
/// "; ") is one of `server`'s.
pub fn all_the_servers(invalid_reason: Option<&str>, server: &[String]) -> bool {
    invalid_reason.is_some_and(|r| r.split("; ").all(|part| server.iter().any(|s| s == part)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::process::NetDrops;

    /// An open-loop load with `connect` connect errors, behind its schedule or not.
    fn load(connect: u64, saturated: bool, generator_busy: f64) -> LoadResult {
        let mut doc = serde_json::to_value(crate::record::tests::fake_load(200.0, connect)).unwrap();
        doc["errors"]["status"] = 0.into();
        let mut load: LoadResult = serde_json::from_value(doc).unwrap();
        // The open-loop fields are flattened into the document: set them on the type.
        load.open = Some(
            serde_json::from_value(serde_json::json!({
                "target_rate": 200.0, "achieved_rate": 150.0, "service_time_us": load.latency_us,
                "saturated": saturated, "saturation_reason": null, "max_schedule_lag_us": 0.0,
                "schedule_lag_p99_us": 0.0, "all_busy_s": 0.0, "generator_busy": generator_busy
            }))
            .unwrap(),
        );
        load
    }

    fn samples(dropped: u64) -> Vec<Sample> {
        let drops = NetDrops { listen_overflows: dropped, listen_drops: dropped, ..NetDrops::default() };
        vec![Sample { t_s: 0.5, net_drops: drops, ..Sample::default() }, Sample { t_s: -0.5, ..Sample::default() }]
    }

    #[test]
    fn connect_errors_with_an_overflowing_accept_queue_are_the_servers() {
        let backlog = Backlog::of(&samples(23), 0.0, 3.0);
        assert_eq!(backlog, Some(Backlog { overflows: 23, dropped: 23 }));
        let found = reasons(&load(1, false, 0.01), backlog);
        let text = "1 connect errors: the server's accept queue overflowed (23 SYNs dropped)";
        assert_eq!(found, [(text.to_string(), true)]);
        assert!(all_the_servers(Some(text), &[text.to_string()]));
        assert!(!all_the_servers(Some(&format!("{text}; crashed")), &[text.to_string()]));
        let late = reasons(&load(0, true, 0.01), backlog);
        assert!(late[0].1 && late[0].0.contains("not for the load generator's CPU"), "{late:?}");
    }

    #[test]
    fn a_server_that_stopped_answering_is_named_first_and_is_the_servers() {
        let mut stalled = load(1, false, 0.01);
        assert!(!reasons(&stalled, None).iter().any(|(r, _)| r.contains("stopped answering")));
        stalled.stalled = Some(stampede_schema::load::Stall { at_s: 1.0, for_s: 2.5 });
        let found = reasons(&stalled, Backlog::of(&samples(23), 0.0, 3.0));
        assert!(found[0].0.starts_with("the server stopped answering") && found[0].1, "{found:?}");
        assert_eq!(found.iter().filter(|(r, _)| r.contains("stopped answering")).count(), 1);
    }

    #[test]
    fn without_an_overflow_or_with_a_busy_generator_the_reasons_stay_the_generators() {
        assert_eq!(Backlog::of(&samples(0), 0.0, 3.0), None);
        assert_eq!(Backlog::of(&samples(5), 1.0, 3.0), None, "outside the phase");
        assert_eq!(reasons(&load(1, false, 0.01), None), [("1 socket errors".to_string(), false)]);
        let busy = reasons(&load(0, true, 0.95), Backlog::of(&samples(3), 0.0, 3.0));
        assert!(busy.iter().all(|(r, server)| r.starts_with("load generator saturated") && !server), "{busy:?}");
    }
}
