//! Small order statistics shared by the summary, the charts and `compare`.

/// The median, or `None` for no values. Non-finite values are ignored.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    Some(median_of_sorted(&sorted))
}

/// The median of values already sorted ascending (not empty).
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The `q`-quantile (0..=1) of sorted values by the nearest-rank method.
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = (q * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn nearest_rank_quantiles() {
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile_of_sorted(&sorted, 0.025), 3.0);
        assert_eq!(quantile_of_sorted(&sorted, 0.975), 98.0);
        assert_eq!(quantile_of_sorted(&sorted, 0.0), 1.0);
        assert_eq!(quantile_of_sorted(&sorted, 1.0), 100.0);
    }
}
