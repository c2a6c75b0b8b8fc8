//! Runs the load generator as a subprocess of the same binary
//! (`stampede load --spec - --json`, the phase's load spec written on its
//! stdin, never a command line rebuilt by hand), under `taskset` when
//! pinned, and reads back the `stampede.load/1` document it prints. The run can be interrupted (Ctrl-C):
//! the subprocess is killed and the phase reported as interrupted.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::scenario::pinning;
use crate::scenario::Profile;
use stampede_schema::{LoadResult, LoadSpec};

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot start the load generator {exe}: {source}")]
    Spawn { exe: String, source: std::io::Error },
    #[error("the load generator failed (exit {code}): {stderr}")]
    Failed { code: i32, stderr: String },
    #[error("the load generator printed no stampede.load/1 JSON: {0}")]
    BadJson(String),
    #[error("the load spec: {0}")]
    Spec(String),
    #[error("interrupted")]
    Interrupted,
}

/// One load phase.
pub struct LoadPhase<'a> {
    pub exe: &'a Path,
    /// The server as the load generator reaches it, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    pub profile: &'a Profile,
    /// The scenario file's directory (the profile's files are relative to it).
    pub dir: &'a Path,
    pub duration: Duration,
    pub cpus: Option<&'a str>,
    /// Send the load from these hosts (`[hosts] load`).
    pub hosts: Option<&'a crate::scenario::hosts::Hosts>,
    /// Write the HdrHistogram interval log here (`--hdr-log`).
    pub hdr_log: Option<std::path::PathBuf>,
    /// Open loop at this many requests per second (the latency phase),
    /// instead of the profile's own rate.
    pub rate: Option<f64>,
    /// Slow requests to keep (`--slow-log`), whatever the profile says.
    pub slow_log: u64,
}

impl LoadPhase<'_> {
    /// The generator's arguments: the spec comes on stdin, the result on stdout.
    pub fn args(&self) -> Vec<String> {
        ["load", "--spec", "-", "--json"].map(String::from).into()
    }

    /// What the generator is sent: the profile's spec for this phase, every file read into it.
    pub fn spec(&self) -> Result<LoadSpec, LoadError> {
        let mut spec = self
            .profile
            .phase_spec(self.dir, &self.base_url, self.duration)
            .map_err(|e| LoadError::Spec(self.profile.spec_error(&e).1))?;
        if self.hdr_log.is_some() {
            spec.hdr_log.clone_from(&self.hdr_log);
        }
        if self.rate.is_some() {
            spec.rate = self.rate;
        }
        spec.slow_log = self.slow_log;
        spec.from_hosts = self.hosts.map(crate::scenario::hosts::Hosts::load_spec);
        Ok(spec)
    }

    /// Runs the phase; `on_spawn` gets the generator's pid (for the probe);
    /// `interrupted` is polled while it runs.
    pub fn run(&self, on_spawn: impl FnOnce(i32), interrupted: &dyn Fn() -> bool) -> Result<LoadResult, LoadError> {
        let spec = serde_json::to_vec(&self.spec()?).map_err(|e| LoadError::Spec(e.to_string()))?;
        let exe = self.exe.to_string_lossy().into_owned();
        let mut cmd = pinning::command(self.cpus, &exe);
        cmd.args(self.args()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // A generator left running after a SIGKILL of `stampede run` would
        // go on loading a server that is gone (or another one on its port).
        stampede_probe::lifeline::die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|source| LoadError::Spawn { exe: exe.clone(), source })?;
        on_spawn(child.id() as i32);
        if let Some(mut stdin) = child.stdin.take() {
            // From a thread: a spec larger than the pipe must not wait for
            // a generator that is busy failing.
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&spec);
            });
        }
        let stdout = reader(&mut child, true);
        let stderr = reader(&mut child, false);
        let status = loop {
            if interrupted() {
                let _ = child.kill();
                let _ = child.wait();
                return Err(LoadError::Interrupted);
            }
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(err) => return Err(LoadError::Failed { code: -1, stderr: err.to_string() }),
            }
        };
        let out = stdout.join().unwrap_or_default();
        let err = stderr.join().unwrap_or_default();
        let code = status.code().unwrap_or(-1);
        let failed = || {
            let stderr =
                String::from_utf8_lossy(&err).lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            LoadError::Failed { code, stderr }
        };
        match code {
            0 => parse_load_json(&out),
            // A stall measured: the result is printed all the same; a
            // generator that failed another way with this status did not.
            code if stampede_schema::load::printed_a_result(code) => parse_load_json(&out).map_err(|_| failed()),
            _ => Err(failed()),
        }
    }
}

fn reader(child: &mut Child, stdout: bool) -> std::thread::JoinHandle<Vec<u8>> {
    let mut source: Box<dyn Read + Send> = if stdout {
        Box::new(child.stdout.take().expect("piped stdout"))
    } else {
        Box::new(child.stderr.take().expect("piped stderr"))
    };
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = source.read_to_end(&mut buf);
        buf
    })
}

/// The `stampede.load/1` object in the generator's stdout.
pub fn parse_load_json(out: &[u8]) -> Result<LoadResult, LoadError> {
    let text = String::from_utf8_lossy(out);
    let value: serde_json::Value = serde_json::from_str(text.trim()).map_err(|e| {
        let start: String = text.chars().take(80).collect();
        LoadError::BadJson(format!("{e} (output began {start:?})"))
    })?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s.starts_with("stampede.load/") => {
            serde_json::from_value(value).map_err(|e| LoadError::BadJson(e.to_string()))
        }
        other => Err(LoadError::BadJson(format!("schema is {other:?}, expected \"stampede.load/1\""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_gets_the_profile_as_a_spec_for_the_phase() {
        let profile: Profile = toml::from_str(
            "path = \"/json\"\nconnections = 8\nthreads = 2\nrate = 500.0\nslow_log = 5\nmethod = \"POST\"\nbody = \"{}\"\nhttp2 = true",
        )
        .unwrap();
        let phase = LoadPhase {
            exe: Path::new("stampede"),
            base_url: "http://127.0.0.1:9".into(),
            profile: &profile,
            dir: Path::new(""),
            duration: Duration::from_secs(2),
            cpus: None,
            hosts: None,
            hdr_log: None,
            rate: None,
            slow_log: 5,
        };
        assert_eq!(phase.args().join(" "), "load --spec - --json");
        let spec = phase.spec().unwrap();
        let want = LoadSpec {
            urls: vec!["http://127.0.0.1:9/json".into()],
            method: "POST".into(),
            body: Some(stampede_schema::spec::Body::Bytes(b"{}".to_vec())),
            connections: 8,
            threads: 2,
            rate: Some(500.0),
            slow_log: 5,
            http2: true,
            duration: Some(Duration::from_secs(2)),
            ..LoadSpec::default()
        };
        assert_eq!(spec, want);
        let latency = LoadPhase { rate: Some(350.0), slow_log: 120, ..phase };
        let spec = latency.spec().unwrap();
        assert_eq!((spec.rate, spec.slow_log), (Some(350.0), 120), "the latency phase's rate and slow log");
    }

    /// A one-second load phase of `profile` run by the program `exe`.
    fn phase<'a>(exe: &'a Path, profile: &'a Profile) -> LoadPhase<'a> {
        LoadPhase {
            exe,
            base_url: "http://x".into(),
            profile,
            dir: Path::new(""),
            duration: Duration::from_secs(1),
            cpus: None,
            hosts: None,
            hdr_log: None,
            rate: None,
            slow_log: 0,
        }
    }

    /// Regression: `stampede load` exits 1 when it measured a stall, and
    /// the load phase took that for a failed generator, so a server that
    /// stopped answering read as "the load generator failed (exit 1)".
    #[test]
    fn a_generator_that_measured_a_stall_exits_1_and_its_result_is_read() {
        let dir = std::env::temp_dir().join(format!("stampede-loadgen-stall-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("load");
        let result = r#"{"schema":"stampede.load/1","url":"http://x/","stalled":{"at_s":1.0,"for_s":2.0}}"#;
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh
cat >/dev/null
echo '{result}'
exit 1
"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let profile: Profile = toml::from_str("path = \"/\"").unwrap();
        let read = phase(&exe, &profile).run(|_| {}, &|| false);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(read.unwrap().stalled.map(|s| s.for_s), Some(2.0));
    }

    #[test]
    fn only_a_load_document_is_accepted() {
        assert!(parse_load_json(br#"{"schema":"stampede.load/1","rps":1}"#).is_ok());
        assert!(parse_load_json(br#"{"schema":"other"}"#).unwrap_err().to_string().contains("expected"));
        assert!(parse_load_json(b"oops").unwrap_err().to_string().contains("oops"));
    }

    #[test]
    fn a_failing_generator_reports_its_last_stderr_line() {
        let profile: Profile = toml::from_str("path = \"/\"").unwrap();
        let err = phase(Path::new("/bin/false"), &profile).run(|_| {}, &|| false).unwrap_err();
        assert!(matches!(err, LoadError::Failed { code: 1, .. }), "{err}");
    }
}
