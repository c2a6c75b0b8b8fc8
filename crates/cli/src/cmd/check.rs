//! `stampede check [--contract NAME|FILE] URL`: asks a running server every
//! question in a contract (by default `stampede`, apps/CONTRACT.md) and prints
//! which rules pass; `--list-contracts` shows the built-in ones; `--url` maps
//! endpoints to the server's own URLs and `--tfb-config` checks each test of a
//! TechEmpower implementation at its URLs and port. Glue only: the contracts,
//! the URL map, the client and the report live in the `stampede-check` crate.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context;

const EXAMPLES: &str = "\
Examples:
  stampede check http://127.0.0.1:9009
      Check a server on port 9009; prints PASS/FAIL per rule, exit 1 if any failed.
  stampede check --contract sequence http://127.0.0.1:8080
      Check the original api_runtime_compare API (/api/count, /api/fib) instead.
  stampede check --contract my-api.toml http://127.0.0.1:8080
      Check your own API, described in a contract file (docs/contracts.md).
  stampede check --list-contracts
      Show the built-in contracts: stampede, sequence, tfb, db, grpc, httparena, web-frameworks.
  stampede check --json http://127.0.0.1:9009 > check.json
      The same report as JSON (schema stampede.check/1, see docs/check.md).
  stampede check --contract db --database postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:5432/hello_world http://127.0.0.1:9009
      Check /db, /queries, /updates and /fortunes against the rows in that database.
  stampede check --http3 -k https://127.0.0.1:9009
      Ask every question over HTTP/3 (QUIC on UDP port 9009; -k: a self-signed certificate).
  stampede check --contract grpc http://127.0.0.1:9009
      Check a gRPC server (apps/grpc/) over HTTP/2 by prior knowledge; https:// with -k or --ca for TLS.
  stampede check --contract db --url queries=/queries?q= --url updates=/update?q= --database postgres://… http://127.0.0.1:8080
      Ask the server's own URLs: the count is appended to a URL ending in = or /.
  stampede check --tfb-config frameworks/Go/gin/benchmark_config.json --database postgres://…
      Check each test of a TechEmpower implementation at its URLs and port (tfb for
      plaintext/json, db for the database tests); --test default picks one.
  stampede check --arena HttpArena/frameworks/actix
      Build an HttpArena framework from its folder (meta.json + Dockerfile, no Docker), start it
      on 8080, check it with httparena kept to the profiles its meta.json enables, stop it.
  stampede check --arena web-frameworks/go/gin
      The same for a the-benchmarker framework (config.yaml, port 3000, web-frameworks).
  stampede check --timeout 30s http://10.0.0.2:8080
      Allow up to 30 s per response (a slow machine, a JIT still warming).

Exit status: 0 every rule passed, 1 a rule failed, 2 bad usage or the server cannot be reached.";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Base URL of the server, e.g. http://127.0.0.1:9009
    /// (with --tfb-config: default http://127.0.0.1 at each test's port)
    #[arg(required_unless_present_any = ["list_contracts", "tfb_config", "arena"])]
    pub url: Option<String>,

    /// The contract to check: a built-in name (see --list-contracts) or a contract file
    #[arg(long, value_name = "NAME|FILE", default_value = stampede_check::DEFAULT_CONTRACT)]
    pub contract: String,

    /// The server's own URL for a contract endpoint, e.g. queries=/queries?q= (repeatable;
    /// a URL ending in = or / gets the count appended)
    #[arg(long = "url", value_name = "NAME=URL", conflicts_with = "tfb_config")]
    pub urls: Vec<String>,

    /// A TechEmpower implementation's benchmark_config.json: check each test it declares
    /// at its URLs and port, with tfb (plaintext, json) and db (the database tests)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["contract", "list_contracts"])]
    pub tfb_config: Option<std::path::PathBuf>,

    /// With --tfb-config: check only the test of this name (e.g. default)
    #[arg(long, value_name = "NAME", requires = "tfb_config")]
    pub test: Option<String>,

    /// An arena framework's folder (HttpArena's frameworks/NAME with meta.json and a Dockerfile,
    /// or the-benchmarker's LANGUAGE/NAME with config.yaml): build it, start it at its fixed port,
    /// check it with its arena's contract kept to the profiles it enables, stop it (docs/arenas.md).
    /// One framework per call: a folder of many is refused, naming them
    #[arg(long, value_name = "DIR", conflicts_with_all = ["url", "tfb_config", "contract", "urls", "list_contracts"])]
    pub arena: Option<std::path::PathBuf>,

    /// With an HttpArena contract: check only the rules of these arena profiles
    /// (baseline, limited-conn, pipelined, json, json-comp, upload), as the framework's meta.json enables them
    #[arg(long, value_name = "PROFILE,…", value_delimiter = ',')]
    pub profiles: Vec<String>,

    /// List the built-in contracts and exit
    #[arg(long, conflicts_with_all = ["url", "json"])]
    pub list_contracts: bool,

    /// Print the report as JSON (schema stampede.check/1) on stdout instead of a table
    #[arg(long)]
    pub json: bool,

    /// Longest wait for one response, from connect to last byte (e.g. 5s, 500ms)
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_timeout)]
    pub timeout: Duration,

    /// The server's PostgreSQL database, which the db contract's rules read back (postgres://user:password@host:port/db)
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,

    /// Ask over HTTP/3 (QUIC, UDP, ALPN h3) instead of HTTP/1.1 over TCP; https:// or http:// URLs
    #[arg(long)]
    pub http3: bool,

    /// --http3 or a gRPC contract over https://: accept any server certificate (self-signed test servers)
    #[arg(short = 'k', long, conflicts_with = "ca")]
    pub insecure: bool,

    /// --http3 or a gRPC contract over https://: trust the CA certificates in this PEM file instead of the system's
    #[arg(long, value_name = "FILE")]
    pub ca: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if args.list_contracts {
        write_stdout(&list_contracts())?;
        return Ok(0);
    }
    if let Some(config) = &args.tfb_config {
        return run_tfb(config, &args);
    }
    if let Some(dir) = &args.arena {
        return crate::cmd::check_arena::run(dir, &args);
    }
    let mut contract = stampede_check::resolve(&args.contract)?;
    if !args.profiles.is_empty() {
        contract.rules.retain(|rule| stampede_run::scenario::arena::rule_enabled(&rule.id, &args.profiles));
    }
    let urls = stampede_check::UrlMap::parse_pairs(&args.urls).map_err(anyhow::Error::msg)?;
    let grpc = contract.protocol == stampede_check::Protocol::Grpc;
    if (args.insecure || args.ca.is_some()) && !args.http3 && !grpc {
        anyhow::bail!("-k/--insecure and --ca need --http3 or a gRPC contract (--contract grpc) over https://");
    }
    let trust = stampede_check::Http3 { insecure: args.insecure, ca: args.ca };
    let (http3, tls) = if args.http3 { (Some(trust), None) } else { (None, grpc.then_some(trust)) };
    let options = stampede_check::Options { timeout: args.timeout, database: args.database, http3, urls, tls };
    let url = args.url.as_deref().unwrap_or_default();
    let report = stampede_check::check_contract(url, &contract, &options)?;
    print_report(&report, &contract, args.json)
}

/// One report on stdout (a table, or JSON), the another-contract hint on
/// stderr; exit 1 if a rule failed.
pub fn print_report(
    report: &stampede_check::Report,
    contract: &stampede_check::Contract,
    json: bool,
) -> anyhow::Result<i32> {
    let text = if json {
        let json = serde_json::to_string_pretty(report).context("cannot serialise the check report")?;
        format!("{json}\n")
    } else {
        stampede_check::render::text(report, wants_color())
    };
    write_stdout(&text)?;
    if let Some(hint) = stampede_check::another_contract_hint(report, contract) {
        eprintln!("stampede: {hint}");
    }
    Ok(if report.all_passed() { 0 } else { 1 })
}

/// `--tfb-config FILE [--test NAME]`: each test entry with each contract its
/// URLs call for, one report after another (a JSON array of reports with
/// `--json`); exit 1 if any rule of any failed.
fn run_tfb(config: &std::path::Path, args: &Args) -> anyhow::Result<i32> {
    let tests = stampede_check::tfb_config::read(config, args.test.as_deref()).context("--tfb-config")?;
    // Every refusal before the first request, so no report is half printed.
    for test in &tests {
        let contracts = test.contracts();
        if let Some(db) = contracts.iter().find(|c| c.needs_database()).filter(|_| args.database.is_none()) {
            anyhow::bail!(
                "test {:?} of {} declares database URLs, which contract {} checks against the rows: give --database postgres://user:password@host:port/database, or --test with another test",
                test.name,
                config.display(),
                db.name
            );
        }
        if contracts.is_empty() {
            anyhow::bail!(
                "--tfb-config {}: test {:?} declares none of json_url, plaintext_url, db_url, query_url, update_url, fortune_url",
                config.display(),
                test.name
            );
        }
    }
    let mut reports = Vec::new();
    let mut text = String::new();
    for test in &tests {
        let options = stampede_check::Options {
            timeout: args.timeout,
            database: args.database.clone(),
            http3: None,
            urls: test.urls.clone(),
            tls: None,
        };
        for contract in test.contracts() {
            let url = test.base_url(args.url.as_deref());
            let report = stampede_check::check_contract(&url, &contract, &options)
                .with_context(|| format!("test {:?} of {}", test.name, config.display()))?;
            text.push_str(&format!("test {} of {}, at {}\n", test.name, config.display(), test.urls));
            text.push_str(&stampede_check::render::text(&report, wants_color()));
            text.push('\n');
            reports.push(report);
        }
    }
    if args.json {
        let json = serde_json::to_string_pretty(&reports).context("cannot serialise the check reports")?;
        text = format!("{json}\n");
    }
    write_stdout(&text)?;
    Ok(if reports.iter().all(|r| r.all_passed()) { 0 } else { 1 })
}

/// One line per built-in contract: name, version, rule count (requests, probes
/// and every-response checks, as the report counts them), description.
fn list_contracts() -> String {
    let contracts = stampede_check::builtin_contracts();
    let width = contracts.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for c in &contracts {
        out.push_str(&format!(
            "{:width$}  version {:3}  {:2} rules  {}\n",
            c.name,
            c.version,
            c.rules.len() + c.probes.len() + c.every_response.len() + c.calls.len() + c.every_call.len(),
            c.description
        ));
    }
    out.push_str("Or give the path of your own contract file (docs/contracts.md).\n");
    out
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    // A reader that went away (`| head`) is not an error worth a panic.
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write the check report to stdout")
        }
        _ => Ok(()),
    }
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
