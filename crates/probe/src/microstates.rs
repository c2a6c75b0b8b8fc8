//! Folds the per-thread microstate accounts of a tree (see `microstate`)
//! into the `stampede.run/1` microstates document: seconds and shares per
//! thread over the measured phase, per thread group, and the tree's time
//! series for `explain`'s slow windows.

use std::time::{Duration, Instant};

use stampede_schema::microstates::{Microstates, StateSample, StateSeconds, ThreadStates};

use crate::microstate::StateNanos;
use crate::summary::seconds_since;
use crate::tracked::{Observed, TrackedTree};

/// The tree's nanoseconds by state over one probe interval.
#[derive(Debug, Clone, Copy)]
pub struct RawMicro {
    pub at: Instant,
    pub wall_s: f64,
    pub observed: Observed,
}

/// Seconds by state, CPU split into user and system by `user_share`.
fn seconds(n: &StateNanos, user_share: f64) -> StateSeconds {
    let s = |ns: u64| ns as f64 / 1e9;
    StateSeconds {
        usr_s: s(n.cpu_ns) * user_share,
        sys_s: s(n.cpu_ns) * (1.0 - user_share),
        lat_s: s(n.lat_ns),
        lck_s: s(n.lck_ns),
        io_s: s(n.io_ns),
        slp_s: s(n.slp_ns),
    }
}

/// The user share of CPU from tick counts (1 when there were none).
fn user_share(user_ticks: u64, sys_ticks: u64) -> f64 {
    let all = user_ticks + sys_ticks;
    if all == 0 {
        1.0
    } else {
        user_ticks as f64 / all as f64
    }
}

pub fn summarize(tree: &TrackedTree, raw: &[RawMicro], t0: Option<Instant>, interval: Duration) -> Microstates {
    let mut threads = Vec::new();
    let mut unclassified = 0;
    let (mut user_ticks, mut sys_ticks) = (0, 0);
    for thread in tree.threads() {
        let (nanos, blocked_samples) = thread.micro.measured();
        if nanos == StateNanos::default() {
            continue;
        }
        if !thread.micro.classifies() {
            unclassified += 1;
        }
        let ticks = match &thread.baseline {
            Some(base) => thread.last.since(base),
            None => thread.last,
        };
        user_ticks += ticks.user_ticks;
        sys_ticks += ticks.sys_ticks;
        threads.push(ThreadStates {
            pid: thread.pid,
            tid: thread.tid,
            name: thread.name.clone(),
            seconds: seconds(&nanos, user_share(ticks.user_ticks, ticks.sys_ticks)),
            blocked_samples,
            ..ThreadStates::default()
        });
    }
    let tree_user = user_share(user_ticks, sys_ticks);
    let origin = t0.or_else(|| raw.first().map(|r| r.at));
    let samples = raw
        .iter()
        .map(|r| StateSample {
            t_s: origin.map_or(0.0, |o| seconds_since(o, r.at)),
            wall_s: r.wall_s,
            threads: r.observed.threads,
            seconds: seconds(&r.observed.nanos, tree_user),
            working_threads: r.observed.working_threads,
            working: seconds(&r.observed.working, tree_user),
        })
        .collect();
    let mut notes = Vec::new();
    if unclassified > 0 {
        notes.push(format!(
            "{unclassified} thread(s) had an unreadable /proc/…/syscall (another user's process?): their blocked time is all SLP"
        ));
    }
    Microstates::from_threads(interval.as_secs_f64() * 1e3, threads, samples, notes)
}
