//! Whose fault an invalid run is. A load's own rules (`LoadResult::
//! invalid`, stampede-schema) see connect errors and a generator
//! that fell behind its schedule, and word them as the generator's trouble.
//! When the server's own listen socket dropped connections in the same
//! phase (its `sk_drops`, what `ss -ltm` shows as `d`: the probe's
//! `listen_drops`), the connect errors are the server's (its backlog was
//! too short for the connections opened at once), and so are sends made
//! late by connections still opening, unless the generator's threads were
//! busy (then it lacked CPU as well, and the reason stays its own). The
//! host's `ListenOverflows` counters are never used for this: on a shared
//! machine they count every program's listeners, and blamed a healthy
//! server for another program's backlog-1 socket. This module rewords
//! those reasons and says which are the server's.

use stampede_schema::load::{Invalid, GENERATOR_BUSY};
use stampede_schema::LoadResult;

/// What the server's own listen socket dropped in a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Backlog {
    pub dropped: u64,
}

impl Backlog {
    /// The listener's drops in a phase (`None` when unknown: no listener
    /// found on the server's port, or sock_diag unavailable); `None` when
    /// it dropped nothing. Unknown blames nobody.
    pub fn of_listener(dropped: Option<u64>) -> Option<Backlog> {
        dropped.filter(|d| *d > 0).map(|dropped| Backlog { dropped })
    }

    fn said(&self) -> String {
        format!("the server's accept queue overflowed (its listen socket dropped {} connection attempts)", self.dropped)
    }
}

/// The load's invalid reasons, those the server's backlog caused said so
/// and marked `true` (the server's). A server that stopped answering
/// (`LoadResult::stalled`) is the server's fault, whatever else went
/// wrong, and is said first (`LoadResult::invalid` gives it first).
pub fn reasons(load: &LoadResult, backlog: Option<Backlog>) -> Vec<(String, bool)> {
    let connect_only = load.errors.connect > 0 && load.errors.connect == load.socket_errors();
    let generator_busy = load.open.as_ref().is_some_and(|o| o.generator_busy > GENERATOR_BUSY);
    load.invalid()
        .into_iter()
        .map(|reason| match (&reason, backlog) {
            (Invalid::Stalled(said), _) => (said.clone(), true),
            (Invalid::SocketErrors(_), Some(b)) if connect_only => {
                (format!("{} connect errors: {}", load.errors.connect, b.said()), true)
            }
            (Invalid::Saturated, Some(b)) if !generator_busy => {
                let late = "requests were sent late waiting for connections to open, not for the load generator's CPU";
                (format!("{}: {late}", b.said()), true)
            }
            _ => (reason.to_string(), false),
        })
        .collect()
}

/// The load's invalid reasons a crash of the server explains: the socket
/// errors and the missing responses of the requests it could no longer
/// answer. They are the server's when it crashed in the same run; a
/// generator that fell behind or lacked its pinned CPU stays its own.
pub fn crash_consequences(load: &LoadResult) -> Vec<String> {
    let consequence = |r: &Invalid| matches!(r, Invalid::SocketErrors(_) | Invalid::NoResponses);
    load.invalid().iter().filter(|r| consequence(r)).map(Invalid::to_string).collect()
}

/// Whether every reason a run is invalid for (`invalid_reason`, joined by
/// "; ") is one of `server`'s.
pub fn all_the_servers(invalid_reason: Option<&str>, server: &[String]) -> bool {
    invalid_reason.is_some_and(|r| r.split("; ").all(|part| server.iter().any(|s| s == part)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An open-loop load with `connect` connect errors, behind its schedule or not.
    pub(crate) fn load(connect: u64, saturated: bool, generator_busy: f64) -> LoadResult {
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

    #[test]
    fn connect_errors_with_an_overflowing_accept_queue_are_the_servers() {
        let backlog = Backlog::of_listener(Some(23));
        assert_eq!(backlog, Some(Backlog { dropped: 23 }));
        let found = reasons(&load(1, false, 0.01), backlog);
        let text =
            "1 connect errors: the server's accept queue overflowed (its listen socket dropped 23 connection attempts)";
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
        let found = reasons(&stalled, Backlog::of_listener(Some(23)));
        assert!(found[0].0.starts_with("the server stopped answering") && found[0].1, "{found:?}");
        assert_eq!(found.iter().filter(|(r, _)| r.contains("stopped answering")).count(), 1);
    }

    /// Issue 42: the host's counters blamed a healthy server for another
    /// program's overflowing listener. Only the listener's own count blames.
    #[test]
    fn a_listener_that_dropped_nothing_or_is_unknown_blames_no_one() {
        assert_eq!(Backlog::of_listener(Some(0)), None);
        assert_eq!(Backlog::of_listener(None), None);
        assert_eq!(reasons(&load(1, false, 0.01), None), [("1 socket errors".to_string(), false)]);
    }

    #[test]
    fn a_crash_explains_socket_errors_not_a_saturated_generator() {
        assert_eq!(crash_consequences(&load(4, true, 0.95)), ["4 socket errors"]);
        assert!(crash_consequences(&load(0, true, 0.95)).is_empty());
    }

    #[test]
    fn with_a_busy_generator_the_lateness_stays_the_generators() {
        let busy = reasons(&load(0, true, 0.95), Backlog::of_listener(Some(3)));
        assert!(busy.iter().all(|(r, server)| r.starts_with("load generator saturated") && !server), "{busy:?}");
    }
}
