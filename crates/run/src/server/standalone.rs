//! One app built, started and stopped outside a scenario, for `stampede check
//! --arena`: the same preparation (toolchains on PATH, the build command
//! with its log), the same start in its own process group at its fixed
//! port, the same ready wait and the same stop as a run's server, without a
//! run around it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::scenario::manifest::Manifest;
use crate::scenario::matrix::Combination;
use crate::server::prepare;
use crate::server::ready::ReadyCheck;
use crate::server::served::{pick_port, Failure, Launch, LocalServer, Served};

/// A started app; dropping it stops the app and everything it started.
pub struct Standalone {
    server: Option<LocalServer>,
    pub port: u16,
    /// The app's output.
    pub log: PathBuf,
}

impl Standalone {
    /// Builds `app` (log in `logs`), starts it and waits up to `timeout` for
    /// its ready answer; the error is one line naming the log.
    pub fn start(
        app: &Manifest,
        logs: &Path,
        timeout: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Standalone, String> {
        std::fs::create_dir_all(logs).map_err(|e| format!("cannot make {}: {e}", logs.display()))?;
        prepare::prepare(app, true, logs, interrupted).map_err(|e| format!("{}: {e}", app.name))?;
        let ready = ReadyCheck::for_app(app)?;
        let port = pick_port(app.fixed_port.unwrap_or(0))?;
        let log = logs.join(format!("{}.log", crate::scenario::names::file_part(&app.name)));
        let combo = Combination::default();
        let launch = Launch {
            app,
            combo: &combo,
            port,
            cpus: None,
            log: &log,
            grace: Duration::from_secs(5),
            sample_interval: Duration::from_millis(100),
            ready: &ready,
            env: &[],
            database_pid: None,
        };
        let mut server = LocalServer::start(&launch)?;
        match server.wait_ready(timeout, interrupted) {
            Ok(_) => Ok(Standalone { server: Some(server), port, log }),
            Err(Failure::Interrupted) => Err("interrupted".into()),
            Err(Failure::Run(reason) | Failure::Host(reason)) if reason.contains("(its output: ") => Err(reason),
            Err(Failure::Run(reason) | Failure::Host(reason)) => {
                Err(format!("{reason} (its output: {})", log.display()))
            }
        }
    }
}

impl Drop for Standalone {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            let _ = Box::new(server).finish();
        }
    }
}
