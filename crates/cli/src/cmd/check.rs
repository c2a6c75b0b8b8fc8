//! `stampede check URL`: asks a running server every question in
//! apps/CONTRACT.md and prints which rules pass. Glue only: the rules, the
//! client and the report live in the `stampede-check` crate.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context;

const EXAMPLES: &str = "\
Examples:
  stampede check http://127.0.0.1:9009
      Check a server on port 9009; prints PASS/FAIL per rule, exit 1 if any failed.
  stampede check --json http://127.0.0.1:9009 > check.json
      The same report as JSON (schema stampede.check/1, see docs/check.md).
  stampede check --timeout 30s http://10.0.0.2:8080
      Allow up to 30 s per response (a slow machine, a JIT still warming).

Exit status: 0 every rule passed, 1 a rule failed, 2 bad usage or the server cannot be reached.";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Base URL of the server, e.g. http://127.0.0.1:9009
    pub url: String,

    /// Print the report as JSON (schema stampede.check/1) on stdout instead of a table
    #[arg(long)]
    pub json: bool,

    /// Longest wait for one response, from connect to last byte (e.g. 5s, 500ms)
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_timeout)]
    pub timeout: Duration,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let options = stampede_check::Options {
        timeout: args.timeout,
    };
    let report = stampede_check::check(&args.url, &options)?;
    let text = if args.json {
        let json =
            serde_json::to_string_pretty(&report).context("cannot serialise the check report")?;
        format!("{json}\n")
    } else {
        stampede_check::render::text(&report, wants_color())
    };
    // A reader that went away (`| head`) is not an error worth a panic.
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(e).context("cannot write the check report to stdout");
        }
        _ => {}
    }
    Ok(if report.all_passed() { 0 } else { 1 })
}

/// Colour on a terminal unless `NO_COLOR` is set to anything non-empty.
fn wants_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text)
        .map_err(|e| format!("{e}; give a duration with a unit, such as 5s or 500ms"))?;
    if duration.is_zero() {
        return Err("must be more than zero, such as 5s".to_string());
    }
    if duration > stampede_load::units::MAX_DURATION {
        return Err("longer than the maximum of 365 days (365d)".to_string());
    }
    Ok(duration)
}
