//! How long a check of a contract may take at most, from what the checker
//! allows itself: every rule one request with its timeout, every
//! `concurrent` phase its per-request phase timeout for each request one
//! connection sends in turn plus the waits for the database's statistics,
//! every other probe a few requests and its one-second waits, every gRPC
//! call its connect and its wait (a deadline's, or the timeout). `stampede run`
//! gives `stampede check` this budget (and a margin) rather than a fixed
//! clock, so a slower machine makes a check slower, never cut short: the
//! checker's own timeouts judge a server too slow before run's limit does.

use std::time::Duration;

use crate::model::Contract;
use crate::probe::{ProbeCheck, DEFAULT_CONNECTIONS, DEFAULT_REQUESTS, PHASE_TIMEOUT};

/// A probe other than `concurrent`: at most this many requests one after
/// another (keep-alive and date-ticks send two or three, a sleep three
/// sleeps' worth), and up to two waits past a second boundary.
const PROBE_REQUESTS: u32 = 4;
const PROBE_WAITS: Duration = Duration::from_secs(2);

/// How long an idle backend may keep its `pg_stat_database` counts before
/// reporting them (PostgreSQL 15's PGSTAT_MIN_INTERVAL, 1 s), and a margin:
/// the longest the counters are waited for.
pub const STATS_FLUSH: Duration = Duration::from_millis(1200);

impl Contract {
    /// The longest a check of this contract can take with a per-request
    /// `timeout`, when every request takes as long as it is allowed.
    pub fn time_budget(&self, timeout: Duration) -> Duration {
        let rules = timeout * self.rules.len() as u32;
        let probes: Duration = self
            .probes
            .iter()
            .map(|probe| match probe.check {
                ProbeCheck::Concurrent => {
                    let requests = probe.requests.unwrap_or(DEFAULT_REQUESTS);
                    let connections = probe.connections.unwrap_or(DEFAULT_CONNECTIONS).max(1);
                    // One request alone first, then each connection's share in turn.
                    timeout + timeout.max(PHASE_TIMEOUT) * requests.div_ceil(connections) + STATS_FLUSH * 2
                }
                _ => timeout * PROBE_REQUESTS + PROBE_WAITS,
            })
            .sum();
        // A gRPC call: its connections (each within `timeout`) and its wait.
        let calls: Duration = self.calls.iter().map(|call| timeout + call.limit(timeout)).sum();
        rules + probes + calls
    }
}

#[cfg(test)]
mod tests {
    use crate::builtin::resolve;
    use std::time::Duration;

    #[test]
    fn the_db_contract_budgets_its_concurrent_phases_and_grows_with_the_timeout() {
        let db = resolve("db").unwrap();
        let five = db.time_budget(Duration::from_secs(5));
        // Its concurrent phases alone allow 30 s each: far above a fixed 120 s.
        assert!(five > Duration::from_secs(120), "{five:?}");
        assert!(db.time_budget(Duration::from_secs(10)) > five);
        let plain = resolve("stampede").unwrap().time_budget(Duration::from_secs(5));
        assert!(plain < five, "a contract without concurrent phases needs less: {plain:?}");
    }

    #[test]
    fn the_grpc_contract_budgets_every_call_with_its_deadline() {
        let grpc = resolve("grpc").unwrap();
        let calls = grpc.calls.len() as u32;
        let five = grpc.time_budget(Duration::from_secs(5));
        // Each call: a connect and an answer within 5 s; the 1n deadline
        // adds its 5 s wait, the 300 ms stream its deadline and 1.5 s.
        assert!(five >= Duration::from_secs(6) * calls, "{five:?}");
        assert!(grpc.time_budget(Duration::from_secs(10)) > five);
    }
}
