//! `stampede report` and `stampede compare` through the real binary: the
//! HTML report, the exports, OpenMetrics, comparisons.

mod basics;
mod compare;
mod openmetrics;
