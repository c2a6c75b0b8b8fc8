//! One run, start to finish: take a port, start the server in its own process
//! group, time it to its first `200`, check the contract, warm up (recorded
//! apart), load while the probe samples, stop the server. Every failure is a
//! one-line reason on an invalid record; the server is stopped on every path
//! (its `Drop` does it if nothing else does).

use std::path::Path;
use std::time::{Duration, Instant};

use stampede_probe::{Probe, ProbeConfig};

use crate::contract::{self, Verdict};
use crate::figures::LoadFigures;
use crate::http;
use crate::interrupt::interrupted;
use crate::loadgen::{LoadError, LoadPhase};
use crate::manifest::Manifest;
use crate::matrix::Combination;
use crate::pinning;
use crate::record::{rps_per_core, MachineRecord, RunRecord};
use crate::scenario::{Profile, Scenario};
use crate::server::Server;

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
}

pub struct RunSpec<'a> {
    pub app: &'a Manifest,
    pub combo: &'a Combination,
    pub profile: &'a Profile,
    pub iteration: u32,
    pub build_time_ms: f64,
    /// Run `stampede check` (false once this app × knobs has passed it).
    pub check: bool,
}

/// A finished run; `interrupted` when Ctrl-C cut it short.
pub struct Outcome {
    pub record: RunRecord,
    pub interrupted: bool,
    /// The contract verdict, when this run checked it: `Err(reason)` if broken.
    pub contract: Option<Result<(), String>>,
}

const TAIL_LINES: usize = 3;

pub fn run_once(ctx: &RunContext, spec: &RunSpec) -> Outcome {
    let s = ctx.scenario;
    let mut record = RunRecord::failed(&spec.app.name, &spec.combo.knobs, spec.profile, spec.iteration, spec.build_time_ms, String::new());
    record.valid = true;
    record.invalid_reason = None;
    let fail = |mut record: RunRecord, reason: String| {
        record.invalidate(reason);
        Outcome { record, interrupted: false, contract: None }
    };
    let stop_short = |mut record: RunRecord| {
        record.invalidate("interrupted (Ctrl-C)");
        Outcome { record, interrupted: true, contract: None }
    };

    let port = if s.port != 0 {
        s.port
    } else {
        match http::free_port() {
            Ok(p) => p,
            Err(e) => return fail(record, format!("cannot find a free port: {e}")),
        }
    };
    if http::port_in_use(port) {
        return fail(record, format!("port {port} is already in use by another process: stop it, or pick another with --set port=<n> (0 picks a free one)"));
    }

    (ctx.phase)("starting");
    let log_name = format!("{}-{}-{}-{}.log", spec.app.name, sanitize(&spec.combo.label()), spec.profile.name, spec.iteration);
    let log = ctx.logs.join(log_name);
    let server_cpus = s.pinning.server.as_ref().map(|t| t.as_str());
    let mut server = match Server::spawn(spec.app, spec.combo, port, server_cpus, &log, s.stop_grace) {
        Ok(server) => server,
        Err(e) => return fail(record, format!("cannot start `{}`: {e}", spec.app.run)),
    };
    let probe = match Probe::start(ProbeConfig { interval: s.sample_interval, ..Default::default() }, server.pid()) {
        Ok(probe) => probe,
        Err(e) => return fail(record, format!("{} exited at once: {e}; output: {}", spec.app.name, server.output_tail(TAIL_LINES))),
    };

    // Start: exec → first 200 on /plaintext.
    let deadline = server.spawned_at + s.start_timeout;
    loop {
        if interrupted() {
            return stop_short(record);
        }
        if let Some(status) = server.exited() {
            return fail(record, format!("{} crashed during start ({status}): {}", spec.app.name, server.output_tail(TAIL_LINES)));
        }
        if Instant::now() > deadline {
            return fail(record, format!("{} did not answer 200 on /plaintext within {} (port {port}): {}", spec.app.name, crate::duration::format(s.start_timeout), server.output_tail(TAIL_LINES)));
        }
        if let Ok((200, took)) = http::get_status(port, "/plaintext", Duration::from_secs(2)) {
            record.start_time_ms = server.spawned_at.elapsed().as_secs_f64() * 1000.0;
            record.first_request_ms = took.as_secs_f64() * 1000.0;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }

    let base_url = format!("http://127.0.0.1:{port}");
    let mut verdict = None;
    if spec.check {
        (ctx.phase)("checking the contract");
        match contract::check(ctx.exe, &base_url, &interrupted) {
            Verdict::Honoured => verdict = Some(Ok(())),
            Verdict::Broken(reason) => {
                let mut outcome = fail(record, reason.clone());
                outcome.contract = Some(Err(reason));
                return outcome;
            }
            Verdict::Interrupted => return stop_short(record),
        }
    }

    let loadgen_cpus = s.pinning.loadgen.as_ref().map(|t| t.as_str());
    // Load hosts reach the server at [hosts] server_address; checks stay local.
    let load_base = s.hosts.as_ref().map_or(base_url.clone(), |h| h.base_url(port));
    let url = format!("{load_base}{}", spec.profile.path);
    let hosts = s.hosts.as_ref();
    let phase = |duration: Duration| LoadPhase { exe: ctx.exe, url: url.clone(), profile: spec.profile, duration, cpus: loadgen_cpus, hosts };
    let crash_or = |server: &mut Server, what: &str, err: LoadError| match server.exited() {
        Some(status) => format!("{} crashed during {what} ({status}): {}", spec.app.name, server.output_tail(TAIL_LINES)),
        None => format!("{what}: {err}"),
    };

    let warmup_start_mono_ns = crate::events::mono_ns();
    if !spec.profile.warmup.is_zero() {
        (ctx.phase)("warming up");
        match phase(spec.profile.warmup).run(|pid| probe.set_loadgen(pid), &interrupted) {
            Ok(doc) => record.warmup = Some(doc),
            Err(LoadError::Interrupted) => return stop_short(record),
            Err(err) => return fail(record, crash_or(&mut server, "warmup", err)),
        }
    }

    (ctx.phase)("measuring");
    // perf samples the measured phase only: it starts after the warmup and is
    // stopped (and its stacks read, while a JVM can still write its perf map)
    // as soon as the load ends.
    let recorder = ctx.profiling.then(|| crate::profiling::start(server.pid() as u32, s.cpu_profile_frequency));
    probe.mark_measured_start();
    let measured_start_mono_ns = crate::events::mono_ns();
    record.clock.measured_start_mono_ns = Some(measured_start_mono_ns);
    let load = phase(spec.profile.duration).run(|pid| probe.set_loadgen(pid), &interrupted);
    if let Some(recorder) = recorder {
        (ctx.phase)("reading the profile");
        let stem = format!("{}-{}-{}-{}", spec.app.name, sanitize(&spec.combo.label()), spec.profile.name, spec.iteration);
        let title = format!("{} [{}] {} #{}", spec.app.name, spec.combo.label(), spec.profile.name, spec.iteration);
        record.cpu_profile = crate::profiling::finish(recorder, ctx.results_dir, &stem, &title, ctx.note);
    }
    let report = probe.finish();
    let crashed = server.exited();
    let crash_tail = server.output_tail(TAIL_LINES);
    let load_end_mono_ns = crate::events::mono_ns();
    (ctx.phase)("stopping");
    server.stop();
    if let Some(profile) = &record.cpu_profile {
        crate::profiling::remove_perf_maps(profile);
    }
    server.finish_output();
    if let Some(capture) = server.capture.clone() {
        match crate::events::collect(&capture, server.exec_mono_ns, measured_start_mono_ns, warmup_start_mono_ns, load_end_mono_ns) {
            Ok(events) => record.events = events,
            Err(e) => (ctx.note)(&format!("{}: runtime events not read: {e}", spec.app.name)),
        }
    }

    record.server = report.server;
    record.loadgen = report.loadgen;
    record.machine = MachineRecord { summary: report.machine, probe_cpu_cores: report.probe_cpu_cores };
    let was_interrupted = matches!(load, Err(LoadError::Interrupted));
    match load {
        Ok(doc) => {
            let figures = LoadFigures::from_json(&doc);
            record.rps_per_server_core = rps_per_core(figures.rps, record.server.cpu_cores_avg);
            judge(&mut record, &figures, loadgen_cpus);
            if let Some(reason) = partial(&doc) {
                record.invalidate(reason);
            }
            record.load = Some(doc);
        }
        Err(LoadError::Interrupted) => record.invalidate("interrupted (Ctrl-C)"),
        Err(err) => record.invalidate(format!("load: {err}")),
    }
    if let Some(status) = crashed {
        record.invalidate(format!("{} crashed during load ({status}): {crash_tail}", spec.app.name));
    }
    Outcome { record, interrupted: was_interrupted, contract: verdict }
}

/// The validity rules that need the load's figures.
fn judge(record: &mut RunRecord, f: &LoadFigures, loadgen_cpus: Option<&str>) {
    if f.socket_errors > 0 {
        record.invalidate(format!("{} socket errors", f.socket_errors));
    }
    if f.bad_responses > 0 {
        record.invalidate(format!("{} responses outside 2xx/3xx", f.bad_responses));
    }
    if f.requests == 0 {
        record.invalidate("no responses in the measured period");
    }
    if f.saturated {
        record.invalidate("load generator saturated: it could not keep to the requested rate");
    }
    // A closed-loop generator that used all the CPU it was given was the
    // bottleneck: the figures describe it, not the server.
    if let Some(cpus) = loadgen_cpus.and_then(|c| pinning::parse_cpu_list(c).ok()) {
        let cores = cpus.len() as f64;
        let used = record.loadgen.cpu_cores_avg.max(f.loadgen_cpu_cores);
        if used >= 0.97 * cores {
            record.invalidate(format!("load generator saturated: it used {used:.2} of its {cores} pinned core(s)"));
        }
    }
}

/// Why a multi-host load document covers only some of its hosts, if it does
/// (`[hosts] on_host_failure = "continue"`): kept, but not comparable.
fn partial(doc: &serde_json::Value) -> Option<String> {
    if doc.get("partial").and_then(|p| p.as_bool()) != Some(true) {
        return None;
    }
    let failed: Vec<String> = doc["failed_hosts"]
        .as_array()
        .map(|a| a.iter().map(|f| format!("host {}: {}", f["host"].as_str().unwrap_or("?"), f["reason"].as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    Some(format!("partial load: {}", failed.join("; ")))
}

fn sanitize(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::tests::fake_load;

    #[test]
    fn socket_errors_and_saturation_invalidate() {
        let profile: Profile = toml::from_str("path = \"/json\"").unwrap();
        let mut r = RunRecord::failed("go", &Default::default(), &profile, 1, 0.0, String::new());
        r.valid = true;
        r.invalid_reason = None;
        judge(&mut r, &LoadFigures::from_json(&fake_load(1000.0, 0)), None);
        assert!(!r.valid, "3 bad responses in the fake document");
        assert_eq!(r.invalid_reason.as_deref(), Some("3 responses outside 2xx/3xx"));
        let mut doc = fake_load(1000.0, 4);
        doc["errors"]["status"] = 0.into();
        doc["loadgen"]["cpu_cores"] = 0.99.into();
        let mut r = RunRecord::failed("go", &Default::default(), &profile, 1, 0.0, String::new());
        r.valid = true;
        r.invalid_reason = None;
        judge(&mut r, &LoadFigures::from_json(&doc), Some("0"));
        let reason = r.invalid_reason.unwrap();
        assert!(reason.contains("4 socket errors") && reason.contains("saturated"), "{reason}");
    }
}
