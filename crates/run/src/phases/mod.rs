//! One run, start to finish: take a port, start the server in its own process
//! group (here, or on `[hosts] server` through `stampede agent`), time it to
//! its first `200`, check the contract, warm up (recorded apart), load while
//! the probe samples, stop the server. Every failure is a one-line reason on
//! an invalid record; the server is stopped on every path (its `Drop` does it
//! if nothing else does).

pub(crate) mod contention;
pub(crate) mod contract;
pub(crate) mod fault;
pub mod latency;
pub(crate) mod loadgen;
pub(crate) mod profiling;

use std::path::Path;
use std::time::Duration;

use crate::database::Database;
use crate::interrupt::interrupted;
use crate::phases::loadgen::{LoadError, LoadPhase};
use crate::record::{rps_per_core, MachineRecord, RunRecord};
use crate::scenario::manifest::Manifest;
use crate::scenario::matrix::Combination;
use crate::scenario::names::run_stem;
use crate::scenario::{Profile, Scenario};
use crate::server::pinning;
use crate::server::ready::ReadyCheck;
use crate::server::remote_server::ServerHost;
use crate::server::served::{pick_port, Failure, Launch, LocalServer, Served};
use contention::GeneratorCpu;
use contract::{Checked, Verdict};
use stampede_schema::database::DatabaseUsage;

/// The built-in contract of the database endpoints, checked with a database.
const DATABASE_CONTRACT: &str = "db";

/// What every run of a scenario shares.
pub struct RunContext<'a> {
    pub exe: &'a Path,
    pub scenario: &'a Scenario,
    pub logs: &'a Path,
    /// Called with a short phase description (for the progress bar).
    pub phase: &'a dyn Fn(&str),
    /// Profile measured phases with perf (`--profile`, and perf is usable).
    pub profiling: bool,
    /// The folder of results.json, where flame graphs are written.
    pub results_dir: &'a Path,
    /// Prints a one-line note above the progress bar.
    pub note: &'a dyn Fn(&str),
    /// `[hosts] server`: the server runs there, through `stampede agent`.
    pub server_host: Option<&'a ServerHost>,
    /// The scenario's `[database]`, when it has one.
    pub database: Option<&'a Database>,
    /// Its connection settings, given to every app (empty without one).
    pub database_env: &'a [(String, String)],
}

pub struct RunSpec<'a> {
    pub app: &'a Manifest,
    pub combo: &'a Combination,
    pub profile: &'a Profile,
    pub iteration: u32,
    pub build_time_ms: f64,
    /// Run `stampede check` (false once this app × knobs has been checked).
    pub check: bool,
    /// The contracts checked on this app × knobs' first run, when `check` is false.
    pub checked: &'a [Checked],
}

/// A finished run; `interrupted` when a signal (Ctrl-C, SIGTERM) cut it short.
pub struct Outcome {
    pub record: RunRecord,
    pub interrupted: bool,
    /// The contracts this run checked, with their verdicts (none when it checked none).
    pub contract: Option<Vec<Checked>>,
    /// The one line saying the server's host was lost (its agent died): the
    /// scenario stops after this run.
    pub host_lost: Option<String>,
}

/// Starts the run's server: here, or through `stampede agent` on `[hosts] server`.
fn start_server<'a>(
    ctx: &RunContext<'a>,
    spec: &RunSpec,
    log: &Path,
    ready: &ReadyCheck,
) -> Result<Box<dyn Served + 'a>, Failure> {
    let s = ctx.scenario;
    let launch = |port| Launch {
        app: spec.app,
        combo: spec.combo,
        port,
        cpus: s.pinning.server.as_ref().map(|t| t.as_str()),
        log,
        grace: s.stop_grace,
        sample_interval: s.sample_interval,
        ready,
        env: ctx.database_env,
        database_pid: ctx.database.and_then(Database::local_pid),
    };
    match ctx.server_host {
        Some(host) => Ok(Box::new(host.start(&launch(spec.app.fixed_port.unwrap_or(s.port)), s.start_timeout)?)),
        None => {
            let port = pick_port(spec.app.fixed_port.unwrap_or(s.port)).map_err(Failure::Run)?;
            Ok(Box::new(LocalServer::start(&launch(port)).map_err(Failure::Run)?))
        }
    }
}

pub fn run_once(ctx: &RunContext, spec: &RunSpec) -> Outcome {
    let s = ctx.scenario;
    let mut record = crate::record::failed(
        &spec.app.name,
        &spec.combo.knobs,
        spec.profile,
        spec.iteration,
        spec.build_time_ms,
        String::new(),
    );
    record.valid = true;
    record.invalid_reason = None;
    let claimed = spec.app.contract();
    record.contract = claimed.clone().unwrap_or_else(|| "none".into());
    let end = |mut record: RunRecord, failure: Failure| {
        let (interrupted, lost) = match failure {
            Failure::Run(reason) => {
                record.invalidate(reason);
                (false, None)
            }
            Failure::Interrupted => {
                record.invalidate(crate::interrupt::reason());
                (true, None)
            }
            Failure::Host(line) => {
                record.invalidate(line.clone());
                (false, Some(line))
            }
        };
        Outcome { record, interrupted, contract: None, host_lost: lost }
    };

    (ctx.phase)("starting");
    let stem = run_stem(&spec.app.name, &spec.combo.label(), &spec.profile.name, spec.iteration);
    let log_name = format!("{stem}.log");
    let log = ctx.logs.join(log_name);
    let ready = match ReadyCheck::for_app(spec.app) {
        Ok(ready) => ready,
        Err(reason) => return end(record, Failure::Run(reason)),
    };
    let mut server = match start_server(ctx, spec, &log, &ready) {
        Ok(server) => server,
        Err(failure) => return end(record, failure),
    };
    let port = server.port();

    // Start: exec → first ready answer (ready.rs; timed where the server runs).
    match server.wait_ready(s.start_timeout, &interrupted) {
        Ok(ready) => {
            record.start_time_ms = ready.start_time_ms;
            record.first_request_ms = ready.first_request_ms;
        }
        Err(failure) => return end(record, failure),
    }

    // Checks and load reach a remote server at [hosts] server_address; a
    // local one at 127.0.0.1, and load hosts at [hosts] server_address.
    let base_url = match ctx.server_host {
        Some(host) => match host.reachable(port, &ready) {
            Ok(url) => url,
            Err(reason) => return end(record, Failure::Run(reason)),
        },
        None => format!("http://127.0.0.1:{port}"),
    };
    // The claimed contract, then with a database its rules (contracts/db.toml),
    // which read the rows back through the database; each governs the
    // profiles on its own endpoints (contract::governing).
    let database_url = ctx.database.map(Database::url);
    // An app that claims `db` itself is checked once, with the database.
    let own = claimed.as_deref().filter(|c| *c != DATABASE_CONTRACT || database_url.is_none());
    let contracts = [own.map(|c| (c, None, true)), database_url.map(|url| (DATABASE_CONTRACT, Some(url), false))];
    let mut checked: Vec<Checked> = spec.checked.to_vec();
    for (contract, database, claimed) in contracts.into_iter().flatten().filter(|_| spec.check) {
        (ctx.phase)("checking the contract");
        match contract::check(ctx.exe, contract, claimed, &base_url, database, &spec.app.urls, &interrupted) {
            Verdict::Checked(one) => checked.push(one),
            Verdict::Interrupted => return end(record, Failure::Interrupted),
        }
    }
    let verdict = spec.check.then(|| checked.clone());
    let governing = contract::governing(&checked, &record.path);
    record.verdicts = governing.iter().map(|c| c.verdict.clone()).collect();
    let broken: Vec<&str> = governing.iter().filter_map(|c| c.broken.as_deref()).collect();
    if !broken.is_empty() {
        let mut outcome = end(record, Failure::Run(broken.join("; ")));
        outcome.contract = verdict;
        return outcome;
    }

    let loadgen_cpus = s.pinning.loadgen.as_ref().map(|t| t.as_str());
    let hosts = s.hosts.as_ref().filter(|h| !h.load.is_empty());
    let load_base = match (hosts, ctx.server_host) {
        (Some(h), None) => h.base_url(port),
        _ => base_url.clone(),
    };
    // The profile's paths at the server's own URLs (the manifest's `urls`).
    let profile = at_own_urls(spec.profile, &spec.app.urls);
    let phase = |duration: Duration| LoadPhase {
        exe: ctx.exe,
        base_url: load_base.clone(),
        profile: &profile,
        dir: &s.dir,
        duration,
        cpus: loadgen_cpus,
        hosts,
        hdr_log: None,
        rate: None,
        slow_log: 0,
    };
    let crash_or = |server: &mut Box<dyn Served + '_>, what: &str, err: LoadError| match server.crashed() {
        Some(status) => format!("{} crashed during {what} ({status}): {}", spec.app.name, server.output_tail()),
        None => format!("{what}: {err}"),
    };

    server.mark_warmup();
    if !spec.profile.spec.warmup.is_zero() {
        (ctx.phase)("warming up");
        match phase(spec.profile.spec.warmup).run(|pid| server.set_loadgen(pid), &|| interrupted() || !server.alive()) {
            Ok(doc) => record.warmup = Some(doc),
            // Stopped because the server's host was lost: finish says how.
            Err(LoadError::Interrupted) if !interrupted() => {
                return end(record, server.finish().err().unwrap_or(Failure::Interrupted))
            }
            Err(LoadError::Interrupted) => return end(record, Failure::Interrupted),
            Err(err) => {
                let reason = crash_or(&mut server, "warmup", err);
                return end(record, Failure::Run(reason));
            }
        }
    }

    (ctx.phase)("measuring");
    // perf samples the measured phase only: it starts after the warmup and is
    // stopped (and its stacks read, while a JVM can still write its perf map)
    // as soon as the load ends. Scenario validation refuses it remotely.
    let recorder = server
        .local_pid()
        .filter(|_| ctx.profiling)
        .map(|pid| crate::phases::profiling::start(pid as u32, s.cpu_profile_frequency, s.cpu_profile_off_cpu));
    server.mark_measured_start();
    // One interval log per run beside results.json (the generator cannot
    // write one when it runs on load hosts).
    let hdr_log = hosts.is_none().then(|| format!("{stem}.hlog"));
    // Every measured phase keeps its slowest requests for `stampede explain`
    // (latency::slow_log): here about twice the warmup's rate, since a
    // server still warming up answers slower than a warm one.
    let duration = spec.profile.duration();
    let expected = record.warmup.as_ref().filter(|w| w.rps > 0.0).map(|w| 2.0 * w.rps * duration.as_secs_f64());
    let measured = LoadPhase {
        hdr_log: hdr_log.as_ref().map(|name| ctx.results_dir.join(name)),
        slow_log: latency::slow_log(spec.profile.spec.slow_log, expected),
        ..phase(duration)
    };
    let load = measured.run(|pid| server.set_loadgen(pid), &|| interrupted() || !server.alive());
    // The probe's figures (CPU, memory, efficiency) are the measured phase's
    // alone, not the latency phase's nor the profile's reading.
    server.mark_measured_end();
    if let Some(recorder) = recorder {
        (ctx.phase)("reading the profile");
        let title = format!("{} [{}] {} #{}", spec.app.name, spec.combo.label(), spec.profile.name, spec.iteration);
        let slow = load.as_ref().map_or(&[][..], |doc| doc.slow_requests.as_slice());
        record.cpu_profile = crate::phases::profiling::finish(recorder, slow, ctx.results_dir, &stem, &title, ctx.note);
    }
    // No later phase runs against a server that has exited: its figures
    // would describe connection errors, not the server.
    let dead = server.crashed().is_some();
    let latency = match (&load, &spec.profile.latency) {
        (Ok(closed), Some(latency)) if !interrupted() && server.alive() && !dead => {
            (ctx.phase)("measuring latency (open loop)");
            Some(latency::run(spec.profile, latency, closed.rps, |duration, rate, slow_log| {
                let open = LoadPhase { rate: Some(rate), slow_log, ..phase(duration) };
                open.run(|pid| server.set_loadgen(pid), &|| interrupted() || !server.alive())
            }))
        }
        _ => None,
    };
    (ctx.phase)("stopping");
    let finished = match server.finish() {
        Ok(finished) => finished,
        Err(failure) => return end(record, failure),
    };
    if let Some(profile) = &record.cpu_profile {
        crate::phases::profiling::remove_perf_maps(profile);
    }
    if !finished.strays.is_empty() {
        (ctx.note)(&format!(
            "stampede: {}: stopped {} process(es) it had left outside its process tree (daemonized): {}",
            spec.app.name,
            finished.strays.len(),
            finished.strays.join("; ")
        ));
    }
    record.events = finished.events;
    if let Some(e) = finished.events_error {
        (ctx.note)(&format!("{}: runtime events not read: {e}", spec.app.name));
    }
    record.clock.measured_start_mono_ns = finished.measured_start_mono_ns;

    let report = finished.report;
    record.server = report.server;
    record.listen_drops = finished.listen_drops;
    record.loadgen = report.loadgen;
    record.machine = MachineRecord { summary: report.machine, probe_cpu_cores: report.probe_cpu_cores };
    let was_interrupted = matches!(load, Err(LoadError::Interrupted))
        || matches!(latency, Some(latency::Outcome::Failed(LoadError::Interrupted)));
    if let Some(db) = ctx.database {
        let tree = report.database.as_ref();
        let rps = load.as_ref().map_or(0.0, |doc| doc.rps);
        let cores = tree.map(|t| t.cpu_cores_avg);
        record.database = Some(DatabaseUsage {
            database: db.describe(),
            cpu_cores_avg: cores,
            cpu_pct_max: tree.map(|t| t.cpu_pct_max),
            rss_max_mib: tree.map(|t| t.rss_max_mib),
            rps_per_core: DatabaseUsage::rps_per_core(rps, record.server.cpu_cores_avg, cores),
        });
    }
    // The reasons of the server's doing, to say whether all are (fault.rs).
    let mut server_reasons: Vec<String> = Vec::new();
    // A crash is named first: what follows from it (connect errors, a
    // skipped latency phase) is its consequence, not another cause.
    if let Some(status) = &finished.crashed {
        let mut crash = format!("{} crashed during load ({status}): {}", spec.app.name, finished.tail);
        if dead && spec.profile.latency.is_some() {
            crash.push_str(" (the latency phase was not run)");
        }
        server_reasons.push(crash.clone());
        record.invalidate(crash);
        server_reasons.extend(load.as_ref().map(fault::crash_consequences).unwrap_or_default());
        if let Some(latency::Outcome::Measured(doc)) = &latency {
            server_reasons.extend(fault::crash_consequences(doc).into_iter().map(|r| format!("latency phase: {r}")));
        }
    }
    match load {
        Ok(doc) => {
            record.rps_per_server_core = rps_per_core(doc.rps, record.server.cpu_cores_avg);
            let backlog = fault::Backlog::of_listener(finished.listen_drops.measured);
            let cpu = GeneratorCpu::of(&record.loadgen.samples, 0.0, doc.duration_s, doc.duration_s);
            server_reasons.extend(judge(&mut record, &doc, backlog, &cpu, loadgen_cpus));
            record.load = Some(doc);
            record.hdr_log = hdr_log.filter(|name| ctx.results_dir.join(name).exists());
        }
        Err(LoadError::Interrupted) => record.invalidate(crate::interrupt::reason()),
        Err(err) => record.invalidate(format!("load: {err}")),
    }
    // Whether the measured load stands on its own: what the latency phase
    // finds below spoils only the latency figures (`load_valid`).
    let load_valid = record.valid;
    match latency {
        Some(latency::Outcome::Measured(doc)) => {
            let backlog = fault::Backlog::of_listener(finished.listen_drops.after);
            let from_s = record.load.as_ref().map_or(0.0, |l| l.duration_s);
            let cpu = GeneratorCpu::of(&record.loadgen.samples, from_s, f64::INFINITY, doc.duration_s);
            for (reason, server) in contention::preempted(fault::reasons(&doc, backlog), &doc, &cpu) {
                let reason = format!("latency phase: {reason}");
                if server {
                    server_reasons.push(reason.clone());
                }
                record.invalidate(reason);
            }
            record.latency = Some(*doc);
        }
        Some(latency::Outcome::Failed(LoadError::Interrupted)) => record.invalidate(crate::interrupt::reason()),
        Some(latency::Outcome::Failed(err)) => record.invalidate(format!("latency phase: {err}")),
        Some(latency::Outcome::NoRate) => {
            record.invalidate("latency phase: the closed loop sustained under 1 request/s to take a fraction of")
        }
        None => {}
    }
    record.load_valid = load_validity(load_valid, &record, finished.crashed.is_some());
    // Measured here with the generator here: other processes are visible.
    if ctx.server_host.is_none() && hosts.is_none() {
        record.warnings.extend(contention::neighbours(&record, stampede_probe::machine_cores()));
    }
    record.invalid_by_server = fault::all_the_servers(record.invalid_reason.as_deref(), &server_reasons);
    Outcome { record, interrupted: was_interrupted, contract: verdict, host_lost: None }
}

/// A run's `load_valid`: `Some(true)` when the run is invalid but was still
/// valid once its measured load had been judged (only its latency phase
/// failed, and the server did not crash), so its closed-loop figures count;
/// `None` otherwise (it reads as `valid`).
fn load_validity(valid_after_load: bool, record: &RunRecord, crashed: bool) -> Option<bool> {
    (valid_after_load && !record.valid && !crashed).then_some(true)
}

/// `profile` with every path it loads (`path`, `urls`, `mix`) rewritten
/// through the app's own URLs; full URLs are left as they are.
fn at_own_urls(profile: &Profile, urls: &stampede_check::UrlMap) -> Profile {
    let mut own = profile.clone();
    let rewrite = |path: &mut String| {
        if path.starts_with('/') {
            *path = urls.rewrite(path);
        }
    };
    own.path.iter_mut().for_each(rewrite);
    own.spec.urls.iter_mut().for_each(rewrite);
    own.spec.mix.iter_mut().for_each(|target| rewrite(&mut target.url));
    own
}

/// The validity rules that need the load's figures: the load's own
/// (`LoadResult::invalid_reasons`, defined once in stampede-schema) and the
/// generator's pinned CPU, which only the orchestrator knows. Returns the
/// reasons that are the server's doing (fault.rs).
fn judge(
    record: &mut RunRecord,
    load: &stampede_schema::LoadResult,
    backlog: Option<fault::Backlog>,
    cpu: &GeneratorCpu,
    loadgen_cpus: Option<&str>,
) -> Vec<String> {
    let mut server = Vec::new();
    for (reason, by_server) in contention::preempted(fault::reasons(load, backlog), load, cpu) {
        if by_server {
            server.push(reason.clone());
        }
        record.invalidate(reason);
    }
    // A closed-loop generator that used all the CPU it was given was the
    // bottleneck: the figures describe it, not the server.
    if let Some(cpus) = loadgen_cpus.and_then(|c| pinning::parse_cpu_list(c).ok()) {
        let cores = cpus.len() as f64;
        let used = record.loadgen.cpu_cores_avg.max(load.loadgen.cpu_cores);
        if used >= 0.97 * cores {
            record.invalidate(format!("load generator saturated: it used {used:.2} of its {cores} pinned core(s)"));
        }
    }
    server
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::fake_load;

    #[test]
    fn the_profile_loads_the_servers_own_urls() {
        let profile: Profile = toml::from_str("path = \"/queries?queries=20\"").unwrap();
        let urls = stampede_check::UrlMap::parse_pairs(&["queries=/queries/"]).unwrap();
        assert_eq!(at_own_urls(&profile, &urls).path.as_deref(), Some("/queries/20"));
        assert_eq!(at_own_urls(&profile, &Default::default()).path.as_deref(), Some("/queries?queries=20"));
    }

    #[test]
    fn only_a_latency_phase_failure_leaves_the_closed_loop_valid() {
        let mut r = RunRecord { load: Some(fake_load(1000.0, 0)), ..RunRecord::default() };
        assert_eq!(load_validity(true, &r, false), None, "a valid run needs no flag");
        r.invalidate("latency phase: load generator late");
        assert_eq!(load_validity(true, &r, false), Some(true));
        r.load_valid = Some(true);
        assert!(r.load_is_valid() && !r.is_valid());
        assert_eq!(load_validity(true, &r, true), None, "a crash spoils every figure");
        assert_eq!(load_validity(false, &r, false), None, "the measured load was invalid itself");
    }

    #[test]
    fn socket_errors_and_saturation_invalidate() {
        let profile: Profile = toml::from_str("path = \"/json\"").unwrap();
        let mut r = crate::record::failed("go", &Default::default(), &profile, 1, 0.0, String::new());
        r.valid = true;
        r.invalid_reason = None;
        judge(&mut r, &fake_load(1000.0, 0), None, &GeneratorCpu::default(), None);
        assert!(!r.valid, "3 bad responses in the fake document");
        assert_eq!(r.invalid_reason.as_deref(), Some("3 bad responses (outside 2xx/3xx)"));
        let mut doc = fake_load(1000.0, 4);
        doc.errors.status = 0;
        doc.loadgen.cpu_cores = 0.99;
        let mut r = crate::record::failed("go", &Default::default(), &profile, 1, 0.0, String::new());
        r.valid = true;
        r.invalid_reason = None;
        judge(&mut r, &doc, None, &GeneratorCpu::default(), Some("0"));
        let reason = r.invalid_reason.unwrap();
        assert!(reason.contains("4 socket errors") && reason.contains("saturated"), "{reason}");
    }
}
