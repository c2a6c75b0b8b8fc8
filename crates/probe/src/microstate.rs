//! Where a thread's wall time went, `prstat -mLc` style, from what Linux
//! exposes per thread. Two parts are exact counters: the scheduler's CPU time
//! and run-queue wait (`schedstat`, nanoseconds). The rest of the wall time the
//! thread was blocked, and *why* is sampled: at each probe sample a thread that
//! has not run since the previous one is still in the same blocking call (any
//! wake-up shows in `schedstat`), so it keeps its class without a read; one
//! that ran is classified by the system call it sits in now
//! (`/proc/<pid>/task/<tid>/syscall`). An interval's blocked time goes half to
//! the class seen at its start and half to the class seen at its end (all of
//! it when the thread slept through). The split is therefore exact for
//! threads that block for longer than the interval (a worker queued on a
//! lock) and a sample estimate for threads that block briefly and often; the
//! totals of CPU, LAT and blocked time are exact either way.

use std::path::Path;
use std::time::Instant;

use crate::proc_file::ProcFile;

/// Why a blocked thread is blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocked {
    /// `futex`/`futex_waitv`: a lock, a condition variable, a parked thread.
    Lock,
    /// A read/write-family or file-sync call.
    Io,
    /// Anything else: epoll/poll/select, nanosleep, accept, wait4…
    Sleep,
}

const LOCK_CALLS: &[libc::c_long] = &[libc::SYS_futex, libc::SYS_futex_waitv];

const IO_CALLS: &[libc::c_long] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_preadv2,
    libc::SYS_pwritev2,
    libc::SYS_recvfrom,
    libc::SYS_sendto,
    libc::SYS_recvmsg,
    libc::SYS_sendmsg,
    libc::SYS_recvmmsg,
    libc::SYS_sendmmsg,
    libc::SYS_sendfile,
    libc::SYS_splice,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_sync_file_range,
    libc::SYS_openat,
    libc::SYS_connect,
    libc::SYS_io_getevents,
    libc::SYS_io_uring_enter,
];

/// Classifies the text of a `syscall` file: `None` when the thread is not in
/// a system call (`running`, or `-1 …` for a thread preempted in user mode).
pub fn classify(syscall: &[u8]) -> Option<Blocked> {
    let first = syscall.split(|b| b.is_ascii_whitespace()).next()?;
    let number: libc::c_long = std::str::from_utf8(first).ok()?.parse().ok()?;
    if number < 0 {
        None
    } else if LOCK_CALLS.contains(&number) {
        Some(Blocked::Lock)
    } else if IO_CALLS.contains(&number) {
        Some(Blocked::Io)
    } else {
        Some(Blocked::Sleep)
    }
}

/// Nanoseconds in each state, cumulative (CPU not yet split into user and system).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StateNanos {
    pub cpu_ns: u64,
    pub lat_ns: u64,
    pub lck_ns: u64,
    pub io_ns: u64,
    pub slp_ns: u64,
}

impl StateNanos {
    pub fn since(&self, base: &StateNanos) -> StateNanos {
        StateNanos {
            cpu_ns: self.cpu_ns.saturating_sub(base.cpu_ns),
            lat_ns: self.lat_ns.saturating_sub(base.lat_ns),
            lck_ns: self.lck_ns.saturating_sub(base.lck_ns),
            io_ns: self.io_ns.saturating_sub(base.io_ns),
            slp_ns: self.slp_ns.saturating_sub(base.slp_ns),
        }
    }

    pub fn add(&mut self, other: &StateNanos) {
        self.cpu_ns += other.cpu_ns;
        self.lat_ns += other.lat_ns;
        self.lck_ns += other.lck_ns;
        self.io_ns += other.io_ns;
        self.slp_ns += other.slp_ns;
    }

    fn add_blocked(&mut self, class: Option<Blocked>, ns: u64) {
        match class {
            Some(Blocked::Lock) => self.lck_ns += ns,
            Some(Blocked::Io) => self.io_ns += ns,
            // Blocked between two samples that both found it running: short
            // sleeps whose call was never seen, counted as SLP.
            Some(Blocked::Sleep) | None => self.slp_ns += ns,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Observation {
    at: Instant,
    exec_ns: u64,
    runqueue_ns: u64,
    class: Option<Blocked>,
}

/// One thread's microstate accounting.
pub struct ThreadMicro {
    syscall: Option<ProcFile>,
    last: Option<Observation>,
    pub totals: StateNanos,
    /// Samples that found the thread in a blocking call.
    pub blocked_samples: u64,
    /// Totals at the start of the measured phase (none for a thread born later).
    pub baseline: Option<(StateNanos, u64)>,
    /// When the thread was last seen to have used a CPU.
    pub last_ran: Option<Instant>,
}

impl ThreadMicro {
    /// `syscall` is the thread's `/proc/<pid>/task/<tid>/syscall`; when it
    /// cannot be opened (another user's process) all blocked time is SLP.
    pub fn new(syscall: &Path) -> ThreadMicro {
        ThreadMicro {
            syscall: ProcFile::open(syscall).ok(),
            last: None,
            totals: StateNanos::default(),
            blocked_samples: 0,
            baseline: None,
            last_ran: None,
        }
    }

    /// True when blocked calls can be told apart for this thread.
    pub fn classifies(&self) -> bool {
        self.syscall.is_some()
    }

    /// Accounts the interval since the previous observation, given the
    /// thread's cumulative CPU and run-queue nanoseconds read at `at`, and
    /// returns the interval's nanoseconds by state.
    pub fn observe(&mut self, at: Instant, exec_ns: u64, runqueue_ns: u64, buf: &mut Vec<u8>) -> StateNanos {
        let ran = self.last.is_none_or(|l| exec_ns != l.exec_ns || runqueue_ns != l.runqueue_ns);
        let class = match self.last {
            // Still in the call it was in: nothing woke it.
            Some(last) if !ran && last.class.is_some() => last.class,
            _ => self.read_class(buf),
        };
        if class.is_some() {
            self.blocked_samples += 1;
        }
        let mut delta = StateNanos::default();
        if let Some(last) = self.last {
            let wall_ns = at.saturating_duration_since(last.at).as_nanos() as u64;
            delta.cpu_ns = exec_ns.saturating_sub(last.exec_ns);
            if delta.cpu_ns > 0 {
                self.last_ran = Some(at);
            }
            delta.lat_ns = runqueue_ns.saturating_sub(last.runqueue_ns);
            let blocked = wall_ns.saturating_sub(delta.cpu_ns + delta.lat_ns);
            match (last.class, class) {
                (a, b) if a == b => delta.add_blocked(a, blocked),
                (Some(a), None) => delta.add_blocked(Some(a), blocked),
                (None, Some(b)) => delta.add_blocked(Some(b), blocked),
                (a, b) => {
                    delta.add_blocked(a, blocked / 2);
                    delta.add_blocked(b, blocked - blocked / 2);
                }
            }
            self.totals.add(&delta);
        }
        self.last = Some(Observation { at, exec_ns, runqueue_ns, class });
        delta
    }

    fn read_class(&self, buf: &mut Vec<u8>) -> Option<Blocked> {
        let file = self.syscall.as_ref()?;
        classify(file.read(buf).ok()?)
    }

    /// True when the thread used a CPU within `window` before `at`: a thread
    /// that serves requests, as opposed to a pool thread parked all along.
    pub fn working(&self, at: Instant, window: std::time::Duration) -> bool {
        self.last_ran.is_some_and(|t| at.saturating_duration_since(t) <= window)
    }

    /// Marks the start of the measured phase.
    pub fn mark_baseline(&mut self) {
        self.baseline = Some((self.totals, self.blocked_samples));
    }

    /// Nanoseconds and blocked samples since the baseline (or since birth).
    pub fn measured(&self) -> (StateNanos, u64) {
        match self.baseline {
            Some((base, samples)) => (self.totals.since(&base), self.blocked_samples.saturating_sub(samples)),
            None => (self.totals, self.blocked_samples),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn syscall_texts_are_classified() {
        let futex = format!("{} 0x7f 0x80 0x2 0x0 0x0 0x0 0x7ffc 0x7f12\n", libc::SYS_futex);
        assert_eq!(classify(futex.as_bytes()), Some(Blocked::Lock));
        let read = format!("{} 0x3 0x7f 0x1000 0 0 0 0x7ffc 0x7f12\n", libc::SYS_read);
        assert_eq!(classify(read.as_bytes()), Some(Blocked::Io));
        let epoll = format!("{} 0x4 0x7f 0x400 0xffffffff 0 0 0x7ffc 0x7f12\n", libc::SYS_epoll_wait);
        assert_eq!(classify(epoll.as_bytes()), Some(Blocked::Sleep));
        assert_eq!(classify(b"running\n"), None);
        assert_eq!(classify(b"-1 0x7ffc 0x5581\n"), None);
        assert_eq!(classify(b""), None);
    }

    #[test]
    fn a_thread_that_slept_through_keeps_its_class_and_gets_all_the_time() {
        let mut micro = ThreadMicro::new(Path::new("/nonexistent"));
        let t0 = Instant::now();
        let mut buf = Vec::new();
        micro.observe(t0, 1_000, 0, &mut buf);
        // Pretend the first sample saw it in a futex (no file to read here).
        micro.last.as_mut().unwrap().class = Some(Blocked::Lock);
        let d = micro.observe(t0 + Duration::from_millis(100), 1_000, 0, &mut buf);
        assert_eq!(d.lck_ns, 100_000_000);
        assert_eq!((d.cpu_ns, d.slp_ns), (0, 0));
        // It ran 10 ms, waited 5 ms for a CPU, and was found running: the
        // blocked remainder goes to the class it was in before.
        let d = micro.observe(t0 + Duration::from_millis(200), 10_001_000, 5_000_000, &mut buf);
        assert_eq!((d.cpu_ns, d.lat_ns, d.lck_ns), (10_000_000, 5_000_000, 85_000_000));
        assert_eq!(micro.totals.lck_ns, 185_000_000);
    }
}
