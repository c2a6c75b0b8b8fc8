//! The server on another host (`[hosts] server`): the controller's side.
//! [`ServerHost::connect`] reaches the host once per scenario over the user's
//! ssh (sending this binary with `copy_binary`), measures its clock offset and
//! asks the agent for the host's facts; each app's build then runs there, and
//! each run's server is a [`RemoteServer`]: a `stampede agent` session that
//! starts the app with the local lifecycle's own code, answers the run's
//! questions through the [`Served`] trait, and sends the probe's figures
//! back. Readiness is timed where the server runs; the controller then checks
//! it answers at `[hosts] server_address`, where the contract check and the
//! load go. If the agent dies, its host is named in one line, the app's
//! process group is stopped over a new session, and the scenario stops.

mod session;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use stampede_remote::{clock, copy, HostError, Ssh};

use crate::scenario::hosts::Hosts;
use crate::scenario::manifest::Manifest;
use crate::server::agent::protocol::{Action, App, Command, Event, Request, Serve, VERSION};
use crate::server::prepare::{PrepareError, Prepared};
use crate::server::ready::{NotReady, ReadyCheck};
use crate::server::served::{Failure, Finished, Launch, Readiness, Served, TAIL_LINES};
use session::{stop_group, Next, Session};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a build may take on the server's host.
const BUILD_LIMIT: Duration = Duration::from_secs(900);

/// Where the server ran, as results.json records it (`environment.server_host`).
pub use stampede_schema::run::ServerHostRecord;

/// A reachable server host.
pub struct ServerHost {
    ssh: Ssh,
    grace: Duration,
    pub record: ServerHostRecord,
}

/// `[hosts] server` could not be used at all.
#[derive(Debug, thiserror::Error)]
#[error("hosts.server {host}: {reason}")]
pub struct ServerHostError {
    pub host: String,
    pub reason: String,
}

impl ServerHost {
    /// Reaches `hosts.server`, copies this binary if asked, measures the clock
    /// and checks the agent answers.
    pub fn connect(hosts: &Hosts, exe: &Path, grace: Duration) -> Result<ServerHost, ServerHostError> {
        let host = hosts.server.clone().unwrap_or_default();
        let fail = |e: HostError| ServerHostError { host: host.clone(), reason: e.to_string() };
        let mut ssh = Ssh {
            config: hosts.ssh_config.clone(),
            connect_timeout: CONNECT_TIMEOUT,
            remote_path: hosts.remote_path.clone().unwrap_or_else(|| "stampede".into()),
        };
        if hosts.copy_binary {
            ssh.remote_path = copy::ensure(&ssh, &host, exe).map_err(fail)?;
        }
        let offset = clock::measure(&ssh, &host).map_err(fail)?;
        let (mut session, facts) =
            Session::open(&ssh, &host, &Request { version: VERSION, action: Action::Describe }).map_err(fail)?;
        session.close(Duration::from_secs(2));
        let record = ServerHostRecord {
            host: host.clone(),
            address: hosts.server_address.clone().unwrap_or_default(),
            stampede: ssh.remote_path.clone(),
            clock_offset_ms: offset.offset_ns as f64 / 1e6,
            clock_rtt_ms: offset.rtt_ns as f64 / 1e6,
            cores: facts.cores,
            cpu_model: facts.cpu_model,
            kernel: facts.kernel,
        };
        Ok(ServerHost { ssh, grace, record })
    }

    fn host(&self) -> &str {
        &self.record.host
    }

    /// Checks the app's tools, runs its build and asks its version there.
    pub fn prepare(
        &self,
        app: &Manifest,
        build: bool,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Prepared, PrepareError> {
        let remote = |reason: String| PrepareError::Remote { host: self.host().to_string(), reason };
        let request = Request { version: VERSION, action: Action::Prepare { app: app_spec(app), build } };
        let (mut session, _) = Session::open(&self.ssh, self.host(), &request).map_err(|e| remote(e.to_string()))?;
        let deadline = Instant::now() + BUILD_LIMIT;
        loop {
            if interrupted() {
                session.close(Duration::from_secs(5));
                return Err(PrepareError::Interrupted);
            }
            match session.next(Duration::from_millis(100)) {
                Next::Event(Event::Prepared { build_time_ms, runtime_version }) => {
                    return Ok(Prepared { build_time_ms, runtime_version })
                }
                Next::Event(Event::Failed { reason }) => return Err(remote(reason)),
                Next::Event(_) => {}
                Next::Gone => return Err(remote(format!("the stampede agent died ({})", session.died()))),
                Next::Quiet if Instant::now() > deadline => {
                    return Err(remote("the build did not finish in 15 minutes".into()))
                }
                Next::Quiet => {}
            }
        }
    }

    /// Starts the run's server there; returns once the agent says it started.
    pub fn start(&self, launch: &Launch, start_timeout: Duration) -> Result<RemoteServer<'_>, Failure> {
        let serve = Serve {
            app: app_spec(launch.app),
            env: launch.combo.env.clone(),
            args: launch.combo.args.clone(),
            port: launch.port,
            cpus: launch.cpus.map(str::to_string),
            start_timeout_ms: start_timeout.as_millis() as u64,
            stop_grace_ms: self.grace.as_millis() as u64,
            sample_interval_ms: launch.sample_interval.as_millis().max(1) as u64,
            ready: launch.ready.clone(),
        };
        let request = Request { version: VERSION, action: Action::Serve(serve) };
        let (session, _) = Session::open(&self.ssh, self.host(), &request)
            .map_err(|e| Failure::Host(format!("hosts.server {}: {e}", self.host())))?;
        let mut server = RemoteServer {
            host: self,
            session,
            port: 0,
            exited: None,
            log: launch.log.to_path_buf(),
            finished: false,
            start_timeout,
            mono_offset: None,
        };
        let deadline = Instant::now() + CONNECT_TIMEOUT;
        loop {
            if Instant::now() > deadline {
                return Err(Failure::Run(format!(
                    "the agent on {} did not start the server within {} s",
                    self.host(),
                    CONNECT_TIMEOUT.as_secs()
                )));
            }
            match server.poll(Duration::from_millis(100)) {
                Next::Event(Event::Started { port, .. }) => {
                    server.port = port;
                    return Ok(server);
                }
                Next::Event(Event::Failed { reason }) => return Err(Failure::Run(reason)),
                Next::Gone => return Err(Failure::Host(server.lost())),
                Next::Event(_) | Next::Quiet => {}
            }
        }
    }

    /// The URL the controller and the load use, once the server answers there.
    pub fn reachable(&self, port: u16, ready: &ReadyCheck) -> Result<String, String> {
        let address = self.record.address.as_str();
        match ready.ask_at(address, port, Duration::from_secs(5)) {
            Ok(_) => Ok(crate::scenario::hosts::url_base(address, port)),
            Err(NotReady::Answered(e)) => Err(format!("the server answers {ready} on its host but {e} at hosts.server_address {address}:{port}: is another server there?")),
            Err(NotReady::NoAnswer(e)) => Err(format!(
                "the server answers on {} but not at hosts.server_address {address}:{port} ({e}): the app must listen on that address or 0.0.0.0, and no firewall may block the port",
                self.host()
            )),
        }
    }
}

fn app_spec(app: &Manifest) -> App {
    let dir = std::fs::canonicalize(&app.dir).unwrap_or_else(|_| app.dir.clone());
    App { manifest: app.clone(), dir }
}

/// A server running under `stampede agent` on the server's host.
pub struct RemoteServer<'a> {
    host: &'a ServerHost,
    session: Session,
    port: u16,
    /// The exit status and output tail the agent reported.
    exited: Option<(String, String)>,
    /// Where the server's log goes here (the agent sends its end).
    log: PathBuf,
    finished: bool,
    start_timeout: Duration,
    /// The host's CLOCK_MONOTONIC minus ours, and its uncertainty, from the
    /// `measure` exchange.
    mono_offset: Option<MonoOffset>,
}

/// How far the server host's CLOCK_MONOTONIC is from ours.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MonoOffset {
    offset_ns: i128,
    error_ns: u64,
}

impl MonoOffset {
    /// From one exchange: we sent at `sent`, the host read `remote`, we got its answer at `received`.
    fn estimate(sent: u64, remote: u64, received: u64) -> MonoOffset {
        let mid = (i128::from(sent) + i128::from(received)) / 2;
        MonoOffset { offset_ns: i128::from(remote) - mid, error_ns: received.saturating_sub(sent).div_ceil(2) }
    }

    fn to_local(self, remote_ns: u64) -> u64 {
        (i128::from(remote_ns) - self.offset_ns).clamp(0, i128::from(u64::MAX)) as u64
    }

    /// Puts the host's event times and measured start on this machine's
    /// clock, where the load generator's slow-request log is, widening each
    /// event's error bound by the exchange's uncertainty.
    fn translate(self, finished: &mut Finished) {
        finished.measured_start_mono_ns = finished.measured_start_mono_ns.map(|t| self.to_local(t));
        for e in &mut finished.events {
            e.start_mono_ns = self.to_local(e.start_mono_ns);
            e.end_mono_ns = self.to_local(e.end_mono_ns);
            e.error_ns += self.error_ns;
        }
    }
}

impl RemoteServer<'_> {
    /// The next event within `wait`, keeping what the run needs from it.
    fn poll(&mut self, wait: Duration) -> Next {
        let next = self.session.next(wait);
        match &next {
            Next::Event(Event::Exited { status, tail }) => self.exited = Some((status.clone(), tail.clone())),
            Next::Event(Event::Stopped { log }) => {
                let _ = std::fs::write(&self.log, log);
            }
            _ => {}
        }
        next
    }

    /// The one line naming the lost host; stops the app's group over a new session.
    fn lost(&mut self) -> String {
        let how = self.session.died();
        let mut line = format!("hosts.server {}: the stampede agent died mid-run ({how})", self.host.host());
        if let Some(pgid) = self.session.pgid {
            match stop_group(&self.host.ssh, self.host.host(), pgid, self.host.grace) {
                Ok(()) => line.push_str("; the server there was stopped over a new ssh session"),
                Err(e) => line.push_str(&format!(
                    "; the server there could not be stopped ({e}): stop process group {pgid} by hand"
                )),
            }
        }
        self.finished = true;
        line
    }
}

impl Served for RemoteServer<'_> {
    fn port(&self) -> u16 {
        self.port
    }

    fn wait_ready(&mut self, _timeout: Duration, stop: &dyn Fn() -> bool) -> Result<Readiness, Failure> {
        // The agent keeps the start timeout; this one only guards against a hung session.
        let deadline = Instant::now() + self.start_timeout + CONNECT_TIMEOUT;
        loop {
            if stop() {
                return Err(Failure::Interrupted);
            }
            match self.poll(Duration::from_millis(100)) {
                Next::Event(Event::Ready(ready)) => return Ok(ready),
                Next::Event(Event::Failed { reason }) => return Err(Failure::Run(reason)),
                Next::Event(_) => {}
                Next::Gone => return Err(Failure::Host(self.lost())),
                Next::Quiet if Instant::now() > deadline => {
                    return Err(Failure::Run(format!(
                        "the agent on {} did not report readiness in time",
                        self.host.host()
                    )))
                }
                Next::Quiet => {}
            }
        }
    }

    fn crashed(&mut self) -> Option<String> {
        while let Next::Event(_) = self.poll(Duration::ZERO) {}
        self.exited.as_ref().map(|(status, _)| status.clone())
    }

    fn output_tail(&mut self) -> String {
        self.exited
            .as_ref()
            .map(|(_, tail)| tail.clone())
            .unwrap_or_else(|| crate::server::process::tail(&self.log, TAIL_LINES))
    }

    fn set_loadgen(&self, _pid: i32) {}

    fn alive(&self) -> bool {
        !self.session.ended()
    }

    fn mark_warmup(&mut self) {
        self.session.send(Command::Warmup);
    }

    fn mark_measured_end(&mut self) {
        self.session.send(Command::MeasureEnd);
    }

    fn mark_measured_start(&mut self) {
        let sent = crate::server::events::mono_ns();
        if !self.session.send(Command::Measure) {
            return;
        }
        // The answer comes within a round trip; the load waits for it (bounded).
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            match self.poll(Duration::from_millis(20)) {
                Next::Event(Event::Measuring { mono_ns }) => {
                    self.mono_offset = Some(MonoOffset::estimate(sent, mono_ns, crate::server::events::mono_ns()));
                    return;
                }
                Next::Gone => return,
                Next::Event(_) | Next::Quiet => {}
            }
        }
    }

    fn local_pid(&self) -> Option<i32> {
        None
    }

    fn finish(mut self: Box<Self>) -> Result<Finished, Failure> {
        self.session.send(Command::Finish);
        let deadline = Instant::now() + self.host.grace + Duration::from_secs(20);
        let mut report = None;
        while !self.session.stopped {
            match self.poll(Duration::from_millis(100)) {
                Next::Event(Event::Report(finished)) => report = Some(*finished),
                Next::Event(_) => {}
                Next::Gone => return Err(Failure::Host(self.lost())),
                Next::Quiet if Instant::now() > deadline => break,
                Next::Quiet => {}
            }
        }
        match report {
            Some(mut finished) => {
                match self.mono_offset {
                    Some(offset) => offset.translate(&mut finished),
                    // Without the exchange the host's clock cannot be placed: keep no times.
                    None => finished.measured_start_mono_ns = None,
                }
                Ok(finished)
            }
            None => Err(Failure::Host(self.lost())),
        }
    }
}

impl Drop for RemoteServer<'_> {
    fn drop(&mut self) {
        if self.finished || self.session.stopped {
            self.session.close(Duration::from_secs(1));
            return;
        }
        // Closing stdin asks the agent to stop the app; if it cannot, stop it here.
        if !self.session.close(self.host.grace + Duration::from_secs(5)) {
            if let Some(pgid) = self.session.pgid {
                let _ = stop_group(&self.host.ssh, self.host.host(), pgid, self.host.grace);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::events::EventRecord;

    #[test]
    fn host_times_move_onto_this_clock_with_their_uncertainty() {
        // The host's monotonic clock is 1 s ahead; the exchange took 2 ms.
        let offset = MonoOffset::estimate(10_000_000, 1_011_000_000, 12_000_000);
        assert_eq!(offset, MonoOffset { offset_ns: 1_000_000_000, error_ns: 1_000_000 });
        let event = EventRecord {
            t_s: 0.5,
            kind: "gc".into(),
            label: "pause".into(),
            duration_ms: 2.0,
            start_mono_ns: 1_500_000_000,
            end_mono_ns: 1_502_000_000,
            stopped: true,
            error_ns: 50_000,
        };
        let mut finished =
            Finished { events: vec![event], measured_start_mono_ns: Some(1_000_000_000), ..Default::default() };
        offset.translate(&mut finished);
        assert_eq!(finished.measured_start_mono_ns, Some(0));
        let e = &finished.events[0];
        assert_eq!((e.start_mono_ns, e.end_mono_ns, e.error_ns), (500_000_000, 502_000_000, 1_050_000));
        assert_eq!(e.t_s, 0.5, "times relative to the measured start do not move");
    }
}
