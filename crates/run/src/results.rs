//! results/<timestamp>/results.json, rewritten after every run (to a temporary
//! file, then renamed over the old one), so a crash or Ctrl-C keeps every run
//! that finished and a reader never sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::observer::{Ran, RunObserver};
use crate::record::{ResultsDoc, RunRecord, Skipped};

pub struct ResultsWriter {
    pub dir: PathBuf,
    pub path: PathBuf,
    pub doc: ResultsDoc,
}

/// `2026-11-21T23-30-00Z`: sortable, and safe in a path on every system.
pub fn timestamp(now: SystemTime) -> String {
    humantime::format_rfc3339_seconds(now).to_string().replace(':', "-")
}

impl ResultsWriter {
    /// Creates `<out>/<timestamp>/` (a numbered suffix if it exists) and writes
    /// the empty document at once. What `doc` and every run pushed hold that
    /// is secret is masked first (stampede_schema::redact): results.json is
    /// made to be shared.
    pub fn create(out: &Path, mut doc: ResultsDoc) -> std::io::Result<ResultsWriter> {
        doc.redact();
        let stamp = timestamp(SystemTime::now());
        let mut dir = out.join(&stamp);
        let mut n = 1;
        while dir.exists() {
            n += 1;
            dir = out.join(format!("{stamp}-{n}"));
        }
        std::fs::create_dir_all(dir.join("logs"))?;
        let path = dir.join("results.json");
        let writer = ResultsWriter { dir, path, doc };
        writer.write()?;
        Ok(writer)
    }

    /// Adds a finished run: its slow requests go to their own files first
    /// (`<stem>.<phase>.slow.gz`, stampede_schema::slow_log), then
    /// results.json is rewritten naming them, so it never names a file that
    /// is not there yet and keeps a size that grows with the runs only.
    pub fn push(&mut self, mut run: RunRecord, stem: &str) -> std::io::Result<()> {
        run.redact(&self.doc.redaction());
        stampede_schema::slow_log::store(&mut run, &self.dir, stem)?;
        self.doc.runs.push(run);
        self.write()
    }

    pub fn skip(&mut self, mut skipped: Skipped) -> std::io::Result<()> {
        skipped.reason = self.doc.redaction().text(&skipped.reason);
        self.doc.skipped.push(skipped);
        self.write()
    }

    pub fn write(&self) -> std::io::Result<()> {
        let tmp = self.path.with_extension("json.tmp");
        {
            // Buffered: serde_json writes token by token, and unbuffered that
            // was a write(2) per token. The document is rewritten after each
            // run; when it still held every run's slow requests (tens of MB
            // after a shootout) the late runs of a shootout waited 10-20 s on
            // it (2026-11-26: runs 8 s apart at the start, 27 s at the end).
            let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
            serde_json::to_writer_pretty(&mut file, &self.doc)?;
            file.write_all(b"\n")?;
            file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)
    }

    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }
}

/// The results writer as an observer of the runner: results.json is
/// rewritten after each app's build (its runtime version) and each run.
impl RunObserver for ResultsWriter {
    fn prepared(&mut self, app: &str, runtime_version: &str) -> std::io::Result<()> {
        self.doc.environment.runtimes.insert(app.to_owned(), runtime_version.to_owned());
        self.write()
    }

    fn skipped(&mut self, skipped: &Skipped, _runs: u64) -> std::io::Result<()> {
        self.skip(skipped.clone())
    }

    fn contract_skipped(&mut self, run: &Ran) -> std::io::Result<()> {
        self.push(run.record.clone(), run.stem)
    }

    fn ran(&mut self, run: &Ran) -> std::io::Result<()> {
        self.push(run.record.clone(), run.stem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Environment, PinningRecord, SCHEMA};
    use std::collections::BTreeMap;

    #[test]
    fn timestamps_have_no_colons() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400 + 3661);
        assert_eq!(timestamp(t), "1970-01-02T01-01-01Z");
    }

    fn empty_doc() -> ResultsDoc {
        ResultsDoc {
            schema: SCHEMA.to_owned(),
            environment: Environment {
                tool_version: "0".into(),
                git_commit: None,
                command_line: "stampede run".into(),
                cpu_model: "cpu".into(),
                kernel: "k".into(),
                cores: 2,
                pinning: PinningRecord::default(),
                runtimes: BTreeMap::new(),
                started_unix_s: 0,
                server_host: None,
            },
            scenario: serde_json::json!({}),
            runs: vec![],
            skipped: vec![],
            dir: None,
        }
    }

    #[test]
    fn each_push_rewrites_a_complete_document() {
        let out = std::env::temp_dir().join(format!("stampede-results-{}", std::process::id()));
        let mut writer = ResultsWriter::create(&out, empty_doc()).unwrap();
        let profile: crate::scenario::Profile = toml::from_str("path = \"/json\"").unwrap();
        writer
            .push(crate::record::failed("go", &BTreeMap::new(), &profile, 1, 5.0, "port taken".into()), "go-x-json-1")
            .unwrap();
        let read: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&writer.path).unwrap()).unwrap();
        assert_eq!(read["schema"], "stampede.run/1");
        assert_eq!(read["runs"][0]["invalid_reason"], "port taken");
        assert_eq!(read["runs"][0]["valid"], false);
        assert!(read["runs"][0]["load"].is_null());
        assert!(!writer.path.with_extension("json.tmp").exists());
        std::fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn slow_requests_go_to_a_file_beside_results_json_and_read_back() {
        use stampede_schema::load::SlowRequest;
        let out = std::env::temp_dir().join(format!("stampede-results-slow-{}", std::process::id()));
        let mut writer = ResultsWriter::create(&out, empty_doc()).unwrap();
        let slow: Vec<SlowRequest> = (0..500u64)
            .map(|i| SlowRequest {
                latency_us: 5000.0 - i as f64,
                intended_mono_ns: i * 1_000_000,
                ..Default::default()
            })
            .collect();
        let mut load = crate::record::tests::fake_load(1000.0, 0);
        load.slow_requests = slow.clone();
        let run = RunRecord { app: "go".into(), load: Some(load), ..RunRecord::default() };
        writer.push(run, "go-defaults-json-1").unwrap();

        let text = std::fs::read_to_string(&writer.path).unwrap();
        let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(raw["runs"][0]["load"]["slow_requests"], serde_json::json!([]), "none inline");
        assert_eq!(raw["runs"][0]["load"]["slow_log_file"]["name"], "go-defaults-json-1.load.slow.gz");
        assert_eq!(raw["runs"][0]["load"]["slow_log_file"]["requests"], 500);
        assert!(writer.doc.runs[0].load.as_ref().unwrap().slow_requests.is_empty(), "not kept in memory either");

        let doc = stampede_schema::document::read(&writer.path).unwrap().into_results();
        assert_eq!(doc.runs[0].load.as_ref().unwrap().slow_requests, slow, "read back whole, in order");

        std::fs::remove_file(writer.dir.join("go-defaults-json-1.load.slow.gz")).unwrap();
        let err = stampede_schema::document::read(&writer.path).unwrap_err().to_string();
        assert!(err.contains("go-defaults-json-1.load.slow.gz") && err.contains("runs[0].load.slow_log_file"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
