//! The capacity search behind `stampede load --find-max --slo 'p99<10ms'`:
//! the highest request rate a server sustains while meeting a latency
//! objective, with no errors and a generator that kept to its schedule.
//!
//! It first measures what the server does flat out (a short closed-loop
//! step), then bisects between zero and a little above that with short
//! open-loop steps. Open loop matters here: a closed-loop step would hide the
//! queueing that breaks the objective.

use crate::result::{LoadResult, Percentiles};
use serde::{Deserialize, Serialize};

/// A latency objective such as `p99<10ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// The percentile, e.g. 99.9.
    pub percentile: f64,
    pub max_us: f64,
}

impl Slo {
    pub fn parse(s: &str) -> Result<Slo, String> {
        let bad = || {
            format!(
                "--slo {s:?}: expected e.g. p99<10ms (percentiles p50, p75, p90, p99, p99.9, p99.99; units us, ms, s)"
            )
        };
        let (p, limit) = s.trim().split_once('<').ok_or_else(bad)?;
        let percentile: f64 = p.trim().strip_prefix('p').ok_or_else(bad)?.parse().map_err(|_| bad())?;
        if ![50.0, 75.0, 90.0, 99.0, 99.9, 99.99].contains(&percentile) {
            return Err(bad());
        }
        let d = stampede_schema::units::parse_duration(limit.trim()).map_err(|_| bad())?;
        if d.is_zero() {
            return Err(bad());
        }
        Ok(Slo { percentile, max_us: d.as_secs_f64() * 1e6 })
    }

    pub fn measured(&self, l: &Percentiles) -> f64 {
        [(50.0, l.p50), (75.0, l.p75), (90.0, l.p90), (99.0, l.p99), (99.9, l.p999)]
            .into_iter()
            .find(|&(p, _)| p == self.percentile)
            .map_or(l.p9999, |(_, v)| v)
    }

    pub fn label(&self) -> String {
        format!("p{}<{}", self.percentile, crate::text::dur(self.max_us))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// Requests per second asked for; `null` for the closed-loop probe.
    pub rate: Option<f64>,
    pub passed: bool,
    pub reason: String,
    pub result: LoadResult,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capacity {
    pub schema: String,
    pub url: String,
    pub slo: String,
    /// The highest rate that met the objective; 0 when none did.
    pub max_rate: f64,
    /// The closed-loop throughput that bounded the search.
    pub closed_loop_rps: f64,
    pub steps: Vec<Step>,
}

/// Why a step fails the objective, or `None` when it meets it.
pub fn verdict(slo: &Slo, r: &LoadResult) -> Option<String> {
    let e = &r.errors;
    if e.total() > 0 {
        return Some(format!("{} errors", e.total()));
    }
    if let Some(reason) = r.open.as_ref().and_then(|o| o.saturation_reason.clone()) {
        return Some(format!("generator saturated: {reason}"));
    }
    if let Some(o) = &r.open {
        if o.achieved_rate < 0.97 * o.target_rate {
            return Some(format!("sent {:.0} of {:.0} req/s", o.achieved_rate, o.target_rate));
        }
    }
    let got = slo.measured(&r.latency_us);
    (got > slo.max_us)
        .then(|| format!("p{} {} > {}", slo.percentile, crate::text::dur(got), crate::text::dur(slo.max_us)))
}

/// Runs the search. `closed` runs the closed-loop probe, `open(rate)` one
/// open-loop step; both are given by the caller so the search can be tested
/// without a server. `precision` is the relative width at which to stop.
pub fn search<E>(
    slo: &Slo,
    url: &str,
    precision: f64,
    max_steps: usize,
    mut closed: impl FnMut() -> Result<LoadResult, E>,
    mut open: impl FnMut(f64) -> Result<LoadResult, E>,
    mut progress: impl FnMut(&Step),
) -> Result<Capacity, E> {
    let probe = closed()?;
    let ceiling = probe.rps;
    let step =
        Step { rate: None, passed: true, reason: format!("closed loop: {ceiling:.0} req/s flat out"), result: probe };
    progress(&step);
    let mut steps = vec![step];
    let (mut lo, mut hi) = (0.0f64, (ceiling * 1.1).max(1.0));
    let mut best = 0.0;
    // The first open step tries 90% of flat out: most searches end near it.
    let mut rate = ceiling * 0.9;
    for _ in 0..max_steps {
        if rate < 1.0 {
            break;
        }
        let result = open(rate)?;
        if result.interrupted {
            break;
        }
        let reason = verdict(slo, &result);
        let passed = reason.is_none();
        if passed {
            best = rate;
            lo = rate;
        } else {
            hi = rate;
        }
        let step = Step { rate: Some(rate), passed, reason: reason.unwrap_or_else(|| "met".into()), result };
        progress(&step);
        steps.push(step);
        if (hi - lo) / hi < precision {
            break;
        }
        rate = (lo + hi) / 2.0;
    }
    Ok(Capacity {
        schema: "stampede.capacity/1".into(),
        url: url.into(),
        slo: slo.label(),
        max_rate: best,
        closed_loop_rps: ceiling,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(rps: f64, p99_us: f64, rate: Option<f64>) -> LoadResult {
        let json = serde_json::json!({
            "schema": "stampede.load/1", "tool": {"name": "stampede", "version": "0"}, "url": "u", "method": "GET",
            "mode": if rate.is_some() { "open" } else { "closed" }, "connections": 1, "threads": 1, "duration_s": 1.0,
            "warmup_s": 0.0, "interrupted": false, "requests": rps as u64, "rps": rps, "bytes_read": 0,
            "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": 0, "parse": 0},
            "reconnects": 0, "status_codes": {}, "latency_us": {"min": 1.0, "mean": 1.0, "stdev": 0.0, "max": p99_us,
            "p50": 1.0, "p75": 1.0, "p90": 1.0, "p99": p99_us, "p999": p99_us, "p9999": p99_us},
            "latency_spectrum": [], "histogram": "", "loadgen": {"cpu_user_s": 0.0, "cpu_sys_s": 0.0, "cpu_cores": 0.0, "max_rss_kib": 0},
            "timeline": [], "slow_requests": [],
        });
        let mut r: LoadResult = serde_json::from_value(json).unwrap();
        if let Some(rate) = rate {
            r.open = Some(crate::result::OpenLoop {
                target_rate: rate,
                achieved_rate: rate,
                service_time_us: r.latency_us,
                saturated: false,
                saturation_reason: None,
                max_schedule_lag_us: 0.0,
                schedule_lag_p99_us: 0.0,
                wake_granularity_us: 0.0,
                all_busy_s: 0.0,
                generator_busy: 0.1,
                generator_cpu_wait: 0.0,
                schedule_start_ms: 0.0,
            });
        }
        r
    }

    #[test]
    fn parses_objectives() {
        assert_eq!(Slo::parse("p99<10ms").unwrap(), Slo { percentile: 99.0, max_us: 10_000.0 });
        assert_eq!(Slo::parse("p99.9 < 500us").unwrap().max_us, 500.0);
        for bad in ["p98<1ms", "99<1ms", "p99>1ms", "p99<", "p99<0ms"] {
            assert!(Slo::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn finds_the_knee_of_a_modelled_server() {
        // A server whose p99 passes 10 ms at 7,000 req/s.
        let slo = Slo::parse("p99<10ms").unwrap();
        let cap = search(
            &slo,
            "u",
            0.02,
            12,
            || Ok::<_, ()>(fake(10_000.0, 50_000.0, None)),
            |rate| Ok(fake(rate, if rate <= 7000.0 { 2_000.0 } else { 40_000.0 }, Some(rate))),
            |_| {},
        )
        .unwrap();
        assert!((cap.max_rate - 7000.0).abs() / 7000.0 < 0.03, "{}", cap.max_rate);
        assert!(cap.steps.iter().skip(1).all(|s| s.passed == (s.rate.unwrap() <= 7000.0)));
    }
}
