//! The start phase: take a port, start the server in its own process group
//! (here, or on `[hosts] server` through `stampede agent`), and time it from
//! its exec to its first ready answer (server/ready.rs, timed where the
//! server runs). Then say where checks and load reach it.

use std::path::Path;

use crate::database::Database;
use crate::interrupt::interrupted;
use crate::phases::state::{RunContext, RunSpec, RunState};
use crate::server::ready::ReadyCheck;
use crate::server::served::{pick_port, Failure, Launch, LocalServer, Served};

/// Starts the run's server and waits until it is ready.
pub fn start<'a>(run: &mut RunState<'a>) -> Result<Box<dyn Served + 'a>, Failure> {
    let (ctx, spec) = (run.ctx, run.spec);
    (ctx.phase)("starting");
    let log = ctx.logs.join(format!("{}.log", run.stem));
    let ready = ReadyCheck::for_app(spec.app).map_err(Failure::Run)?;
    let mut server = start_server(ctx, spec, &log, &ready)?;
    let port = server.port();
    let readiness = server.wait_ready(ctx.scenario.start_timeout, &interrupted)?;
    run.record.start_time_ms = readiness.start_time_ms;
    run.record.first_request_ms = readiness.first_request_ms;
    // Checks and load reach a remote server at [hosts] server_address; a
    // local one at 127.0.0.1, and load hosts at [hosts] server_address.
    run.base_url = match ctx.server_host {
        Some(host) => host.reachable(port, &ready).map_err(Failure::Run)?,
        None => format!("http://127.0.0.1:{port}"),
    };
    run.load_base = match (run.load_hosts(), ctx.server_host) {
        (Some(hosts), None) => hosts.base_url(port),
        _ => run.base_url.clone(),
    };
    Ok(server)
}

/// Starts the run's server: here, or through `stampede agent` on `[hosts] server`.
fn start_server<'a>(
    ctx: &RunContext<'a>,
    spec: &RunSpec,
    log: &Path,
    ready: &ReadyCheck,
) -> Result<Box<dyn Served + 'a>, Failure> {
    let s = ctx.scenario;
    let launch = |port| Launch {
        app: spec.app,
        combo: spec.combo,
        port,
        cpus: s.pinning.server.as_ref().map(|t| t.as_str()),
        log,
        grace: s.stop_grace,
        sample_interval: s.sample_interval,
        ready,
        env: ctx.database_env,
        database_pid: ctx.database.and_then(Database::local_pid),
    };
    match ctx.server_host {
        Some(host) => Ok(Box::new(host.start(&launch(spec.app.fixed_port.unwrap_or(s.port)), s.start_timeout)?)),
        None => {
            let port = pick_port(spec.app.fixed_port.unwrap_or(s.port)).map_err(Failure::Run)?;
            Ok(Box::new(LocalServer::start(&launch(port)).map_err(Failure::Run)?))
        }
    }
}
