//! The open files of one sampled process tree and its cumulative counters.
//! Counters only grow: when a thread or process disappears its last reading is
//! moved into a "retired" total, so a worker that exits does not make the
//! tree's CPU time go backwards.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::microstate::{StateNanos, ThreadMicro};
use crate::proc_file::ProcFile;
use crate::proc_text;
use crate::tree;

/// A thread counts as working (serving requests) when it used a CPU within
/// this long: a pool thread parked on a futex for longer is idle, and its
/// futex time is not lock contention.
pub const WORKING_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// One interval of a tree's microstates: every thread's nanoseconds by
/// state, and those of the working threads (see [`WORKING_WINDOW`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Observed {
    pub nanos: StateNanos,
    pub threads: u64,
    pub working: StateNanos,
    pub working_threads: u64,
}

/// Cumulative counters of one thread, from its `stat`, `schedstat` and `status`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadReading {
    pub user_ticks: u64,
    pub sys_ticks: u64,
    pub exec_ns: u64,
    pub runqueue_wait_ns: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

impl ThreadReading {
    pub fn since(&self, base: &ThreadReading) -> ThreadReading {
        ThreadReading {
            user_ticks: self.user_ticks.saturating_sub(base.user_ticks),
            sys_ticks: self.sys_ticks.saturating_sub(base.sys_ticks),
            exec_ns: self.exec_ns.saturating_sub(base.exec_ns),
            runqueue_wait_ns: self.runqueue_wait_ns.saturating_sub(base.runqueue_wait_ns),
            ctx_voluntary: self.ctx_voluntary.saturating_sub(base.ctx_voluntary),
            ctx_involuntary: self.ctx_involuntary.saturating_sub(base.ctx_involuntary),
        }
    }

    /// Adds the scheduler counters; CPU ticks are taken per process instead,
    /// since a process's ticks include its exited threads.
    fn add_scheduling(&mut self, other: &ThreadReading) {
        self.exec_ns += other.exec_ns;
        self.runqueue_wait_ns += other.runqueue_wait_ns;
        self.ctx_voluntary += other.ctx_voluntary;
        self.ctx_involuntary += other.ctx_involuntary;
    }
}

/// Cumulative counters of a whole tree at one instant, plus its gauges.
/// `totals.user_ticks`/`sys_ticks` are the processes' (exited threads
/// included); the scheduler counters are summed over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeReading {
    pub totals: ThreadReading,
    pub rss_bytes: u64,
    pub threads: u64,
    pub processes: u64,
}

pub struct TrackedThread {
    pub tid: i32,
    pub name: String,
    stat: ProcFile,
    schedstat: ProcFile,
    status: ProcFile,
    /// The processes this thread forked (`children`), read at each rescan.
    children: Option<ProcFile>,
    pub last: ThreadReading,
    /// The thread's CPU time (`exec_ns`) when `stat` and `status` were last
    /// read: see [`TrackedThread::read`].
    detail_exec_ns: Option<u64>,
    /// Counters at the start of the measured phase (zero for a thread born later).
    pub baseline: Option<ThreadReading>,
    pub pid: i32,
    pub micro: ThreadMicro,
}

struct TrackedProcess {
    pid: i32,
    stat: ProcFile,
    threads: BTreeMap<i32, TrackedThread>,
    rss_bytes: u64,
    num_threads: u64,
    /// CPU ticks of the whole process, exited threads included.
    user_ticks: u64,
    sys_ticks: u64,
    /// The process's CPU-time clock (`clock_getcpuclockid`) and its reading
    /// when the threads were last read: see [`TrackedProcess::ran`].
    cpu_clock: Option<libc::clockid_t>,
    threads_read_at_ns: Option<u64>,
}

/// A process tree under observation.
pub struct TrackedTree {
    root: i32,
    processes: BTreeMap<i32, TrackedProcess>,
    /// Threads that have exited, with their last reading, for the thread table.
    pub retired_threads: Vec<TrackedThread>,
    retired: ThreadReading,
    retired_ticks: (u64, u64),
    page_size: u64,
    buf: Vec<u8>,
}

fn task_path(pid: i32, tid: i32, file: &str) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/task/{tid}/{file}"))
}

impl TrackedThread {
    /// Opens a thread's files and reads them all once, so a thread born
    /// between two detail reads (a second apart) has its name and counters
    /// from the start.
    fn open(pid: i32, tid: i32) -> Option<TrackedThread> {
        let mut thread = TrackedThread {
            tid,
            name: String::new(),
            stat: ProcFile::open(&task_path(pid, tid, "stat")).ok()?,
            schedstat: ProcFile::open(&task_path(pid, tid, "schedstat")).ok()?,
            status: ProcFile::open(&task_path(pid, tid, "status")).ok()?,
            children: ProcFile::open(&task_path(pid, tid, "children")).ok(),
            last: ThreadReading::default(),
            detail_exec_ns: None,
            baseline: None,
            pid,
            micro: ThreadMicro::new(&task_path(pid, tid, "syscall")),
        };
        thread.read(&mut Vec::new(), true).then_some(thread)
    }

    /// Reads the thread's counters; false when it is gone. The scheduler's
    /// runtime and run-queue wait are read every time (a 24-byte file); the
    /// tick counters and context switches only when `detail` is set, since
    /// `status` costs ten times as much to generate, and then only when the
    /// thread ran since they were last read: ticks are charged to a running
    /// thread and a context switch is one it makes or suffers while running,
    /// so neither moves while its runtime stands still (a parked pool of 31
    /// threads: 31 `stat` and 31 `status` reads a second saved). A name
    /// written to its `comm` by another thread shows once it runs.
    fn read(&mut self, buf: &mut Vec<u8>, detail: bool) -> bool {
        let Ok(text) = self.schedstat.read(buf) else {
            return false;
        };
        if let Some((exec_ns, runqueue_ns)) = proc_text::schedstat(text) {
            self.last.exec_ns = exec_ns;
            self.last.runqueue_wait_ns = runqueue_ns;
        }
        if !detail || self.detail_exec_ns == Some(self.last.exec_ns) {
            return true;
        }
        self.detail_exec_ns = Some(self.last.exec_ns);
        let Ok(text) = self.stat.read(buf) else {
            return false;
        };
        match proc_text::stat(text) {
            Some(stat) => {
                self.last.user_ticks = stat.utime_ticks;
                self.last.sys_ticks = stat.stime_ticks;
                // Refreshed every time: a thread opened before an exec (taskset,
                // sh) is renamed by it.
                if self.name.as_bytes() != stat.comm {
                    self.name = String::from_utf8_lossy(stat.comm).into_owned();
                }
            }
            None => return false,
        }
        let Ok(text) = self.status.read(buf) else {
            return false;
        };
        let (voluntary, involuntary) = context_switches(text);
        self.last.ctx_voluntary = voluntary;
        self.last.ctx_involuntary = involuntary;
        true
    }
}

/// The two context-switch lines of a `status` file. (procfs's `Status` parses
/// all fifty fields into a map, 30 µs a thread; these two lines are all the
/// probe needs.)
fn context_switches(status: &[u8]) -> (u64, u64) {
    let text = String::from_utf8_lossy(status);
    let mut voluntary = 0;
    let mut involuntary = 0;
    for line in text.lines().rev() {
        if let Some(v) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
            involuntary = v.trim().parse().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("voluntary_ctxt_switches:") {
            voluntary = v.trim().parse().unwrap_or(0);
            break;
        }
    }
    (voluntary, involuntary)
}

impl TrackedTree {
    pub fn new(root: i32) -> TrackedTree {
        TrackedTree {
            root,
            processes: BTreeMap::new(),
            retired_threads: Vec::new(),
            retired: ThreadReading::default(),
            retired_ticks: (0, 0),
            page_size: procfs::page_size(),
            buf: Vec::with_capacity(4096),
        }
    }

    /// Re-discovers the tree's processes: new ones are opened (their counters
    /// count from zero, since they were born after the last scan), vanished
    /// ones retired. The walk reads the `children` file of every tracked
    /// thread through its open descriptor (one `pread` each), so only new
    /// processes cost directory reads and `open`s; a process born and gone
    /// between two rescans is never seen (its CPU is missing from the tree).
    pub fn rescan(&mut self) {
        let mut seen = BTreeSet::new();
        let mut queue = vec![self.root];
        while let Some(pid) = queue.pop() {
            if !seen.insert(pid) {
                continue;
            }
            let process = match self.processes.entry(pid) {
                Entry::Occupied(tracked) => tracked.into_mut(),
                Entry::Vacant(slot) => match TrackedProcess::open(pid) {
                    Some(process) => slot.insert(process),
                    None => continue,
                },
            };
            for thread in process.threads.values() {
                let Some(children) = thread.children.as_ref() else {
                    continue;
                };
                if let Ok(text) = children.read_records(&mut self.buf) {
                    let pids = text.split(|b| *b == b' ' || *b == b'\n');
                    queue.extend(pids.filter_map(|p| std::str::from_utf8(p).ok()?.parse::<i32>().ok()));
                }
            }
        }
        let gone: Vec<i32> = self.processes.keys().copied().filter(|p| !seen.contains(p)).collect();
        for pid in gone {
            self.retire_process(pid);
        }
    }

    fn retire_process(&mut self, pid: i32) {
        if let Some(process) = self.processes.remove(&pid) {
            self.retired_ticks.0 += process.user_ticks;
            self.retired_ticks.1 += process.sys_ticks;
            for (_, thread) in process.threads {
                self.retire_thread(thread);
            }
        }
    }

    fn retire_thread(&mut self, thread: TrackedThread) {
        self.retired.add_scheduling(&thread.last);
        self.retired_threads.push(thread);
    }

    /// Reads every process and thread of the tree and returns the totals
    /// (context switches and per-thread ticks refreshed only with `detail`).
    pub fn read(&mut self, detail: bool) -> TreeReading {
        let mut reading = TreeReading::default();
        let mut gone_processes = Vec::new();
        let mut gone_threads = Vec::new();
        for process in self.processes.values_mut() {
            let runtime_ns = process.runtime_ns();
            // When the process's CPU clock has not moved since it was last
            // read, none of its threads ran: its `stat` and every thread's
            // counters are as last read. (Its RSS can still shrink under
            // reclaim: refreshed at the next detail read, a second later.)
            let idle = !detail && runtime_ns.is_some() && runtime_ns == process.threads_read_at_ns;
            if !idle {
                let Ok(text) = process.stat.read(&mut self.buf) else {
                    gone_processes.push(process.pid);
                    continue;
                };
                match proc_text::stat(text) {
                    Some(stat) => {
                        process.rss_bytes = stat.rss_pages * self.page_size;
                        process.num_threads = stat.num_threads;
                        process.user_ticks = stat.utime_ticks;
                        process.sys_ticks = stat.stime_ticks;
                    }
                    None => {
                        gone_processes.push(process.pid);
                        continue;
                    }
                }
                if process.num_threads != process.threads.len() as u64 {
                    gone_threads.extend(process.rescan_threads());
                }
                process.threads_read_at_ns = runtime_ns;
                let mut dead = Vec::new();
                for thread in process.threads.values_mut() {
                    if !thread.read(&mut self.buf, detail) {
                        dead.push(thread.tid);
                    }
                }
                for tid in dead {
                    if let Some(thread) = process.threads.remove(&tid) {
                        gone_threads.push(thread);
                    }
                }
            }
            reading.rss_bytes += process.rss_bytes;
            reading.threads += process.threads.len() as u64;
            reading.processes += 1;
            for thread in process.threads.values() {
                reading.totals.add_scheduling(&thread.last);
            }
            reading.totals.user_ticks += process.user_ticks;
            reading.totals.sys_ticks += process.sys_ticks;
        }
        for thread in gone_threads {
            self.retire_thread(thread);
        }
        for pid in gone_processes {
            self.retire_process(pid);
        }
        reading.totals.add_scheduling(&self.retired);
        reading.totals.user_ticks += self.retired_ticks.0;
        reading.totals.sys_ticks += self.retired_ticks.1;
        reading
    }

    /// Accounts each live thread's microstates up to `at` (right after
    /// `read`, whose scheduler counters it uses) and returns the tree's
    /// nanoseconds by state over the interval, and the threads observed,
    /// all of them and the working ones apart.
    pub fn observe_microstates(&mut self, at: std::time::Instant) -> Observed {
        let mut observed = Observed::default();
        for process in self.processes.values_mut() {
            for thread in process.threads.values_mut() {
                let d = thread.micro.observe(at, thread.last.exec_ns, thread.last.runqueue_wait_ns, &mut self.buf);
                observed.nanos.add(&d);
                observed.threads += 1;
                if thread.micro.working(at, WORKING_WINDOW) {
                    observed.working.add(&d);
                    observed.working_threads += 1;
                }
            }
        }
        observed
    }

    /// Records every live thread's counters as its measured-phase baseline.
    pub fn mark_baseline(&mut self) {
        for process in self.processes.values_mut() {
            for thread in process.threads.values_mut() {
                thread.baseline = Some(thread.last);
                thread.micro.mark_baseline();
            }
        }
        self.retired_threads.clear();
    }

    /// Every thread seen since the baseline, live ones first.
    pub fn threads(&self) -> impl Iterator<Item = &TrackedThread> {
        self.processes.values().flat_map(|p| p.threads.values()).chain(self.retired_threads.iter())
    }

    pub fn is_empty(&self) -> bool {
        self.processes.is_empty()
    }
}

/// The CPU-time clock of another process (Linux allows reading any
/// process's, unlike its threads').
fn cpu_clock(pid: i32) -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid place for the one clockid it writes.
    (unsafe { libc::clock_getcpuclockid(pid, &mut clock) } == 0).then_some(clock)
}

impl TrackedProcess {
    /// The process's CPU time in nanoseconds, all its threads (exited ones
    /// included), in one system call without text. When it has not moved
    /// since the process was last read, no thread ran, so its `stat` and its
    /// threads' `schedstat` (and `syscall`) reads are skipped: for an idle
    /// process (a cluster's master, a database's idle backends, a parked
    /// pool) a sample then costs this one system call instead of one per
    /// thread and one for the process. What that can delay, not
    /// lose: run-queue wait the kernel books on a thread that waited but was
    /// moved off its queue without running (migration, a priority change) is
    /// counted at the next sample some thread of the process runs.
    fn runtime_ns(&self) -> Option<u64> {
        let clock = self.cpu_clock?;
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid place for the one timespec it writes.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            return None;
        }
        Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }

    /// Opens a process and its threads; `None` when it is gone (or has no
    /// threads left to read, a zombie).
    fn open(pid: i32) -> Option<TrackedProcess> {
        let stat = ProcFile::open(&PathBuf::from(format!("/proc/{pid}/stat"))).ok()?;
        let mut process = TrackedProcess {
            pid,
            stat,
            threads: BTreeMap::new(),
            rss_bytes: 0,
            num_threads: 0,
            user_ticks: 0,
            sys_ticks: 0,
            cpu_clock: cpu_clock(pid),
            threads_read_at_ns: None,
        };
        process.rescan_threads();
        (!process.threads.is_empty()).then_some(process)
    }

    /// Opens threads that appeared; returns the ones that vanished.
    fn rescan_threads(&mut self) -> Vec<TrackedThread> {
        let tids = tree::threads_of(self.pid);
        let gone: Vec<i32> = self.threads.keys().copied().filter(|t| !tids.contains(t)).collect();
        let mut vanished = Vec::new();
        for tid in gone {
            if let Some(thread) = self.threads.remove(&tid) {
                vanished.push(thread);
            }
        }
        for tid in tids {
            if self.threads.contains_key(&tid) {
                continue;
            }
            if let Some(mut thread) = TrackedThread::open(self.pid, tid) {
                // Born after the baseline (if one was taken): counts from zero.
                thread.baseline = None;
                self.threads.insert(tid, thread);
            }
        }
        self.num_threads = self.threads.len() as u64;
        vanished
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_switches_come_from_their_two_lines() {
        let status = b"Name:\tx\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(context_switches(status), (120, 7));
        assert_eq!(context_switches(b"Name:\tx\n"), (0, 0));
    }

    #[test]
    fn rescan_finds_grandchildren_through_open_children_files_and_retires_the_dead() {
        use std::process::Command;
        use std::time::{Duration, Instant};
        let mut child = Command::new("sh").args(["-c", "sleep 30 & sleep 30 & wait"]).spawn().unwrap();
        let root = child.id() as i32;
        let mut tree = TrackedTree::new(root);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            tree.rescan();
            if tree.processes.len() >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let found: Vec<i32> = tree.processes.keys().copied().collect();
        let _ = Command::new("pkill").args(["-P", &root.to_string()]).status();
        let mut gone = false;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone && Instant::now() < deadline {
            tree.rescan();
            gone = tree.processes.len() == 1;
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found.len(), 3, "expected sh and two sleeps, got {found:?}");
        assert!(found.contains(&root));
        assert!(gone, "the killed sleeps are still tracked: {:?}", tree.processes.keys().collect::<Vec<_>>());
        assert!(tree.retired_threads.len() >= 2);
    }

    #[test]
    fn an_idle_process_is_read_through_its_cpu_clock_alone() {
        use std::process::Command;
        use std::time::{Duration, Instant};
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        // Wait until it is asleep, past its start-up.
        let stat = format!("/proc/{}/stat", child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let text = std::fs::read_to_string(&stat).unwrap_or_default();
            if text.contains("(sleep) S") {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut tree = TrackedTree::new(child.id() as i32);
        tree.rescan();
        let first = tree.read(true);
        let second = tree.read(false);
        let third = tree.read(false);
        let process = tree.processes.values().next().map(|p| (p.threads_read_at_ns, p.runtime_ns()));
        let _ = child.kill();
        let _ = child.wait();
        // `sleep` does not run between the reads: its clock stands still, the
        // threads are not re-read, and the reading is the same.
        let (read_at, now) = process.expect("the sleep is tracked");
        assert!(now.is_some(), "another process's CPU clock is readable");
        assert_eq!(read_at, now);
        assert_eq!((second.totals, second.threads), (third.totals, third.threads));
        assert_eq!(first.totals.exec_ns, third.totals.exec_ns);
        assert_eq!(third.threads, 1);
    }

    #[test]
    fn this_process_reads_as_a_live_tree() {
        let mut tree = TrackedTree::new(std::process::id() as i32);
        tree.rescan();
        let reading = tree.read(true);
        // At least this process: other tests of this binary spawn children.
        assert!(reading.processes >= 1, "{reading:?}");
        assert!(reading.threads >= 1);
        assert!(reading.rss_bytes > 1024 * 1024, "{reading:?}");
        assert!(reading.totals.ctx_voluntary + reading.totals.ctx_involuntary > 0, "{reading:?}");
    }
}
