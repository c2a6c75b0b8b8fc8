//! The interval of a change when the unit of replication is the server
//! start. Two runs of the same code differ more between starts (memory
//! layout, JIT and GC decisions, which core's cache was warm) than between
//! the seconds of one start, so seconds pooled across starts make an
//! interval too narrow: pseudo-replication (Lazic 2010, "The problem of
//! pseudoreplication in neuroscientific studies", BMC Neuroscience 11:5;
//! Kalibera and Jones 2013, "Rigorous benchmarking in reasonable time",
//! ISMM). Each start is summarised by its own figure (what the summary
//! shows for that iteration: requests/s over the whole phase, its p99, its
//! CPU), and the starts are the samples: the figure of a start already holds
//! that start's within-run noise, and the spread of the figures holds the
//! between-start noise on top, which is the two-level model's whole variance
//! of a start's mean. With the main job's 2 to 5 starts a side, resampling
//! starts (a hierarchical bootstrap) cannot show that variance (a bootstrap
//! of n values underestimates it by (n − 1)/n and has only a handful of
//! distinct resamples), so the interval is Welch's t interval (Welch 1947,
//! Biometrika 34:28–35) on the logarithms of the figures: the change is
//! multiplicative (a ratio of geometric means), a p99 that varies 2–10×
//! between starts is closer to log-normal than to normal, and Welch's
//! degrees of freedom let the two sides have different spreads.

use serde::Serialize;

/// A confidence interval of a relative change (0.05 = +5 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether the whole interval lies on one side of zero.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Fewer starts than this on a side give no interval: one figure has no spread.
pub const MIN_STARTS: usize = 2;

/// The change of one metric between two sets of per-start figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartsChange {
    /// Geometric means of each side's figures.
    pub base: f64,
    pub candidate: f64,
    /// `candidate / base − 1`.
    pub change: f64,
    pub interval: Interval,
    /// Welch–Satterthwaite degrees of freedom of the interval.
    pub df: f64,
}

/// The `confidence` interval of `gmean(candidate) / gmean(base) − 1`, or
/// `None` when a side has fewer than [`MIN_STARTS`] positive figures.
pub fn change(base: &[f64], candidate: &[f64], confidence: f64) -> Option<StartsChange> {
    let (mb, vb, nb) = log_moments(base)?;
    let (mc, vc, nc) = log_moments(candidate)?;
    let (qb, qc) = (vb / nb, vc / nc);
    let se = (qb + qc).sqrt();
    // Welch–Satterthwaite; with no spread on either side the pooled count.
    let df = if se > 0.0 { (qb + qc).powi(2) / (qb * qb / (nb - 1.0) + qc * qc / (nc - 1.0)) } else { nb + nc - 2.0 };
    let half = t_quantile(0.5 + confidence / 2.0, df) * se;
    let d = mc - mb;
    Some(StartsChange {
        base: mb.exp(),
        candidate: mc.exp(),
        change: d.exp() - 1.0,
        interval: Interval { low: (d - half).exp() - 1.0, high: (d + half).exp() - 1.0 },
        df,
    })
}

/// Mean and sample variance of the logarithms, and the count; `None` below [`MIN_STARTS`].
fn log_moments(values: &[f64]) -> Option<(f64, f64, f64)> {
    let logs: Vec<f64> = values.iter().filter(|v| v.is_finite() && **v > 0.0).map(|v| v.ln()).collect();
    if logs.len() < MIN_STARTS {
        return None;
    }
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some((mean, var, n))
}

/// The `p` quantile of Student's t with `df` (not necessarily whole) degrees
/// of freedom, by bisection on its distribution function. Written here
/// because no crate in the lock file has it and Welch's df is fractional.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    while t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(T ≤ t) for t ≥ 0: 1 − I_x(df/2, 1/2)/2 with x = df / (df + t²).
fn t_cdf(t: f64, df: f64) -> f64 {
    1.0 - 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
}

/// The regularised incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz; Press et al., Numerical Recipes, 6.4).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        for aa in [
            m * (b - m) * x / ((qam + 2.0 * m) * (a + 2.0 * m)),
            -(a + m) * (qab + m) * x / ((a + 2.0 * m) * (qap + 2.0 * m)),
        ] {
            d = 1.0 + aa * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            c = if c.abs() < TINY { TINY } else { c };
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..].iter().enumerate().fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, t) in [(1.0, 12.706), (2.0, 4.303), (4.0, 2.776), (10.0, 2.228), (1000.0, 1.962)] {
            assert!((t_quantile(0.975, df) - t).abs() < 1e-3, "df {df}: {}", t_quantile(0.975, df));
        }
        assert!((t_quantile(0.025, 3.0) + 3.182).abs() < 1e-3);
        let between = t_quantile(0.975, 2.5);
        assert!(between < 4.303 && between > 3.182, "fractional df lies between its neighbours: {between}");
    }

    #[test]
    fn one_start_a_side_gives_no_interval() {
        assert_eq!(change(&[100.0], &[90.0, 91.0], 0.95), None);
        assert_eq!(change(&[100.0, 0.0], &[90.0, 91.0], 0.95), None, "a zero figure has no logarithm");
        assert!(change(&[100.0, 101.0], &[90.0, 91.0], 0.95).is_some());
    }

    #[test]
    fn identical_starts_contain_zero_and_a_clear_drop_excludes_it() {
        let base = [100.0, 103.0, 98.0];
        let same = change(&base, &base, 0.95).unwrap();
        assert!(same.interval.low < 0.0 && same.interval.high > 0.0 && same.change.abs() < 1e-12, "{same:?}");
        let dropped: Vec<f64> = base.iter().map(|v| v * 0.8).collect();
        let drop = change(&base, &dropped, 0.95).unwrap();
        assert!((drop.change + 0.2).abs() < 1e-9 && drop.interval.high < -0.1, "{drop:?}");
        assert!((drop.df - 4.0).abs() < 1e-9, "equal spreads and counts: n_b + n_c − 2");
    }

    #[test]
    fn starts_that_disagree_widen_the_interval() {
        // Two starts 2.2x apart each side, as the main job's open-loop p99s can be.
        let wide = change(&[34.0, 81.0], &[30.0, 70.0], 0.95).unwrap();
        assert!(!wide.interval.excludes_zero() && wide.interval.high > 1.0, "{wide:?}");
        assert!((wide.df - 2.0).abs() < 0.01);
    }

    #[test]
    fn constant_sides_give_a_zero_width_interval() {
        let c = change(&[5.0; 3], &[5.0; 3], 0.95).unwrap();
        assert_eq!((c.interval.low, c.interval.high), (0.0, 0.0));
        let moved = change(&[5.0; 3], &[6.0; 3], 0.95).unwrap();
        assert!(moved.interval.excludes_zero());
    }
}
