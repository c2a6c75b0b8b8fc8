//! Runtime GC and safepoint events for `stampede explain` (docs/explain.md).
//!
//! An app's manifest may have an `[events]` table saying which parser reads
//! its events, what environment switches them on, and where they go: the
//! server's own output (Go's gctrace on stderr), which is then stamped line by
//! line with CLOCK_MONOTONIC as it is read, or files the runtime writes
//! (`{events}` in an environment value is replaced by their path). After the
//! run the events are parsed, placed on CLOCK_MONOTONIC, and stored in the
//! run's record with `t_s` relative to the measured phase, so the report can
//! draw them and `stampede explain results.json` can attribute slow requests.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use stampede_explain::events::{self, Runtime};

use crate::scenario::manifest::EventsSettings;

/// Where one run's events go.
#[derive(Debug, Clone)]
pub struct Capture {
    pub runtime: Runtime,
    pub from_output: bool,
    /// The stamped output (`output`) or the runtime's file (`file`; Python
    /// adds `.<pid>` per process).
    pub path: PathBuf,
}

impl Capture {
    pub fn new(settings: &EventsSettings, log_path: &Path) -> Option<Capture> {
        // Absolute: the path goes to a server that runs in its app's folder,
        // and `--out` (default `results/`) is relative to ours.
        let log_path = std::path::absolute(log_path).unwrap_or_else(|_| log_path.to_path_buf());
        Some(Capture {
            runtime: Runtime::parse(&settings.runtime).ok()?,
            from_output: settings.source == "output",
            path: log_path.with_extension("events"),
        })
    }

    /// The server's environment with the event switches added. A variable a
    /// knob or profiling already sets is extended, not replaced (GODEBUG
    /// takes a comma, others a space).
    pub fn env(&self, settings: &EventsSettings, base: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut env = base.clone();
        for (key, value) in &settings.env {
            let value = value.replace("{events}", &self.path.display().to_string());
            let merged = match env.get(key).filter(|v| !v.is_empty()) {
                Some(old) => format!("{old}{}{value}", if key == "GODEBUG" { "," } else { " " }),
                None => value,
            };
            env.insert(key.clone(), merged);
        }
        env
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the load engine's clock for the same
/// purpose, so that events and slow requests share one reading.
pub use stampede_spec::clock::monotonic_ns as mono_ns;

/// Copies a server's output stream to its log, and each line stamped
/// `<mono_ns>\t<line>` to the events file, until the stream closes.
pub fn pump(
    stream: Box<dyn Read + Send>,
    log: Arc<Mutex<std::fs::File>>,
    stamped: Arc<Mutex<std::fs::File>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).split(b'\n') {
            let Ok(line) = line else { break };
            let stamp = mono_ns();
            let _ = log.lock().map(|mut f| f.write_all(&line).and_then(|_| f.write_all(b"\n")));
            let _ = stamped
                .lock()
                .map(|mut f| write!(f, "{stamp}\t").and_then(|_| f.write_all(&line)).and_then(|_| f.write_all(b"\n")));
        }
    })
}

/// An event as results.json stores it (declared once in stampede-schema).
pub use stampede_schema::run::EventRecord;

/// Parses a run's events and keeps those between `from_mono_ns` and
/// `to_mono_ns`. A parse failure is a note, not a failed run.
pub fn collect(
    capture: &Capture,
    exec_mono_ns: u64,
    t0_mono_ns: u64,
    from_mono_ns: u64,
    to_mono_ns: u64,
) -> Result<Vec<EventRecord>, String> {
    let mut files: Vec<PathBuf> = Vec::new();
    if capture.path.exists() {
        files.push(capture.path.clone());
    }
    // Per-process files `<path>.<pid>` (the Python app's workers).
    if let (Some(dir), Some(name)) = (capture.path.parent(), capture.path.file_name().and_then(|n| n.to_str())) {
        if let Ok(entries) = std::fs::read_dir(dir) {
            let prefix = format!("{name}.");
            files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.strip_prefix(&prefix).is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()))
                })
            }));
        }
    }
    let mut out = Vec::new();
    for file in files {
        let parsed = events::parse_file(&file, capture.runtime, Some(exec_mono_ns)).map_err(|e| e.to_string())?;
        for e in parsed.events.into_iter().filter(|e| e.end_mono_ns >= from_mono_ns && e.start_mono_ns <= to_mono_ns) {
            out.push(EventRecord {
                t_s: (e.start_mono_ns as f64 - t0_mono_ns as f64) / 1e9,
                kind: e.kind.name().to_string(),
                duration_ms: e.duration_ns() as f64 / 1e6,
                label: e.label,
                start_mono_ns: e.start_mono_ns,
                end_mono_ns: e.end_mono_ns,
                stopped: e.stopped,
                error_ns: e.error_ns,
            });
        }
    }
    out.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_switches_extend_what_knobs_set() {
        let settings = EventsSettings {
            runtime: "jvm".into(),
            source: "file".into(),
            env: [
                ("JAVA_OPTS".to_string(), "-Xlog:gc*:file={events}".to_string()),
                ("GODEBUG".to_string(), "gctrace=1".to_string()),
            ]
            .into(),
        };
        assert!(settings.validate().is_ok());
        let capture = Capture::new(&settings, Path::new("/r/logs/java-g1.log")).unwrap();
        let base: BTreeMap<String, String> = [
            ("JAVA_OPTS".to_string(), "-XX:+PreserveFramePointer".to_string()),
            ("GODEBUG".to_string(), "madvdontneed=1".to_string()),
        ]
        .into();
        let env = capture.env(&settings, &base);
        assert_eq!(env["JAVA_OPTS"], "-XX:+PreserveFramePointer -Xlog:gc*:file=/r/logs/java-g1.events");
        assert_eq!(env["GODEBUG"], "madvdontneed=1,gctrace=1");
        let bad = EventsSettings { runtime: "cobol".into(), ..settings };
        assert!(bad.validate().unwrap_err().starts_with("events.runtime"));
    }

    #[test]
    fn a_relative_out_dir_still_gives_the_server_an_absolute_events_path() {
        // `make shootout` writes to `results/` while each app runs in its own
        // folder: a relative path made Python and Java fail to start.
        let settings = EventsSettings {
            runtime: "python".into(),
            source: "file".into(),
            env: [("STAMPEDE_EVENTS".to_string(), "{events}".to_string())].into(),
        };
        let capture = Capture::new(&settings, Path::new("results/run/logs/python.log")).unwrap();
        let env = capture.env(&settings, &BTreeMap::new());
        let path = Path::new(&env["STAMPEDE_EVENTS"]);
        assert!(path.is_absolute(), "{}", path.display());
        assert_eq!(path, std::env::current_dir().unwrap().join("results/run/logs/python.events"));
    }

    #[test]
    fn collected_events_are_placed_relative_to_the_measured_start() {
        let dir = std::env::temp_dir().join(format!("stampede-run-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let capture = Capture { runtime: Runtime::Python, from_output: false, path: dir.join("py.events") };
        std::fs::write(
            dir.join("py.events.4242"),
            "start 0 1500000000\nstop 0 1502000000\nstart 2 9000000000\nstop 2 9001000000\n",
        )
        .unwrap();
        let events = collect(&capture, 0, 1_000_000_000, 1_000_000_000, 5_000_000_000).unwrap();
        assert_eq!(events.len(), 1, "the second collection is after the run");
        assert_eq!((events[0].t_s, events[0].duration_ms, events[0].kind.as_str()), (0.5, 2.0, "gc"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
