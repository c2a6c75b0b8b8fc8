//! Reading what `stampede explain` works on: a `stampede.run/1` results file
//! (runs with their load, probe samples and runtime events) or a single
//! `stampede.load/1` document with event logs given beside it. Both are
//! read into the types stampede-schema declares for their writers, with the
//! same lenient rules as the report; this module adds what attribution
//! needs of them: the server's cores and the runtime events on
//! CLOCK_MONOTONIC.

use std::path::Path;

use stampede_schema::document::{self, Document, DocumentError};
use stampede_schema::run::{ResultsDoc, RunRecord};

use crate::error::ExplainError;
use crate::event::{Event, Kind};

/// Either kind of input file.
pub type Input = Document;

/// The largest input file read (the same cap as `stampede report`'s).
pub use stampede_schema::document::MAX_DOCUMENT_BYTES as MAX_INPUT_BYTES;

pub fn read(path: &Path) -> Result<Input, ExplainError> {
    let path_buf = path.to_path_buf();
    document::read(path).map_err(|err| match err {
        DocumentError::Read(cause) => ExplainError::Read { path: path_buf, cause },
        DocumentError::TooLarge => ExplainError::TooLarge { path: path_buf, max_mib: MAX_INPUT_BYTES >> 20 },
        DocumentError::NotJson(cause) => ExplainError::Json { path: path_buf, cause },
        DocumentError::Json { field, message } => ExplainError::Field { path: path_buf, field, reason: message },
        err @ DocumentError::SlowLog { .. } => ExplainError::SlowLog(err.to_string()),
        DocumentError::Schema { found } => {
            ExplainError::Schema { path: path_buf, found, expected: "stampede.run/1 or stampede.load/1" }
        }
    })
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

/// The cores the server may use: its pinning, else the machine's.
pub fn server_cores(doc: &ResultsDoc) -> Option<f64> {
    let env = &doc.environment;
    env.pinning.server.as_deref().and_then(cpu_count).or((env.cores > 0).then_some(env.cores as f64))
}

/// The run's stored runtime events on CLOCK_MONOTONIC. Events written with
/// monotonic times are taken as they are; others are placed from `t_s`
/// with the run's clock anchor. Markers that are not server trouble
/// (`warmup_end`, error seconds) are left out.
pub fn runtime_events(run: &RunRecord) -> Vec<Event> {
    run.events
        .iter()
        .filter_map(|e| {
            let kind = Kind::parse(&e.kind).filter(|k| matches!(k, Kind::Gc | Kind::Safepoint | Kind::Pause))?;
            let duration_ns = (e.duration_ms.max(0.0) * 1e6).round() as u64;
            let (start, end) = if e.end_mono_ns > 0 {
                (e.start_mono_ns, e.end_mono_ns)
            } else {
                let t0 = run.clock.measured_start_mono_ns? as i128;
                let s = (t0 + (e.t_s * 1e9).round() as i128).max(0) as u64;
                (s, s + duration_ns)
            };
            Some(Event {
                start_mono_ns: start,
                end_mono_ns: end,
                kind,
                label: e.label.clone(),
                stopped: e.stopped,
                error_ns: e.error_ns,
                owner: None,
            })
        })
        .collect()
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
        let run: RunRecord = serde_json::from_str(
            r#"{"app":"go","clock":{"measured_start_mono_ns":5000000000},
                "events":[{"t_s":0.5,"kind":"gc","label":"gc 3","duration_ms":2},
                          {"t_s":1.0,"kind":"warmup_end","label":"warmup"},
                          {"t_s":9,"kind":"safepoint","label":"x","duration_ms":1,"start_mono_ns":7,"end_mono_ns":9}]}"#,
        )
        .unwrap();
        let events = runtime_events(&run);
        assert_eq!(events.len(), 2);
        assert_eq!((events[0].start_mono_ns, events[0].end_mono_ns), (5_500_000_000, 5_502_000_000));
        assert_eq!((events[1].start_mono_ns, events[1].end_mono_ns), (7, 9));
    }

    #[test]
    fn the_server_cores_come_from_its_pinning_else_the_machine() {
        let mut doc = ResultsDoc::default();
        assert_eq!(server_cores(&doc), None);
        doc.environment.cores = 8;
        assert_eq!(server_cores(&doc), Some(8.0));
        doc.environment.pinning.server = Some("2-3".into());
        assert_eq!(server_cores(&doc), Some(2.0));
    }
}
