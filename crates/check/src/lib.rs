//! Verifies a running server against a contract: the API it claims to
//! implement, given as data (a TOML file, docs/contracts.md). A throughput
//! figure means nothing until the server is known to do the prescribed work,
//! so `stampede check` (and `stampede run`, before it measures anything) asks
//! the server every question in the contract and reports each rule as passed
//! or failed, with the request and response that show a failure. The built-in
//! contracts (`stampede`, `sequence`, `tfb`, `db`, `httparena`,
//! `web-frameworks`) live in the repository's `contracts/` folder and are
//! embedded in the binary.
//!
//! ```no_run
//! let contract = stampede_check::resolve("sequence")?;
//! let report = stampede_check::check_contract("http://127.0.0.1:9009", &contract, &stampede_check::Options::default())?;
//! println!("{}", stampede_check::render::text(&report, false));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod answer;
mod client;
mod concurrent;
mod counting;
mod database;
mod db_probes;
mod error;
mod fortunes;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod grpc;
mod h3;
mod headers;
mod judge;
mod lenience;
mod options;
mod probes;
pub mod render;
mod report;
mod request;
mod response;
mod target;
mod transport;
mod wire;

use std::time::Duration;

pub use error::CheckError;
pub use h3::Http3;
pub use options::Options;
pub use report::{Report, ResponseSummary, RuleResult, SCHEMA};
/// What a contract is lives in stampede-contract; these names are the
/// checker's API too (`stampede check` resolves, lists and checks contracts).
pub use stampede_contract::{
    builtin, builtin_contracts, builtin_names, endpoint_of, resolve, tfb_config, Contract, ContractError, Protocol,
    UrlMap, DEFAULT_CONTRACT,
};

use client::{Client, Exchange};
use judge::Case;
use lenience::Lenience;
use stampede_contract::{Probe, ProbeCheck};
use target::Target;

/// Checks the server at `base` against the default contract, `stampede`
/// (apps/CONTRACT.md). See [`check_contract`].
pub fn check(base: &str, options: &Options) -> Result<Report, CheckError> {
    let contract = builtin(DEFAULT_CONTRACT).expect("the default contract is built in");
    check_contract(base, &contract, options)
}

/// Checks the server at `base` (`http://host:port`, optionally with a path
/// prefix) against every rule of `contract`: its requests in order, then its
/// probes, then its every-response checks over all the responses received.
/// A contract with a `date-ticks` probe takes a little over one second (the
/// probe waits for the clock).
///
/// Errors only when there is nothing to check: a bad URL, or no HTTP answer
/// to the first request. Broken rules are results in the [`Report`].
pub fn check_contract(base: &str, contract: &Contract, options: &Options) -> Result<Report, CheckError> {
    if contract.protocol == Protocol::Grpc {
        return grpc::check(base, contract, options);
    }
    let target = Target::parse_for(base, options.http3.as_ref(), options.timeout)?.with_urls(options.urls.clone());
    let mut database = match (&options.database, contract.needs_database()) {
        (_, false) => None,
        (None, true) => return Err(CheckError::NeedsDatabase { contract: contract.name.clone() }),
        (Some(url), true) => Some(database::Database::connect(url, options.timeout)?),
    };
    let mut client = Client::new(target.clone(), options.timeout);
    let mut log = Vec::new();
    let mut results = Vec::new();
    // Placeholders differ on every check, so no answer can be cached.
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::from_entropy();
    for (index, rule) in contract.rules.iter().enumerate() {
        let case = Case::from_rule(rule);
        let request = request::prepare(&case.path, rule.send.as_ref(), &mut rng);
        let exchange = match &request {
            Ok(request) => client.send(request),
            Err(why) => client::Exchange {
                request_line: case.path.clone(),
                result: Err(client::TransportError::NotSent(why.clone())),
            },
        };
        if index == 0 {
            if let Err(e) = &exchange.result {
                if e.is_unreachable() {
                    let reason = match e {
                        client::TransportError::Refused => "connection refused".to_string(),
                        client::TransportError::Connect(why) => why.clone(),
                        other => other.to_string(),
                    };
                    return Err(CheckError::Unreachable { url: target.display().to_string(), reason });
                }
            }
        }
        let mut lenience = Lenience::new(&contract.warn);
        let verdict = match &request {
            Ok(request) => case.judge(request, &exchange, &mut lenience),
            Err(why) => Err(why.clone()),
        };
        let description = options.urls.describe(&case.description, &rule.path);
        results.push(crate::report::judged(&case.id, &description, verdict, &lenience, &exchange));
        log.push(exchange);
    }
    let mut probe_results = Vec::new();
    for probe in &contract.probes {
        let judged = probe_results.len();
        if probe.check == ProbeCheck::Concurrent {
            let db = database.as_mut().expect("connected above for a contract with database checks");
            probe_results.extend(concurrent::judge(probe, &contract.warn, &target, options.timeout, db, &mut log));
        } else {
            probe_results.push(judge_probe(
                probe,
                contract,
                &target,
                &mut client,
                database.as_mut(),
                options,
                &mut log,
            ));
        }
        for result in &mut probe_results[judged..] {
            result.description = options.urls.describe(&result.description, &probe.path);
        }
    }
    results.extend(headers::rules(contract, &log));
    results.extend(probe_results);
    let mut report = Report::new(&contract.name, &contract.version, target.display().to_string(), results);
    report.lenient = contract.warn.iter().map(|l| l.name().to_string()).collect();
    report.lenient_note = contract.warn_note.clone();
    Ok(report)
}

pub use stampede_grpc::client::NotReady;

/// Whether the gRPC server at `addr` answers a call of `path` (a gRPC
/// contract's `ready`) with an empty request `OK`, and how long that took;
/// `stampede run` polls it until it does.
pub fn grpc_ready(addr: std::net::SocketAddr, path: &str, timeout: Duration) -> Result<Duration, NotReady> {
    stampede_grpc::client::ready(addr, path, timeout)
}

/// One probe other than the concurrent phase, judged on its own connection
/// or the check's.
fn judge_probe(
    probe: &Probe,
    contract: &Contract,
    target: &Target,
    client: &mut Client,
    database: Option<&mut database::Database>,
    options: &Options,
    log: &mut Vec<Exchange>,
) -> RuleResult {
    match probe.check {
        ProbeCheck::KeepAlive => probes::keep_alive(probe.id(), target, &probe.path, options.timeout, log),
        ProbeCheck::DateTicks => probes::date_ticks(probe.id(), client, &probe.path, log),
        ProbeCheck::SleepConcurrent => probes::sleep_concurrent(probe.id(), target, &probe.path, options.timeout, log),
        _ => {
            let db = database.expect("connected above for a contract with database checks");
            db_probes::judge(probe, &contract.warn, client, db, log)
        }
    }
}

/// One line for a check whose first rule and most of its rules failed: the
/// server probably speaks another API (an arena's framework answers 404 to
/// every path of the default contract), so say which contracts exist.
/// `None` when the contract mostly held.
pub fn another_contract_hint(report: &Report, contract: &Contract) -> Option<String> {
    let ids: Vec<&str> = contract.rules.iter().map(|r| r.id.as_str()).collect();
    let rules: Vec<&RuleResult> = report.results.iter().filter(|r| ids.contains(&r.id.as_str())).collect();
    let failed = rules.iter().filter(|r| !r.passed).count();
    let first = rules.first().filter(|r| !r.passed)?;
    if failed * 2 < rules.len() {
        return None;
    }
    Some(format!(
        "{failed} of contract {}'s {} requests failed (the first: {}): the server may speak another contract; `stampede check --list-contracts` lists the built-in ones ({}), and --contract FILE checks your own (docs/contracts.md)",
        contract.name,
        rules.len(),
        first.reason.as_deref().unwrap_or("no answer"),
        builtin_names().join(", ")
    ))
}
