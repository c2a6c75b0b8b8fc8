//! Reading what `stampede explain` works on: a `stampede.run/1` results file
//! (runs with their load, probe samples and runtime events) or a single
//! `stampede.load/1` document with event logs given beside it. Only the
//! fields attribution needs are read; unknown fields are ignored.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::ExplainError;
use crate::event::{Event, Kind};
use crate::windows::Sample;

use stampede_schema::LoadResult;

/// An event as `stampede run` stores it in a run's `events` list.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StoredEvent {
    pub t_s: f64,
    pub kind: String,
    pub label: String,
    pub duration_ms: f64,
    pub start_mono_ns: Option<u64>,
    pub end_mono_ns: Option<u64>,
    pub stopped: Option<bool>,
    pub error_ns: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Clock {
    /// CLOCK_MONOTONIC at the start of the measured phase (`t_s = 0`).
    pub measured_start_mono_ns: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Server {
    pub samples: Vec<Sample>,
    pub microstates: Option<stampede_schema::microstates::Microstates>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RunDoc {
    pub app: String,
    pub knobs: BTreeMap<String, serde_json::Value>,
    pub profile: Option<String>,
    pub path: Option<String>,
    pub iteration: Option<u64>,
    pub valid: Option<bool>,
    pub invalid_reason: Option<String>,
    pub load: Option<LoadResult>,
    pub server: Option<Server>,
    pub events: Vec<StoredEvent>,
    pub clock: Clock,
    /// CPUs the server was allowed, when the orchestrator knew it.
    pub server_cores: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Environment {
    pub cores: Option<f64>,
    pub pinning: Option<BTreeMap<String, Option<String>>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResultsDoc {
    pub schema: Option<String>,
    pub environment: Environment,
    pub runs: Vec<RunDoc>,
}

/// Either kind of input file.
pub enum Input {
    Results(ResultsDoc),
    Load(Box<LoadResult>),
}

/// The largest input file read (the same cap as `stampede report`'s).
pub const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;

/// The file as text, refusing one above [`MAX_INPUT_BYTES`] (`/dev/zero`)
/// instead of growing without bound.
fn read_capped(path: &Path) -> Result<String, ExplainError> {
    use std::io::Read;
    let read = |cause| ExplainError::Read { path: path.to_path_buf(), cause };
    let mut bytes = Vec::new();
    std::fs::File::open(path).map_err(read)?.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(read)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(ExplainError::TooLarge { path: path.to_path_buf(), max_mib: MAX_INPUT_BYTES >> 20 });
    }
    String::from_utf8(bytes).map_err(|e| read(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

pub fn read(path: &Path) -> Result<Input, ExplainError> {
    let text = read_capped(path)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|cause| ExplainError::Json { path: path.to_path_buf(), cause })?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("").to_string();
    let json = |cause| ExplainError::Json { path: path.to_path_buf(), cause };
    match schema.as_str() {
        "stampede.run/1" => Ok(Input::Results(serde_json::from_value(value).map_err(json)?)),
        "stampede.load/1" => Ok(Input::Load(Box::new(serde_json::from_value(value).map_err(json)?))),
        _ => Err(ExplainError::Schema {
            path: path.to_path_buf(),
            found: schema,
            expected: "stampede.run/1 or stampede.load/1",
        }),
    }
}

/// Counts the CPUs in a list such as `0`, `0-3` or `0,2-3`.
pub fn cpu_count(list: &str) -> Option<f64> {
    let mut n = 0u32;
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => n += b.trim().parse::<u32>().ok()?.checked_sub(a.trim().parse::<u32>().ok()?)? + 1,
            None => {
                part.parse::<u32>().ok()?;
                n += 1
            }
        }
    }
    (n > 0).then_some(n as f64)
}

impl ResultsDoc {
    /// The cores the server may use: its pinning, else the machine's.
    pub fn server_cores(&self, run: &RunDoc) -> Option<f64> {
        run.server_cores
            .or_else(|| self.environment.pinning.as_ref()?.get("server")?.as_deref().and_then(cpu_count))
            .or(self.environment.cores)
    }
}

impl RunDoc {
    /// The run's stored runtime events on CLOCK_MONOTONIC. Events written with
    /// monotonic times are taken as they are; others are placed from `t_s`
    /// with the run's clock anchor. Markers that are not server trouble
    /// (`warmup_end`, error seconds) are left out.
    pub fn runtime_events(&self) -> Vec<Event> {
        self.events
            .iter()
            .filter_map(|e| {
                let kind = Kind::parse(&e.kind).filter(|k| matches!(k, Kind::Gc | Kind::Safepoint | Kind::Pause))?;
                let duration_ns = (e.duration_ms.max(0.0) * 1e6).round() as u64;
                let (start, end) = match (e.start_mono_ns, e.end_mono_ns) {
                    (Some(s), Some(t)) => (s, t),
                    _ => {
                        let t0 = self.clock.measured_start_mono_ns? as i128;
                        let s = (t0 + (e.t_s * 1e9).round() as i128).max(0) as u64;
                        (s, s + duration_ns)
                    }
                };
                Some(Event {
                    start_mono_ns: start,
                    end_mono_ns: end,
                    kind,
                    label: e.label.clone(),
                    stopped: e.stopped.unwrap_or(true),
                    error_ns: e.error_ns.unwrap_or(0),
                })
            })
            .collect()
    }

    pub fn knob_text(&self) -> BTreeMap<String, String> {
        self.knobs
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_count("0"), Some(1.0));
        assert_eq!(cpu_count("0-3"), Some(4.0));
        assert_eq!(cpu_count("0,2-3"), Some(3.0));
        assert_eq!(cpu_count("3-1"), None);
        assert_eq!(cpu_count(""), None);
    }

    #[test]
    fn stored_events_are_placed_from_the_anchor_and_markers_skipped() {
        let run: RunDoc = serde_json::from_str(
            r#"{"app":"go","clock":{"measured_start_mono_ns":5000000000},
                "events":[{"t_s":0.5,"kind":"gc","label":"gc 3","duration_ms":2},
                          {"t_s":1.0,"kind":"warmup_end","label":"warmup"},
                          {"t_s":9,"kind":"safepoint","label":"x","duration_ms":1,"start_mono_ns":7,"end_mono_ns":9}]}"#,
        )
        .unwrap();
        let events = run.runtime_events();
        assert_eq!(events.len(), 2);
        assert_eq!((events[0].start_mono_ns, events[0].end_mono_ns), (5_500_000_000, 5_502_000_000));
        assert_eq!((events[1].start_mono_ns, events[1].end_mono_ns), (7, 9));
    }
}
