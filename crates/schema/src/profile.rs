//! The `stampede.profile/1` document: what `stampede profile` writes to
//! profile.json and what `stampede run --profile` stores in a run's
//! `cpu_profile` (docs/profile.md). The profiler writes it; run's terminal
//! table and the report read the same type.

use serde::{Deserialize, Serialize};

/// The version of `profile.json` and of a run's `cpu_profile` object.
pub const SCHEMA: &str = "stampede.profile/1";

/// What a profile produced: how it was taken, its files (relative to the
/// folder they were written to) and the top-functions table.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProfileSummary {
    pub schema: String,
    pub root_pid: u32,
    pub pids: Vec<u32>,
    /// The perf event sampled, `cpu-clock`.
    pub event: String,
    pub frequency_hz: u32,
    pub duration_s: f64,
    /// CPU seconds the sampled processes used while perf sampled, from
    /// /proc; absent when they could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    pub samples: u64,
    /// The flame graph, an SVG file.
    pub flame_svg: String,
    /// The folded stacks, one `frame;frame;… count` line each.
    pub folded: String,
    pub top: Vec<TopFrame>,
    pub notes: Vec<String>,
    /// With `stampede run --profile`: where the same threads were blocked
    /// over the same phase, beside this on-CPU profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<OffCpuSummary>,
    /// With `stampede run --profile` and a slow-request log: what the server
    /// did while the slow requests were in flight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_window: Option<SlowWindowSummary>,
}

/// The profile restricted to the slow requests' windows (intended send to
/// response, CLOCK_MONOTONIC, overlapping windows merged), and how it differs
/// from the whole phase's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SlowWindowSummary {
    /// Slow requests whose windows were used.
    pub requests: u64,
    /// Length of the union of their windows.
    pub window_s: f64,
    /// On-CPU samples inside the windows.
    pub samples: u64,
    /// Off-CPU microseconds inside the windows, summed over threads.
    pub blocked_us: u64,
    /// Flame graph of the on-CPU samples inside the windows.
    pub flame_svg: String,
    pub folded: String,
    /// Differential flame graph: the windows' shape, red where a frame has a
    /// larger share of samples than over the whole phase.
    pub diff_svg: String,
    /// Flame graph of the off-CPU time inside the windows (µs).
    pub offcpu_flame_svg: String,
    /// Frames with a larger share of the on-CPU samples inside the windows than
    /// over the whole phase, most over-represented first.
    pub over_represented: Vec<FrameShift>,
    /// The same for the off-CPU time (with `--profile-off-cpu`): frames, kernel
    /// frames left out, with a larger share of the time blocked inside the
    /// windows than over the phase (percent of blocked µs), most
    /// over-represented first; ties (the frames of one waiter stack) the
    /// frame nearest the stack's root first: the one that waits, not the
    /// library call it waits in. The first frames carry their blocked
    /// intervals as `bursts` (`samples`: intervals merged) and their heaviest
    /// stack inside the windows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked_over_represented: Vec<FrameShift>,
}

/// One frame's share of on-CPU samples (anywhere on the stack) inside the
/// slow windows and over the whole phase, in percent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FrameShift {
    pub frame: String,
    pub kind: String,
    pub slow_pct: f64,
    pub run_pct: f64,
    /// For the most over-represented frames: when the frame was on the CPU
    /// over the whole phase, so that `stampede explain` can attribute slow
    /// requests to it one by one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bursts: Vec<Burst>,
    /// For the first off-CPU frames: the heaviest stack through the frame
    /// inside the slow windows, root first, kernel frames left out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
}

/// A stretch of the phase in which a frame was on the stack of the on-CPU
/// samples (samples less than 10 ms apart), on CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Burst {
    pub start_mono_ns: u64,
    pub end_mono_ns: u64,
    /// On-CPU samples of the frame in it.
    pub samples: u64,
}

/// An off-CPU profile: the stacks at which the profiled threads blocked
/// (`sched:sched_switch` with a state other than runnable), each weighted by
/// how long the thread stayed off the CPU (until perf's context-switch
/// record of it getting a CPU back), in microseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OffCpuSummary {
    /// The perf events recorded, `sched:sched_switch` and the switch records.
    pub event: String,
    /// Blocked intervals counted.
    pub intervals: u64,
    /// Microseconds off CPU, summed over threads.
    pub blocked_us: u64,
    /// The flame graph (widths are microseconds blocked), an SVG file.
    pub flame_svg: String,
    /// The folded stacks, `frame;frame;… microseconds` lines.
    pub folded: String,
    /// Top frames by blocked time (the `samples` fields are microseconds).
    pub top: Vec<TopFrame>,
}

/// One row of the top-functions table. Percentages are of all samples of the profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopFrame {
    /// The frame's name without inferno's `_[k]`/`_[j]` annotation.
    pub frame: String,
    /// `native`, `kernel` or `jit` (a frame named through a perf map file).
    pub kind: String,
    pub self_samples: u64,
    pub self_pct: f64,
    pub total_samples: u64,
    pub total_pct: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_profile_object_reads_with_defaults() {
        let p: ProfileSummary =
            serde_json::from_str(r#"{"flame_svg":"f.svg","top":[{"frame":"main","self_pct":50}],"extra":1}"#).unwrap();
        assert_eq!((p.flame_svg.as_str(), p.folded.as_str(), p.samples), ("f.svg", "", 0));
        assert_eq!((p.top[0].frame.as_str(), p.top[0].self_pct), ("main", 50.0));
    }
}
