//! Profiling a running server with `perf`: sampling its process tree during a
//! measured phase, folding the stacks, and writing an interactive flame graph,
//! the folded stacks and a "top functions" table. `stampede profile` uses it
//! on its own; `stampede run --profile` wraps a measured phase in it. When
//! `perf` is missing or not permitted, `ProfileError::is_unavailable` says so
//! and the caller goes on without a profile.

pub mod error;
pub mod flame;
pub mod fold;
pub mod jit;
pub mod offcpu;
pub mod perf;
pub mod slow;
pub mod top;
pub mod tree;

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
    pub folded: Folded,
    pub notes: Vec<String>,
}

impl Profile {
    /// Folds a recording; an empty one (no CPU used) is an error.
    pub fn from_recording(rec: Recording) -> Result<Profile, ProfileError> {
        let folded = Folded::from_perf_script(&rec.script, &rec.names)?;
        if folded.samples() == 0 {
            return Err(ProfileError::NoSamples(rec.root));
        }
        Ok(Profile {
            root_pid: rec.root,
            pids: rec.pids,
            frequency_hz: rec.frequency_hz,
            duration: rec.duration,
            folded,
            notes: rec.notes,
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
        let svg = flame::render(&self.folded, title, Some(subtitle))?;
        write_file(&dir.join(&flame_svg), &svg)?;
        write_file(&dir.join(&folded), self.folded.to_text().as_bytes())?;
        Ok(Summary {
            schema: SCHEMA.to_string(),
            root_pid: self.root_pid,
            pids: self.pids.clone(),
            event: "cpu-clock".to_string(),
            frequency_hz: self.frequency_hz,
            duration_s: (self.duration.as_secs_f64() * 1000.0).round() / 1000.0,
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
