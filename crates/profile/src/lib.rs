//! Profiling a running server with `perf`: sampling its process tree during a
//! measured phase, folding the stacks, and writing an interactive flame graph,
//! the folded stacks and a "top functions" table. `stampede profile` uses it
//! on its own; `stampede run --profile` wraps a measured phase in it. When
//! `perf` is missing or not permitted, `ProfileError::is_unavailable` says so
//! and the caller goes on without a profile.

pub mod bursts;
pub mod error;
pub mod flame;
pub mod fold;
pub mod jit;
pub mod offcpu;
pub mod perf;
pub mod slow;
pub mod top;
pub mod tree;
pub mod waiters;

use std::path::Path;
use std::time::Duration;

pub use error::ProfileError;
pub use fold::Folded;
pub use perf::{Recorder, Recording};
pub use top::TopFrame;

/// The version of `profile.json` and of a run's `profile` object.
pub use stampede_schema::profile::SCHEMA;
/// 99 Hz rather than 100 so sampling does not beat with timers of round periods.
pub const DEFAULT_FREQUENCY_HZ: u32 = 99;
/// Rows in the top-functions table.
pub const TOP_FRAMES: usize = 20;

/// A finished profile: folded stacks and how they were taken.
#[derive(Clone, Debug)]
pub struct Profile {
    pub root_pid: u32,
    pub pids: Vec<u32>,
    pub frequency_hz: u32,
    pub duration: Duration,
    /// CPU seconds the sampled processes used while sampled (/proc).
    pub cpu_s: Option<f64>,
    pub folded: Folded,
    pub notes: Vec<String>,
}

impl Profile {
    /// Folds a recording; an empty one (no CPU used) is an error.
    pub fn from_recording(rec: Recording) -> Result<Profile, ProfileError> {
        let profile = Profile::fold(rec)?;
        match profile.folded.samples() {
            0 => Err(ProfileError::NoSamples(profile.root_pid)),
            _ => Ok(profile),
        }
    }

    /// Folds a recording, empty or not: a server that only waits (on a lock,
    /// on I/O) can use no CPU while its off-CPU profile says where it waited.
    /// An empty profile writes no flame graph.
    pub fn fold(rec: Recording) -> Result<Profile, ProfileError> {
        let folded = Folded::from_perf_script(&rec.script, &rec.names)?;
        let mut notes = rec.notes;
        notes.extend(coverage_note(folded.samples(), rec.frequency_hz, rec.cpu_s));
        Ok(Profile {
            root_pid: rec.root,
            pids: rec.pids,
            frequency_hz: rec.frequency_hz,
            duration: rec.duration,
            cpu_s: rec.cpu_s,
            folded,
            notes,
        })
    }

    /// The top-functions table.
    pub fn top(&self) -> Vec<TopFrame> {
        top::top_frames(&self.folded, TOP_FRAMES)
    }

    /// Writes `flame-<stem>.svg` and `stacks-<stem>.folded` into `dir` and
    /// returns the summary naming them (paths relative to `dir`).
    pub fn write(&self, dir: &Path, stem: &str, title: &str) -> Result<Summary, ProfileError> {
        let flame_svg = format!("flame-{stem}.svg");
        let folded = format!("stacks-{stem}.folded");
        let subtitle = format!(
            "perf cpu-clock at {} Hz for {:.1} s, {} samples, pids {}",
            self.frequency_hz,
            self.duration.as_secs_f64(),
            self.folded.samples(),
            self.pids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
        );
        let (flame_svg, folded) = match self.folded.samples() {
            0 => (String::new(), String::new()),
            _ => {
                let svg = flame::render(&self.folded, title, Some(subtitle))?;
                write_file(&dir.join(&flame_svg), &svg)?;
                write_file(&dir.join(&folded), self.folded.to_text().as_bytes())?;
                (flame_svg, folded)
            }
        };
        Ok(Summary {
            schema: SCHEMA.to_string(),
            root_pid: self.root_pid,
            pids: self.pids.clone(),
            event: "cpu-clock".to_string(),
            frequency_hz: self.frequency_hz,
            duration_s: (self.duration.as_secs_f64() * 1000.0).round() / 1000.0,
            cpu_s: self.cpu_s.map(|s| (s * 1000.0).round() / 1000.0),
            samples: self.folded.samples(),
            flame_svg,
            folded,
            top: self.top(),
            notes: self.notes.clone(),
            off_cpu: None,
            slow_window: None,
        })
    }
}

/// A note when perf's samples stand for clearly less CPU than the processes
/// used (`samples / frequency` under 90% of `cpu_s`). `cpu-clock` samples
/// come from a timer, and a thread that runs in short bursts between naps of
/// a few microseconds is sampled less than it runs: on this project's VM a
/// loop of 50 µs of work and 20 µs of sleep got 84% of its CPU sampled at
/// 999 Hz (docs/profile.md). Below a second of CPU, ticks of 10 ms and a
/// few hundred samples make the comparison too coarse, so nothing is said.
fn coverage_note(samples: u64, frequency_hz: u32, cpu_s: Option<f64>) -> Option<String> {
    let cpu_s = cpu_s.filter(|&s| s >= 1.0)?;
    let sampled_s = samples as f64 / f64::from(frequency_hz.max(1));
    (sampled_s < 0.9 * cpu_s).then(|| {
        format!(
            "perf's {samples} samples at {frequency_hz} Hz stand for {sampled_s:.2} s of CPU, and the profiled processes used {cpu_s:.2} s: {:.0}% was sampled. Timer samples miss work done in short bursts between naps (an event loop under load), more so on a virtual machine; the shares are of what was sampled",
            100.0 * sampled_s / cpu_s
        )
    })
}

/// What a profile produced, as written to `profile.json` and into a run's
/// `cpu_profile` field: the `stampede.profile/1` document, declared once in
/// stampede-schema (documented in docs/profile.md).
pub use stampede_schema::profile::ProfileSummary as Summary;

/// Samples `pid`'s process tree for `duration` and returns the profile.
pub fn profile_for(pid: u32, duration: Duration, frequency_hz: u32) -> Result<Profile, ProfileError> {
    let recorder = Recorder::start(pid, frequency_hz)?;
    wait_while_alive(pid, duration);
    Profile::from_recording(recorder.stop()?)
}

/// Sleeps for `duration`, or until `pid` exits.
pub fn wait_while_alive(pid: u32, duration: Duration) {
    let deadline = std::time::Instant::now() + duration;
    loop {
        let now = std::time::Instant::now();
        if now >= deadline || !tree::alive(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50).min(deadline - now));
    }
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ProfileError> {
    std::fs::write(path, bytes).map_err(|source| ProfileError::File { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::coverage_note;

    #[test]
    fn a_profile_that_sampled_too_little_of_the_cpu_says_how_much() {
        let note = coverage_note(840, 999, Some(1.0)).expect("84% sampled is worth a note");
        assert!(note.contains("840 samples at 999 Hz") && note.contains("84% was sampled"), "{note}");
    }

    #[test]
    fn no_note_when_the_samples_account_for_the_cpu_or_it_is_too_little_to_tell() {
        assert_eq!(coverage_note(950, 999, Some(1.0)), None);
        assert_eq!(coverage_note(10, 99, Some(0.5)), None, "under a second of CPU");
        assert_eq!(coverage_note(10, 99, None), None, "CPU not readable");
    }
}
