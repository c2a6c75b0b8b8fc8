//! What can go wrong while profiling, each variant saying the cause and the
//! remedy in one line. A missing or forbidden `perf` is an expected condition,
//! not a crash: callers such as `stampede run` print the line and carry on
//! without a profile, so the messages are written to be read on their own.

use std::path::PathBuf;

/// Why a profile could not be taken or written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("perf is not on PATH, so no profile was taken; install it (Debian: apt-get install linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r)) and try again")]
    PerfMissing,

    #[error("perf may not sample pid {pid} (kernel.perf_event_paranoid = {paranoid}), so no profile was taken; run as root or allow it with: sudo sysctl kernel.perf_event_paranoid=1")]
    NotPermitted { pid: u32, paranoid: String },

    #[error("--pid {0}: no such process")]
    NoSuchProcess(u32),

    #[error("--frequency {0}: use a sampling frequency between 1 and 10000 Hz (99 is usual)")]
    BadFrequency(u32),

    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },

    #[error("perf record failed, so no profile was taken: {0}")]
    RecordFailed(String),

    #[error("perf record did not start sampling within {0} s; is the machine overloaded?")]
    RecordStartTimeout(u64),

    #[error("perf record did not stop within {0} s of SIGINT and was killed; no profile was taken")]
    RecordStopTimeout(u64),

    #[error("perf script failed: {0}")]
    ScriptFailed(String),

    #[error("perf recorded no samples of pid {0}: the process tree used no CPU while it was profiled")]
    NoSamples(u32),

    #[error("cannot fold perf script output into stacks: {0}")]
    Fold(std::io::Error),

    #[error("cannot render the flame graph: {0}")]
    Render(std::io::Error),

    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: line {line}: not a folded stack (`frame;frame;… COUNT`)")]
    BadFolded { path: PathBuf, line: usize },

    #[error("cannot create a temporary directory for perf.data: {0}")]
    TempDir(std::io::Error),
}

impl ProfileError {
    /// True when the profile was not taken because `perf` is unavailable or
    /// not allowed here: a condition of the machine, not of the run.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, ProfileError::PerfMissing | ProfileError::NotPermitted { .. })
    }
}
