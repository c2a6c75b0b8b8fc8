//! The database endpoints under concurrency (contracts/db.toml's
//! `concurrent` probes): TechEmpower's verifier sends 512 requests at once to
//! each database test and fails any that goes wrong, because a server can
//! answer every request right one at a time and still deadlock, exhaust its
//! pool or lose a transaction when many arrive together. Here `requests`
//! requests go over `connections` connections at once (each sends its share
//! one after another), every answer is judged by its form (status 200, the
//! rows or the page the single-request rule reads), and the failures are
//! counted and shown with one sample. The database's own counters, read
//! before and after (counting.rs), name the deadlocks and rolled-back
//! transactions meanwhile, and judge whether the work was done: the second
//! result, `…-counted`.

use std::collections::BTreeMap;
use std::sync::Barrier;
use std::time::Duration;

use crate::client::{Client, Exchange};
use crate::counting::{self, Asked, Snapshot};
use crate::database::Database;
use crate::db_probes::{json, lone_row, page, row_list};
use crate::lenience::Lenience;
use crate::report::{RuleResult, RuleVerdict};
use crate::target::Target;
use stampede_contract::{Leniency, Probe, ProbeCheck, DEFAULT_CONNECTIONS, DEFAULT_REQUESTS, PHASE_TIMEOUT};

/// What the phase's responses were.
#[derive(Default)]
struct Outcome {
    sent: usize,
    right: usize,
    /// Failures by kind ("answered 500 …", "no response: …", "a malformed answer").
    failures: BTreeMap<String, usize>,
    /// The first failure: its reason and exchange.
    sample: Option<(String, Exchange)>,
    /// The first exchange, for the every-response rules.
    first: Option<Exchange>,
}

impl Outcome {
    fn merge(&mut self, other: Outcome) {
        self.sent += other.sent;
        self.right += other.right;
        for (kind, n) in other.failures {
            *self.failures.entry(kind).or_default() += n;
        }
        self.sample = self.sample.take().or(other.sample);
        self.first = self.first.take().or(other.first);
    }

    fn failed(&self) -> usize {
        self.sent - self.right
    }
}

/// Runs the phase of `probe` and judges it: the responses, then the counts.
pub fn judge(
    probe: &Probe,
    warn: &[Leniency],
    target: &Target,
    timeout: Duration,
    db: &mut Database,
    log: &mut Vec<Exchange>,
) -> Vec<RuleResult> {
    let of = probe.of.expect("validated when the contract was read");
    let requests = probe.requests.unwrap_or(DEFAULT_REQUESTS) as usize;
    let connections = probe.connections.unwrap_or(DEFAULT_CONNECTIONS) as usize;
    let path = probe.path.as_str();
    let id = probe.id();
    let counted_id = probe.counted_id();
    let description =
        format!("{requests} GET {path} over {connections} connections at once all answer right, and nothing deadlocks");
    let count_description = format!(
        "the database did the work of those {requests} GET {path}: one query per row, no cache, every update written"
    );
    let rows = match of {
        ProbeCheck::FortunesComplete => match db.fortunes() {
            Ok(fortunes) => fortunes.len(),
            Err(reason) => return vec![RuleResult::fail(id, &description, reason, None)],
        },
        _ => probe.rows.unwrap_or(1) as usize,
    };
    let right = |body: &[u8]| answer_is_right(of, body, rows, warn);
    // A server that cannot answer one such request alone is not loaded with
    // 512 (a server that serves one connection at a time would keep the
    // phase waiting for every timeout): both results fail at once.
    let alone = Client::new(target.clone(), timeout).get(path);
    if let Err((_, why)) = verdict(&alone, &right) {
        let reason = format!("not run: one GET {path} alone is not answered right ({why})");
        let counted = format!("not counted: one GET {path} alone is not answered right");
        let results = vec![
            RuleResult::fail(id, &description, reason, Some(&alone)),
            RuleResult::fail(&counted_id, &count_description, counted, None),
        ];
        log.push(alone);
        return results;
    }
    let table = if of == ProbeCheck::FortunesComplete { "fortune" } else { "world" };
    counting::settle(db);
    let before = Snapshot::take(db, table);
    let outcome = run(target, path, timeout.max(PHASE_TIMEOUT), requests, connections, &right);
    counting::flushed(db);
    let after = Snapshot::take(db, table);
    let transactions = counting::transactions_between(&before, &after);
    let mut results = vec![responses_verdict(id, &description, &outcome, transactions)];
    let asked = Asked { of, rows: rows as i64, answered: outcome.right as i64, sent: outcome.sent as i64 };
    results.push(match (&before.tally, &after.tally) {
        (Ok(b), Ok(a)) => match counting::judge(asked, a.minus(*b)) {
            Ok(None) => RuleResult::pass(&counted_id, &count_description),
            Ok(Some(warning)) => RuleResult::warned(&counted_id, &count_description, warning, None),
            Err(reason) => RuleResult::fail(&counted_id, &count_description, reason, None),
        },
        (Err(why), _) | (_, Err(why)) => {
            RuleResult::warned(&counted_id, &count_description, format!("not counted: {why}"), None)
        }
    });
    log.extend(outcome.first);
    results
}

/// Failed responses fail, naming the database's deadlocks and rollbacks;
/// a deadlock the server hid from every answer is a warning.
fn responses_verdict(id: &str, description: &str, outcome: &Outcome, transactions: Option<(i64, i64)>) -> RuleResult {
    let database_saw = match transactions {
        Some((deadlocks, rolled_back)) if deadlocks > 0 || rolled_back > 0 => format!(
            "; meanwhile the database counted {deadlocks} deadlock(s) and {rolled_back} rolled-back transaction(s)"
        ),
        _ => String::new(),
    };
    let Some((reason, exchange)) = &outcome.sample else {
        return match transactions {
            Some((deadlocks, rolled_back)) if deadlocks > 0 => RuleResult::warned(
                id,
                description,
                format!(
                    "every answer was right, but the database counted {deadlocks} deadlock(s) and {rolled_back} rolled-back transaction(s) meanwhile (the server retried or hid them)"
                ),
                None,
            ),
            _ => RuleResult::pass(id, description),
        };
    };
    let kinds: Vec<String> = outcome.failures.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    let reason = format!(
        "{} of {} responses failed ({}){database_saw}; the first: {reason}",
        outcome.failed(),
        outcome.sent,
        kinds.join(", ")
    );
    RuleResult::fail(id, description, reason, Some(exchange))
}

/// One answer's form, as the single-request rule reads it (the values change
/// under concurrent updates, so they are not compared with the database).
fn answer_is_right(of: ProbeCheck, body: &[u8], rows: usize, warn: &[Leniency]) -> Result<(), String> {
    let mut lenience = Lenience::new(warn);
    match of {
        ProbeCheck::DbRow => json(body).and_then(|v| lone_row(&v, &mut lenience)).map(drop),
        ProbeCheck::FortunesComplete => match page(body)?.len() {
            n if n == rows + 1 => Ok(()),
            n => Err(format!("{n} fortune rows, the database has {} (with the added one)", rows + 1)),
        },
        _ => json(body).and_then(|v| row_list(&v, rows, &mut lenience)).map(drop),
    }
}

/// One exchange judged: `Err((kind, reason))` when it failed.
fn verdict(exchange: &Exchange, right: &dyn Fn(&[u8]) -> Result<(), String>) -> Result<(), (String, String)> {
    match exchange.response() {
        None => {
            let why = exchange.result.as_ref().err().map(ToString::to_string).unwrap_or_default();
            Err((format!("no response ({why})"), format!("no response: {why}")))
        }
        Some(r) if r.status != 200 => {
            let kind = format!("answered {}", r.status_line());
            Err((kind.clone(), format!("{kind}, not 200")))
        }
        Some(r) => right(&r.body).map_err(|why| ("malformed".to_string(), why)),
    }
}

/// Sends the requests over `connections` threads, each with its own
/// connection, started together.
fn run(
    target: &Target,
    path: &str,
    timeout: Duration,
    requests: usize,
    connections: usize,
    right: &(dyn Fn(&[u8]) -> Result<(), String> + Sync),
) -> Outcome {
    let start = Barrier::new(connections);
    let mut outcome = Outcome::default();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..connections)
            .map(|n| {
                let share = requests / connections + usize::from(n < requests % connections);
                let start = &start;
                scope.spawn(move || {
                    let mut client = Client::new(target.clone(), timeout);
                    let mut mine = Outcome::default();
                    start.wait();
                    for _ in 0..share {
                        let exchange = client.get(path);
                        mine.sent += 1;
                        match verdict(&exchange, right) {
                            Ok(()) => mine.right += 1,
                            Err((kind, why)) => {
                                *mine.failures.entry(kind).or_default() += 1;
                                if mine.sample.is_none() {
                                    mine.sample = Some((why, exchange.clone()));
                                }
                            }
                        }
                        if mine.first.is_none() {
                            mine.first = Some(exchange);
                        }
                    }
                    mine
                })
            })
            .collect();
        for thread in threads {
            outcome.merge(thread.join().expect("a concurrent request thread"));
        }
    });
    outcome
}
