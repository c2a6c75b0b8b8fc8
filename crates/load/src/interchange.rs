//! HdrHistogram's interchange encoding, read back and merged: one
//! implementation in `stampede-schema`, re-exported for the engine's callers.

pub use stampede_schema::histogram::{decode_histogram, merge_histograms, HistogramError};
