//! Verifies a running server against `apps/CONTRACT.md`, the benchmark
//! contract every reference app implements. A throughput figure means nothing
//! until the server is known to do the prescribed work, so `stampede check`
//! (and `stampede run`, before it measures anything) asks the server every
//! question in the contract and reports each rule as passed or failed, with
//! the request and response that show a failure.
//!
//! ```no_run
//! let report = stampede_check::check("http://127.0.0.1:9009", &stampede_check::Options::default())?;
//! println!("{}", stampede_check::render::text(&report, false));
//! # Ok::<(), stampede_check::CheckError>(())
//! ```

mod cases;
mod client;
mod error;
mod expect;
mod headers;
mod probes;
pub mod render;
mod report;
mod target;
mod transport;
mod wire;

use std::time::Duration;

pub use error::CheckError;
pub use report::{Report, ResponseSummary, RuleResult, SCHEMA};

use client::Client;
use report::RuleVerdict;
use target::Target;

/// How to run a check.
#[derive(Debug, Clone)]
pub struct Options {
    /// Longest wait for one response, from connecting to its last byte.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(5),
        }
    }
}

/// Checks the server at `base` (`http://host:port`, optionally with a path
/// prefix) against every rule of the contract. Takes a little over one second
/// on a correct server (the `date-ticks` rule waits for the clock).
///
/// Errors only when there is nothing to check: a bad URL, or no HTTP answer
/// to the first request. Broken rules are results in the [`Report`].
pub fn check(base: &str, options: &Options) -> Result<Report, CheckError> {
    let target = Target::parse(base)?;
    let mut client = Client::new(target.clone(), options.timeout);
    let mut log = Vec::new();
    let mut results = Vec::new();
    for (index, case) in cases::all().into_iter().enumerate() {
        let exchange = client.get(&case.path);
        if index == 0 {
            if let Err(e) = &exchange.result {
                if e.is_unreachable() {
                    let reason = match e {
                        client::TransportError::Refused => "connection refused".to_string(),
                        client::TransportError::Connect(why) => why.clone(),
                        other => other.to_string(),
                    };
                    return Err(CheckError::Unreachable {
                        url: target.display().to_string(),
                        reason,
                    });
                }
            }
        }
        results.push(RuleResult::judged(
            case.id,
            &case.description,
            case.judge(&exchange),
            &exchange,
        ));
        log.push(exchange);
    }
    let keep_alive = probes::keep_alive(&target, options.timeout, &mut log);
    let date_ticks = probes::date_ticks(&mut client, &mut log);
    results.extend(headers::rules(&log));
    results.push(date_ticks);
    results.push(keep_alive);
    Ok(Report::new(target.display().to_string(), results))
}

/// `5s`, `1.5s` or `250ms`: short, for messages.
pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
