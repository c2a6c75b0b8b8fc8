//! `stampede run [SCENARIO]`: flags and glue for the orchestrator in
//! `stampede-run`. Shortcut flags become `--set` overrides, applied before the
//! explicit `--set`s, so `--set` always has the last word.

use std::path::PathBuf;

use anyhow::Context;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  stampede run                     # scenarios/shootout.toml
  stampede run scenarios/threads.toml --apps go,rust
  stampede run scenarios/gc.toml --duration 5s --iterations 3
  stampede run my.toml --set profiles.*.connections=64 --set pinning.server=0
  stampede run --apps go --duration 2s --warmup 500ms --out /tmp/results
  stampede run --apps go,node --profile          # flame graphs of the measured phases
  stampede run my.toml --set hosts.server=me@srv --set hosts.server_address=10.0.0.9
                                                 # the server on srv over ssh (docs/hosts.md)
  stampede run untrusted.toml --print-plan       # the commands it would run, running none
  stampede run --arena HttpArena/frameworks/actix --arena HttpArena/frameworks/hyper --duration 10s
                                                 # arena folders with the arena's profiles (docs/arenas.md)

A scenario and its manifests are code: run only ones you trust (docs/scenarios.md, Trust).")]
pub struct Args {
    /// Scenario file (TOML, see docs/scenarios.md); default scenarios/shootout.toml
    pub scenario: Option<PathBuf>,
    /// Override any scenario field: --set iterations=3, --set profiles.*.duration=10s
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Only these apps (names or manifest paths, comma-separated)
    #[arg(long, value_name = "APP,…")]
    pub apps: Option<String>,
    /// Run arena framework folders (HttpArena's frameworks/NAME, the-benchmarker's LANGUAGE/NAME;
    /// repeatable, one arena) with the arena's profiles Stampede drives that all of them
    /// enable, instead of a scenario file (docs/arenas.md)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["scenario", "apps"])]
    pub arena: Vec<PathBuf>,
    /// Measured duration of every profile (e.g. 5s)
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// Warmup of every profile (e.g. 1s; 0s for none)
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Iterations of every combination
    #[arg(long, value_name = "N")]
    pub iterations: Option<u32>,
    /// Time between probe samples (e.g. 100ms, 10ms)
    #[arg(long, value_name = "DURATION")]
    pub sample_interval: Option<String>,
    /// Sample the server with perf during each measured phase: flame-<run>.svg and
    /// stacks-<run>.folded beside results.json, top functions in results.json (docs/profile.md)
    #[arg(long)]
    pub profile: bool,
    /// perf's sampling frequency with --profile, per second per thread (default 99)
    #[arg(long, value_name = "HZ", requires = "profile")]
    pub profile_frequency: Option<u32>,
    /// With --profile, also record where the server's threads block (off-CPU stacks: scheduler
    /// tracepoints, one sample per context switch; costlier) for flame graphs and explain's causes
    #[arg(long, requires = "profile")]
    pub profile_off_cpu: bool,
    /// Folder for <timestamp>/results.json
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Print the commands the scenario and its manifests would run (build,
    /// run, version, the matrix's environment, the ssh config) and exit
    /// without running any; every run prints this plan on stderr first
    #[arg(long)]
    pub print_plan: bool,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let scenario_path = match args.scenario {
        Some(path) => path,
        None if !args.arena.is_empty() => {
            let (path, notes) = stampede_run::scenario::arena::scenario(&args.arena)?;
            for note in notes {
                eprintln!("stampede: {note}");
            }
            path
        }
        None => default_scenario().context("no scenario file given and scenarios/shootout.toml not found from the current directory up: give a scenario file")?,
    };
    let mut sets = Vec::new();
    if let Some(apps) = &args.apps {
        let list: Vec<String> =
            apps.split(',').map(str::trim).filter(|a| !a.is_empty()).map(|a| format!("{a:?}")).collect();
        if list.is_empty() {
            anyhow::bail!("--apps: give at least one app name, e.g. --apps go,rust");
        }
        sets.push(format!("apps=[{}]", list.join(",")));
    }
    for (flag, value) in
        [("--duration", &args.duration), ("--warmup", &args.warmup), ("--sample-interval", &args.sample_interval)]
    {
        if let Some(v) = value {
            stampede_run::scenario::duration::parse(v).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
        }
    }
    if let Some(d) = &args.duration {
        sets.push(format!("profiles.*.duration={d}"));
    }
    if let Some(w) = &args.warmup {
        sets.push(format!("profiles.*.warmup={w}"));
    }
    if let Some(n) = args.iterations {
        sets.push(format!("iterations={n}"));
    }
    if let Some(i) = &args.sample_interval {
        sets.push(format!("sample_interval={i}"));
    }
    if args.profile {
        sets.push("cpu_profile=true".into());
    }
    if let Some(hz) = args.profile_frequency {
        sets.push(format!("cpu_profile_frequency={hz}"));
    }
    if args.profile_off_cpu {
        sets.push("cpu_profile_off_cpu=true".into());
    }
    sets.extend(args.sets);
    let exe = std::env::current_exe()
        .context("cannot find the stampede binary itself (needed to run `stampede load` and `stampede check`)")?;
    let summary = stampede_run::run(stampede_run::RunOptions {
        scenario_path,
        sets,
        out: args.out,
        exe,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        print_plan: args.print_plan,
    })?;
    if summary.results_path.exists() {
        let html = summary.results_path.with_file_name("report.html");
        match stampede_report::write_html(&summary.results_path, &html) {
            Ok(()) => println!("report:  {}", html.display()),
            Err(e) => eprintln!("stampede: warning: the HTML report was not written: {e}"),
        }
    }
    Ok(summary.exit_code)
}

/// scenarios/shootout.toml in the current directory or the nearest ancestor that has it.
fn default_scenario() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors().map(|dir| dir.join("scenarios").join("shootout.toml")).find(|p| p.is_file())
}
