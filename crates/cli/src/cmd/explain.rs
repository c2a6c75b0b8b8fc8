//! `stampede explain`: what raises latency for every request, and which slow
//! requests met a GC pause, a lock, CPU saturation or a wait for a connection. The work is done by the `stampede-explain` crate; this
//! module maps flags to it. See docs/explain.md.

use std::path::PathBuf;

use anyhow::Context;
use stampede_explain::events::{self, Runtime};
use stampede_explain::input::{self, Input};
use stampede_explain::{explain, render, sources, Margins};
use stampede_load::units::parse_duration;

const EXAMPLES: &str = "Examples:
  stampede explain results/2026-11-21T10-00-00/results.json
      every run of a scenario, with the events stampede run collected
  stampede explain results.json --detail
      each cause's share and chance level, the slowest requests, the notes
  stampede explain profiled/results.json --unprofiled plain/results.json
      a --profile run checked against the same scenario unprofiled (throughput, p99)
  stampede explain results.json --json > explain.json
  stampede explain --load load.json --events gc.log --runtime go
      one `stampede load --rate … --slow-log 500 --json` result and the Go server's
      GODEBUG=gctrace=1 stderr, its lines stamped `<mono_ns>\\t` as they were read
  stampede explain --load load.json --events gc.log --runtime go --exec-mono-ns 2342856650032
      an unstamped gctrace log, anchored at the CLOCK_MONOTONIC time of the server's exec
  stampede explain --load load.json --events gc.jvm.log --runtime jvm
      a log from -Xlog:gc*,safepoint:file=gc.jvm.log:uptime,timenanos,level,tags";

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// A results.json written by `stampede run`
    #[arg(value_name = "RESULTS", required_unless_present = "load", conflicts_with = "load")]
    pub results: Option<PathBuf>,

    /// A `stampede load --json` result (open loop, with --slow-log) to explain instead
    #[arg(long, value_name = "FILE")]
    pub load: Option<PathBuf>,

    /// A GC or event log of the server under --load (repeat for several processes)
    #[arg(long, value_name = "FILE", requires = "load")]
    pub events: Vec<PathBuf>,

    /// What wrote the --events logs: go, jvm, node, python or generic
    #[arg(long, value_name = "RUNTIME", requires = "events")]
    pub runtime: Option<String>,

    /// CLOCK_MONOTONIC (ns) when the server was exec'ed: anchors Go and Node logs whose lines
    /// carry no read time
    #[arg(long, value_name = "NS", requires = "events")]
    pub exec_mono_ns: Option<u64>,

    /// The app's name in the output (with --load) [default: the runtime]
    #[arg(long, value_name = "NAME", requires = "load")]
    pub app: Option<String>,

    /// The least spill-over after an event: requests arriving this soon after it ends are
    /// still counted as delayed by it (a pause adds its own length on top)
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_duration)]
    pub spill_over: std::time::Duration,

    /// Print the stampede.explain/1 JSON document instead of text
    #[arg(long, conflicts_with = "detail")]
    pub json: bool,

    /// A results.json of the same scenario run without --profile: a profiled run is compared
    /// with its unprofiled runs (throughput and p99) and a warning printed when they differ
    /// beyond the noise
    #[arg(long, value_name = "RESULTS", requires = "results")]
    pub unprofiled: Option<PathBuf>,

    /// Print every cause's share, its chance level, the slowest requests and the notes
    /// instead of one paragraph per run
    #[arg(long)]
    pub detail: bool,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let margins = Margins { min_spill_ns: args.spill_over.as_nanos() as u64, ..Margins::default() };
    let sources = match (&args.results, &args.load) {
        (Some(path), _) => match input::read(path)? {
            Input::Run(doc) => {
                let unprofiled = match &args.unprofiled {
                    Some(other) => match input::read(other)? {
                        Input::Run(plain) => plain.runs,
                        Input::Load(_) => anyhow::bail!(
                            "--unprofiled {}: a stampede.load/1 file; give the results.json of stampede run",
                            other.display()
                        ),
                    },
                    None => Vec::new(),
                };
                sources::from_results(&doc, &unprofiled)
            }
            Input::Load(_) => anyhow::bail!(
                "{}: a stampede.load/1 file: give it as --load {} with --events and --runtime",
                path.display(),
                path.display()
            ),
        },
        (None, Some(path)) => {
            let load = match input::read(path)? {
                Input::Load(load) => *load,
                Input::Run(_) => {
                    anyhow::bail!("--load {}: a results file from stampede run; give it without --load", path.display())
                }
            };
            let runtime = match (&args.runtime, args.events.is_empty()) {
                (Some(name), _) => Some(Runtime::parse(name).context("--runtime")?),
                (None, true) => None,
                (None, false) => anyhow::bail!("--events needs --runtime (go, jvm, node, python or generic)"),
            };
            let mut logs = Vec::new();
            for log in &args.events {
                let parsed = events::parse_file(log, runtime.unwrap_or(Runtime::Generic), args.exec_mono_ns)?;
                logs.push((log.display().to_string(), parsed));
            }
            let app = args.app.clone().unwrap_or_else(|| runtime.map_or("server", |r| r.name()).to_string());
            vec![sources::from_load(&app, load, logs)]
        }
        (None, None) => anyhow::bail!("give a results.json, or --load FILE"),
    };
    if sources.is_empty() {
        anyhow::bail!("no run with a measured load phase to explain");
    }
    let explained: Vec<_> = sources.iter().map(|s| explain(s, margins)).collect();
    if args.json {
        print!("{}", render::json(&explained));
    } else {
        print!("{}", render::human(&explained, args.detail));
    }
    Ok(0)
}
