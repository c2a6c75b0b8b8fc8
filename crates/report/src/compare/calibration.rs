//! The calibration of compare's intervals on synthetic two-level data, the
//! shape benchmark results have: every server start has its own offset
//! (between-start noise) and every second of it its own noise on top
//! (within-start noise). A/A comparisons must be called significant no more
//! often than the interval's 5 % says, however large the offsets; a known
//! 10 % slowdown must be called "slower" most of the time at the noise the
//! main job sees. The seed is fixed, so these counts never flake.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{compare_metric, Verdict};
use crate::summary::Metric;

/// Noise of one synthetic server, as standard deviations of the logarithm.
struct Noise {
    between_starts: f64,
    per_second: f64,
    seconds: usize,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller.
    let (u, v): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The requests/s of every second of each of `starts` starts.
fn seconds(rng: &mut ChaCha8Rng, noise: &Noise, level: f64, starts: usize) -> Vec<Vec<f64>> {
    (0..starts)
        .map(|_| {
            let offset = noise.between_starts * normal(rng);
            (0..noise.seconds).map(|_| level * (offset + noise.per_second * normal(rng)).exp()).collect()
        })
        .collect()
}

/// The requests/s figure of each of `starts` starts: the mean of its seconds.
fn starts(rng: &mut ChaCha8Rng, noise: &Noise, level: f64, starts: usize) -> Vec<f64> {
    seconds(rng, noise, level, starts).iter().map(|s| s.iter().sum::<f64>() / s.len() as f64).collect()
}

/// Of `trials` comparisons, how many ended in each of (slower, faster).
fn verdicts(noise: &Noise, candidate_level: f64, per_side: usize, trials: usize) -> (usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(39);
    let (mut slower, mut faster) = (0, 0);
    for _ in 0..trials {
        let base = starts(&mut rng, noise, 10_000.0, per_side);
        let candidate = starts(&mut rng, noise, 10_000.0 * candidate_level, per_side);
        match compare_metric(Metric::Rps, &base, &candidate).verdict {
            Verdict::Worse => slower += 1,
            Verdict::Better => faster += 1,
            _ => {}
        }
    }
    (slower, faster)
}

const TRIALS: usize = 2000;

#[test]
fn a_a_with_start_to_start_noise_stays_within_the_stated_rate() {
    // Starts that differ far more than their seconds do: what fooled the
    // per-second bootstrap (issue 39).
    for per_side in [2, 3, 5] {
        let noise = Noise { between_starts: 0.05, per_second: 0.02, seconds: 2 };
        let (slower, faster) = verdicts(&noise, 1.0, per_side, TRIALS);
        let rate = (slower + faster) as f64 / TRIALS as f64;
        // 5 % stated; 2000 trials put the count within ±1 % of it two times in three.
        assert!(rate <= 0.065, "{per_side} starts a side: {rate} of A/A comparisons significant");
        eprintln!("A/A, {per_side} starts a side: {rate} significant");
        // Welch's df from two starts a side is small and often smaller than
        // the truth, so there the rate falls below 5 % (conservative), not to nothing.
        assert!(rate >= 0.015, "{per_side} starts a side: {rate}, far below 5 %: the interval is too wide");
    }
}

#[test]
fn pooling_seconds_would_call_noise_significant() {
    // What the per-second figures alone would say on the same A/A data:
    // with 3 starts of 2 s each treated as 6 samples, far more than 5 %.
    let noise = Noise { between_starts: 0.05, per_second: 0.02, seconds: 2 };
    let mut rng = ChaCha8Rng::seed_from_u64(39);
    let mut significant = 0;
    for _ in 0..TRIALS {
        let base: Vec<f64> = seconds(&mut rng, &noise, 10_000.0, 3).concat();
        let candidate: Vec<f64> = seconds(&mut rng, &noise, 10_000.0, 3).concat();
        significant += usize::from(compare_metric(Metric::Rps, &base, &candidate).significant);
    }
    eprintln!("A/A, 6 pooled seconds a side: {significant} of {TRIALS} significant");
    assert!(significant as f64 / TRIALS as f64 > 0.10, "{significant} of {TRIALS}");
}

#[test]
fn a_ten_percent_slowdown_is_slower_at_the_main_jobs_noise() {
    // Requests/s of a pinned server: ~1.5 % between starts, ~2 % from second
    // to second, 2 s closed loops, 3 starts a side (the main job's shape).
    let noise = Noise { between_starts: 0.015, per_second: 0.02, seconds: 2 };
    let (slower, faster) = verdicts(&noise, 1.0 / 1.1, 3, TRIALS);
    eprintln!("10 % slower, 3 starts a side: {slower} of {TRIALS} slower, {faster} faster");
    assert_eq!(faster, 0);
    assert!(slower as f64 / TRIALS as f64 >= 0.9, "power {slower} of {TRIALS}");
    // With 2 starts a side the same slowdown is found less often: the reason for 3.
    let (two, _) = verdicts(&noise, 1.0 / 1.1, 2, TRIALS);
    eprintln!("10 % slower, 2 starts a side: {two} of {TRIALS} slower");
    assert!(two < slower, "2 starts: {two}, 3 starts: {slower}");
}
