//! Driving `perf`: `perf record -e cpu-clock -g` on a process tree between
//! `start` and `stop`, then `perf script` to turn the samples into text. The
//! software `cpu-clock` event is used because it works on machines without
//! hardware counters (virtual machines, most CI runners). The data file lives
//! in a temporary directory that is deleted with the recording.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::collections::HashMap;

use crate::error::ProfileError;
use crate::{jit, tree};

/// How long perf gets to open its events, and to write its data after SIGINT.
const START_DEADLINE: Duration = Duration::from_secs(10);
const STOP_DEADLINE: Duration = Duration::from_secs(30);

/// The `perf` executable on `PATH`, found the way a shell would find it.
pub fn find_perf() -> Result<PathBuf, ProfileError> {
    let path = std::env::var_os("PATH").ok_or(ProfileError::PerfMissing)?;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join("perf");
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(ProfileError::PerfMissing)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// `kernel.perf_event_paranoid`, as text ("unknown" when unreadable).
pub fn paranoid_level() -> String {
    fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

/// What a recorder samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// `cpu-clock` at a frequency: where the CPU time went.
    OnCpu,
    /// Every `sched:sched_switch` with its stack, and the context-switch
    /// records that say when each thread got a CPU back: where threads were
    /// blocked, and for how long (the `offcpu` module).
    OffCpu,
}

/// A `perf record` in progress.
pub struct Recorder {
    pub sampling: Sampling,
    perf: PathBuf,
    child: Option<Child>,
    dir: tempfile::TempDir,
    pub root: u32,
    pub pids: Vec<u32>,
    pub frequency_hz: u32,
    names: HashMap<u32, String>,
    started: Instant,
    /// How long it sampled, once [`Recorder::interrupt`] stopped it.
    sampled: Option<Duration>,
    /// Each sampled process's CPU seconds when sampling began.
    cpu_from: Vec<(u32, f64)>,
    /// The CPU seconds the sampled processes used while sampled, once
    /// interrupted (processes gone by then left out).
    cpu_s: Option<f64>,
}

impl Recorder {
    /// Starts sampling `root` and its descendants at `frequency_hz`, and returns
    /// once perf has opened its events (so the caller can start the load).
    pub fn start(root: u32, frequency_hz: u32) -> Result<Recorder, ProfileError> {
        Recorder::start_sampling(root, frequency_hz, Sampling::OnCpu)
    }

    /// Starts recording where `root`'s tree blocks (see [`Sampling::OffCpu`]).
    pub fn start_off_cpu(root: u32) -> Result<Recorder, ProfileError> {
        Recorder::start_sampling(root, 0, Sampling::OffCpu)
    }

    fn start_sampling(root: u32, frequency_hz: u32, sampling: Sampling) -> Result<Recorder, ProfileError> {
        if sampling == Sampling::OnCpu && !(1..=10_000).contains(&frequency_hz) {
            return Err(ProfileError::BadFrequency(frequency_hz));
        }
        if !tree::alive(root) {
            return Err(ProfileError::NoSuchProcess(root));
        }
        let perf = find_perf()?;
        // Debian's level 3 forbids perf_event_open to everyone but root.
        let paranoid = paranoid_level();
        if paranoid == "3" && unsafe { libc::geteuid() } != 0 {
            return Err(ProfileError::NotPermitted { pid: root, paranoid });
        }
        let pids: Vec<u32> = tree::descendants(root).into_iter().filter(|p| tree::alive(*p)).collect();
        let dir = tempfile::Builder::new().prefix("stampede-profile-").tempdir().map_err(ProfileError::TempDir)?;
        let data = dir.path().join("perf.data");
        let log = fs::File::create(dir.path().join("record.log"))
            .map_err(|source| ProfileError::File { path: dir.path().join("record.log"), source })?;
        let pid_list = pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let mut command = Command::new(&perf);
        // perf dies with `stampede`, not left sampling a server that is gone.
        stampede_probe::lifeline::die_with_parent(&mut command);
        command.arg("record");
        match sampling {
            Sampling::OnCpu => command.args(["-e", "cpu-clock", "-g", "-F"]).arg(frequency_hz.to_string()),
            Sampling::OffCpu => command.args(["-e", "sched:sched_switch", "--switch-events", "-g"]),
        };
        // Timestamps on CLOCK_MONOTONIC, the load generator's slow-log clock.
        let child = command
            .args(["-k", "CLOCK_MONOTONIC"])
            .args(["-p", &pid_list, "-o"])
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|source| ProfileError::Spawn { program: perf.display().to_string(), source })?;
        let mut recorder = Recorder {
            sampling,
            perf,
            child: Some(child),
            dir,
            root,
            pids,
            frequency_hz,
            names: HashMap::new(),
            started: Instant::now(),
            sampled: None,
            cpu_from: Vec::new(),
            cpu_s: None,
        };
        recorder.remember_names();
        recorder.wait_until_sampling(&data)?;
        recorder.started = Instant::now();
        if sampling == Sampling::OnCpu {
            recorder.cpu_from =
                recorder.pids.iter().filter_map(|&p| Some((p, stampede_probe::process_cpu_s(p)?))).collect();
        }
        Ok(recorder)
    }

    /// perf writes its file header once its events are open; an early exit
    /// means it refused, and its log says why.
    fn wait_until_sampling(&mut self, data: &Path) -> Result<(), ProfileError> {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            let child = self.child.as_mut().expect("perf child present until stop");
            if let Ok(Some(_)) = child.try_wait() {
                self.child = None;
                return Err(self.classify_failure());
            }
            if fs::metadata(data).map(|m| m.len() > 0).unwrap_or(false) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(ProfileError::RecordStartTimeout(START_DEADLINE.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Turns perf's log after a failed start into the error that says what to do.
    fn classify_failure(&self) -> ProfileError {
        let log = fs::read_to_string(self.dir.path().join("record.log")).unwrap_or_default();
        classify_record_log(&log, self.root)
    }

    /// Records the process name of every process now in the tree, so that
    /// samples of threads perf calls `:TID` are filed under their process.
    fn remember_names(&mut self) {
        for pid in tree::descendants(self.root) {
            if let Some(name) = tree::name(pid) {
                self.names.entry(pid).or_insert(name);
            }
        }
    }

    /// Seconds since sampling began.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Ends sampling now (SIGINT, so perf writes its data) without waiting
    /// for perf: two recorders of one phase are interrupted together, so
    /// neither samples the time the other takes to finish.
    pub fn interrupt(&mut self) {
        if self.sampled.is_some() {
            return;
        }
        self.sampled = Some(self.started.elapsed());
        let used = |&(p, from): &(u32, f64)| stampede_probe::process_cpu_s(p).map(|to| (to - from).max(0.0));
        self.cpu_s = (!self.cpu_from.is_empty()).then(|| self.cpu_from.iter().filter_map(used).sum());
        self.remember_names();
        if let Some(child) = &self.child {
            // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        }
    }

    /// Stops perf (see [`Recorder::interrupt`]), waits for it with a
    /// deadline, and returns `perf script`'s text.
    pub fn stop(mut self) -> Result<Recording, ProfileError> {
        self.interrupt();
        let duration = self.sampled.unwrap_or_default();
        let mut child = self.child.take().expect("perf child present until stop");
        let deadline = Instant::now() + STOP_DEADLINE;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ProfileError::RecordStopTimeout(STOP_DEADLINE.as_secs()));
                }
            }
        }
        let log = fs::read_to_string(self.dir.path().join("record.log")).unwrap_or_default();
        if !log.contains("Captured and wrote") {
            return Err(classify_record_log(&log, self.root));
        }
        // Perf maps must exist before perf script symbolises the samples.
        let live: Vec<u32> = tree::descendants(self.root);
        let notes = jit::prepare_maps(&live);
        let script = self.script()?;
        Ok(Recording {
            root: self.root,
            pids: self.pids.clone(),
            frequency_hz: self.frequency_hz,
            duration,
            cpu_s: self.cpu_s,
            script,
            names: std::mem::take(&mut self.names),
            notes,
        })
    }

    fn script(&self) -> Result<String, ProfileError> {
        let data = self.dir.path().join("perf.data");
        // No `period` field: each sample then counts once, whatever its weight.
        // Times in nanoseconds, for the slow-request windows.
        let mut command = Command::new(&self.perf);
        match self.sampling {
            Sampling::OnCpu => command.args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso"]),
            Sampling::OffCpu => {
                command.args(["script", "-F", "comm,pid,tid,time,event,trace,ip,sym,dso", "--show-switch-events"])
            }
        };
        let out = command
            .args(["--ns", "-i"])
            .arg(&data)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| ProfileError::Spawn { program: self.perf.display().to_string(), source })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            return Err(ProfileError::ScriptFailed(last_line(&stderr).to_string()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Recorder {
    /// A recorder dropped without `stop` (an error or Ctrl-C in the caller)
    /// still ends its perf, so no sampler outlives the run.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What `perf record` captured, as `perf script` text.
pub struct Recording {
    pub root: u32,
    pub pids: Vec<u32>,
    pub frequency_hz: u32,
    pub duration: Duration,
    /// CPU seconds the sampled processes used while sampled (/proc).
    pub cpu_s: Option<f64>,
    pub script: String,
    /// pid → process name, for the roots of the folded stacks.
    pub names: HashMap<u32, String>,
    /// Why some frames may be unnamed (see `jit`).
    pub notes: Vec<String>,
}

/// Maps the log of a failed `perf record` to the error a person can act on.
pub fn classify_record_log(log: &str, pid: u32) -> ProfileError {
    let lower = log.to_ascii_lowercase();
    if lower.contains("perf_event_paranoid")
        || lower.contains("permission denied")
        || lower.contains("no permission")
        || lower.contains("operation not permitted")
        || lower.contains("access to performance monitoring")
    {
        return ProfileError::NotPermitted { pid, paranoid: paranoid_level() };
    }
    if lower.contains("no such process") {
        return ProfileError::NoSuchProcess(pid);
    }
    let line = log.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("perf exited without a message");
    ProfileError::RecordFailed(line.to_string())
}

fn last_line(text: &str) -> &str {
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("no message")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paranoid_refusal_is_reported_as_not_permitted() {
        let log = "Error:\nAccess to performance monitoring and observability operations is limited.\n\
                   Consider adjusting /proc/sys/kernel/perf_event_paranoid setting";
        assert!(matches!(classify_record_log(log, 7), ProfileError::NotPermitted { pid: 7, .. }));
    }

    #[test]
    fn a_vanished_process_is_reported_as_such() {
        let log = "Error:\nThe sys_perf_event_open() syscall returned with 3 (No such process) for event (cpu-clock).";
        assert!(matches!(classify_record_log(log, 9), ProfileError::NoSuchProcess(9)));
    }

    #[test]
    fn other_failures_keep_perfs_last_line() {
        match classify_record_log("warming up\nsomething odd happened\n", 1) {
            ProfileError::RecordFailed(line) => assert_eq!(line, "something odd happened"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_missing_perf_line_says_how_to_install_it() {
        let text = ProfileError::PerfMissing.to_string();
        assert!(text.contains("not on PATH") && text.contains("apt-get install linux-perf"), "{text}");
        let text = ProfileError::NotPermitted { pid: 1, paranoid: "3".into() }.to_string();
        assert!(text.contains("perf_event_paranoid"), "{text}");
    }
}
