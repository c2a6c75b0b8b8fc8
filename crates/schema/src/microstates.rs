//! Thread microstates, the Linux counterpart of Solaris `prstat -mLc`: for
//! each thread of the server's process tree, the share of its wall time in
//! user CPU (USR), system CPU (SYS), waiting for a CPU (LAT), blocked on a
//! futex (LCK: locks, condition variables, parking), blocked in a read/write
//! call (IO) and any other sleep (SLP). The probe measures them
//! (stampede-probe's `microstate` module), a run stores them under
//! `server.microstates`, and the terminal table, the report and `explain`
//! read this one declaration. docs/results.md says how each share is derived
//! and how exact it is.

use serde::{Deserialize, Serialize};

/// Percentages of a thread's (or a group's) observed wall time; they add up to 100.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StateShares {
    /// On a CPU in user mode.
    pub usr_pct: f64,
    /// On a CPU in the kernel.
    pub sys_pct: f64,
    /// Runnable, waiting on a run queue for a CPU (prstat's LAT).
    pub lat_pct: f64,
    /// Blocked in `futex`: a contended lock, a condition variable, a parked thread.
    pub lck_pct: f64,
    /// Blocked in a read/write-family or file-sync system call.
    pub io_pct: f64,
    /// Any other sleep: epoll/poll/select, nanosleep, accept, wait…
    pub slp_pct: f64,
}

/// Seconds in each state, the sums shares are made from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StateSeconds {
    pub usr_s: f64,
    pub sys_s: f64,
    pub lat_s: f64,
    pub lck_s: f64,
    pub io_s: f64,
    pub slp_s: f64,
}

impl StateSeconds {
    pub fn total_s(&self) -> f64 {
        self.usr_s + self.sys_s + self.lat_s + self.lck_s + self.io_s + self.slp_s
    }

    pub fn add(&mut self, other: &StateSeconds) {
        self.usr_s += other.usr_s;
        self.sys_s += other.sys_s;
        self.lat_s += other.lat_s;
        self.lck_s += other.lck_s;
        self.io_s += other.io_s;
        self.slp_s += other.slp_s;
    }

    /// The seconds as percentages of their sum (all zero when nothing was observed).
    pub fn shares(&self) -> StateShares {
        let total = self.total_s();
        if total <= 0.0 {
            return StateShares::default();
        }
        let pct = |s: f64| s / total * 100.0;
        StateShares {
            usr_pct: pct(self.usr_s),
            sys_pct: pct(self.sys_s),
            lat_pct: pct(self.lat_s),
            lck_pct: pct(self.lck_s),
            io_pct: pct(self.io_s),
            slp_pct: pct(self.slp_s),
        }
    }
}

/// One thread over the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThreadStates {
    pub pid: i32,
    pub tid: i32,
    pub name: String,
    /// The thread's group: its name with each run of digits replaced by `*`.
    pub group: String,
    pub seconds: StateSeconds,
    pub shares: StateShares,
    /// Samples that found the thread blocked: the blocked split (LCK/IO/SLP)
    /// rests on them, so few samples mean a rough split.
    pub blocked_samples: u64,
}

/// Threads of one name pattern together (`netty-worker-*`): their seconds
/// summed, so the shares are of the group's thread-seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupStates {
    pub group: String,
    pub threads: u64,
    pub seconds: StateSeconds,
    pub shares: StateShares,
}

/// The whole tree between two probe samples: thread-seconds in each state,
/// summed over threads (so LCK seconds per wall second is how many threads
/// were blocked on futexes on average).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StateSample {
    /// End of the interval, seconds since the measured phase began (negative during warmup).
    pub t_s: f64,
    pub wall_s: f64,
    pub threads: u64,
    pub seconds: StateSeconds,
    /// Threads that used a CPU within the last second (the ones serving
    /// requests, not pool threads parked all along).
    pub working_threads: u64,
    /// The working threads' seconds: their LCK is lock contention, where the
    /// tree's also holds idle threads parked on futexes.
    pub working: StateSeconds,
}

/// A run's microstates (`server.microstates` in results.json).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Microstates {
    /// The probe's sampling interval: blocked threads were classified this often.
    pub interval_ms: f64,
    /// Per thread, the busiest first (USR + SYS + LAT share, descending).
    pub threads: Vec<ThreadStates>,
    /// Per thread group, the busiest first.
    pub groups: Vec<GroupStates>,
    /// The tree's time series (warmup included, with negative `t_s`).
    pub samples: Vec<StateSample>,
    /// Caveats: threads whose blocked calls could not be read, say.
    pub notes: Vec<String>,
}

/// The group a thread belongs to: its name with each run of digits replaced
/// by `*`, so `netty-worker-12` and `netty-worker-3` are `netty-worker-*`.
pub fn thread_group(name: &str) -> String {
    let mut group = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                group.push('*');
            }
            in_digits = true;
        } else {
            group.push(c);
            in_digits = false;
        }
    }
    group
}

/// Busiest first, as `prstat` sorts: by the share on or waiting for a CPU
/// (USR + SYS + LAT), then the least asleep, then by name. Not by the
/// blocked shares alone: a pool's idle threads park on futexes too (LCK
/// 100%) and would hide the workers that serve the requests.
fn busiest_first(a: (&StateShares, &str), b: (&StateShares, &str)) -> std::cmp::Ordering {
    let busy = |s: &StateShares| s.usr_pct + s.sys_pct + s.lat_pct;
    busy(b.0).total_cmp(&busy(a.0)).then_with(|| a.0.slp_pct.total_cmp(&b.0.slp_pct)).then_with(|| a.1.cmp(b.1))
}

impl Microstates {
    /// Builds the document from per-thread seconds: shares, groups and order.
    pub fn from_threads(
        interval_ms: f64,
        mut threads: Vec<ThreadStates>,
        samples: Vec<StateSample>,
        notes: Vec<String>,
    ) -> Microstates {
        let mut groups: Vec<GroupStates> = Vec::new();
        for thread in &mut threads {
            thread.group = thread_group(&thread.name);
            thread.shares = thread.seconds.shares();
            match groups.iter_mut().find(|g| g.group == thread.group) {
                Some(group) => {
                    group.threads += 1;
                    group.seconds.add(&thread.seconds);
                }
                None => groups.push(GroupStates {
                    group: thread.group.clone(),
                    threads: 1,
                    seconds: thread.seconds,
                    shares: StateShares::default(),
                }),
            }
        }
        for group in &mut groups {
            group.shares = group.seconds.shares();
        }
        threads.sort_by(|a, b| busiest_first((&a.shares, &a.name), (&b.shares, &b.name)).then(a.tid.cmp(&b.tid)));
        groups.sort_by(|a, b| busiest_first((&a.shares, &a.group), (&b.shares, &b.group)));
        Microstates { interval_ms, threads, groups, samples, notes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_runs_become_one_star() {
        assert_eq!(thread_group("netty-worker-12"), "netty-worker-*");
        assert_eq!(thread_group("GC Thread#0"), "GC Thread#*");
        assert_eq!(thread_group("C2 CompilerThre"), "C* CompilerThre");
        assert_eq!(thread_group("main"), "main");
    }

    #[test]
    fn threads_are_grouped_and_shares_add_up() {
        let thread = |tid, name: &str, lck_s, slp_s| ThreadStates {
            tid,
            name: name.into(),
            seconds: StateSeconds { usr_s: 1.0, lck_s, slp_s, ..StateSeconds::default() },
            ..ThreadStates::default()
        };
        let m = Microstates::from_threads(
            100.0,
            vec![thread(1, "main", 0.0, 9.0), thread(2, "worker-1", 9.0, 0.0), thread(3, "worker-2", 7.0, 2.0)],
            Vec::new(),
            Vec::new(),
        );
        assert_eq!(m.groups[0].group, "worker-*");
        assert_eq!(m.groups[0].threads, 2);
        assert!((m.groups[0].shares.lck_pct - 80.0).abs() < 1e-9, "{:?}", m.groups[0]);
        assert_eq!(m.threads.iter().map(|t| t.tid).collect::<Vec<_>>(), [2, 3, 1]);
        let s = m.threads[2].shares;
        assert!((s.usr_pct + s.sys_pct + s.lat_pct + s.lck_pct + s.io_pct + s.slp_pct - 100.0).abs() < 1e-9);
        let back: Microstates = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }
}
