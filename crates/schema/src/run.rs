//! The `stampede.run/1` document (results.json, docs/results.md): how the
//! results were made, the scenario as run, and one record per app × knobs ×
//! profile × iteration. `stampede run` writes these types as the run goes;
//! `stampede report`, `compare` and `explain` read the same ones.
//!
//! Reading is lenient so that older, partial and hand-written files render:
//! a missing field reads as its default (0, empty, `valid: true`), `null`
//! reads as the default, counts may be whole floats (`3.0`), knob values may
//! be numbers, the command line may be a list of words, and unknown fields
//! are ignored (and so dropped if the document is written again). Sessions
//! that add figures add them as their own sub-structs with
//! `#[serde(default)]`, so files without them still read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::lenient;
use crate::load::LoadResult;
use crate::process::{MachineSummary, TreeSummary};
use crate::profile::ProfileSummary;

pub const SCHEMA: &str = "stampede.run/1";

/// A whole results.json.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ResultsDoc {
    pub schema: String,
    pub environment: Environment,
    /// The scenario file as run (after `--set`), echoed for the record.
    pub scenario: serde_json::Value,
    #[serde(deserialize_with = "lenient::or_default")]
    pub runs: Vec<RunRecord>,
    /// Apps (or app × knob values) that could not run at all, and why.
    #[serde(deserialize_with = "lenient::or_default")]
    pub skipped: Vec<Skipped>,
    /// The folder the document was read from, not part of it: the files a
    /// run names (`hdr_log`, flame graphs) are plain names in this folder.
    #[serde(skip)]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Skipped {
    pub app: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub reason: String,
}

/// How and where the results were made.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    #[serde(deserialize_with = "lenient::or_default")]
    pub tool_version: String,
    pub git_commit: Option<String>,
    #[serde(deserialize_with = "lenient::text_or_words")]
    pub command_line: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub cpu_model: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub kernel: String,
    #[serde(deserialize_with = "lenient::count")]
    pub cores: usize,
    #[serde(deserialize_with = "lenient::or_default")]
    pub pinning: PinningRecord,
    /// App name → its `version` command's output.
    #[serde(deserialize_with = "lenient::text_map")]
    pub runtimes: BTreeMap<String, String>,
    /// Wall clock at the start, seconds since 1970 (0: not recorded).
    #[serde(deserialize_with = "lenient::count")]
    pub started_unix_s: u64,
    /// With `[hosts] server`: where the server ran and that host's clock
    /// offset; the CPU, kernel and cores above are then this machine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_host: Option<ServerHostRecord>,
}

/// The CPUs each side was pinned to (`taskset` lists), `null` when not pinned.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PinningRecord {
    pub server: Option<String>,
    pub loadgen: Option<String>,
}

/// Where the server ran, as results.json records it (`environment.server_host`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerHostRecord {
    /// `[hosts] server` as written.
    pub host: String,
    /// The address the controller and load hosts reached the server at.
    pub address: String,
    /// The stampede that ran the agent there.
    pub stampede: String,
    /// Its wall clock minus ours, in milliseconds.
    #[serde(deserialize_with = "lenient::or_default")]
    pub clock_offset_ms: f64,
    /// The round trip of that measurement, in milliseconds (the offset is uncertain by half).
    #[serde(deserialize_with = "lenient::or_default")]
    pub clock_rtt_ms: f64,
    #[serde(deserialize_with = "lenient::count")]
    pub cores: usize,
    pub cpu_model: String,
    pub kernel: String,
}

/// One contract's verdict on an app × knobs (checked on its first run),
/// recorded with every profile the contract governs: the profiles whose path
/// is one of its endpoints (a failing `db` invalidates `/db` and `/queries`,
/// not `/plaintext`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContractVerdict {
    /// Its name (`tfb`, `db`, a contract file).
    pub contract: String,
    /// `pass`, `warn` (passed, some rules with a warning) or `fail`.
    pub verdict: String,
    /// How many rules it judged.
    #[serde(default)]
    pub rules: u32,
    /// The ids of the rules that failed, all of them.
    #[serde(default)]
    pub failed: Vec<String>,
    /// The ids of the rules that passed with a warning.
    #[serde(default)]
    pub warned: Vec<String>,
}

/// One app × knobs × profile × iteration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRecord {
    pub app: String,
    #[serde(deserialize_with = "lenient::text_map")]
    pub knobs: BTreeMap<String, String>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub profile: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub path: String,
    #[serde(deserialize_with = "lenient::count")]
    pub iteration: u32,
    /// A run is valid unless it says otherwise (`valid` absent reads as true).
    #[serde(deserialize_with = "valid_or_true")]
    pub valid: bool,
    pub invalid_reason: Option<String>,
    /// True when the run is invalid only for what the server did, not the
    /// load generator: connect errors and late sends that came with its
    /// accept queue overflowing (docs/results.md). Absent reads as false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub invalid_by_server: bool,
    /// Whether the measured `load`'s figures (requests/s, requests/s per
    /// core, CPU, RSS) count when the run is invalid: true when every reason
    /// was its latency phase's, which spoils only the latency figures.
    /// Absent reads as `valid` ([`RunRecord::load_is_valid`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_valid: Option<bool>,
    /// The contract the app claims (manifest `contract`), `none` when it
    /// claims none and so was not checked.
    #[serde(deserialize_with = "lenient::or_default")]
    pub contract: String,
    /// The verdict of each contract that governs this profile (the claimed
    /// one, and `db` for the database endpoints), whether it passed or not;
    /// empty when nothing was checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<ContractVerdict>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub build_time_ms: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub start_time_ms: f64,
    #[serde(deserialize_with = "lenient::or_default")]
    pub first_request_ms: f64,
    pub warmup: Option<LoadResult>,
    /// The measured phase: closed loop unless the profile gives a rate; the
    /// run's requests/s and efficiency come from it.
    pub load: Option<LoadResult>,
    /// A profile's `latency` phase: open loop right after `load`, on the same
    /// server, at a fraction of the rate `load` sustained; when present, the
    /// run's latency figures come from it ([`RunRecord::latency_load`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LoadResult>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub server: TreeSummary,
    /// What the server's own listen socket dropped in each phase: the one
    /// evidence of its accept queue overflowing (the host's `net_drops`
    /// count every program's listeners). Absent when nothing is known.
    #[serde(default, skip_serializing_if = "ListenDrops::is_unknown", deserialize_with = "lenient::or_default")]
    pub listen_drops: ListenDrops,
    #[serde(deserialize_with = "lenient::or_default")]
    pub loadgen: TreeSummary,
    #[serde(deserialize_with = "lenient::or_default")]
    pub machine: MachineRecord,
    /// `load.rps / server.cpu_cores_avg`; 0 when the server used no
    /// measurable CPU (see [`RunRecord::rps_per_core`]).
    #[serde(deserialize_with = "lenient::or_default")]
    pub rps_per_server_core: f64,
    /// With `--profile`: the `stampede.profile/1` summary of the measured
    /// phase (flame graph and folded stacks beside results.json, top frames);
    /// null when not profiled or when the profile failed.
    pub cpu_profile: Option<ProfileSummary>,
    /// Runtime GC and safepoint events from the warmup's start to the load's
    /// end (manifest `[events]`), for the report's timeline and `stampede explain`.
    #[serde(deserialize_with = "lenient::or_default")]
    pub events: Vec<EventRecord>,
    /// Clock anchors that put `t_s` on CLOCK_MONOTONIC.
    #[serde(deserialize_with = "lenient::or_default")]
    pub clock: ClockRecord,
    /// The measured phase's HdrHistogram interval log, a file name beside results.json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr_log: Option<String>,
    /// With a scenario's `[database]`: its CPU and requests per core of
    /// server and database together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<crate::database::DatabaseUsage>,
    /// What a reader must know about a valid or invalid run that does not
    /// invalidate it: a noisy neighbour (docs/run.md). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Default for RunRecord {
    fn default() -> RunRecord {
        RunRecord {
            app: String::new(),
            knobs: BTreeMap::new(),
            profile: String::new(),
            path: String::new(),
            iteration: 0,
            valid: true,
            invalid_reason: None,
            invalid_by_server: false,
            load_valid: None,
            contract: String::new(),
            verdicts: Vec::new(),
            build_time_ms: 0.0,
            start_time_ms: 0.0,
            first_request_ms: 0.0,
            warmup: None,
            load: None,
            latency: None,
            server: TreeSummary::default(),
            listen_drops: ListenDrops::default(),
            loadgen: TreeSummary::default(),
            machine: MachineRecord::default(),
            rps_per_server_core: 0.0,
            cpu_profile: None,
            events: Vec::new(),
            clock: ClockRecord::default(),
            hdr_log: None,
            database: None,
            warnings: Vec::new(),
        }
    }
}

/// The drops of the server's own listen socket (`sk_drops`, what `ss -ltm`
/// shows as `d`, summed over the listeners on the server's port; read by
/// stampede_probe::listen_drops) in the measured phase and in what followed
/// it (the latency phase); `None` where unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ListenDrops {
    pub measured: Option<u64>,
    pub after: Option<u64>,
}

impl ListenDrops {
    pub fn is_unknown(&self) -> bool {
        self.measured.is_none() && self.after.is_none()
    }
}

fn valid_or_true<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(true))
}

/// The machine's series, plus the probe's own cost.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineRecord {
    #[serde(flatten)]
    pub summary: MachineSummary,
    /// Cores the probe's sampling thread used (its overhead).
    #[serde(deserialize_with = "lenient::or_default")]
    pub probe_cpu_cores: f64,
}

/// One runtime event as results.json stores it (docs/results.md, docs/explain.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct EventRecord {
    /// Start, seconds since the measured phase began (negative in warmup).
    #[serde(deserialize_with = "lenient::or_default")]
    pub t_s: f64,
    /// `gc`, `safepoint`, `pause`, or a marker the report draws (`warmup_end`).
    pub kind: String,
    #[serde(deserialize_with = "lenient::or_default")]
    pub label: String,
    /// 0 for an instant.
    #[serde(deserialize_with = "lenient::or_default")]
    pub duration_ms: f64,
    /// CLOCK_MONOTONIC of the start and end; both 0 when not known (a
    /// hand-written file): readers then place the event from `t_s` and the
    /// run's `clock` anchor.
    #[serde(deserialize_with = "lenient::count")]
    pub start_mono_ns: u64,
    #[serde(deserialize_with = "lenient::count")]
    pub end_mono_ns: u64,
    /// True when the application was stopped for the whole event (a
    /// stop-the-world pause, the default); false for phases that only
    /// compete for CPU (Go's concurrent mark).
    #[serde(deserialize_with = "valid_or_true")]
    pub stopped: bool,
    /// How far the monotonic times may be off.
    #[serde(deserialize_with = "lenient::count")]
    pub error_ns: u64,
}

impl Default for EventRecord {
    fn default() -> EventRecord {
        EventRecord {
            t_s: 0.0,
            kind: String::new(),
            label: String::new(),
            duration_ms: 0.0,
            start_mono_ns: 0,
            end_mono_ns: 0,
            stopped: true,
            error_ns: 0,
        }
    }
}

/// The clock anchor `stampede explain` needs to place probe samples.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ClockRecord {
    /// CLOCK_MONOTONIC at the start of the measured phase (`t_s = 0`).
    pub measured_start_mono_ns: Option<u64>,
}

impl RunRecord {
    /// Whether the run counts: not marked invalid, and it has a measured load.
    pub fn is_valid(&self) -> bool {
        self.valid && self.load.is_some()
    }

    /// Whether the measured load's figures count: the run is valid, or only
    /// its latency phase was not (`load_valid`).
    pub fn load_is_valid(&self) -> bool {
        self.load.is_some() && self.load_valid.unwrap_or(self.valid)
    }

    /// Marks the run invalid, keeping the first reason and adding later ones.
    pub fn invalidate(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        self.valid = false;
        self.invalid_reason = Some(match self.invalid_reason.take() {
            Some(first) => format!("{first}; {reason}"),
            None => reason,
        });
    }

    /// Requests per second per server core: the recorded figure, else
    /// recomputed from the load and the server's CPU; `None` when the server
    /// used no measurable CPU or the run has no load.
    pub fn rps_per_core(&self) -> Option<f64> {
        if self.rps_per_server_core.is_finite() && self.rps_per_server_core > 0.0 {
            return Some(self.rps_per_server_core);
        }
        let rps = self.load.as_ref()?.rps;
        (self.server.cpu_cores_avg > 1e-6).then(|| rps / self.server.cpu_cores_avg)
    }

    /// The load whose percentiles are the run's latency: the open-loop
    /// `latency` phase when the profile has one, else the measured load.
    pub fn latency_load(&self) -> Option<&LoadResult> {
        self.latency.as_ref().or(self.load.as_ref())
    }
}

/// `load.rps / server.cpu_cores_avg`, 0 when the server used no measurable CPU.
pub fn rps_per_core(rps: f64, cores: f64) -> f64 {
    if cores > 1e-6 {
        rps / cores
    } else {
        0.0
    }
}

impl ResultsDoc {
    /// A single `stampede load --json` document as a one-run results file,
    /// so `report` and `compare` also work on plain load runs.
    pub fn from_load(load: LoadResult) -> ResultsDoc {
        let run = RunRecord {
            app: if load.url.is_empty() { "load".to_owned() } else { load.url.clone() },
            profile: if load.mode.is_empty() { "load".to_owned() } else { load.mode.clone() },
            iteration: 1,
            load: Some(load),
            ..RunRecord::default()
        };
        ResultsDoc { schema: SCHEMA.to_owned(), runs: vec![run], ..ResultsDoc::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_writer_writes_reads_back_the_same() {
        let mut run = RunRecord { app: "go".into(), iteration: 2, ..RunRecord::default() };
        run.knobs.insert("threads".into(), "2".into());
        run.invalidate("crashed");
        run.invalidate("no load");
        let doc = ResultsDoc { schema: SCHEMA.into(), runs: vec![run], ..ResultsDoc::default() };
        let back: ResultsDoc = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        let run = &back.runs[0];
        assert_eq!((run.app.as_str(), run.iteration, run.valid), ("go", 2, false));
        assert_eq!(run.invalid_reason.as_deref(), Some("crashed; no load"));
        assert_eq!(run.knobs["threads"], "2");
    }

    #[test]
    fn an_older_hand_written_file_reads_with_defaults() {
        let doc: ResultsDoc = serde_json::from_str(
            r#"{"schema":"stampede.run/1","environment":{"command_line":["stampede","run","x.toml"],
                "cores":4.0,"started_unix_s":1763769600.0,"runtimes":{"go":null},"some_future_field":1},
                "runs":[{"app":"go","knobs":{"threads":2,"gc":true},"load":{"rps":10.0},
                         "server":{"cpu_cores_avg":null},"events":[{"t_s":1,"kind":"gc"}],"machine":null}]}"#,
        )
        .unwrap();
        assert_eq!(doc.environment.command_line, "stampede run x.toml");
        assert_eq!((doc.environment.cores, doc.environment.started_unix_s), (4, 1763769600));
        assert_eq!(doc.environment.runtimes["go"], "");
        let run = &doc.runs[0];
        assert!(run.valid && run.is_valid(), "valid is the default");
        assert_eq!((run.knobs["threads"].as_str(), run.knobs["gc"].as_str()), ("2", "true"));
        assert!(run.events[0].stopped, "an event is a stop-the-world pause unless it says otherwise");
        assert_eq!(run.rps_per_core(), None, "no server CPU, no figure");
    }

    #[test]
    fn rps_per_core_is_recomputed_when_not_recorded() {
        let mut run =
            RunRecord { load: Some(LoadResult { rps: 300.0, ..LoadResult::default() }), ..RunRecord::default() };
        run.server.cpu_cores_avg = 1.5;
        assert_eq!(run.rps_per_core(), Some(200.0));
        run.rps_per_server_core = 7.0;
        assert_eq!(run.rps_per_core(), Some(7.0));
    }
}
