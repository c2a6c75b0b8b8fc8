//! The server under test, wherever it runs. A run's lifecycle (phases/)
//! asks the same things of a server on this machine and of one on another
//! host: wait until it is ready (ready.rs), say whether it crashed, mark the warmup
//! and the measured phase for its probe, and finally stop it and hand over
//! what the probe measured. [`LocalServer`] does this with a [`Server`]
//! process group and a [`Probe`] here; `stampede agent` runs that very same
//! `LocalServer` on the server's host, and remote_server/ drives the agent
//! over ssh behind the same trait, so both paths share one lifecycle.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use stampede_probe::{Probe, ProbeConfig, ProbeReport};

use crate::scenario::manifest::Manifest;
use crate::scenario::matrix::Combination;
use crate::server::events::{mono_ns, EventRecord};
use crate::server::http;
use crate::server::process::Server;
use crate::server::ready::ReadyCheck;

/// Lines of the server's output quoted in a failure.
pub const TAIL_LINES: usize = 3;

/// How long the server took to answer, once it did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Readiness {
    /// exec → first ready answer (ready.rs: `200` on the ready path).
    pub start_time_ms: f64,
    /// The duration of that first successful request.
    pub first_request_ms: f64,
}

/// Why a server is not (or no longer) usable.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// This run is invalid for the reason given; the scenario goes on.
    Run(String),
    /// Ctrl-C (or, in the agent, the controller went away).
    Interrupted,
    /// The server's host is lost (its agent died): the scenario stops.
    Host(String),
}

/// What a stopped server leaves: the probe's figures, whether it had crashed
/// before it was stopped, and its runtime events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Finished {
    pub report: ProbeReport,
    /// The exit status if the server had exited before it was stopped.
    pub crashed: Option<String>,
    /// The last lines of its output.
    pub tail: String,
    pub events: Vec<EventRecord>,
    /// Why the runtime events could not be read, if they could not.
    pub events_error: Option<String>,
    /// CLOCK_MONOTONIC of the server's host at the measured start.
    pub measured_start_mono_ns: Option<u64>,
    /// What the server's own listen socket dropped in each phase.
    #[serde(default)]
    pub listen_drops: ListenDrops,
    /// Processes the server left outside its tree (a daemonized child),
    /// stopped with it: "pid N: command line".
    #[serde(default)]
    pub strays: Vec<String>,
}

/// What the server's own listen socket dropped, declared in stampede-schema
/// (the run record keeps it for `stampede explain`).
pub use stampede_schema::run::ListenDrops;

use stampede_probe::listen_drops::{self, Reading};

/// Reads of the listener's counter at the phases' edges.
#[derive(Debug, Default)]
struct ListenReads {
    start: Option<Reading>,
    end: Option<Reading>,
}

impl ListenReads {
    /// The drops per phase, given the counter at the server's stop.
    fn drops(&self, last: Option<Reading>) -> ListenDrops {
        let since = |a: Option<Reading>, b: Option<Reading>| Some(b?.since(&a?));
        ListenDrops { measured: since(self.start, self.end), after: since(self.end, last) }
    }
}

/// A started server and its probe.
pub trait Served {
    /// The port it listens on.
    fn port(&self) -> u16;
    /// Polls until it answers its [`ReadyCheck`], it exits, `timeout` passes
    /// (counted from its exec) or `stop` says to give up.
    fn wait_ready(&mut self, timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Readiness, Failure>;
    /// Its exit status, if it has exited.
    fn crashed(&mut self) -> Option<String>;
    /// The last lines of its output, joined with " | ".
    fn output_tail(&mut self) -> String;
    /// The local load generator's pid, for the probe (ignored remotely).
    fn set_loadgen(&self, pid: i32);
    /// False once the server's host is lost (its agent died): a load phase
    /// polls it and stops, since a load without a watched server is moot.
    fn alive(&self) -> bool {
        true
    }
    /// The warmup starts now (the start of the window runtime events are kept from).
    fn mark_warmup(&mut self);
    /// The measured phase starts now.
    fn mark_measured_start(&mut self);
    /// The measured phase ends now: the probe's figures stop here while its
    /// series goes on through the latency phase that follows.
    fn mark_measured_end(&mut self);
    /// The pid perf can attach to, when the server runs on this machine.
    fn local_pid(&self) -> Option<i32>;
    /// Takes the probe's last sample, stops the server and its process tree,
    /// and reads its runtime events.
    fn finish(self: Box<Self>) -> Result<Finished, Failure>;
}

/// A port for the run: the scenario's, or a free one when it says 0.
pub fn pick_port(requested: u16) -> Result<u16, String> {
    let port = if requested != 0 {
        requested
    } else {
        http::free_port().map_err(|e| format!("cannot find a free port: {e}"))?
    };
    if http::port_in_use(port) {
        return Err(format!("port {port} is already in use by another process: stop it, or pick another with --set port=<n> (0 picks a free one)"));
    }
    Ok(port)
}

/// What starting a server needs.
pub struct Launch<'a> {
    pub app: &'a Manifest,
    pub combo: &'a Combination,
    pub port: u16,
    /// `taskset -c` CPU list for the server.
    pub cpus: Option<&'a str>,
    pub log: &'a Path,
    pub grace: Duration,
    pub sample_interval: Duration,
    /// When the server counts as started.
    pub ready: &'a ReadyCheck,
    /// Extra environment (the database's connection settings).
    pub env: &'a [(String, String)],
    /// A local database's root process, sampled beside the server.
    pub database_pid: Option<i32>,
}

/// A server on this machine with its probe.
pub struct LocalServer {
    name: String,
    port: u16,
    ready: ReadyCheck,
    server: Server,
    probe: Option<Probe>,
    warmup_mono_ns: u64,
    measured_mono_ns: Option<u64>,
    listen: ListenReads,
}

impl LocalServer {
    /// Starts the server in its own process group and the probe on it.
    pub fn start(launch: &Launch) -> Result<LocalServer, String> {
        let app = launch.app;
        let server = Server::spawn(app, launch.combo, launch.port, launch.cpus, launch.log, launch.grace, launch.env)
            .map_err(|e| format!("cannot start `{}`: {e}", app.run))?;
        let probe = Probe::start(ProbeConfig { interval: launch.sample_interval, ..Default::default() }, server.pid())
            .map_err(|e| format!("{} exited at once: {e}; {}", app.name, server.crash_report(TAIL_LINES)))?;
        if let Some(pid) = launch.database_pid {
            probe.set_database(pid);
        }
        Ok(LocalServer {
            name: app.name.clone(),
            port: launch.port,
            ready: launch.ready.clone(),
            server,
            probe: Some(probe),
            warmup_mono_ns: mono_ns(),
            measured_mono_ns: None,
            listen: ListenReads::default(),
        })
    }

    fn probe(&self) -> &Probe {
        self.probe.as_ref().expect("the probe lives until finish")
    }
}

impl Served for LocalServer {
    fn port(&self) -> u16 {
        self.port
    }

    fn wait_ready(&mut self, timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Readiness, Failure> {
        let deadline = self.server.spawned_at + timeout;
        let (name, port, ready) = (&self.name, self.port, &self.ready);
        loop {
            if stop() {
                return Err(Failure::Interrupted);
            }
            self.server.watch();
            if let Some(status) = self.server.exited() {
                return Err(Failure::Run(format!(
                    "{name} crashed during start ({status}): {}",
                    self.server.crash_report(TAIL_LINES)
                )));
            }
            if Instant::now() > deadline {
                return Err(Failure::Run(format!(
                    "{name} did not answer {ready} within {} (port {port}): {}",
                    crate::scenario::duration::format(timeout),
                    self.server.output_tail(TAIL_LINES)
                )));
            }
            if let Ok(took) = ready.ask_at("127.0.0.1", port, Duration::from_secs(2)) {
                return Ok(Readiness {
                    start_time_ms: self.server.spawned_at.elapsed().as_secs_f64() * 1000.0,
                    first_request_ms: took.as_secs_f64() * 1000.0,
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn crashed(&mut self) -> Option<String> {
        self.server.exited().map(|status| status.to_string())
    }

    fn output_tail(&mut self) -> String {
        self.server.output_tail(TAIL_LINES)
    }

    fn set_loadgen(&self, pid: i32) {
        self.probe().set_loadgen(pid);
    }

    fn mark_warmup(&mut self) {
        self.server.watch();
        self.warmup_mono_ns = mono_ns();
    }

    fn mark_measured_start(&mut self) {
        self.server.watch();
        self.listen.start = listen_drops::reading(self.port);
        self.probe().mark_measured_start();
        self.measured_mono_ns = Some(mono_ns());
    }

    fn mark_measured_end(&mut self) {
        self.server.watch();
        self.listen.end = listen_drops::reading(self.port);
        self.probe().mark_measured_end();
    }

    fn local_pid(&self) -> Option<i32> {
        Some(self.server.pid())
    }

    fn finish(mut self: Box<Self>) -> Result<Finished, Failure> {
        let report = self.probe.take().map(Probe::finish).unwrap_or_default();
        let crashed = self.crashed();
        let tail = self.output_tail();
        let load_end_mono_ns = mono_ns();
        let listen_drops = self.listen.drops(listen_drops::reading(self.port));
        self.server.stop();
        self.server.finish_output();
        let strays = self.server.strays.iter().map(|(pid, cmd)| format!("pid {pid}: {cmd}")).collect();
        let mut finished = Finished {
            report,
            crashed,
            tail,
            measured_start_mono_ns: self.measured_mono_ns,
            strays,
            listen_drops,
            ..Default::default()
        };
        if let Some(capture) = self.server.capture.clone() {
            let t0 = self.measured_mono_ns.unwrap_or(load_end_mono_ns);
            match crate::server::events::collect(
                &capture,
                self.server.exec_mono_ns,
                t0,
                self.warmup_mono_ns,
                load_end_mono_ns,
            ) {
                Ok(events) => finished.events = events,
                Err(e) => finished.events_error = Some(e),
            }
        }
        Ok(finished)
    }
}
