//! How much a profiled run differs from the same run unprofiled. perf's
//! sampling, and more its scheduler tracepoints for off-CPU stacks, take
//! CPU from the server it samples and can stretch its tail several-fold; a
//! profiled run is then a different run, and its causes must be read with
//! that in mind. A profiled run is compared with the unprofiled runs of the
//! same app, knobs, profile and path (in the same results file, or in one
//! given with `--unprofiled`): its throughput and p99 against theirs, and it
//! differs beyond the noise when either is off by more than
//! [`MIN_NOISE`] or twice the spread of the unprofiled iterations, whichever
//! is larger.

use stampede_schema::explain::ProfilerCost;
use stampede_schema::run::RunRecord;

/// The least relative difference counted as beyond the noise.
pub const MIN_NOISE: f64 = 0.2;

fn same_run(a: &RunRecord, b: &RunRecord) -> bool {
    (&a.app, &a.knobs, &a.profile, &a.path) == (&b.app, &b.knobs, &b.profile, &b.path)
}

fn figures(run: &RunRecord) -> Option<(f64, f64)> {
    let rps = run.load.as_ref()?.rps;
    let p99 = run.latency_load()?.latency_us.p99;
    Some((rps, p99))
}

/// The comparison for `run` when it was profiled and `others` hold
/// unprofiled runs like it; `None` otherwise.
pub fn cost(run: &RunRecord, others: &[&RunRecord]) -> Option<ProfilerCost> {
    run.cpu_profile.as_ref()?;
    let (rps, p99_us) = figures(run)?;
    let plain: Vec<(f64, f64)> =
        others.iter().filter(|o| o.cpu_profile.is_none() && same_run(o, run)).filter_map(|o| figures(o)).collect();
    if plain.is_empty() {
        return None;
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let spread = |v: Vec<f64>| {
        let (lo, hi) = v.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        if lo > 0.0 {
            hi / lo - 1.0
        } else {
            0.0
        }
    };
    let plain_rps = median(plain.iter().map(|p| p.0).collect());
    let plain_p99 = median(plain.iter().map(|p| p.1).collect());
    let noise = MIN_NOISE
        .max(2.0 * spread(plain.iter().map(|p| p.0).collect()))
        .max(2.0 * spread(plain.iter().map(|p| p.1).collect()));
    let off = |a: f64, b: f64| b > 0.0 && (a / b - 1.0).abs() > noise;
    Some(ProfilerCost {
        rps,
        unprofiled_rps: plain_rps,
        p99_us,
        unprofiled_p99_us: plain_p99,
        unprofiled_runs: plain.len(),
        noise,
        beyond_noise: off(rps, plain_rps) || off(p99_us, plain_p99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede_schema::load::LoadResult;
    use stampede_schema::profile::ProfileSummary;

    fn run(profiled: bool, rps: f64, p99: f64) -> RunRecord {
        let mut load = LoadResult { rps, ..LoadResult::default() };
        load.latency_us.p99 = p99;
        RunRecord {
            app: "py".into(),
            load: Some(load),
            cpu_profile: profiled.then(ProfileSummary::default),
            ..RunRecord::default()
        }
    }

    #[test]
    fn a_profiled_run_whose_tail_grew_fourfold_differs_beyond_the_noise() {
        let plain = [run(false, 200.0, 93_000.0), run(false, 198.0, 95_000.0)];
        let others: Vec<&RunRecord> = plain.iter().collect();
        let slow = cost(&run(true, 196.0, 344_000.0), &others).unwrap();
        assert!(slow.beyond_noise, "{slow:?}");
        assert_eq!((slow.unprofiled_runs, slow.unprofiled_p99_us), (2, 95_000.0));
        let alike = cost(&run(true, 199.0, 97_000.0), &others).unwrap();
        assert!(!alike.beyond_noise, "{alike:?}");
        assert!(cost(&plain[0], &others).is_none(), "an unprofiled run has no profiler cost");
        assert!(cost(&run(true, 1.0, 1.0), &[]).is_none(), "nothing to compare with");
    }
}
