//! Processes `stampede` starts must not outlive it. Two mechanisms, because
//! neither is enough alone:
//!
//! - [`die_with_parent`] asks the kernel to SIGKILL a child when its parent
//!   goes (`PR_SET_PDEATHSIG`), so even a SIGKILL of `stampede run` takes the
//!   server, the build, the load generator and perf with it. The kernel sends
//!   it when the *thread* that forked the child exits, so spawn from a thread
//!   that lives as long as the child should (`stampede run` spawns from its
//!   main thread). It is not inherited by the child's own children: a server
//!   that forks workers relies on them noticing their parent's death (Node's
//!   cluster, gunicorn and uvicorn do), or on [`Lineage`] at a normal stop.
//! - [`Lineage`] remembers every descendant of a process seen so far (walked
//!   from `/proc`), so a stop reaches children that left the process group
//!   with `setsid()`, which a signal to the group never would.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes `cmd`'s process get SIGKILL when the thread spawning it exits
/// (see the module's note). If the parent is already gone by the time the
/// child has asked (the race between fork and prctl), the child exits at once.
pub fn die_with_parent(cmd: &mut Command) -> &mut Command {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, _exit); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        })
    }
}

/// True while `pid` exists and is not a zombie (a zombie has already died;
/// only its exit status waits to be read).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()).is_some_and(|state| state != "Z")
        }
        Err(_) => false,
    }
}

/// Every process seen below a root: a child that called `setsid()` left the
/// root's process group but is still its descendant until its parent dies,
/// and once seen here it is remembered (with its start time, so a recycled
/// pid is never mistaken for it).
#[derive(Debug, Default)]
pub struct Lineage {
    root: i32,
    /// (pid, start time in clock ticks since boot).
    seen: BTreeSet<(i32, u64)>,
}

impl Lineage {
    pub fn new(root: i32) -> Lineage {
        let mut lineage = Lineage { root, seen: BTreeSet::new() };
        lineage.refresh();
        lineage
    }

    /// Adds the descendants the root has now.
    pub fn refresh(&mut self) {
        for pid in crate::tree::descendants(self.root) {
            if let Some(start) = start_time(pid) {
                self.seen.insert((pid, start));
            }
        }
    }

    /// The remembered processes that are still the same processes and alive.
    pub fn living(&self) -> Vec<i32> {
        self.seen
            .iter()
            .filter(|(pid, start)| start_time(*pid) == Some(*start) && alive(*pid))
            .map(|(pid, _)| *pid)
            .collect()
    }

    /// Sends `signal` to every living remembered process; returns how many.
    pub fn signal(&self, signal: i32) -> usize {
        let living = self.living();
        for pid in &living {
            // SAFETY: kill has no memory preconditions; the pid was checked
            // against its start time just above.
            unsafe {
                libc::kill(*pid, signal);
            }
        }
        living.len()
    }
}

/// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(19)?.parse().ok()
}
