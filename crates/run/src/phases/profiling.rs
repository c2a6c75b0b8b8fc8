//! `--profile` inside a run: perf around the measured phase, via the
//! `stampede-profile` crate. Profiling is an extra: when perf is missing or
//! refused, one line says so (with the remedy) and the runs go on without a
//! profile; when one profile fails, its run keeps its measurements.

use std::path::Path;

use stampede_profile::offcpu::OffCpu;
use stampede_profile::slow::{SlowWindow, Windows};
use stampede_profile::{perf, top, Profile, ProfileError, Recorder};
use stampede_schema::load::SlowRequest;
use stampede_schema::profile::ProfileSummary;
use stampede_schema::LoadResult;

use crate::phases::loadgen::LoadError;
use crate::phases::state::RunState;
use crate::server::served::Served;

/// Whether profiling can work on this machine. `Err` is the one line to print
/// once, before the first run (perf missing or forbidden).
pub fn available() -> Result<(), ProfileError> {
    perf::find_perf()?;
    let paranoid = perf::paranoid_level();
    // SAFETY: geteuid has no preconditions and touches no memory.
    if paranoid == "3" && unsafe { libc::geteuid() } != 0 {
        return Err(ProfileError::NotPermitted { pid: std::process::id(), paranoid });
    }
    Ok(())
}

/// The on-CPU and (when asked) off-CPU recorders of one measured phase.
pub struct Recorders {
    on_cpu: Result<Recorder, ProfileError>,
    off_cpu: Option<Result<Recorder, ProfileError>>,
}

/// Starts sampling the server's process tree on the CPU and, with
/// `off_cpu`, where it blocks. The off-CPU recorder is opt-in: it takes a
/// sample with its stack at every context switch of the server, which
/// costs far more than 99 timer samples a second on a server that switches
/// often (bench/profile_cost.sh).
pub fn start(pid: u32, frequency_hz: u32, off_cpu: bool) -> Recorders {
    Recorders { on_cpu: Recorder::start(pid, frequency_hz), off_cpu: off_cpu.then(|| Recorder::start_off_cpu(pid)) }
}

/// Runs the measured phase `measure` under perf when the run profiles and
/// the server runs here (scenario validation refuses it remotely): perf
/// starts after the warmup and is stopped, its stacks read while a JVM can
/// still write its perf map, as soon as the load ends.
pub fn around(
    run: &mut RunState,
    server: &mut dyn Served,
    measure: impl FnOnce(&mut RunState, &mut dyn Served) -> Result<LoadResult, LoadError>,
) -> Result<LoadResult, LoadError> {
    let s = run.ctx.scenario;
    let pid = server.local_pid().filter(|_| run.ctx.profiling);
    let recorders = pid.map(|pid| start(pid as u32, s.cpu_profile_frequency, s.cpu_profile_off_cpu));
    let load = measure(run, server);
    if let Some(recorders) = recorders {
        (run.ctx.phase)("reading the profile");
        let spec = run.spec;
        let title = format!("{} [{}] {} #{}", spec.app.name, spec.combo.label(), spec.profile.name, spec.iteration);
        let slow = load.as_ref().map_or(&[][..], |doc| doc.slow_requests.as_slice());
        run.record.cpu_profile = finish(recorders, slow, run.ctx.results_dir, &run.stem, &title, run.ctx.note);
    }
    load
}

/// Stops the recorder, writes `flame-<stem>.svg` and `stacks-<stem>.folded`
/// into `dir`, and returns the summary for the run record; a failure is noted
/// and gives no profile.
pub fn finish(
    mut recorders: Recorders,
    slow: &[SlowRequest],
    dir: &Path,
    stem: &str,
    title: &str,
    note: &dyn Fn(&str),
) -> Option<ProfileSummary> {
    // Both end with the phase, before either is read (reading takes seconds).
    recorders.on_cpu.iter_mut().chain(recorders.off_cpu.iter_mut().flatten()).for_each(Recorder::interrupt);
    let off_cpu = recorders.off_cpu.map(|r| r.and_then(|r| r.stop()).and_then(|rec| OffCpu::from_recording(&rec)));
    let written = recorders.on_cpu.and_then(|r| r.stop()).and_then(|rec| {
        let (script, names) = (rec.script.clone(), rec.names.clone());
        // A server that waits more than it runs may leave no CPU sample;
        // with an off-CPU profile to show, its run keeps a profile.
        let waited = matches!(&off_cpu, Some(Ok(_)));
        let profile = if waited { Profile::fold(rec)? } else { Profile::from_recording(rec)? };
        if profile.folded.samples() == 0 {
            note(&format!(
                "stampede: {title}: no on-CPU sample (the server used next to no CPU); its off-CPU profile is kept"
            ));
        }
        let mut summary = profile.write(dir, stem, title)?;
        let windows = Windows::of(slow);
        if !windows.is_empty() {
            let window = SlowWindow {
                requests: slow.len(),
                windows,
                whole: &profile.folded,
                script: &script,
                names: &names,
                off_cpu: off_cpu.as_ref().and_then(|o| o.as_ref().ok()),
            };
            match window.write(dir, stem, title) {
                Ok(w) => summary.slow_window = Some(w),
                Err(err) => note(&format!("stampede: {title}: no slow-window profile: {err}")),
            }
        }
        Ok(summary)
    });
    match written {
        Ok(mut summary) => {
            match off_cpu.map(|o| o.and_then(|off| off.write(dir, stem, title))) {
                Some(Ok(off)) => summary.off_cpu = Some(off),
                Some(Err(err)) => note(&format!("stampede: {title}: no off-CPU profile: {err}")),
                None => {}
            }
            for line in &summary.notes {
                note(&format!("stampede: {title}: profile: {line}"));
            }
            Some(summary)
        }
        Err(err) => {
            note(&format!("stampede: {title}: no profile: {err}"));
            None
        }
    }
}

/// Deletes the perf maps (`/tmp/perf-<pid>.map`) the profiled processes left
/// behind once the server has stopped: the stacks are already folded, and
/// Node's map grows with every compiled function and is never removed.
pub fn remove_perf_maps(summary: &ProfileSummary) {
    for pid in &summary.pids {
        let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    }
}

/// The top-functions table of a run's `cpu_profile`, for the terminal.
pub fn table(summary: &ProfileSummary) -> String {
    let mut text = top::render_table(&summary.top, summary.samples, 100);
    if !summary.flame_svg.is_empty() {
        text.push_str(&format!("flame graph: {} (beside results.json)\n", summary.flame_svg));
    }
    if let Some(off) = &summary.off_cpu {
        text.push_str(&format!(
            "off-CPU flame graph: {} ({:.2} s blocked in {} intervals; top: {})\n",
            off.flame_svg,
            off.blocked_us as f64 / 1e6,
            off.intervals,
            off.top.iter().take(3).map(|t| t.frame.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(w) = &summary.slow_window {
        let top: Vec<String> = w
            .over_represented
            .iter()
            .take(3)
            .map(|f| format!("{} {:.1}% vs {:.1}%", f.frame, f.slow_pct, f.run_pct))
            .collect();
        text.push_str(&format!(
            "slow requests ({}, {:.3} s of windows, {} samples): {} {}; over-represented: {}\n",
            w.requests,
            w.window_s,
            w.samples,
            w.flame_svg,
            w.diff_svg,
            if top.is_empty() { "none".to_string() } else { top.join(", ") }
        ));
    }
    text
}
