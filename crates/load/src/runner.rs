//! Runs a load test: checks the target once, splits connections, requests and
//! rate over the worker threads, starts them together, takes the generator's
//! own CPU over exactly the measured phase, and merges what the threads
//! recorded into one result.

use crate::config::{LoadConfig, Stop};
use crate::error::LoadError;
use crate::recorder::{Recorder, Slow};
use crate::result::{encode_histogram, spectrum, LoadResult, Loadgen, OpenLoop, Percentiles, SlowRequest, Tool, SCHEMA};
use crate::rusage;
use crate::timeline::Timeline;
use crate::worker::{Output, Share, Worker};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Runs the load described by `cfg` and returns its result. Fails only before
/// the load starts (bad configuration, unreachable target); failures during
/// the run are counted in the result.
pub fn run(cfg: &LoadConfig) -> Result<LoadResult, LoadError> {
    cfg.validate().map_err(LoadError::Config)?;
    cfg.target.preflight(cfg.timeout.min(Duration::from_secs(5)))?;
    let request = cfg.encode_request();
    let timeline = Arc::new(Timeline::default());
    let start = Instant::now();
    let measure_from = start + cfg.warmup;
    let end = match cfg.stop {
        Stop::Duration(d) => Some(measure_from + d),
        Stop::Requests(_) => None,
    };
    let threads = cfg.threads;
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
                let rec = Recorder::new(measure_from, end, cfg.slow_log, timeline.clone());
                let request = &request;
                std::thread::Builder::new()
                    .name(format!("stampede-{index}"))
                    .spawn_scoped(s, move || Worker::new(cfg, request, share, rec).map(Worker::run))
            })
            .collect();
        // The generator's own CPU is taken over the measured phase only.
        while Instant::now() < measure_from && !cfg.interrupt.load(Ordering::Relaxed) {
            std::thread::sleep(measure_from.saturating_duration_since(Instant::now()).min(Duration::from_millis(50)));
        }
        let usage_from = rusage::current();
        let outputs: Vec<Result<Output, LoadError>> = handles
            .into_iter()
            .map(|h| Ok(h?.join().expect("worker thread panicked")?))
            .collect();
        (outputs, usage_from)
    });
    let usage_to = rusage::current();
    let outputs = outputs.into_iter().collect::<Result<Vec<Output>, LoadError>>()?;
    Ok(assemble(cfg, outputs, &timeline, measure_from, end, usage_from, usage_to))
}

/// Thread `index`'s share of `total`, the remainder going to the first threads.
fn split(total: u64, threads: usize, index: usize) -> u64 {
    let t = threads as u64;
    total / t + u64::from((index as u64) < total % t)
}

fn assemble(
    cfg: &LoadConfig,
    outputs: Vec<Output>,
    timeline: &Timeline,
    measure_from: Instant,
    end: Option<Instant>,
    usage_from: rusage::Usage,
    usage_to: rusage::Usage,
) -> LoadResult {
    let mut finished = outputs.iter().map(|o| o.finished).max().unwrap_or(measure_from);
    if let Some(end) = end {
        finished = finished.min(end);
    }
    let wall = finished.saturating_duration_since(measure_from).as_secs_f64().max(1e-9);
    let max_lag_ns = outputs.iter().map(|o| o.max_lag_ns).max().unwrap_or(0);
    let all_busy_s = outputs.iter().map(|o| o.starved.as_secs_f64()).sum::<f64>() / outputs.len().max(1) as f64;
    let generator_busy = outputs.iter().map(|o| o.busy).fold(0.0, f64::max);
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
    let cpu_user_s = (usage_to.user_s - usage_from.user_s).max(0.0);
    let cpu_sys_s = (usage_to.sys_s - usage_from.sys_s).max(0.0);
    let status_codes = rec
        .status
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(code, &n)| (code.to_string(), n))
        .collect();
    let open = cfg.rate.map(|target_rate| {
        let achieved_rate = rec.sent as f64 / wall;
        let lag_p99_us = rec.lag.value_at_quantile(0.99) as f64 / 1000.0;
        let max_lag_us = max_lag_ns as f64 / 1000.0;
        let reason = saturation(cfg, target_rate, achieved_rate, lag_p99_us, all_busy_s / wall, generator_busy);
        OpenLoop {
            target_rate,
            achieved_rate,
            service_time_us: Percentiles::of(&rec.service),
            saturated: reason.is_some(),
            saturation_reason: reason,
            max_schedule_lag_us: max_lag_us,
            schedule_lag_p99_us: lag_p99_us,
            all_busy_s,
            generator_busy,
        }
    });
    slow.sort_by(|a, b| b.latency_ns.cmp(&a.latency_ns));
    slow.truncate(cfg.slow_log);
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
        errors: rec.errors,
        reconnects: rec.reconnects,
        status_codes,
        latency_us: Percentiles::of(&rec.latency),
        latency_spectrum: spectrum(&rec.latency),
        histogram: encode_histogram(&rec.latency),
        loadgen: Loadgen {
            cpu_user_s,
            cpu_sys_s,
            cpu_cores: (cpu_user_s + cpu_sys_s) / wall,
            max_rss_kib: usage_to.max_rss_kib,
        },
        timeline: timeline.finish(wall.ceil() as u64),
        slow_requests: stamp(&slow),
        open,
    }
}

/// Why an open-loop result does not describe the server alone, if it does not.
/// Only the generator's own failings count here: a slow server makes requests
/// queue, and that queueing is what the latency figures must show.
fn saturation(cfg: &LoadConfig, target: f64, achieved: f64, lag_p99_us: f64, busy_share: f64, generator_busy: f64) -> Option<String> {
    let max_lag_us = cfg.max_lag.as_secs_f64() * 1e6;
    if lag_p99_us > max_lag_us {
        return Some(format!(
            "the load generator fell behind its own schedule (p99 send delay {lag_p99_us:.0} µs > --max-lag {max_lag_us:.0} µs): it is short of CPU"
        ));
    }
    if achieved < 0.9 * target && (generator_busy > 0.9 || busy_share < 0.5) {
        return Some(format!(
            "the load generator sent {achieved:.0} of the {target:.0} req/s asked for while {}",
            if generator_busy > 0.9 {
                format!("its threads were {:.0}% busy: it is CPU-bound; add --threads or a load machine", generator_busy * 100.0)
            } else {
                "connections were free: it is short of CPU".to_string()
            }
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
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn shares_add_up() {
        for (total, threads) in [(10, 3), (1, 4), (1000, 7)] {
            let sum: u64 = (0..threads).map(|i| split(total, threads, i)).sum();
            assert_eq!(sum, total);
        }
    }
}
