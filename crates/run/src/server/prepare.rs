//! Gets an app ready once per scenario: its toolchain must be on PATH, its
//! build command is run and timed (output to `logs/<app>.build.log`), and its
//! version command is asked for the runtime version. Any failure skips the
//! app with the reason said, and the scenario goes on.

use std::path::Path;
use std::time::Duration;

use crate::scenario::manifest::Manifest;
use crate::server::subprocess::{self, last_lines, SubprocessError};

const BUILD_LIMIT: Duration = Duration::from_secs(900);
const VERSION_LIMIT: Duration = Duration::from_secs(20);

pub struct Prepared {
    pub build_time_ms: f64,
    pub runtime_version: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("skipped: {tools} not found on PATH (install it, or leave {app} out with --apps)")]
    MissingTool { app: String, tools: String },
    #[error("build failed (`{command}` exited with {code}; log {log}): {tail}")]
    BuildFailed { command: String, code: String, log: String, tail: String },
    #[error("build: {0}")]
    Build(SubprocessError),
    #[error("interrupted")]
    Interrupted,
    /// On `[hosts] server`: what the agent there said.
    #[error("on hosts.server {host}: {reason}")]
    Remote { host: String, reason: String },
}

pub fn prepare(
    app: &Manifest,
    build: bool,
    logs: &Path,
    interrupted: &dyn Fn() -> bool,
) -> Result<Prepared, PrepareError> {
    let missing = app.missing_tools();
    if !missing.is_empty() {
        return Err(PrepareError::MissingTool { app: app.name.clone(), tools: missing.join(", ") });
    }
    let mut build_time_ms = 0.0;
    if let (true, Some(command)) = (build, app.build.as_deref()) {
        let log = logs.join(format!("{}.build.log", crate::scenario::names::file_part(&app.name)));
        let done = subprocess::run(
            subprocess::shell(command, &app.command_dir()),
            command,
            BUILD_LIMIT,
            Some(&log),
            interrupted,
        )
        .map_err(|e| match e {
            SubprocessError::Interrupted => PrepareError::Interrupted,
            other => PrepareError::Build(other),
        })?;
        if !done.status.success() {
            return Err(PrepareError::BuildFailed {
                command: command.to_string(),
                code: done.status.code().map(|c| c.to_string()).unwrap_or_else(|| "a signal".into()),
                log: log.display().to_string(),
                tail: crate::server::process::tail(&log, 3),
            });
        }
        build_time_ms = done.took.as_secs_f64() * 1000.0;
    }
    Ok(Prepared { build_time_ms, runtime_version: version(app, interrupted) })
}

/// The first line of the app's `version` command, or why there is none.
fn version(app: &Manifest, interrupted: &dyn Fn() -> bool) -> String {
    let Some(command) = app.version.as_deref() else {
        return "unknown (no version command in the manifest)".into();
    };
    match subprocess::run(subprocess::shell(command, &app.command_dir()), command, VERSION_LIMIT, None, interrupted) {
        Ok(done) if done.status.success() => {
            done.output.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown").to_string()
        }
        Ok(done) => format!("unknown (`{command}` failed: {})", last_lines(&done.output, 1)),
        Err(err) => format!("unknown ({err})"),
    }
}
