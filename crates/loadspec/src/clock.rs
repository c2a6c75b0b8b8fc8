//! The clock a run's tools are aligned on: the load engine stamps its
//! timeline with it, `stampede run` its server events, and the probes and
//! runtime GC logs read the same clock.

/// CLOCK_MONOTONIC in nanoseconds, the clock the other tools of a run (probes,
/// runtime GC logs) can be aligned on. `Instant` uses the same clock on Linux
/// but does not expose its value.
pub fn monotonic_ns() -> u64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime writes into the struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
