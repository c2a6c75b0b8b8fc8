//! The scenario loop: resolve the apps, prepare (build) each once, expand its
//! knob matrix, and run every combination × iteration × profile, writing
//! results.json after each run and printing its tables. Ends with the summary
//! table and the path of the results; exits 128 + the signal's number after
//! SIGINT (130) or SIGTERM (143), 1 when a run was invalid, 0 otherwise.

use std::path::{Path, PathBuf};

use crate::database::{Database, DatabaseError};
use crate::environment;
use crate::interrupt::{self, interrupted};
use crate::phases::profiling;
use crate::phases::{run_once, RunContext, RunSpec};
use crate::record::{ResultsDoc, Skipped, SCHEMA};
use crate::results::ResultsWriter;
use crate::scenario::error::ScenarioError;
use crate::scenario::manifest::{self, Manifest};
use crate::scenario::matrix::{self, Combination};
use crate::scenario::Scenario;
use crate::server::prepare::{prepare, PrepareError};
use crate::server::remote_server::{ServerHost, ServerHostError};
use crate::terminal::progress::Progress;
use crate::terminal::tables;

pub struct RunOptions {
    pub scenario_path: PathBuf,
    /// `--set` overrides, shortcut flags already turned into sets.
    pub sets: Vec<String>,
    /// Parent of `<timestamp>/results.json`.
    pub out: PathBuf,
    /// The `stampede` binary that provides `load` and `check`.
    pub exe: PathBuf,
    pub tool_version: String,
    /// Print what would be executed (terminal/plan.rs) on stdout and run nothing.
    pub print_plan: bool,
}

/// What a finished scenario left behind.
pub struct RunSummary {
    pub results_path: PathBuf,
    pub exit_code: i32,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("cannot write results under {dir}: {source} (choose a writable folder with --out)")]
    Results { dir: PathBuf, source: std::io::Error },
    #[error(transparent)]
    ServerHost(#[from] ServerHostError),
    #[error("{0} (nothing was measured; the results folder is {1})")]
    Database(DatabaseError, PathBuf),
}

struct App {
    /// Where the manifest was read from.
    path: PathBuf,
    manifest: Manifest,
    combos: Vec<Combination>,
    notes: Vec<String>,
}

pub fn run(options: RunOptions) -> Result<RunSummary, RunError> {
    interrupt::install();
    // Orphans of what we start (a server's daemonized child) come back to
    // us rather than to init; the stops find them by their tag (server/process.rs).
    stampede_probe::lifeline::become_subreaper();
    let scenario = Scenario::load(&options.scenario_path, &options.sets)?;
    if (scenario.pinning.server.is_some() || scenario.pinning.loadgen.is_some()) && manifest::which("taskset").is_none()
    {
        return Err(ScenarioError::Field {
            field: "pinning".into(),
            reason: "taskset is not on PATH: install util-linux, or remove [pinning] (--set pinning={})".into(),
        }
        .into());
    }
    // --profile without a usable perf: one line, then the runs go on unprofiled.
    let profiling = scenario.cpu_profile
        && match profiling::available() {
            Ok(()) => true,
            Err(err) => {
                eprintln!("stampede: --profile: {err}; the runs go on without profiles");
                false
            }
        };
    let scenario_dir = options.scenario_path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut apps = Vec::new();
    for name in &scenario.apps {
        let path = manifest::locate(name, &scenario_dir)?;
        let mut manifest = Manifest::load(&path)?;
        let (mut combos, notes) = matrix::expand(&manifest, &scenario.matrix);
        if profiling {
            manifest = manifest.profiled();
            combos = combos.iter().map(|c| c.profiled(&manifest.profile)).collect();
        }
        apps.push(App { path, manifest, combos, notes });
    }
    // The commands to run, said before any of them runs (terminal/plan.rs).
    let plan = crate::terminal::plan::render(
        &scenario,
        apps.iter().map(|a| (a.path.as_path(), &a.manifest, a.combos.as_slice())),
    );
    if options.print_plan {
        print!("{plan}");
        return Ok(RunSummary { results_path: PathBuf::new(), exit_code: 0 });
    }
    eprint!("{plan}");
    // A server on another host is reached (and its clock measured) before
    // anything is written: an unreachable host is one line and exit 2.
    let server_host = match scenario.hosts.as_ref().filter(|h| h.server.is_some()) {
        Some(hosts) => Some(ServerHost::connect(hosts, &options.exe, scenario.stop_grace)?),
        None => None,
    };
    let per_combo = u64::from(scenario.iterations) * scenario.profiles.len() as u64;
    let total: u64 = apps.iter().map(|a| a.combos.len() as u64 * per_combo).sum();

    let repo_hint = if scenario_dir.as_os_str().is_empty() { PathBuf::from(".") } else { scenario_dir.clone() };
    let mut environment = environment::collect(&scenario, &repo_hint, &options.tool_version);
    environment.server_host = server_host.as_ref().map(|h| h.record.clone());
    let doc = ResultsDoc {
        schema: SCHEMA.to_owned(),
        environment,
        scenario: serde_json::to_value(&scenario).unwrap_or(serde_json::Value::Null),
        runs: Vec::new(),
        skipped: Vec::new(),
        dir: None,
    };
    let write_err = |source| RunError::Results { dir: options.out.clone(), source };
    let mut writer = ResultsWriter::create(&options.out, doc).map_err(write_err)?;
    let logs = writer.logs();
    let results_dir = writer.dir.clone();
    let cores = server_host.as_ref().map_or_else(stampede_probe::machine_cores, |h| h.record.cores);

    // The scenario's database lives as long as this function: dropping it
    // (at the end, on an error's `?`, after Ctrl-C) stops a private cluster.
    let database = match &scenario.database {
        Some(spec) => {
            eprintln!("stampede: {}", spec.opening());
            match Database::open(spec, &logs, &interrupted) {
                Ok(db) => Some(db),
                Err(DatabaseError::Cluster(crate::database::cluster::ClusterError::Interrupted)) => {
                    eprintln!("stampede: {} while the database started; nothing was measured", interrupt::reason());
                    return Ok(RunSummary { results_path: writer.path.clone(), exit_code: interrupt::exit_code() });
                }
                Err(err) => return Err(RunError::Database(err, results_dir)),
            }
        }
        None => None,
    };
    let database_env = match database.as_ref().map(Database::env).transpose() {
        Ok(env) => env.unwrap_or_default(),
        Err(err) => return Err(RunError::Database(err, results_dir)),
    };

    let progress = Progress::new(total);
    let mut any_invalid = false;
    // Runs that ran to their end (an interrupted one is recorded, but is not one).
    let mut completed: u64 = 0;
    let mut stopped = false;
    let mut host_lost = None;
    'apps: for app in &apps {
        let name = &app.manifest.name;
        for note in &app.notes {
            progress.note(&format!("stampede: note: {note}"));
        }
        progress.set_message(format!("{name}: building"));
        let prepared = match &server_host {
            Some(host) => host.prepare(&app.manifest, scenario.build, &interrupted),
            None => prepare(&app.manifest, scenario.build, &logs, &interrupted),
        };
        let prepared = match prepared {
            Ok(p) => p,
            Err(PrepareError::Interrupted) => {
                stopped = true;
                break 'apps;
            }
            Err(err) => {
                progress.note(&format!("stampede: {name}: {err}"));
                writer.skip(Skipped { app: name.clone(), reason: err.to_string() }).map_err(write_err)?;
                for _ in 0..app.combos.len() as u64 * per_combo {
                    progress.inc();
                }
                continue;
            }
        };
        writer.doc.environment.runtimes.insert(name.clone(), prepared.runtime_version.clone());
        writer.write().map_err(write_err)?;
        for combo in &app.combos {
            // The contract is checked on the first run of each app × knobs;
            // the same build with the same settings does the same work after.
            let mut contract: Option<Vec<crate::phases::contract::Checked>> = None;
            for iteration in 1..=scenario.iterations {
                for profile in &scenario.profiles {
                    if interrupted() {
                        stopped = true;
                        break 'apps;
                    }
                    let title = format!("{name} [{}] {} #{iteration}", combo.label(), profile.name);
                    let stem = crate::scenario::names::run_stem(name, &combo.label(), &profile.name, iteration);
                    let phase = |what: &str| progress.set_message(format!("{title}: {what}"));
                    let note = |line: &str| progress.note(line);
                    let ctx = RunContext {
                        exe: &options.exe,
                        scenario: &scenario,
                        logs: &logs,
                        phase: &phase,
                        profiling,
                        results_dir: &results_dir,
                        note: &note,
                        server_host: server_host.as_ref(),
                        database: database.as_ref(),
                        database_env: &database_env,
                    };
                    // A broken contract skips the profiles it governs, not the others.
                    let governing =
                        contract.as_deref().map(|c| crate::phases::contract::governing(c, &profile.path_label()));
                    let broken: Vec<&str> = governing.iter().flatten().filter_map(|c| c.broken.as_deref()).collect();
                    if !broken.is_empty() {
                        let mut record = crate::record::failed(
                            name,
                            &combo.knobs,
                            profile,
                            iteration,
                            prepared.build_time_ms,
                            format!("{} (checked on this combination's first run)", broken.join("; ")),
                        );
                        record.verdicts = governing.iter().flatten().map(|c| c.verdict.clone()).collect();
                        progress.inc();
                        any_invalid = true;
                        completed += 1;
                        writer.push(record, &stem).map_err(write_err)?;
                        continue;
                    }
                    let check = scenario.check && contract.is_none();
                    let spec = RunSpec {
                        app: &app.manifest,
                        combo,
                        profile,
                        iteration,
                        build_time_ms: prepared.build_time_ms,
                        check,
                        checked: contract.as_deref().unwrap_or(&[]),
                    };
                    let outcome = run_once(&ctx, &spec);
                    if outcome.contract.is_some() {
                        contract = outcome.contract.clone();
                    }
                    progress.inc();
                    // Masked before the terminal shows it, as results.json will be.
                    let mut record = outcome.record;
                    record.redact(&writer.doc.redaction());
                    if !outcome.interrupted {
                        completed += 1;
                    }
                    any_invalid |= !record.valid;
                    for warning in &record.warnings {
                        progress.note(&format!("stampede: {title}: warning: {warning}"));
                    }
                    if !record.valid && !outcome.interrupted {
                        progress.note(&format!(
                            "stampede: {title}: invalid: {}",
                            record.invalid_reason.as_deref().unwrap_or("")
                        ));
                    }
                    progress.println(&format!(
                        "\n{title}\n{}",
                        tables::run_tables(&record, &prepared.runtime_version, cores)
                    ));
                    if let Some(m) = &record.server.microstates {
                        progress.println(&crate::terminal::microstates::table(m));
                    }
                    if let Some(profile) = &record.cpu_profile {
                        progress.println(&profiling::table(profile));
                    }
                    writer.push(record, &stem).map_err(write_err)?;
                    if outcome.host_lost.is_some() {
                        host_lost = outcome.host_lost;
                        break 'apps;
                    }
                    if outcome.interrupted {
                        stopped = true;
                        break 'apps;
                    }
                }
            }
        }
    }
    progress.finish();
    if !writer.doc.runs.is_empty() {
        println!("\nsummary (median over valid iterations)\n{}", tables::summary_table(&writer.doc.runs));
    }
    println!("\nresults: {}", writer.path.display());
    let exit_code = if let Some(line) = host_lost {
        eprintln!(
            "stampede: error: {line}; the scenario stopped: {} run(s) are in {}",
            writer.doc.runs.len(),
            writer.path.display()
        );
        2
    } else if stopped {
        eprintln!(
            "stampede: {} after {completed} of {total} run(s): stopped every process it started; what was measured is in {}",
            interrupt::reason(),
            writer.path.display()
        );
        interrupt::exit_code()
    } else if writer.doc.runs.is_empty() {
        eprintln!("stampede: error: no run took place (every app was skipped: see above)");
        2
    } else if any_invalid {
        1
    } else {
        0
    };
    Ok(RunSummary { results_path: writer.path.clone(), exit_code })
}
