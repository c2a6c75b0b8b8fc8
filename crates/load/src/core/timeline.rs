//! The per-second timeline (requests, errors, p99 of each second), merged
//! across threads as the run goes. Each thread hands over one small histogram
//! per second; seconds that every thread has left behind are reduced to three
//! numbers, so memory stays flat however long the run. With `--hdr-log`
//! each closed second's histogram is also kept, compressed (a few hundred
//! bytes), and written at the end as an HdrHistogram interval log: the
//! format HdrHistogram's own `HistogramLogReader` (Java, C, Go, Rust) reads.

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Seconds this far behind the newest one are reduced to their numbers.
const KEEP_OPEN_S: u64 = 5;

pub use stampede_schema::load::SecondStats;

#[derive(Default)]
pub struct Timeline {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    open: BTreeMap<u64, (u64, u64, Histogram<u64>)>,
    closed: BTreeMap<u64, SecondStats>,
    /// With an interval log: each closed second's histogram, V2 compressed.
    keep: bool,
    kept: BTreeMap<u64, Vec<u8>>,
    /// Histograms of closed seconds, reset for reuse: a fresh one per second
    /// would make the allocator's footprint creep up over a long run.
    spare: Vec<Histogram<u64>>,
    /// Everything handed over so far, for the live progress line.
    requests: u64,
    errors: u64,
}

impl Timeline {
    /// A timeline that also keeps each second's histogram for an interval log.
    pub fn keeping_histograms() -> Timeline {
        let t = Timeline::default();
        t.inner.lock().unwrap_or_else(|e| e.into_inner()).keep = true;
        t
    }

    /// Two significant digits: a per-second p99 within 1%, at a tenth of the size.
    pub fn new_second_histogram() -> Histogram<u64> {
        Histogram::new_with_bounds(1, 60 * 1_000_000_000, 2).expect("valid histogram bounds")
    }

    pub fn add(&self, second: u64, requests: u64, errors: u64, hist: &Histogram<u64>) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.requests += requests;
        inner.errors += errors;
        if let Some(closed) = inner.closed.get_mut(&second) {
            // A thread that stalled for seconds reports late: keep its counts.
            closed.requests += requests;
            closed.errors += errors;
            return;
        }
        if !inner.open.contains_key(&second) {
            let hist = inner.spare.pop().unwrap_or_else(Self::new_second_histogram);
            inner.open.insert(second, (0, 0, hist));
        }
        let slot = inner.open.get_mut(&second).expect("inserted above");
        slot.0 += requests;
        slot.1 += errors;
        slot.2.add(hist).expect("same histogram bounds");
        let newest = *inner.open.keys().next_back().unwrap_or(&0);
        while let Some((&first, _)) = inner.open.first_key_value() {
            if first + KEEP_OPEN_S > newest {
                break;
            }
            let (s, (requests, errors, mut hist)) = inner.open.pop_first().unwrap();
            inner.close(s, requests, errors, &hist);
            hist.reset();
            inner.spare.push(hist);
        }
    }

    /// The run so far, for a live display: requests and errors handed over
    /// (each thread hands over a second when it moves past it), and the
    /// newest second before `current` that has any.
    pub fn so_far(&self, current: u64) -> (u64, u64, Option<SecondStats>) {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let open = inner.open.range(..current).next_back().map(|(&t_s, (requests, errors, hist))| SecondStats {
            t_s,
            requests: *requests,
            errors: *errors,
            p99_us: p99_us(hist),
        });
        let closed = inner.closed.range(..current).next_back().map(|(_, s)| *s);
        let newest = match (open, closed) {
            (Some(o), Some(c)) => Some(if o.t_s > c.t_s { o } else { c }),
            (o, c) => o.or(c),
        };
        (inner.requests, inner.errors, newest)
    }

    /// The whole timeline, one entry per second from 0 to `seconds - 1`
    /// (seconds with no traffic are zeros, not gaps).
    pub fn finish(&self, seconds: u64) -> Vec<SecondStats> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        while let Some((s, (requests, errors, hist))) = inner.open.pop_first() {
            inner.close(s, requests, errors, &hist);
        }
        let last = inner.closed.keys().next_back().map_or(0, |s| s + 1);
        (0..seconds.max(last))
            .map(|s| {
                inner.closed.get(&s).copied().unwrap_or(SecondStats { t_s: s, requests: 0, errors: 0, p99_us: 0.0 })
            })
            .collect()
    }

    /// Writes the kept seconds as an HdrHistogram interval log (after
    /// `finish`): one interval per second of the measured period, starting at
    /// `start`, values in nanoseconds (the Interval_Max column in ms).
    pub fn write_interval_log(&self, out: &mut impl io::Write, start: SystemTime) -> io::Result<()> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut serializer = V2DeflateSerializer::new();
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment(concat!(
                "stampede ",
                env!("CARGO_PKG_VERSION"),
                " --hdr-log: latency in nanoseconds, one interval per second"
            ))
            .with_start_time(start)
            .with_base_time(start)
            .begin_log_with(out, &mut serializer)?;
        let mut deserializer = Deserializer::new();
        for (&s, bytes) in &inner.kept {
            let hist: Histogram<u64> =
                deserializer.deserialize(&mut &bytes[..]).map_err(|e| io::Error::other(format!("{e:?}")))?;
            log.write_histogram(&hist, Duration::from_secs(s), Duration::from_secs(1), None)
                .map_err(|e| io::Error::other(format!("{e:?}")))?;
        }
        Ok(())
    }
}

impl Inner {
    fn close(&mut self, t_s: u64, requests: u64, errors: u64, hist: &Histogram<u64>) {
        self.closed.insert(t_s, SecondStats { t_s, requests, errors, p99_us: p99_us(hist) });
        if self.keep {
            let mut bytes = Vec::new();
            if V2DeflateSerializer::new().serialize(hist, &mut bytes).is_ok() {
                self.kept.insert(t_s, bytes);
            }
        }
    }
}

fn p99_us(hist: &Histogram<u64>) -> f64 {
    if hist.is_empty() {
        0.0
    } else {
        hist.value_at_quantile(0.99) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_threads_and_fills_gaps() {
        let t = Timeline::default();
        let mut h = Timeline::new_second_histogram();
        h.record(2_000_000).unwrap();
        t.add(0, 1, 0, &h);
        t.add(0, 1, 1, &h);
        t.add(2, 1, 0, &h);
        let tl = t.finish(4);
        assert_eq!(tl.len(), 4);
        assert_eq!((tl[0].requests, tl[0].errors), (2, 1));
        assert_eq!(tl[1].requests, 0);
        assert!((tl[2].p99_us - 2000.0).abs() < 20.0);
    }

    #[test]
    fn so_far_counts_everything_and_shows_the_newest_second_before_the_current_one() {
        let t = Timeline::default();
        let mut h = Timeline::new_second_histogram();
        h.record(3_000_000).unwrap();
        t.add(0, 5, 1, &h);
        t.add(1, 7, 0, &h);
        t.add(2, 2, 0, &h);
        let (requests, errors, newest) = t.so_far(2);
        assert_eq!((requests, errors), (14, 1));
        let newest = newest.unwrap();
        assert_eq!((newest.t_s, newest.requests), (1, 7));
        assert!((newest.p99_us - 3000.0).abs() < 30.0);
        for s in 3..10 {
            t.add(s, 1, 0, &h);
        }
        assert_eq!(t.so_far(4).2.unwrap().t_s, 3, "closed seconds count too");
        assert!(t.so_far(0).2.is_none());
    }
}
