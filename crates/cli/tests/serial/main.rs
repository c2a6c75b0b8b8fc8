//! The integration tests that need the machine to themselves, as one test
//! binary whose tests run one at a time, by topic (explain/, load/, run/).
//! They pin CPUs, judge latency against a computed truth, starve the
//! generator of CPU or read perf profiles of a slow window, so a
//! neighbouring test's load would be their noise. Each file was a binary of
//! its own, run alone; every binary cost CI a compilation of its support
//! modules and a link of its own. Here every test holds `machine()` for its
//! whole body, so they still run alone, in one binary. tests/it/ has the
//! tests that may share the machine.

mod explain;
mod load;
mod run;

use std::sync::{Mutex, MutexGuard};

/// The machine, held by each test of this binary for its whole body: the
/// test harness runs tests on several threads, and these must not overlap.
/// A test that panicked poisons the lock; the next one takes it all the same.
pub fn machine() -> MutexGuard<'static, ()> {
    static MACHINE: Mutex<()> = Mutex::new(());
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}
