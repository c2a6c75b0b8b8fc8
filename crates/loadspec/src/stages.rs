//! `--stages 30s:1k,1m:5k,30s:0`: a load whose target (the open-loop rate,
//! or the closed loop's connections) moves linearly from one stage's target
//! to the next, starting from 0. Parsing with errors that name the flag and
//! the bad stage, and the arithmetic of a ramp: the target at an instant, and
//! (open loop) the instant by which a given number of requests is due, the
//! inverse of the rate's integral, so the pacer keeps an exact schedule over
//! any ramp with no drift.

use crate::spec_error::{Field, SpecError};
use stampede_schema::units::{parse_count, parse_duration, MAX_DURATION};
use std::time::Duration;

pub use stampede_schema::stages::{Ramp, Stage, StageResult};

#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    pub ramp: Ramp,
    pub stages: Vec<Stage>,
}

impl Stages {
    /// Parses `DURATION:TARGET[,DURATION:TARGET…]`; errors name `--stages`
    /// and the stage at fault.
    pub fn parse(s: &str, ramp: Ramp) -> Result<Stages, SpecError> {
        let bad = |part: &str, i: usize, why: String| {
            SpecError::new(
                Field::Stages,
                format!(
                    "--stages {part:?} (stage {}): {why}; write DURATION:TARGET, e.g. --stages 30s:1k,1m:5k,30s:0",
                    i + 1
                ),
            )
        };
        let mut stages = Vec::new();
        for (i, part) in s.split(',').enumerate() {
            let (d, target) =
                part.split_once(':').ok_or_else(|| bad(part, i, "no ':' between duration and target".into()))?;
            let d = parse_duration(d).map_err(|e| bad(part, i, e))?;
            if d.is_zero() {
                return Err(bad(part, i, "a stage must last longer than 0s".into()));
            }
            let target = parse_count(target).map_err(|e| bad(part, i, e))?;
            let max = match ramp {
                Ramp::Rate => crate::limits::MAX_RATE_PER_S,
                Ramp::Connections => crate::limits::MAX_CONNECTIONS as f64,
            };
            if target > max {
                return Err(bad(part, i, format!("the target is above the maximum of {max}")));
            }
            if ramp == Ramp::Connections && target.fract() != 0.0 {
                return Err(bad(part, i, "connections are a whole number".into()));
            }
            stages.push(Stage { duration_s: d.as_secs_f64(), target });
        }
        let stages = Stages { ramp, stages };
        if stages.total() > MAX_DURATION {
            return Err(SpecError::new(
                Field::Stages,
                "--stages last longer than the maximum of 365 days (365d) in all",
            ));
        }
        if stages.peak() == 0.0 {
            return Err(SpecError::new(
                Field::Stages,
                format!("--stages {s:?}: every target is 0, so nothing would be sent"),
            ));
        }
        Ok(stages)
    }

    /// How long all the stages last.
    pub fn total(&self) -> Duration {
        Duration::from_secs_f64(self.stages.iter().map(|s| s.duration_s).sum())
    }

    /// The highest target.
    pub fn peak(&self) -> f64 {
        self.stages.iter().map(|s| s.target).fold(0.0, f64::max)
    }

    /// The mean target over the whole run (for a rate: requests asked for
    /// divided by the duration).
    pub fn mean(&self) -> f64 {
        let area: f64 = self.segments().map(|(_, d, from, to)| d * (from + to) / 2.0).sum();
        area / self.total().as_secs_f64().max(f64::MIN_POSITIVE)
    }

    /// The same stages with every target multiplied by `k` (a thread's share).
    pub fn scaled(&self, k: f64) -> Stages {
        let stages = self.stages.iter().map(|s| Stage { duration_s: s.duration_s, target: s.target * k }).collect();
        Stages { ramp: self.ramp, stages }
    }

    /// Each stage as (start, duration, from, to), seconds and targets.
    pub fn segments(&self) -> impl Iterator<Item = (f64, f64, f64, f64)> + '_ {
        let (mut start, mut from) = (0.0, 0.0);
        self.stages.iter().map(move |s| {
            let seg = (start, s.duration_s, from, s.target);
            start += s.duration_s;
            from = s.target;
            seg
        })
    }

    /// The target `t_s` seconds in (the last stage's after the end).
    pub fn value_at(&self, t_s: f64) -> f64 {
        for (start, d, from, to) in self.segments() {
            if t_s < start + d {
                return from + (to - from) * ((t_s - start) / d).max(0.0);
            }
        }
        self.stages.last().map_or(0.0, |s| s.target)
    }

    /// Open loop: seconds from the start by which `count` requests are due
    /// at the ramped rate, or none when the stages end before that.
    pub fn time_of(&self, count: f64) -> Option<f64> {
        let mut rem = count.max(0.0);
        for (start, d, r0, r1) in self.segments() {
            let area = d * (r0 + r1) / 2.0;
            if rem <= area {
                if rem <= 0.0 {
                    return Some(start);
                }
                // r0·τ + a·τ²/2 = rem, with a = (r1 - r0) / d, solved in the
                // form that stays accurate when a is near 0 or negative.
                let a = (r1 - r0) / d;
                let root = (r0 * r0 + 2.0 * a * rem).max(0.0).sqrt();
                return Some(start + (2.0 * rem / (r0 + root)).min(d));
            }
            rem -= area;
        }
        None
    }

    /// What each stage got, from per-stage tallies in stage order.
    pub fn results(
        &self,
        got: impl Iterator<Item = (u64, stampede_schema::Errors, stampede_schema::load::Percentiles)>,
    ) -> Vec<StageResult> {
        self.segments()
            .zip(got)
            .map(|((start_s, duration_s, from, to), (requests, errors, latency_us))| StageResult {
                ramp: self.ramp,
                start_s,
                duration_s,
                from,
                to,
                requests,
                errors,
                achieved_rate: requests as f64 / duration_s,
                latency_us,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(s: &str) -> Stages {
        Stages::parse(s, Ramp::Rate).unwrap()
    }

    #[test]
    fn parses_units_and_names_the_flag_and_the_bad_stage() {
        let s = rate("30s:1k,1m:5k,500ms:0");
        assert_eq!(s.stages[1], Stage { duration_s: 60.0, target: 5000.0 });
        assert_eq!(s.total(), Duration::from_secs_f64(90.5));
        for (bad, part) in [
            ("30s:1k,1x:5", "\"1x:5\" (stage 2)"),
            ("30s", "\"30s\" (stage 1)"),
            ("0s:10", "longer than 0s"),
            ("1s:-3", "stage 1"),
        ] {
            let err = Stages::parse(bad, Ramp::Rate).unwrap_err();
            assert_eq!(err.field, Field::Stages);
            let err = err.to_string();
            assert!(err.starts_with("--stages") && err.contains(part), "{bad}: {err}");
        }
        let refused = |s: &str, ramp: Ramp| Stages::parse(s, ramp).unwrap_err().to_string();
        assert!(refused("1s:0,2s:0", Ramp::Rate).contains("every target is 0"));
        assert!(refused("1s:2.5", Ramp::Connections).contains("whole number"));
        assert!(refused("1s:1e12", Ramp::Rate).contains("maximum"));
    }

    #[test]
    fn ramps_are_linear_from_zero_and_the_schedule_inverts_their_integral() {
        let s = rate("10s:100,10s:100,10s:0");
        assert_eq!(s.value_at(5.0), 50.0);
        assert_eq!(s.value_at(15.0), 100.0);
        assert_eq!(s.value_at(25.0), 50.0);
        // 500 requests in the ramp up, 1000 flat, 500 down: 2000 in 30 s.
        assert!((s.mean() - 2000.0 / 30.0).abs() < 1e-9);
        for (count, t) in
            [(0.0, 0.0), (125.0, 5.0), (500.0, 10.0), (1000.0, 15.0), (1500.0, 20.0), (1875.0, 25.0), (2000.0, 30.0)]
        {
            assert!((s.time_of(count).unwrap() - t).abs() < 1e-9, "{count}: {:?}", s.time_of(count));
        }
        assert_eq!(s.time_of(2000.5), None);
        assert_eq!(s.scaled(0.5).time_of(1000.0), Some(30.0));
    }
}
