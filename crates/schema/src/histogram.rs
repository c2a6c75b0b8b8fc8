//! HdrHistogram's interchange encoding, written and read back, histograms
//! merged, and the document figures read from a histogram.
//!
//! Every `stampede.load/1` result carries its full latency distribution in
//! HdrHistogram's standard V2 encoding (deflate-compressed, base64), so that
//! results from several load machines can be combined without loss: the
//! merged histogram holds every recorded count, and percentiles are read from
//! it, never averaged. Decoding accepts what any HdrHistogram library writes
//! (Java, Python, Go, C, Rust), compressed or not. The load engine, the remote
//! controller and `stampede explain` all use this one implementation.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use thiserror::Error;

use crate::load::{Percentiles, SpectrumPoint};

/// A latency histogram as every result holds it: nanoseconds from 1 ns to
/// 60 s with three significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60 * 1_000_000_000, 3).expect("valid histogram bounds")
}

#[derive(Debug, Error)]
pub enum HistogramError {
    #[error("the histogram is not valid base64 ({0}); it must be HdrHistogram's base64 interchange encoding")]
    Base64(#[from] base64::DecodeError),
    #[error("the histogram is empty; a stampede.load/1 result always carries one in its `histogram` field")]
    Empty,
    #[error("the histogram cannot be decoded ({0:?}); it must be HdrHistogram's V2 encoding, compressed or not")]
    Decode(hdrhistogram::serialization::DeserializeError),
    #[error("cannot make a histogram to merge into: {0:?}")]
    Create(hdrhistogram::CreationError),
    #[error("the histograms cannot be merged: {0:?}")]
    Merge(hdrhistogram::AdditionError),
}

/// HdrHistogram's standard interchange form (V2, deflate, base64), so any
/// HdrHistogram library can read the full distribution and merge it losslessly.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
        Err(_) => String::new(),
    }
}

/// Decodes base64 HdrHistogram V2 (deflate-compressed or plain) into a histogram.
pub fn decode_histogram(encoded: &str) -> Result<Histogram<u64>, HistogramError> {
    let trimmed = encoded.trim();
    if trimmed.is_empty() {
        return Err(HistogramError::Empty);
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(trimmed)?;
    Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(HistogramError::Decode)
}

/// Adds every count of every histogram into one. The result grows to hold
/// any value the inputs hold, so nothing is clipped; with inputs of equal
/// precision (all of Stampede's are three significant digits) the merge is
/// exact: the merged histogram equals one fed every value directly.
pub fn merge_histograms<'a, I>(histograms: I) -> Result<Histogram<u64>, HistogramError>
where
    I: IntoIterator<Item = &'a Histogram<u64>>,
{
    let mut iter = histograms.into_iter().peekable();
    let sigfig = iter.peek().map_or(3, |h| h.sigfig());
    let mut merged = Histogram::new(sigfig).map_err(HistogramError::Create)?;
    for h in iter {
        merged.add(h).map_err(HistogramError::Merge)?;
    }
    Ok(merged)
}

/// Nanoseconds to microseconds, rounded to 0.1 µs as the documents carry them.
pub fn ns_to_us(ns: u64) -> f64 {
    (ns as f64 / 100.0).round() / 10.0
}

impl Percentiles {
    /// The latency summary of a histogram of nanoseconds, in microseconds.
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        let q = |p: f64| ns_to_us(h.value_at_quantile(p));
        Percentiles {
            min: ns_to_us(h.min()),
            mean: (h.mean() / 100.0).round() / 10.0,
            stdev: (h.stdev() / 100.0).round() / 10.0,
            max: ns_to_us(h.max()),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p99: q(0.99),
            p999: q(0.999),
            p9999: q(0.9999),
        }
    }
}

/// The percentile spectrum for HdrHistogram's classic plot (x: 1/(1-p), log scale).
pub fn spectrum(h: &Histogram<u64>) -> Vec<SpectrumPoint> {
    if h.is_empty() {
        return Vec::new();
    }
    const POINTS: [f64; 16] =
        [0.0, 25.0, 50.0, 75.0, 90.0, 95.0, 97.5, 99.0, 99.5, 99.9, 99.95, 99.99, 99.995, 99.999, 99.9999, 100.0];
    POINTS.iter().map(|&p| SpectrumPoint { percentile: p, us: ns_to_us(h.value_at_quantile(p / 100.0)) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made once with Python's `hdrhistogram` package (PyPI, version 0.10.8),
    /// another implementation than ours:
    ///
    /// ```python
    /// from hdrh.histogram import HdrHistogram
    /// h = HdrHistogram(1, 60*1000*1000*1000, 3)
    /// for v in range(1, 101): h.record_value(1000 * v)   # 1 µs … 100 µs in ns
    /// h.record_value(2_500_000, 10)                      # ten at 2.5 ms
    /// h.record_value(10_000_000)                         # one at 10 ms
    /// print(h.encode().decode())
    /// ```
    ///
    /// Python's own answers, asserted below: total 111, min 1000,
    /// max 10002431, p50 56031, p90 100031, p99 2500607, p99.9 10002431.
    const PYTHON_HDRH: &str = "HISTFAAAAFx4nJNpmSzMwMBwnwECmKE0IxDz/nCPYLD/ABE4z890lp9pKgfTU3amhSxMH5mhaDkT03dGLGglI1M1UyUenM1kDYS2YJI8WpdJmkkWCBEkOfyLXiJ/5ZkAHrgp4A==";

    #[test]
    fn decodes_a_histogram_encoded_by_python_hdrhistogram() {
        let h = decode_histogram(PYTHON_HDRH).expect("decodes");
        assert_eq!(h.len(), 111);
        assert_eq!(h.min(), 1000);
        assert_eq!(h.max(), 10_002_431);
        for v in 1..=100u64 {
            assert_eq!(h.count_at(1000 * v), 1, "count at {} ns", 1000 * v);
        }
        assert_eq!(h.count_at(2_500_000), 10);
        assert_eq!(h.count_at(10_000_000), 1);
        assert_eq!(h.value_at_quantile(0.50), 56_031);
        assert_eq!(h.value_at_quantile(0.90), 100_031);
        assert_eq!(h.value_at_quantile(0.99), 2_500_607);
        assert_eq!(h.value_at_quantile(0.999), 10_002_431);
    }

    fn sample(seed: u64, n: u64) -> Vec<u64> {
        // A deterministic spread over 20 µs … ~50 ms, with a long tail.
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (x >> 33) % 10_000;
                20_000 + r * r / 2 + (x >> 60) * 7
            })
            .collect()
    }

    fn record(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn round_trip_keeps_every_count() {
        let h = record(&sample(1, 5000));
        let back = decode_histogram(&encode_histogram(&h)).expect("decodes");
        assert_eq!(back.len(), h.len());
        for v in h.iter_recorded() {
            assert_eq!(back.count_at(v.value_iterated_to()), v.count_at_value());
        }
        assert_eq!(back.count_at(12_345), 0);
        assert_eq!(Percentiles::of(&back), Percentiles::of(&h));
    }

    #[test]
    fn round_trip_of_plain_v2_encoding() {
        use hdrhistogram::serialization::{Serializer, V2Serializer};
        let h = record(&sample(7, 300));
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&h, &mut bytes).unwrap();
        let back = decode_histogram(&base64::engine::general_purpose::STANDARD.encode(bytes)).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn merged_percentiles_equal_those_of_all_values_recorded_together() {
        let (a, b, c) = (sample(2, 4000), sample(3, 1000), vec![90_000_000u64; 7]);
        let all: Vec<u64> = a.iter().chain(&b).chain(&c).copied().collect();
        let parts: Vec<Histogram<u64>> =
            [&a, &b, &c].iter().map(|v| decode_histogram(&encode_histogram(&record(v))).unwrap()).collect();
        let merged = merge_histograms(&parts).unwrap();
        let direct = record(&all);
        assert_eq!(merged.len(), all.len() as u64);
        for q in [0.0, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), direct.value_at_quantile(q), "quantile {q}");
        }
        assert_eq!(Percentiles::of(&merged), Percentiles::of(&direct));
    }

    #[test]
    fn merging_python_and_stampede_histograms_adds_counts() {
        let py = decode_histogram(PYTHON_HDRH).unwrap();
        let ours = record(&[1000, 2_500_000]);
        let merged = merge_histograms([&py, &ours]).unwrap();
        assert_eq!(merged.len(), 113);
        assert_eq!(merged.count_at(1000), 2);
        assert_eq!(merged.count_at(2_500_000), 11);
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        assert!(matches!(decode_histogram(""), Err(HistogramError::Empty)));
        assert!(matches!(decode_histogram("not base64!"), Err(HistogramError::Base64(_))));
        assert!(matches!(decode_histogram("aGVsbG8gd29ybGQ="), Err(HistogramError::Decode(_))));
    }
}
