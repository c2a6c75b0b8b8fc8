//! Runs a load test: checks the target once, splits connections, requests and
//! rate over the worker threads, starts them together, takes the generator's
//! own CPU over exactly the measured phase, and merges what the threads
//! recorded into one result.

use crate::config::{LoadConfig, Stop};
use crate::core::output::Output;
use crate::core::recorder::{Recorder, Slow};
use crate::core::rusage;
use crate::core::share::Share;
use crate::core::timeline::Timeline;
use crate::http1::epoll::EpollLoop;
use crate::http1::uring::UringLoop;
use crate::http2::event_loop::Http2Loop;
use crate::progress::{self, Watcher};
use crate::result::{
    encode_histogram, spectrum, Http2Stats, Http3Stats, LoadResult, Loadgen, MixStats, OpenLoop, Percentiles,
    SlowRequest, Stall, TargetResult, TlsStats, Tool, GENERATOR_BUSY, PREEMPTED_WAIT_SHARE, SCHEMA, STALL_S,
};
use crate::tls::{TlsOptions, TlsShared, TlsStream};
use stampede_spec::error::LoadError;
use stampede_spec::protocol::{IoBackend, Protocol};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Runs the load described by `cfg` and returns its result. Fails only before
/// the load starts (bad configuration, unreachable target); failures during
/// the run are counted in the result.
pub fn run(cfg: &LoadConfig) -> Result<LoadResult, LoadError> {
    run_watched(cfg, None)
}

/// `run`, handing `watcher` a snapshot of the run about once a second.
pub fn run_watched(cfg: &LoadConfig, watcher: Option<Watcher>) -> Result<LoadResult, LoadError> {
    cfg.validate()?;
    let timeout = cfg.timeout.min(Duration::from_secs(5));
    if let Protocol::Http3 { .. } = cfg.protocol {
        return run_http3(cfg, watcher, timeout);
    }
    let link = Link::preflight(cfg, timeout)?;
    let mut spoken = Spoken { protocol: link.protocol, alpn: link.alpn, tls: link.tls.is_some(), engine: "epoll" };
    match link.protocol {
        Protocol::Http1 { io, .. } => {
            let batch = cfg.encode_batch();
            match &link.tls {
                Some(tls) => run_threads(cfg, spoken, watcher, |share, rec| {
                    Ok(EpollLoop::<TlsStream>::new(cfg, &batch, tls, share, rec)?.run())
                }),
                None if use_uring(io)? => {
                    spoken.engine = "io_uring";
                    run_threads(cfg, spoken, watcher, |share, rec| Ok(UringLoop::new(cfg, &batch, share, rec)?.run()))
                }
                None => run_threads(cfg, spoken, watcher, |share, rec| {
                    Ok(EpollLoop::<mio::net::TcpStream>::new(cfg, &batch, &(), share, rec)?.run())
                }),
            }
        }
        Protocol::Http2 { .. } => {
            let (addr, url) = (cfg.target.addr, &cfg.target.url);
            match &link.tls {
                _ if cfg.protocol.grpc() => crate::http2::grpc_preflight::preflight(cfg, link.tls.as_ref(), timeout)?,
                Some(tls) => crate::http2::preflight::preflight_tls(tls, addr, url, timeout)?,
                None => crate::http2::preflight::preflight(addr, url, timeout)?,
            }
            let shared = crate::http2::event_loop::Shared::new(cfg);
            match &link.tls {
                Some(tls) => run_threads(cfg, spoken, watcher, |share, rec| {
                    Ok(Http2Loop::<TlsStream>::new(cfg, &shared, tls, share, rec)?.run())
                }),
                None => run_threads(cfg, spoken, watcher, |share, rec| {
                    Ok(Http2Loop::<mio::net::TcpStream>::new(cfg, &shared, &(), share, rec)?.run())
                }),
            }
        }
        Protocol::Http3 { .. } | Protocol::ByAlpn { .. } => unreachable!("HTTP/3 runs above; ALPN chose for ByAlpn"),
    }
}

/// A TCP run's connection as checked before the load: its TLS context,
/// the server's ALPN answer, and the protocol that answer leaves.
struct Link {
    tls: Option<TlsShared>,
    alpn: Option<String>,
    protocol: Protocol,
}

impl Link {
    /// Connects once (and on `https://` shakes hands, offering ALPN), so an
    /// unreachable target or a refused protocol fails before the run.
    fn preflight(cfg: &LoadConfig, timeout: Duration) -> Result<Link, LoadError> {
        let tls = match cfg.target.tls {
            true => Some(TlsShared::new(&tls_options(cfg), &cfg.target.host, &cfg.target.url)?),
            false => None,
        };
        let alpn = match &tls {
            Some(tls) => tls.preflight(cfg.target.addr, &cfg.target.url, timeout)?,
            None => {
                cfg.target.preflight(timeout)?;
                None
            }
        };
        let protocol =
            cfg.protocol.chosen(alpn.as_deref(), tls.is_some(), &cfg.target.url).map_err(LoadError::Config)?;
        Ok(Link { tls, alpn, protocol })
    }
}

/// `--http3`: one handshake before the run, then the QUIC loops.
fn run_http3(cfg: &LoadConfig, watcher: Option<Watcher>, timeout: Duration) -> Result<LoadResult, LoadError> {
    let shared = crate::http3::client::QuicShared::new(cfg)?;
    shared.preflight(cfg.target.addr, &cfg.target.url, timeout)?;
    let spoken = Spoken { protocol: cfg.protocol, alpn: Some("h3".into()), tls: true, engine: "epoll" };
    run_threads(cfg, spoken, watcher, |share, rec| {
        Ok(crate::http3::event_loop::Http3Loop::new(cfg, &shared, share, rec)?.run())
    })
}

/// Whether cleartext HTTP/1.1 runs on io_uring: asked for, or `auto` and
/// the kernel (or the container's seccomp policy) allows it.
fn use_uring(io: IoBackend) -> Result<bool, LoadError> {
    match io {
        IoBackend::Epoll => Ok(false),
        IoBackend::Auto => Ok(crate::http1::uring_bufs::available().is_ok()),
        IoBackend::IoUring => crate::http1::uring_bufs::available()
            .map(|_| true)
            .map_err(|e| LoadError::Config(format!("--engine io-uring: {e}; use --engine epoll"))),
    }
}

/// The ALPN offer: what the user asked for, or the one protocol the run speaks.
fn tls_options(cfg: &LoadConfig) -> TlsOptions {
    let mut opts = cfg.tls.clone();
    if opts.alpn.is_empty() {
        opts.alpn = vec![cfg.protocol.default_alpn().to_string()];
    }
    opts
}

/// What the connections speak, for the result.
pub(crate) struct Spoken {
    /// As chosen by the server's ALPN answer (never `ByAlpn`).
    pub protocol: Protocol,
    pub alpn: Option<String>,
    pub tls: bool,
    /// The event loop: "io_uring" or "epoll" (HTTPS and HTTP/2 always epoll).
    pub engine: &'static str,
}

/// Starts one thread per share of the run, each running `work`, and merges
/// what they measured.
fn run_threads<F>(cfg: &LoadConfig, spoken: Spoken, watcher: Option<Watcher>, work: F) -> Result<LoadResult, LoadError>
where
    F: Fn(Share, Recorder) -> Result<Output, LoadError> + Sync,
{
    // Opened before the run, so a path that cannot be written fails at once.
    let mut hdr_log = match &cfg.hdr_log {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| LoadError::Config(format!("--hdr-log {}: {e}", path.display())))?,
        )),
        None => None,
    };
    let timeline = Arc::new(if hdr_log.is_some() { Timeline::keeping_histograms() } else { Timeline::default() });
    let start = Instant::now();
    // Checked: validate() caps both at units::MAX_DURATION, but a library
    // caller may skip it, and an overflow here would panic.
    let past_the_clock = || {
        LoadError::Config(
            "--warmup plus --duration is beyond what the clock can represent; use at most 365d each".into(),
        )
    };
    let measure_from = start.checked_add(cfg.warmup).ok_or_else(past_the_clock)?;
    let measure_from_wall = SystemTime::now().checked_add(cfg.warmup).ok_or_else(past_the_clock)?;
    let end = match cfg.stop {
        Stop::Duration(d) => Some(measure_from.checked_add(d).ok_or_else(past_the_clock)?),
        Stop::Requests(_) => None,
    };
    let stage_ends: Vec<Instant> = cfg.stages.as_ref().map_or_else(Vec::new, |s| {
        s.segments().map(|(start, d, _, _)| measure_from + Duration::from_secs_f64(start + d)).collect()
    });
    let threads = cfg.threads;
    let work = &work;
    let finished = AtomicBool::new(false);
    let (outputs, usage_from) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let share = Share {
                    index,
                    connections: split(cfg.connections as u64, threads, index) as usize,
                    max_connections: split(cfg.max_connections.max(cfg.connections) as u64, threads, index) as usize,
                    quota: match cfg.stop {
                        Stop::Requests(n) => Some(split(n, threads, index)),
                        Stop::Duration(_) => None,
                    },
                    rate: cfg.rate.map(|r| r / threads as f64),
                    start,
                    measure_from,
                    end,
                };
                let rec = Recorder::new(measure_from, end, cfg.slow_log, timeline.clone(), cfg.rate.is_some())
                    .with_targets(cfg.mix.as_ref().map_or(0, |m| m.len()))
                    .with_stages(stage_ends.clone());
                std::thread::Builder::new().name(format!("stampede-{index}")).spawn_scoped(s, move || work(share, rec))
            })
            .collect();
        let _stop_watching = progress::StopOnDrop(
            &finished,
            watcher.map(|w| {
                let (timeline, finished) = (&timeline, &finished);
                s.spawn(move || progress::watch(timeline, start, measure_from, Duration::from_secs(1), finished, w))
                    .thread()
                    .clone()
            }),
        );
        // The generator's own CPU is taken over the measured phase only.
        while Instant::now() < measure_from && !cfg.interrupt.load(Ordering::Relaxed) {
            std::thread::sleep(measure_from.saturating_duration_since(Instant::now()).min(Duration::from_millis(50)));
        }
        let usage_from = rusage::current();
        let outputs: Vec<Result<Output, LoadError>> =
            handles.into_iter().map(|h| h?.join().expect("worker thread panicked")).collect();
        (outputs, usage_from)
    });
    let usage_to = rusage::current();
    let outputs = outputs.into_iter().collect::<Result<Vec<Output>, LoadError>>()?;
    let result = assemble(cfg, &spoken, outputs, &timeline, measure_from, end, usage_from, usage_to);
    if let (Some(out), Some(path)) = (hdr_log.as_mut(), &cfg.hdr_log) {
        use std::io::Write;
        timeline
            .write_interval_log(out, measure_from_wall)
            .and_then(|_| out.flush())
            .map_err(|e| LoadError::Config(format!("--hdr-log {}: {e}", path.display())))?;
    }
    Ok(result)
}

/// Thread `index`'s share of `total`, the remainder going to the first threads.
fn split(total: u64, threads: usize, index: usize) -> u64 {
    let t = threads as u64;
    total / t + u64::from((index as u64) < total % t)
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    cfg: &LoadConfig,
    spoken: &Spoken,
    outputs: Vec<Output>,
    timeline: &Timeline,
    measure_from: Instant,
    end: Option<Instant>,
    usage_from: rusage::Usage,
    usage_to: rusage::Usage,
) -> LoadResult {
    let mut m = merge(outputs, measure_from, end);
    let open = open_loop(cfg, &m, measure_from);
    m.slow.sort_by_key(|s| std::cmp::Reverse(s.latency_ns));
    m.slow.truncate(cfg.slow_log);
    let loadgen = loadgen(usage_from, usage_to, m.wall);
    document(cfg, spoken, timeline, measure_from, m, open, loadgen)
}

/// What the threads recorded, merged, and the measured period's figures
/// taken from each thread's output.
struct Merged {
    rec: Recorder,
    slow: Vec<Slow>,
    /// The measured period, seconds.
    wall: f64,
    max_lag_ns: u64,
    all_busy_s: f64,
    generator: Generator,
    /// Open loop: where the last thread's schedule began (`Schedule::begin`).
    began: Option<Instant>,
    /// Open loop: the seconds the threads' schedules ran (`scheduled_s`).
    scheduled_s: f64,
}

/// The threads' outputs as one recorder; the measured period ends with the
/// last thread, or at `end` if that is sooner.
fn merge(outputs: Vec<Output>, measure_from: Instant, end: Option<Instant>) -> Merged {
    let mut finished = outputs.iter().map(|o| o.finished).max().unwrap_or(measure_from);
    if let Some(end) = end {
        finished = finished.min(end);
    }
    let wall = finished.saturating_duration_since(measure_from).as_secs_f64().max(1e-9);
    let max_lag_ns = outputs.iter().map(|o| o.max_lag_ns).max().unwrap_or(0);
    let all_busy_s = outputs.iter().map(|o| o.starved.as_secs_f64()).sum::<f64>() / outputs.len().max(1) as f64;
    let generator = Generator {
        busy: outputs.iter().map(|o| o.busy).fold(0.0, f64::max),
        cpu_wait: outputs.iter().map(|o| o.cpu_wait).fold(0.0, f64::max),
    };
    let began = outputs.iter().filter_map(|o| o.schedule_origin).max();
    let scheduled_s = scheduled_s(&outputs, measure_from, finished);
    let mut slow: Vec<Slow> = Vec::new();
    let mut merged: Option<Recorder> = None;
    for mut o in outputs {
        slow.append(&mut o.slow);
        match merged.as_mut() {
            Some(m) => m.merge(&o.recorder),
            None => merged = Some(o.recorder),
        }
    }
    let rec = merged.expect("at least one thread");
    Merged { rec, slow, wall, max_lag_ns, all_busy_s, generator, began, scheduled_s }
}

/// Open loop: the rate asked and achieved, the schedule's lag, and whether
/// the generator saturated.
fn open_loop(cfg: &LoadConfig, m: &Merged, measure_from: Instant) -> Option<OpenLoop> {
    let rec = &m.rec;
    cfg.rate.map(|target_rate| {
        let achieved_rate = rec.sent as f64 / m.scheduled_s.max(1e-9);
        let start = measure_from.checked_sub(cfg.warmup).unwrap_or(measure_from);
        let schedule_start_ms = m.began.map_or(0.0, |b| b.saturating_duration_since(start).as_secs_f64() * 1e3);
        let lag_p99_us = rec.lag.value_at_quantile(0.99) as f64 / 1000.0;
        let max_lag_us = m.max_lag_ns as f64 / 1000.0;
        let granularity_us =
            crate::core::pacer::granularity_of(cfg.protocol, cfg.max_granularity, target_rate / cfg.threads as f64)
                .as_secs_f64()
                * 1e6;
        let lag = Lag { p99_us: lag_p99_us, granularity_us };
        let reason = saturation(cfg, target_rate, achieved_rate, lag, m.all_busy_s / m.wall, m.generator);
        OpenLoop {
            target_rate,
            achieved_rate,
            service_time_us: Percentiles::of(&rec.service),
            saturated: reason.is_some(),
            saturation_reason: reason,
            max_schedule_lag_us: max_lag_us,
            schedule_lag_p99_us: lag_p99_us,
            wake_granularity_us: granularity_us,
            all_busy_s: m.all_busy_s,
            generator_busy: m.generator.busy,
            generator_cpu_wait: m.generator.cpu_wait,
            schedule_start_ms,
        }
    })
}

/// The generator's own CPU and memory over the measured period.
fn loadgen(usage_from: rusage::Usage, usage_to: rusage::Usage, wall: f64) -> Loadgen {
    let cpu_user_s = (usage_to.user_s - usage_from.user_s).max(0.0);
    let cpu_sys_s = (usage_to.sys_s - usage_from.sys_s).max(0.0);
    Loadgen { cpu_user_s, cpu_sys_s, cpu_cores: (cpu_user_s + cpu_sys_s) / wall, max_rss_kib: usage_to.max_rss_kib }
}

/// The result document of a run from what it merged and computed.
fn document(
    cfg: &LoadConfig,
    spoken: &Spoken,
    timeline: &Timeline,
    measure_from: Instant,
    m: Merged,
    open: Option<OpenLoop>,
    loadgen: Loadgen,
) -> LoadResult {
    let Merged { rec, slow, wall, .. } = m;
    let status_codes =
        rec.status.iter().enumerate().filter(|(_, &n)| n > 0).map(|(code, &n)| (code.to_string(), n)).collect();
    let (http2, http3) = protocol_stats(spoken, &rec);
    let (tls_handshake_us, tls) = tls_stats(spoken, &rec);
    LoadResult {
        schema: SCHEMA.into(),
        tool: Tool::default(),
        url: cfg.target.url.clone(),
        method: cfg.method.clone(),
        mode: if cfg.rate.is_some() { "open" } else { "closed" }.into(),
        connections: cfg.connections,
        threads: cfg.threads,
        duration_s: wall,
        warmup_s: cfg.warmup.as_secs_f64(),
        interrupted: cfg.interrupt.load(Ordering::Relaxed),
        requests: rec.requests,
        rps: rec.requests as f64 / wall,
        bytes_read: rec.bytes_read,
        content_encodings: rec.encodings.stats(),
        errors: rec.errors,
        sent: rec.sent,
        unanswered: rec.unanswered,
        never_sent: rec.never_sent,
        stalled: stall(rec.silence, measure_from),
        reconnects: rec.reconnects,
        status_codes,
        latency_us: Percentiles::of(&rec.latency),
        latency_spectrum: spectrum(&rec.latency),
        histogram: encode_histogram(&rec.latency),
        loadgen,
        timeline: timeline.finish(wall.ceil() as u64),
        slow_requests: stamp(&slow),
        slow_log_file: None,
        protocol: spoken.protocol.id().into(),
        engine: spoken.engine.into(),
        pipeline: spoken.protocol.pipeline(),
        requests_per_connection: cfg.requests_per_connection,
        tls_handshake_us,
        tls,
        http2,
        http3,
        grpc: cfg.grpc.as_ref().map(|call| crate::grpc::stats(call, rec.grpc.as_deref(), wall)),
        mix: cfg.mix.as_ref().map(|m| MixStats { order: m.order, seed: m.seed }),
        targets: target_results(cfg, &rec),
        stages: stage_results(cfg, &rec),
        open,
        multi_host: None,
    }
}

/// The HTTP/2 or HTTP/3 section, for the protocol the run spoke.
fn protocol_stats(spoken: &Spoken, rec: &Recorder) -> (Option<Http2Stats>, Option<Http3Stats>) {
    match spoken.protocol {
        Protocol::Http2 { streams, .. } => {
            (Some(Http2Stats { streams, goaway: rec.goaway, rst_stream: rec.rst_stream }), None)
        }
        Protocol::Http3 { streams } => {
            let (stream_resets, lost_packets) = (rec.rst_stream, rec.lost_packets);
            (None, Some(Http3Stats { streams, stream_resets, goaway: rec.goaway, lost_packets }))
        }
        _ => (None, None),
    }
}

/// `--stages`: each stage's target, counts and latency.
fn stage_results(cfg: &LoadConfig, rec: &Recorder) -> Vec<stampede_schema::stages::StageResult> {
    cfg.stages.as_ref().map_or_else(Vec::new, |s| {
        s.results(rec.stages.iter().map(|t| (t.requests, t.errors, Percentiles::of(&t.latency))))
    })
}

/// Over TLS: the handshakes' latency, and how many were made and resumed.
fn tls_stats(spoken: &Spoken, rec: &Recorder) -> (Option<Percentiles>, Option<TlsStats>) {
    if !spoken.tls {
        return (None, None);
    }
    let stats = TlsStats { handshakes: rec.handshake.len(), resumed: rec.tls_resumed, alpn: spoken.alpn.clone() };
    (Some(Percentiles::of(&rec.handshake)), Some(stats))
}

/// A mix's targets, each with its own counts and latency.
fn target_results(cfg: &LoadConfig, rec: &Recorder) -> Vec<TargetResult> {
    cfg.mix.as_ref().map_or_else(Vec::new, |m| {
        m.templates
            .iter()
            .zip(&rec.targets)
            .map(|(t, s)| TargetResult {
                name: t.label.clone(),
                weight: t.spec.weight,
                requests: s.requests,
                errors: s.errors,
                latency_us: Percentiles::of(&s.latency),
            })
            .collect()
    })
}

/// Open loop: the seconds of the measured phase (from `measure_from` to
/// `finished`) during which the threads' schedules ran, on average (each
/// has an equal share of the rate). A thread's schedule begins once it has
/// a connection open (`Schedule::begin`), and nothing was due on it
/// before, so the rate achieved is its requests over this, not over the
/// whole phase.
fn scheduled_s(outputs: &[Output], measure_from: Instant, finished: Instant) -> f64 {
    let ran = |o: &Output| {
        let from = o.schedule_origin.map_or(measure_from, |b| b.max(measure_from));
        finished.saturating_duration_since(from).as_secs_f64()
    };
    outputs.iter().map(ran).sum::<f64>() / outputs.len().max(1) as f64
}

/// The recorders' longest silence, when it is long enough to be a server
/// that stopped answering (`STALL_S`).
fn stall(silence: Option<(Instant, Duration)>, measure_from: Instant) -> Option<Stall> {
    let (from, took) = silence?;
    (took.as_secs_f64() >= STALL_S)
        .then(|| Stall { at_s: from.saturating_duration_since(measure_from).as_secs_f64(), for_s: took.as_secs_f64() })
}

/// The schedule lag of a run: its p99, and the part of it that is the
/// design (a due request waits up to the wake-up granularity).
#[derive(Clone, Copy)]
struct Lag {
    p99_us: f64,
    granularity_us: f64,
}

/// How busy the generator's busiest threads were, as shares of their life:
/// on or waiting for a CPU (`busy`), and waiting alone (`cpu_wait`).
#[derive(Clone, Copy, Debug, Default)]
struct Generator {
    busy: f64,
    cpu_wait: f64,
}

impl Generator {
    /// Why a generator that fell behind lacked CPU, from what its threads
    /// measured of themselves (schedstat): other processes held its CPU
    /// (it waited for one), it used its CPU up itself, or neither shows in
    /// its averages (its wake-ups came late in bursts too short to add up:
    /// still its CPU taken at the moments requests were due, which is what
    /// `--max-lag` judges).
    fn why(&self) -> String {
        let (busy, wait) = (self.busy * 100.0, self.cpu_wait * 100.0);
        if self.cpu_wait >= PREEMPTED_WAIT_SHARE {
            format!("its threads waited {wait:.0}% of their time for a CPU other processes held: pin it to a quiet core (taskset -c) or use a load machine")
        } else if self.busy > GENERATOR_BUSY {
            format!("its threads were {busy:.0}% busy: it is CPU-bound; add --threads or a load machine")
        } else {
            format!("its threads were only {busy:.0}% busy (waiting {wait:.0}% for a CPU), so its wake-ups came late in short bursts: something else ran on its CPU when requests were due; pin it to a quiet core (taskset -c), or raise --max-lag")
        }
    }
}

/// Why an open-loop result does not describe the server alone, if it does not.
/// Only the generator's own failings count here: a slow server makes requests
/// queue, and that queueing is what the latency figures must show; and the
/// wait for the loop's next wake-up (`pacer::granularity`) is the design, so
/// only the lag beyond it is compared with `--max-lag`.
fn saturation(
    cfg: &LoadConfig,
    target: f64,
    achieved: f64,
    lag: Lag,
    busy_share: f64,
    generator: Generator,
) -> Option<String> {
    let max_lag_us = cfg.max_lag.as_secs_f64() * 1e6;
    let Lag { p99_us, granularity_us } = lag;
    if p99_us - granularity_us > max_lag_us {
        return Some(format!(
            "the load generator fell behind its own schedule (p99 send delay {p99_us:.0} µs, of which up to {granularity_us:.0} µs is its wake-up granularity, > --max-lag {max_lag_us:.0} µs beyond it): {}",
            generator.why()
        ));
    }
    if achieved < 0.9 * target && (generator.busy > GENERATOR_BUSY || busy_share < 0.5) {
        let free = if busy_share < 0.5 { " while connections were free" } else { "" };
        return Some(format!(
            "the load generator sent {achieved:.0} of the {target:.0} req/s asked for{free}: {}",
            generator.why()
        ));
    }
    None
}

/// Puts slow requests on the wall clock and CLOCK_MONOTONIC for alignment
/// with events recorded by other processes.
fn stamp(slow: &[Slow]) -> Vec<SlowRequest> {
    let now = Instant::now();
    let mono_now = rusage::monotonic_ns();
    let unix_now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let back = |t: Instant| now.saturating_duration_since(t).as_nanos() as u64;
    slow.iter()
        .map(|s| SlowRequest {
            latency_us: s.latency_ns as f64 / 1000.0,
            intended_unix_ns: unix_now - back(s.intended),
            start_unix_ns: unix_now - back(s.start),
            end_unix_ns: unix_now - back(s.end),
            intended_mono_ns: mono_now - back(s.intended),
            start_mono_ns: mono_now - back(s.start),
            end_mono_ns: mono_now - back(s.end),
            connection: s.connection,
            status: s.status,
            ready_mono_ns: mono_now - back(s.ready),
            connecting: s.connecting,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{saturation, split, Generator, Lag};
    use crate::config::LoadConfig;

    fn config() -> LoadConfig {
        let spec = stampede_schema::LoadSpec { urls: vec!["http://127.0.0.1:1/".into()], ..Default::default() };
        crate::spec::config(&spec, std::path::Path::new("")).unwrap()
    }

    /// p99 send delay 5 ms beyond a 1 ms granularity: past the default 1 ms `--max-lag`.
    const LATE: Lag = Lag { p99_us: 6_000.0, granularity_us: 1_000.0 };

    /// Session 16's grpc scenario: a generator using 0.06 cores was told "it
    /// is short of CPU". The reason now says which: its CPU held by others,
    /// used up by itself, or taken in bursts while it sat mostly idle.
    #[test]
    fn a_late_generator_is_told_whether_others_held_its_cpu_or_it_used_it_up() {
        let cfg = config();
        let why = |busy, cpu_wait| saturation(&cfg, 1000.0, 1000.0, LATE, 0.0, Generator { busy, cpu_wait }).unwrap();
        let preempted = why(0.4, 0.2);
        assert!(preempted.contains("waited 20% of their time for a CPU other processes held"), "{preempted}");
        assert!(!preempted.contains("CPU-bound"), "{preempted}");
        let bound = why(0.97, 0.01);
        assert!(bound.contains("97% busy: it is CPU-bound"), "{bound}");
        assert!(!bound.contains("other processes"), "{bound}");
        let idle = why(0.06, 0.01);
        assert!(idle.contains("only 6% busy") && idle.contains("something else ran on its CPU"), "{idle}");
        assert!(!idle.contains("CPU-bound") && !idle.contains("short of CPU"), "{idle}");
    }

    #[test]
    fn a_generator_on_schedule_is_not_saturated_however_busy() {
        let cfg = config();
        let on_time = Lag { p99_us: 1_200.0, granularity_us: 1_000.0 };
        for (busy, cpu_wait) in [(0.99, 0.0), (0.5, 0.3), (0.05, 0.0)] {
            let reason = saturation(&cfg, 1000.0, 1000.0, on_time, 0.0, Generator { busy, cpu_wait });
            assert_eq!(reason, None, "busy {busy} wait {cpu_wait}");
        }
    }

    #[test]
    fn short_of_the_rate_says_connections_were_free_only_when_they_were() {
        let cfg = config();
        let on_time = Lag { p99_us: 0.0, granularity_us: 1_000.0 };
        let free = saturation(&cfg, 1000.0, 500.0, on_time, 0.1, Generator { busy: 0.95, cpu_wait: 0.0 }).unwrap();
        assert!(free.contains("500 of the 1000 req/s asked for while connections were free: its threads were 95%"));
        let taken = saturation(&cfg, 1000.0, 500.0, on_time, 0.9, Generator { busy: 0.95, cpu_wait: 0.0 }).unwrap();
        assert!(!taken.contains("connections were free"), "{taken}");
        // Connections busy and the generator idle: the server is slow, and
        // that is what the latency figures must show, not a saturation.
        assert_eq!(saturation(&cfg, 1000.0, 500.0, on_time, 0.9, Generator { busy: 0.2, cpu_wait: 0.0 }), None);
    }

    #[test]
    fn shares_add_up() {
        for (total, threads) in [(10, 3), (1, 4), (1000, 7)] {
            let sum: u64 = (0..threads).map(|i| split(total, threads, i)).sum();
            assert_eq!(sum, total);
        }
    }
}
