//! The subcommands, one module each, and the exit-code convention they share:
//! 0 success, 1 a check or threshold failed, 2 bad usage or an error.

pub mod agent;
pub mod check;
pub mod check_arena;
pub mod clock;
pub mod compare;
pub mod explain;
pub mod hosts;
pub mod load;
pub mod load_grpc;
pub mod load_progress;
pub mod profile;
pub mod report;
pub mod run;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "stampede",
    version,
    about = "How fast is an HTTP API server, how efficiently does it use the CPU, and why is its tail slow?"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Generate HTTP load against a URL and report latency, throughput and errors
    Load(load::Args),
    /// Verify that a running server honours an API contract (built in: stampede, sequence, tfb, db, grpc, httparena, web-frameworks; or a file)
    Check(check::Args),
    /// Build, start, verify, warm up, load and sample servers across a scenario's matrix
    Run(run::Args),
    /// Render results.json as a self-contained HTML report, or export it as Markdown, CSV or JSON
    Report(report::Args),
    /// Compare two results files and say which differences are real
    Compare(compare::Args),
    /// Say which slow requests met a GC pause, a lock, CPU saturation, a run-queue spike or a dropped packet
    Explain(explain::Args),
    /// Sample a running process tree with perf: flame graph, folded stacks and top functions
    Profile(profile::Args),
    /// Answer each line on stdin with this host's wall clock (used by `load --hosts`)
    #[command(hide = true)]
    Clock,
    /// Start, probe and stop a server for a controller's `run` over ssh (`[hosts] server`)
    #[command(hide = true)]
    Agent,
}

/// `stampede load`: the spec of the flags (or `--spec`), its gRPC schema
/// resolved into it, printed, sent from its `from_hosts` (hosts.rs), or run
/// here (load.rs); neither module knows the other.
fn load_here_or_from_hosts(args: load::Args) -> anyhow::Result<i32> {
    let (mut spec, dir) = args.spec()?;
    load_grpc::resolve_schema(&args, &mut spec, &dir)?;
    if args.print_spec {
        println!("{}", serde_json::to_string_pretty(&spec)?);
        return Ok(0);
    }
    match spec.from_hosts.take() {
        Some(hosts) => hosts::run(&args, &hosts, &spec, &dir),
        None => load::run(args, &spec, &dir),
    }
}

pub fn dispatch(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Load(args) => load_here_or_from_hosts(args),
        Command::Check(args) => check::run(args),
        Command::Run(args) => run::run(args),
        Command::Report(args) => report::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Profile(args) => profile::run(args),
        Command::Clock => clock::run(),
        Command::Agent => agent::run(),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("stampede: error: {err:#}");
            2
        }
    }
}
