//! The controller's side of a multi-host run: prepare every host in parallel
//! (copy the binary if asked, measure its clock), agree a start instant a
//! little in the future, start `stampede load --spec -` on every host over
//! ssh with that instant translated into the host's clock, write the host's
//! load spec (its share of the load, its seed) on the session's stdin,
//! collect each host's JSON, and merge. A remote run ends by itself if its ssh session's
//! stdin closes, so closing stdin is how the controller stops them all (on
//! Ctrl-C, on a host failure with `stop`, or past the deadline) and still
//! gets what each measured.

use crate::clock::{self, Offset};
use crate::error::{failure, HostError, HostFailure};
use crate::merge::{merge, HostResult};
use crate::share::{self, Total};
use crate::ssh::{last_line, Ssh};
use stampede_schema::load::LoadResult;
use stampede_schema::LoadSpec;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Everything a multi-host run needs.
#[derive(Debug, Clone)]
pub struct Plan {
    pub hosts: Vec<String>,
    pub ssh: Ssh,
    /// `--copy-binary`: the local binary to send to hosts that lack this version.
    pub copy_binary: Option<PathBuf>,
    pub max_clock_offset: Duration,
    /// `--on-host-failure continue`: go on without a failed host.
    pub continue_on_failure: bool,
    /// The whole load, its files already read into it (`stampede_spec::inline`)
    /// and its seed fixed: each host gets it with its share and its seed
    /// ([`LoadSpec::host_seed`]).
    pub spec: LoadSpec,
    /// Warmup plus duration, for the deadline; `None` for a request count.
    pub run_length: Option<Duration>,
    /// Time from the agreed instant being chosen to it arriving, beyond the
    /// slowest round trip: enough for every ssh session to start.
    pub start_margin: Duration,
    pub interrupt: Arc<AtomicBool>,
}

/// A host ready to run: the binary to run there and its clock.
#[derive(Debug, Clone)]
pub struct Ready {
    pub host: String,
    pub path: String,
    pub offset: Offset,
}

/// What a multi-host run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The merged result of the hosts that returned one (`None` if none did).
    pub merged: Option<LoadResult>,
    /// Hosts that failed, in the order of `--hosts`.
    pub failures: Vec<HostFailure>,
    /// Every host that passed preparation, with its clock.
    pub ready: Vec<Ready>,
}

/// Prepares every host, then runs the load on those that are ready.
pub fn run(plan: &Plan) -> Outcome {
    let prepared: Vec<Result<Ready, HostError>> = std::thread::scope(|s| {
        let handles: Vec<_> = plan.hosts.iter().map(|h| s.spawn(move || prepare(plan, h))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(HostError::ClockProtocol("preparation panicked".into()))))
            .collect()
    });
    let mut failures = Vec::new();
    let mut ready = Vec::new();
    for (host, p) in plan.hosts.iter().zip(prepared) {
        match p {
            Ok(r) => ready.push(r),
            Err(e) => failures.push(failure(host, &e)),
        }
    }
    if ready.is_empty() || (!failures.is_empty() && !plan.continue_on_failure) || plan.interrupt.load(Ordering::Relaxed)
    {
        return Outcome { merged: None, failures, ready };
    }
    let (results, mut run_failures) = load(plan, &ready);
    failures.append(&mut run_failures);
    failures.sort_by_key(|f| plan.hosts.iter().position(|h| *h == f.host));
    let merged = match merge(&results, failures.clone()) {
        Ok(m) => Some(m),
        Err(_) if results.is_empty() => None,
        Err(f) => {
            failures.push(f);
            None
        }
    };
    Outcome { merged, failures, ready }
}

fn prepare(plan: &Plan, host: &str) -> Result<Ready, HostError> {
    let mut ssh = plan.ssh.clone();
    if let Some(local) = &plan.copy_binary {
        ssh.remote_path = crate::copy::ensure(&ssh, host, local)?;
    }
    let offset = clock::measure(&ssh, host)?;
    check_offset(&offset, plan.max_clock_offset)?;
    Ok(Ready { host: host.to_string(), path: ssh.remote_path, offset })
}

/// A host whose clock is further off than `--max-clock-offset` fails.
fn check_offset(offset: &Offset, limit: Duration) -> Result<(), HostError> {
    let offset_ms = offset.offset_ns as f64 / 1e6;
    let limit_ms = limit.as_secs_f64() * 1e3;
    match offset_ms.abs() > limit_ms {
        true => Err(HostError::Clock { offset_ms, limit_ms }),
        false => Ok(()),
    }
}

/// `--start-at` as unix seconds with nanoseconds.
pub fn format_instant(unix_ns: i128) -> String {
    format!("{}.{:09}", unix_ns.div_euclid(1_000_000_000), unix_ns.rem_euclid(1_000_000_000))
}

/// The `stampede load` arguments of every host: the run's controls only,
/// the load itself comes as a spec on stdin ([`host_spec`]).
fn host_args(start_remote_ns: i128) -> Vec<String> {
    let mut a: Vec<String> = ["load", "--json", "--exit-on-stdin-eof", "--start-at"].map(String::from).into();
    a.push(format_instant(start_remote_ns));
    a.extend(["--spec".into(), "-".into()]);
    a
}

/// The load spec of host `index`: its share of the load and its own seed.
fn host_spec(plan: &Plan, share: &share::Share, index: usize) -> LoadSpec {
    let mut spec = plan.spec.clone();
    spec.connections = share.connections;
    spec.threads = plan.spec.threads.min(share.connections);
    spec.max_connections = share.max_connections;
    spec.rate = share.rate;
    spec.requests = share.requests;
    spec.seed = plan.spec.seed.map(|seed| LoadSpec::host_seed(seed, index));
    spec
}

/// Writes a host's spec (one JSON line) on its ssh session's stdin from a
/// thread, through a duplicate of the pipe: a host that does not read does
/// not hold up the others, and dropping the original still ends the run
/// once the spec is written.
fn send_spec(stdin: &ChildStdin, spec: &LoadSpec) -> std::io::Result<()> {
    let mut pipe = std::fs::File::from(stdin.as_fd().try_clone_to_owned()?);
    let mut line = serde_json::to_vec(spec).map_err(std::io::Error::other)?;
    line.push(b'\n');
    std::thread::spawn(move || {
        let _ = pipe.write_all(&line);
    });
    Ok(())
}

struct Running {
    pid: u32,
    stdin: Option<ChildStdin>,
    done: bool,
}

/// Runs the load on the ready hosts and collects their results.
fn load(plan: &Plan, ready: &[Ready]) -> (Vec<HostResult>, Vec<HostFailure>) {
    let shares = match share::split(&Total::of(&plan.spec), ready.len()) {
        Ok(s) => s,
        Err(e) => {
            return (
                Vec::new(),
                ready.iter().map(|r| HostFailure { host: r.host.clone(), reason: e.clone() }).collect(),
            )
        }
    };
    let max_rtt = ready.iter().map(|r| r.offset.rtt_ns).max().unwrap_or(0);
    let start_local = Instant::now() + plan.start_margin + Duration::from_nanos(max_rtt.saturating_mul(4));
    let start_ns = clock::now_ns() + (plan.start_margin.as_nanos() + u128::from(max_rtt) * 4) as i128;
    let (tx, rx) = mpsc::channel::<(usize, Result<LoadResult, HostError>)>();
    let mut running: Vec<Running> = Vec::new();
    let mut results: Vec<Option<HostResult>> = vec![None; ready.len()];
    let mut failures: Vec<HostFailure> = Vec::new();
    for (i, (r, share)) in ready.iter().zip(&shares).enumerate() {
        let mut ssh = plan.ssh.clone();
        ssh.remote_path = r.path.clone();
        let mut cmd = ssh.stampede(&r.host, &host_args(start_ns + i128::from(r.offset.offset_ns)));
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        match cmd.spawn() {
            Ok(mut child) => {
                if let Some(stdin) = &child.stdin {
                    if let Err(e) = send_spec(stdin, &host_spec(plan, share, i)) {
                        failures.push(failure(&r.host, &HostError::Connect(format!("cannot send the load spec: {e}"))));
                    }
                }
                running.push(Running { pid: child.id(), stdin: child.stdin.take(), done: false });
                let tx = tx.clone();
                std::thread::spawn(move || {
                    let _ = tx.send((i, collect(&mut child, start_local)));
                });
            }
            Err(e) => {
                running.push(Running { pid: 0, stdin: None, done: true });
                failures.push(failure(&r.host, &HostError::Connect(format!("cannot start ssh: {e}"))));
            }
        }
    }
    drop(tx);
    let soft = plan.run_length.map(|d| start_local + d + Duration::from_secs(20));
    let hard = soft.map(|s| s + Duration::from_secs(10));
    let mut stopping = !failures.is_empty() && !plan.continue_on_failure;
    let stop_all = |running: &mut Vec<Running>| running.iter_mut().for_each(|r| r.stdin = None);
    if stopping {
        stop_all(&mut running);
    }
    while running.iter().any(|r| !r.done) {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((i, outcome)) => {
                running[i].done = true;
                match outcome {
                    Ok(result) => {
                        results[i] = Some(HostResult {
                            host: ready[i].host.clone(),
                            offset_ns: ready[i].offset.offset_ns,
                            rtt_ns: ready[i].offset.rtt_ns,
                            result,
                        })
                    }
                    Err(e) => {
                        failures.push(failure(&ready[i].host, &e));
                        if !plan.continue_on_failure && !stopping {
                            stopping = true;
                            stop_all(&mut running);
                        }
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        if !stopping && (plan.interrupt.load(Ordering::Relaxed) || soft.is_some_and(|s| now >= s)) {
            stopping = true;
            stop_all(&mut running);
        }
        if hard.is_some_and(|h| now >= h) {
            for r in running.iter().filter(|r| !r.done && r.pid > 0) {
                // SAFETY: kill(2) on the ssh child we spawned and have not reaped.
                unsafe { libc::kill(r.pid as i32, libc::SIGKILL) };
            }
        }
    }
    (results.into_iter().flatten().collect(), failures)
}

/// Waits for one host's ssh session and reads its result.
fn collect(child: &mut std::process::Child, start: Instant) -> Result<LoadResult, HostError> {
    let crate::ssh::Finished { code, stdout, stderr } = crate::ssh::wait(child)?;
    let ran_s = Instant::now().saturating_duration_since(start).as_secs_f64();
    match code {
        Some(code) if stampede_schema::load::printed_a_result(code) => serde_json::from_str::<LoadResult>(&stdout)
            .map_err(|e| HostError::BadResult(format!("its JSON did not parse: {e}"))),
        None => Err(HostError::Hung),
        Some(255) if ran_s == 0.0 => Err(HostError::Connect(format!("ssh exited 255: {}", last_line(&stderr)))),
        Some(_) if stderr.contains("stampede: error:") => Err(HostError::Remote(last_line(&stderr))),
        Some(code) => Err(HostError::Died {
            after_s: ran_s,
            detail: match last_line(&stderr).as_str() {
                "no message" => format!(
                    "ssh exited {code} with no result: the remote stampede was killed or the connection dropped"
                ),
                line => format!("ssh exited {code}: {line}"),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_beyond_the_limit_is_named_with_its_offset() {
        let limit = Duration::from_millis(100);
        assert!(check_offset(&Offset { offset_ns: 99_000_000, rtt_ns: 1 }, limit).is_ok());
        let ahead = check_offset(&Offset { offset_ns: 412_300_000, rtt_ns: 1 }, limit).unwrap_err();
        let line = failure("bob@10.0.0.2", &ahead).line();
        assert!(
            line.starts_with("host bob@10.0.0.2: clock is 412 ms ahead (limit --max-clock-offset 100 ms)"),
            "{line}"
        );
        let behind = check_offset(&Offset { offset_ns: -250_000_000, rtt_ns: 1 }, limit).unwrap_err().to_string();
        assert!(behind.starts_with("clock is 250 ms behind"), "{behind}");
    }

    #[test]
    fn instants_print_as_unix_seconds() {
        assert_eq!(format_instant(1_700_000_000_123_456_789), "1700000000.123456789");
        assert_eq!(format_instant(5), "0.000000005");
    }

    #[test]
    fn each_host_gets_its_share_its_seed_and_the_start() {
        let spec = LoadSpec {
            urls: vec!["http://x/".into()],
            connections: 3,
            threads: 2,
            rate: Some(1000.0),
            seed: Some(7),
            duration: Some(Duration::from_secs(2)),
            ..LoadSpec::default()
        };
        let plan = Plan {
            hosts: vec!["a".into(), "b".into()],
            ssh: Ssh { config: None, connect_timeout: Duration::from_secs(5), remote_path: "stampede".into() },
            copy_binary: None,
            max_clock_offset: Duration::from_millis(100),
            continue_on_failure: false,
            spec: spec.clone(),
            run_length: Some(Duration::from_secs(2)),
            start_margin: Duration::from_secs(2),
            interrupt: Arc::new(AtomicBool::new(false)),
        };
        let shares = share::split(&Total::of(&plan.spec), 2).unwrap();
        assert_eq!(
            host_args(2_000_000_000).join(" "),
            "load --json --exit-on-stdin-eof --start-at 2.000000000 --spec -"
        );
        let second = host_spec(&plan, &shares[1], 1);
        assert_eq!(second, LoadSpec { connections: 1, threads: 1, rate: Some(500.0), seed: Some(8), ..spec.clone() });
        assert_eq!(host_spec(&plan, &shares[0], 0).seed, Some(7));
    }
}
