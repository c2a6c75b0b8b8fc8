//! The scenario loop: resolve the apps and expand their knob matrices, say
//! the plan of commands, open results.json (and the database), then walk the
//! flat plan of steps (schedule.rs: prepare each app once, then every
//! combination × iteration × profile of it), telling the observers
//! (observer.rs: the terminal, the results writer) what happened. Ends with
//! the summary table and the path of the results; exits 128 + the signal's
//! number after SIGINT (130) or SIGTERM (143), 1 when a run was invalid, 0
//! otherwise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use stampede_schema::redact::Redaction;

use crate::database::cluster::ClusterError;
use crate::database::{Database, DatabaseError};
use crate::environment;
use crate::interrupt::{self, interrupted};
use crate::observer::{Observers, Ran};
use crate::phases::contract::{self, Checked};
use crate::phases::profiling;
use crate::phases::{run_once, Outcome, RunContext, RunSpec};
use crate::record::{ResultsDoc, RunRecord, Skipped, SCHEMA};
use crate::results::ResultsWriter;
use crate::scenario::error::ScenarioError;
use crate::scenario::manifest::{self, Manifest};
use crate::scenario::matrix::{self, Combination};
use crate::scenario::names::run_stem;
use crate::scenario::{Profile, Scenario};
use crate::schedule::{self, Step};
use crate::server::prepare::{prepare, PrepareError, Prepared};
use crate::server::remote_server::{ServerHost, ServerHostError};
use crate::terminal::screen::Screen;

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
    require_taskset(&scenario)?;
    let profiling = scenario.cpu_profile && profiling_usable();
    let scenario_dir = options.scenario_path.parent().map(Path::to_path_buf).unwrap_or_default();
    let apps = load_apps(&scenario, &scenario_dir, profiling)?;
    // The commands to run, said before any of them runs (terminal/plan.rs).
    let commands = crate::terminal::plan::render(
        &scenario,
        apps.iter().map(|a| (a.path.as_path(), &a.manifest, a.combos.as_slice())),
    );
    if options.print_plan {
        print!("{commands}");
        return Ok(RunSummary { results_path: PathBuf::new(), exit_code: 0 });
    }
    eprint!("{commands}");
    // A server on another host is reached (and its clock measured) before
    // anything is written: an unreachable host is one line and exit 2.
    let server_host = match scenario.hosts.as_ref().filter(|h| h.server.is_some()) {
        Some(hosts) => Some(ServerHost::connect(hosts, &options.exe, scenario.stop_grace)?),
        None => None,
    };
    let mut writer = open_results(&options, &scenario, &scenario_dir, server_host.as_ref())?;
    // The scenario's database lives as long as this function: dropping it
    // (at the end, on an error's `?`, after Ctrl-C) stops a private cluster.
    let Some(database) = open_database(&scenario, &writer)? else {
        eprintln!("stampede: {} while the database started; nothing was measured", interrupt::reason());
        return Ok(RunSummary { results_path: writer.path.clone(), exit_code: interrupt::exit_code() });
    };
    let database_env = match database.as_ref().map(Database::env).transpose() {
        Ok(env) => env.unwrap_or_default(),
        Err(err) => return Err(RunError::Database(err, writer.dir.clone())),
    };
    let counts: Vec<usize> = apps.iter().map(|a| a.combos.len()).collect();
    let steps = schedule::steps(&counts, scenario.iterations, scenario.profiles.len());
    let total = schedule::runs(&steps);
    let cores = server_host.as_ref().map_or_else(stampede_probe::machine_cores, |h| h.record.cores);
    let mut screen = Screen::new(total, cores);
    let (logs, results_dir) = (writer.logs(), writer.dir.clone());
    let walk = Walk {
        options: &options,
        scenario: &scenario,
        apps: &apps,
        logs: &logs,
        results_dir: &results_dir,
        profiling,
        server_host: server_host.as_ref(),
        database: database.as_ref(),
        database_env: &database_env,
        redaction: writer.doc.redaction(),
    };
    let walked = walk.steps(&steps, &mut Observers(vec![&mut screen, &mut writer]));
    let walked = walked.map_err(|source| RunError::Results { dir: options.out.clone(), source })?;
    screen.finish(&writer.doc.runs, &writer.path);
    Ok(RunSummary { results_path: writer.path.clone(), exit_code: walked.exit_code(&writer, total) })
}

/// `[pinning]` needs taskset.
fn require_taskset(scenario: &Scenario) -> Result<(), ScenarioError> {
    let pinned = scenario.pinning.server.is_some() || scenario.pinning.loadgen.is_some();
    if pinned && manifest::which("taskset").is_none() {
        return Err(ScenarioError::Field {
            field: "pinning".into(),
            reason: "taskset is not on PATH: install util-linux, or remove [pinning] (--set pinning={})".into(),
        });
    }
    Ok(())
}

/// --profile without a usable perf: one line, then the runs go on unprofiled.
fn profiling_usable() -> bool {
    match profiling::available() {
        Ok(()) => true,
        Err(err) => {
            eprintln!("stampede: --profile: {err}; the runs go on without profiles");
            false
        }
    }
}

/// The scenario's apps, each with its knob combinations (profiled ones
/// with `--profile`) and the matrix's notes about it.
fn load_apps(scenario: &Scenario, scenario_dir: &Path, profiling: bool) -> Result<Vec<App>, ScenarioError> {
    let mut apps = Vec::new();
    for name in &scenario.apps {
        let path = crate::scenario::apps::locate(name, scenario_dir)?;
        let mut manifest = crate::scenario::apps::load(&path)?;
        let (mut combos, notes) = matrix::expand(&manifest, &scenario.matrix);
        if profiling {
            manifest = manifest.profiled();
            combos = combos.iter().map(|c| c.profiled(&manifest.profile)).collect();
        }
        apps.push(App { path, manifest, combos, notes });
    }
    Ok(apps)
}

/// results/<timestamp>/results.json with the environment, before any run.
fn open_results(
    options: &RunOptions,
    scenario: &Scenario,
    scenario_dir: &Path,
    server_host: Option<&ServerHost>,
) -> Result<ResultsWriter, RunError> {
    let repo_hint = if scenario_dir.as_os_str().is_empty() { PathBuf::from(".") } else { scenario_dir.to_path_buf() };
    let mut environment = environment::collect(scenario, &repo_hint, &options.tool_version);
    environment.server_host = server_host.map(|h| h.record.clone());
    let doc = ResultsDoc {
        schema: SCHEMA.to_owned(),
        environment,
        scenario: serde_json::to_value(scenario).unwrap_or(serde_json::Value::Null),
        runs: Vec::new(),
        skipped: Vec::new(),
        dir: None,
    };
    ResultsWriter::create(&options.out, doc).map_err(|source| RunError::Results { dir: options.out.clone(), source })
}

/// The scenario's `[database]`, opened: `Some(None)` without one, `None`
/// when a signal came while it started.
fn open_database(scenario: &Scenario, writer: &ResultsWriter) -> Result<Option<Option<Database>>, RunError> {
    let Some(spec) = &scenario.database else {
        return Ok(Some(None));
    };
    eprintln!("stampede: {}", spec.opening());
    match Database::open(spec, &writer.logs(), &interrupted) {
        Ok(db) => Ok(Some(Some(db))),
        Err(DatabaseError::Cluster(ClusterError::Interrupted)) => Ok(None),
        Err(err) => Err(RunError::Database(err, writer.dir.clone())),
    }
}

/// What every step of the walk shares.
struct Walk<'a> {
    options: &'a RunOptions,
    scenario: &'a Scenario,
    apps: &'a [App],
    logs: &'a Path,
    results_dir: &'a Path,
    profiling: bool,
    server_host: Option<&'a ServerHost>,
    database: Option<&'a Database>,
    database_env: &'a [(String, String)],
    /// How results.json masks secrets: records are masked before anyone sees them.
    redaction: Redaction,
}

/// How the walk ended.
#[derive(Default)]
struct Walked {
    /// Runs that ran to their end (an interrupted one is recorded, but is not one).
    completed: u64,
    any_invalid: bool,
    /// A signal stopped the walk.
    stopped: bool,
    /// The server's host was lost: the line that says so.
    host_lost: Option<String>,
}

/// Where the walk is: the app built for the runs that follow, and the
/// contracts checked on each app × knobs' first run (the same build with
/// the same settings does the same work after).
#[derive(Default)]
struct Position {
    built: Option<(usize, Prepared)>,
    contracts: BTreeMap<(usize, usize), Vec<Checked>>,
}

impl Walk<'_> {
    /// Takes the steps in order until they end, a signal comes or the
    /// server's host is lost.
    fn steps(&self, steps: &[Step], observers: &mut Observers) -> std::io::Result<Walked> {
        let mut walked = Walked::default();
        let mut at = Position::default();
        for &step in steps {
            match step {
                Step::Prepare { app } => at.built = self.prepare(app, observers, &mut walked)?,
                Step::Run { app, combo, iteration, profile } => {
                    let Some((_, prepared)) = at.built.as_ref().filter(|(built, _)| *built == app) else {
                        continue;
                    };
                    if interrupted() {
                        walked.stopped = true;
                    } else {
                        let run = RunAt { app, combo, iteration, profile, prepared };
                        self.run(&run, &mut at.contracts, observers, &mut walked)?;
                    }
                }
            }
            if walked.stopped || walked.host_lost.is_some() {
                break;
            }
        }
        Ok(walked)
    }

    /// Builds app number `app` (here, or on the server's host); `None`
    /// when it is skipped (its runs with it) or a signal came.
    fn prepare(
        &self,
        app: usize,
        observers: &mut Observers,
        walked: &mut Walked,
    ) -> std::io::Result<Option<(usize, Prepared)>> {
        let App { manifest, combos, notes, .. } = &self.apps[app];
        let name = &manifest.name;
        for note in notes {
            observers.note(&format!("stampede: note: {note}"));
        }
        observers.doing(&format!("{name}: building"));
        let (build, logs) = (self.scenario.build, self.logs);
        let prepared = match self.server_host {
            Some(host) => host.prepare(manifest, build, &interrupted),
            None => prepare(manifest, build, logs, &interrupted),
        };
        match prepared {
            Ok(prepared) => {
                observers.prepared(name, &prepared.runtime_version)?;
                Ok(Some((app, prepared)))
            }
            Err(PrepareError::Interrupted) => {
                walked.stopped = true;
                Ok(None)
            }
            Err(err) => {
                let runs =
                    combos.len() as u64 * u64::from(self.scenario.iterations) * self.scenario.profiles.len() as u64;
                observers.skipped(&Skipped { app: name.clone(), reason: err.to_string() }, runs)?;
                Ok(None)
            }
        }
    }
}

/// One run's place in the plan, its app built.
struct RunAt<'a> {
    app: usize,
    combo: usize,
    iteration: u32,
    profile: usize,
    prepared: &'a Prepared,
}

impl Walk<'_> {
    /// Runs one step, or records it as skipped when a contract checked on
    /// its combination's first run, and governing its profile, is broken.
    fn run(
        &self,
        at: &RunAt,
        contracts: &mut BTreeMap<(usize, usize), Vec<Checked>>,
        observers: &mut Observers,
        walked: &mut Walked,
    ) -> std::io::Result<()> {
        let (app, combo, profile) = self.names(at);
        let title = format!("{} [{}] {} #{}", app.name, combo.label(), profile.name, at.iteration);
        let stem = run_stem(&app.name, &combo.label(), &profile.name, at.iteration);
        let checked = contracts.get(&(at.app, at.combo));
        let version = &at.prepared.runtime_version;
        if let Some(record) = self.broken(at, checked) {
            walked.any_invalid = true;
            walked.completed += 1;
            let ran = Ran { title: &title, stem: &stem, record: &record, interrupted: false, runtime_version: version };
            return observers.contract_skipped(&ran);
        }
        let outcome = self.run_once(at, checked, &title, observers);
        if let Some(checked) = outcome.contract {
            contracts.insert((at.app, at.combo), checked);
        }
        // Masked before the terminal shows it, as results.json will be.
        let mut record = outcome.record;
        record.redact(&self.redaction);
        walked.completed += u64::from(!outcome.interrupted);
        walked.any_invalid |= !record.valid;
        let interrupted = outcome.interrupted;
        observers.ran(&Ran { title: &title, stem: &stem, record: &record, interrupted, runtime_version: version })?;
        walked.host_lost = outcome.host_lost;
        walked.stopped |= interrupted;
        Ok(())
    }

    /// The app, the combination and the profile of a run.
    fn names(&self, at: &RunAt) -> (&Manifest, &Combination, &Profile) {
        let app = &self.apps[at.app];
        (&app.manifest, &app.combos[at.combo], &self.scenario.profiles[at.profile])
    }

    /// The record of a run not started, when a contract `checked` on its
    /// combination's first run is broken and governs its profile (a broken
    /// contract skips the profiles it governs, not the others).
    fn broken(&self, at: &RunAt, checked: Option<&Vec<Checked>>) -> Option<RunRecord> {
        let (app, combo, profile) = self.names(at);
        let governing = contract::governing(checked?, &profile.path_label());
        let broken: Vec<&str> = governing.iter().filter_map(|c| c.broken.as_deref()).collect();
        if broken.is_empty() {
            return None;
        }
        let reason = format!("{} (checked on this combination's first run)", broken.join("; "));
        let build_time_ms = at.prepared.build_time_ms;
        let mut record = crate::record::failed(&app.name, &combo.knobs, profile, at.iteration, build_time_ms, reason);
        record.verdicts = governing.iter().map(|c| c.verdict.clone()).collect();
        Some(record)
    }

    /// Runs it (phases/), its phases shown as `title: phase`.
    fn run_once(&self, at: &RunAt, checked: Option<&Vec<Checked>>, title: &str, observers: &Observers) -> Outcome {
        let (app, combo, profile) = self.names(at);
        let spec = RunSpec {
            app,
            combo,
            profile,
            iteration: at.iteration,
            build_time_ms: at.prepared.build_time_ms,
            check: self.scenario.check && checked.is_none(),
            checked: checked.map_or(&[], Vec::as_slice),
        };
        let phase = |what: &str| observers.doing(&format!("{title}: {what}"));
        let note = |line: &str| observers.note(line);
        let ctx = RunContext {
            exe: &self.options.exe,
            scenario: self.scenario,
            logs: self.logs,
            phase: &phase,
            profiling: self.profiling,
            results_dir: self.results_dir,
            note: &note,
            server_host: self.server_host,
            database: self.database,
            database_env: self.database_env,
        };
        run_once(&ctx, &spec)
    }
}

impl Walked {
    /// The exit status, after saying why on stderr when the scenario did
    /// not run to its end.
    fn exit_code(&self, writer: &ResultsWriter, total: u64) -> i32 {
        let (runs, path) = (writer.doc.runs.len(), writer.path.display());
        if let Some(line) = &self.host_lost {
            eprintln!("stampede: error: {line}; the scenario stopped: {runs} run(s) are in {path}");
            2
        } else if self.stopped {
            eprintln!(
                "stampede: {} after {} of {total} run(s): stopped every process it started; what was measured is in {path}",
                interrupt::reason(),
                self.completed,
            );
            interrupt::exit_code()
        } else if runs == 0 {
            eprintln!("stampede: error: no run took place (every app was skipped: see above)");
            2
        } else if self.any_invalid {
            1
        } else {
            0
        }
    }
}
