//! The median and p99 of a run with and without the requests that met a
//! pause. The full distribution is the load generator's HDR histogram; the
//! requests known to have met a pause are the slow-logged ones attributed to
//! one, and they are subtracted from a copy of it. Requests that met a pause
//! but were too fast to be logged stay in: they were all faster than every
//! logged request, so the p99 without pauses is exact whenever the slow log
//! reaches below it (`exact`).

use hdrhistogram::Histogram;

/// The figures, declared once with the `stampede.explain/1` document.
pub use stampede_schema::explain::{Figures, WithWithout};

/// Decodes the histogram of a load document (stampede-schema's one decoder);
/// `None` when the document has none or it cannot be read.
pub fn decode(base64_text: &str) -> Option<Histogram<u64>> {
    stampede_schema::histogram::decode_histogram(base64_text).ok()
}

fn figures(h: &Histogram<u64>) -> Figures {
    let us = |q: f64| (h.value_at_quantile(q) as f64 / 100.0).round() / 10.0;
    Figures { p50_us: us(0.5), p99_us: us(0.99) }
}

/// `removed_us`: latencies (µs) of the logged requests that met a pause;
/// `logged_min_us`: the fastest logged request.
pub fn with_without(all: &Histogram<u64>, removed_us: &[f64], logged_min_us: f64) -> Option<WithWithout> {
    if all.is_empty() {
        return None;
    }
    let mut gone = Histogram::<u64>::new_from(all);
    for &us in removed_us {
        gone.saturating_record((us * 1000.0).round() as u64);
    }
    let mut rest = all.clone();
    rest.subtract(&gone).ok()?;
    if rest.is_empty() {
        return None;
    }
    let without = figures(&rest);
    Some(WithWithout {
        all: figures(all),
        without_pauses: without,
        removed: removed_us.len() as u64,
        exact: logged_min_us <= without.p99_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_the_paused_tail_lowers_p99_and_round_trips_base64() {
        let mut h = Histogram::<u64>::new_with_bounds(1_000, 60_000_000_000, 3).unwrap();
        for _ in 0..980 {
            h.record(500_000).unwrap(); // 500 µs
        }
        for _ in 0..20 {
            h.record(20_000_000).unwrap(); // 20 ms: paused
        }
        let decoded = decode(&stampede_schema::histogram::encode_histogram(&h)).unwrap();
        assert_eq!(decoded.len(), 1000);
        let w = with_without(&decoded, &[20_000.0; 20], 20_000.0).unwrap();
        assert!(w.all.p99_us > 19_000.0, "{w:?}");
        assert!(w.without_pauses.p99_us < 600.0, "{w:?}");
        assert_eq!(w.removed, 20);
        assert!(!w.exact, "the log stopped at 20 ms, far above the new p99");
    }
}
