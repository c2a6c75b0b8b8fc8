//! The `stampede.run/1` results document (docs/results.md) as Rust types.
//!
//! The orchestrator writes this file while a scenario runs, so a report must
//! cope with whatever a partial or failed run left behind: every field that is
//! not needed to tell runs apart is optional, unknown fields are ignored, and
//! `null` is accepted wherever a value may be missing (an invalid run has no
//! `load`, a probe that could not sample has no `samples`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::ReportError;

/// The schema tag this crate reads.
pub const RUN_SCHEMA: &str = "stampede.run/1";
/// The schema tag of a single `stampede load --json` document.
pub use stampede_schema::load::SCHEMA as LOAD_SCHEMA;
/// A `stampede.profile/1` summary (a run's `cpu_profile`), declared once.
pub use stampede_schema::profile::{ProfileSummary, TopFrame};
/// A `stampede.load/1` document, as every crate declares it: once, in
/// stampede-schema (lenient on reading).
pub use stampede_schema::LoadResult;

/// A whole `results.json`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Results {
    pub schema: Option<String>,
    pub environment: Environment,
    pub scenario: serde_json::Value,
    pub runs: Vec<Run>,
    /// Apps the orchestrator could not run at all, with why.
    pub skipped: Vec<Skipped>,
    /// The same document as `stampede explain` reads it (runs in the same
    /// order), for the report's Explain section; absent for load documents.
    #[serde(skip)]
    pub explain_input: Option<stampede_explain::input::ResultsDoc>,
}

/// An app left out of the whole scenario (it did not build, say).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Skipped {
    pub app: String,
    pub reason: String,
}

/// How and where the results were made.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Environment {
    pub tool_version: Option<String>,
    pub git_commit: Option<String>,
    pub command_line: Option<CommandLine>,
    pub cpu_model: Option<String>,
    pub kernel: Option<String>,
    pub cores: Option<u64>,
    pub pinning: Option<BTreeMap<String, Option<String>>>,
    pub runtimes: BTreeMap<String, Option<String>>,
    pub started_unix_s: Option<f64>,
}

/// The command line, written either as one string or as its arguments.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CommandLine {
    Text(String),
    Args(Vec<String>),
}

impl CommandLine {
    /// The command line as one line of text.
    pub fn to_line(&self) -> String {
        match self {
            CommandLine::Text(text) => text.clone(),
            CommandLine::Args(args) => args.join(" "),
        }
    }
}

/// One app × knobs × profile × iteration.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Run {
    pub app: String,
    #[serde(deserialize_with = "knob_map")]
    pub knobs: BTreeMap<String, String>,
    pub profile: Option<String>,
    pub path: Option<String>,
    pub iteration: Option<u64>,
    pub valid: Option<bool>,
    pub invalid_reason: Option<String>,
    pub build_time_ms: Option<f64>,
    pub start_time_ms: Option<f64>,
    pub first_request_ms: Option<f64>,
    pub warmup: Option<LoadResult>,
    pub load: Option<LoadResult>,
    pub server: Option<Process>,
    pub loadgen: Option<Process>,
    pub machine: Option<Machine>,
    pub rps_per_server_core: Option<f64>,
    /// Things that happened during the run, drawn as markers on its timeline.
    pub events: Vec<Event>,
    /// `stampede run --profile`: the measured phase's profile (docs/profile.md).
    pub cpu_profile: Option<ProfileSummary>,
    /// The measured phase's HdrHistogram interval log, a file beside results.json.
    pub hdr_log: Option<String>,
    /// Read from `hdr_log` by `Results::from_path` (not part of the document).
    #[serde(skip)]
    pub latency_intervals: Vec<crate::html::intervals::IntervalPoint>,
}

impl Run {
    /// A run is valid unless it says otherwise; a run without a measured load
    /// phase has nothing to show and counts as invalid.
    pub fn is_valid(&self) -> bool {
        self.valid.unwrap_or(true) && self.load.is_some()
    }

    /// Requests per second per server core, from the field or recomputed.
    pub fn rps_per_core(&self) -> Option<f64> {
        if let Some(value) = self.rps_per_server_core.filter(|v| v.is_finite()) {
            return Some(value);
        }
        let rps = self.load.as_ref()?.rps;
        let cores = self.server.as_ref()?.cpu_cores_avg?;
        (cores > 0.0).then(|| rps / cores)
    }
}

/// Knob values are documented as strings; numbers and booleans are accepted
/// and shown as written, so a hand-written file still renders.
fn knob_map<'de, D>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let raw: Option<BTreeMap<String, serde_json::Value>> = Option::deserialize(deserializer)?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| {
            let text = match value {
                serde_json::Value::String(text) => text,
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            };
            (key, text)
        })
        .collect())
}

/// What the probe saw of one process tree (the server or the load generator).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Process {
    pub cpu_cores_avg: Option<f64>,
    pub cpu_pct_max: Option<f64>,
    pub rss_max_mib: Option<f64>,
    pub threads_max: Option<u64>,
    pub ctx_voluntary: Option<u64>,
    pub ctx_involuntary: Option<u64>,
    pub runqueue_wait_ms: Option<f64>,
    pub samples: Vec<Sample>,
    pub threads_table: Vec<ThreadRow>,
    /// Per-thread microstates (the server only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub microstates: Option<stampede_schema::microstates::Microstates>,
}

/// The whole machine during a run.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Machine {
    pub cpu_cores_avg: Option<f64>,
    pub samples: Vec<Sample>,
}

/// One probe sample.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Sample {
    pub t_s: f64,
    pub cpu_cores: Option<f64>,
    pub cpu_user_cores: Option<f64>,
    pub cpu_sys_cores: Option<f64>,
    pub rss_mib: Option<f64>,
    pub threads: Option<u64>,
    pub ctx_voluntary: Option<u64>,
    pub ctx_involuntary: Option<u64>,
    pub runqueue_wait_ms: Option<f64>,
}

/// One thread of the server over the measured phase.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ThreadRow {
    pub tid: Option<u64>,
    pub name: Option<String>,
    pub user_s: Option<f64>,
    pub sys_s: Option<f64>,
    pub runqueue_wait_ms: Option<f64>,
    pub ctx_voluntary: Option<u64>,
    pub ctx_involuntary: Option<u64>,
}

/// Something that happened during a run: a GC pause, an error burst, the end
/// of warmup. `duration_ms` makes it a span instead of an instant.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Event {
    pub t_s: f64,
    pub kind: String,
    pub label: Option<String>,
    pub duration_ms: Option<f64>,
    /// False for runtime phases that only compete for CPU (Go's concurrent
    /// mark); true or absent for stop-the-world pauses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<bool>,
}

/// The largest results file `report`, `compare` and `explain` read: far above
/// any real scenario's (a few MiB), far below what would exhaust memory.
pub const MAX_RESULTS_BYTES: u64 = 512 * 1024 * 1024;

/// Reads a results file as text, refusing one above [`MAX_RESULTS_BYTES`]
/// (`/dev/zero`, a disk image) instead of growing without bound.
pub fn read_results_file(path: &Path) -> Result<String, ReportError> {
    use std::io::Read;
    let read = |cause| ReportError::Read { path: path.to_path_buf(), cause };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::new();
    file.take(MAX_RESULTS_BYTES + 1).read_to_end(&mut bytes).map_err(read)?;
    if bytes.len() as u64 > MAX_RESULTS_BYTES {
        return Err(ReportError::TooLarge { path: path.to_path_buf(), max_mib: MAX_RESULTS_BYTES >> 20 });
    }
    String::from_utf8(bytes).map_err(|e| read(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

impl Results {
    /// Reads and checks a results file; errors name the file and the field.
    pub fn from_path(path: &Path) -> Result<Results, ReportError> {
        let text = read_results_file(path)?;
        let mut results = Results::from_json(&text).map_err(|err| err.in_file(path))?;
        crate::html::intervals::attach(&mut results, path.parent().unwrap_or(Path::new(".")));
        Ok(results)
    }

    /// Parses a results document held in memory.
    pub fn from_json(text: &str) -> Result<Results, ReportError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|err| ReportError::Json {
            path: None,
            field: String::new(),
            message: err.to_string(),
        })?;
        let schema = value.get("schema").and_then(|s| s.as_str()).map(str::to_owned);
        match schema.as_deref() {
            Some(RUN_SCHEMA) => {}
            Some(LOAD_SCHEMA) => return Self::from_load(value),
            Some(other) => return Err(ReportError::Schema { path: None, found: other.to_owned() }),
            None => return Err(ReportError::Schema { path: None, found: "(no schema field)".to_owned() }),
        }
        // Lenient: a file the report can draw but attribution cannot read
        // just gets no Explain section.
        let explain_input = serde_json::from_value(value.clone()).ok();
        let mut results: Results = serde_path_to_error::deserialize(value).map_err(|err| ReportError::Json {
            path: None,
            field: err.path().to_string(),
            message: err.inner().to_string(),
        })?;
        results.explain_input = explain_input;
        Ok(results)
    }

    /// Wraps a single `stampede load --json` document as a one-run results
    /// file, so `report` and `compare` also work on plain load runs.
    fn from_load(value: serde_json::Value) -> Result<Results, ReportError> {
        let load: LoadResult = serde_path_to_error::deserialize(value).map_err(|err| ReportError::Json {
            path: None,
            field: err.path().to_string(),
            message: err.inner().to_string(),
        })?;
        let run = Run {
            app: if load.url.is_empty() { "load".to_owned() } else { load.url.clone() },
            profile: Some(if load.mode.is_empty() { "load".to_owned() } else { load.mode.clone() }),
            iteration: Some(1),
            valid: Some(true),
            load: Some(load),
            ..Run::default()
        };
        Ok(Results { schema: Some(RUN_SCHEMA.to_owned()), runs: vec![run], ..Results::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_run_with_null_load_and_no_samples_parses() {
        let text = r#"{"schema":"stampede.run/1","environment":{},"runs":[
            {"app":"go","knobs":{"threads":2},"valid":false,"invalid_reason":"crashed",
             "load":null,"server":{"cpu_cores_avg":null}}]}"#;
        let results = Results::from_json(text).unwrap();
        let run = &results.runs[0];
        assert!(!run.is_valid());
        assert_eq!(run.knobs["threads"], "2");
        assert!(run.server.as_ref().unwrap().samples.is_empty());
    }

    #[test]
    fn wrong_type_names_the_field() {
        let text = r#"{"schema":"stampede.run/1","runs":[{"app":"go","load":{"rps":"fast"}}]}"#;
        let err = Results::from_json(text).unwrap_err().to_string();
        assert!(err.contains("runs[0].load.rps"), "{err}");
    }

    #[test]
    fn unknown_schema_is_refused() {
        let err = Results::from_json(r#"{"schema":"other/9"}"#).unwrap_err().to_string();
        assert!(err.contains("other/9"), "{err}");
    }

    #[test]
    fn a_load_document_becomes_one_run() {
        let text = r#"{"schema":"stampede.load/1","url":"http://x/","rps":10.0,"mode":"closed"}"#;
        let results = Results::from_json(text).unwrap();
        assert_eq!(results.runs.len(), 1);
        assert_eq!(results.runs[0].app, "http://x/");
    }
}
