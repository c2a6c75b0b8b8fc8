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
//! - [`Tag`] marks a command's environment, which every descendant inherits
//!   whatever it does with its process group, session or parent: a server
//!   that daemonizes (fork, `setsid`, fork, the middle process exits) has a
//!   grandchild no walk from the server reaches, since its parent died before
//!   anyone looked; the tag finds it in `/proc/<pid>/environ`. With
//!   [`become_subreaper`], such an orphan is re-parented to `stampede`
//!   rather than to init, and [`Lineage::reap`] collects it once killed.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The environment variable that carries a [`Tag`].
pub const TAG_VAR: &str = "STAMPEDE_TAG";

/// A mark in the environment of one started command and so of everything it
/// starts: `STAMPEDE_TAG=<stampede's pid>-<n>`, unique on the machine while
/// this `stampede` lives. A process that clears its environment escapes it
/// (none of the servers or tools we know does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag(String);

impl Tag {
    pub fn new() -> Tag {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        Tag(format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)))
    }

    /// Puts the tag in `cmd`'s environment.
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env(TAG_VAR, &self.0)
    }

    /// The living processes that carry the tag (a zombie's environment cannot
    /// be read, and it has died already).
    pub fn members(&self) -> Vec<i32> {
        let needle = format!("{TAG_VAR}={}\0", self.0).into_bytes();
        let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.windows(needle.len()).any(|w| w == needle.as_slice()))
            })
            .collect()
    }
}

impl Default for Tag {
    fn default() -> Tag {
        Tag::new()
    }
}

/// Makes this process the reaper of its descendants' orphans
/// (`PR_SET_CHILD_SUBREAPER`): a server's daemonized grandchild is then
/// re-parented here rather than to init, stays among our descendants, and
/// its exit status comes back to us ([`Lineage::reap`]). Returns whether the
/// kernel agreed.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl with integer arguments only changes this process's flag.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0 }
}

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
    /// The root command's environment mark, when it was given one.
    tag: Option<Tag>,
}

impl Lineage {
    pub fn new(root: i32) -> Lineage {
        let mut lineage = Lineage { root, seen: BTreeSet::new(), tag: None };
        lineage.refresh();
        lineage
    }

    /// A lineage that also finds the processes carrying `tag` (see
    /// [`Lineage::refresh_tagged`]).
    pub fn tagged(root: i32, tag: Tag) -> Lineage {
        let mut lineage = Lineage { root, seen: BTreeSet::new(), tag: Some(tag) };
        lineage.refresh();
        lineage
    }

    /// Adds the descendants the root has now and every process carrying the
    /// tag; returns those only the tag found (they had left the root's tree:
    /// a daemonized child), each with its command line.
    pub fn refresh_tagged(&mut self) -> Vec<(i32, String)> {
        self.refresh();
        let Some(tag) = &self.tag else { return Vec::new() };
        let tree: BTreeSet<i32> = crate::tree::descendants(self.root).into_iter().collect();
        let mut strays = Vec::new();
        for pid in tag.members() {
            if let Some(start) = start_time(pid) {
                self.seen.insert((pid, start));
                if !tree.contains(&pid) {
                    strays.push((pid, command_line(pid)));
                }
            }
        }
        strays
    }

    /// Collects the exit status of every remembered process (but the root,
    /// whose owner waits for it) that is a dead child of this process: an
    /// orphan re-parented here ([`become_subreaper`]) stays a zombie until then.
    pub fn reap(&self) {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        for (pid, _) in self.seen.iter().filter(|(pid, _)| *pid != self.root) {
            if parent(*pid) == Some(me) {
                // SAFETY: waits only for a child of ours found just above,
                // without blocking; a null status pointer is allowed.
                unsafe {
                    libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG);
                }
            }
        }
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

/// Field 4 of /proc/<pid>/stat: the parent's pid.
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()
}

/// `/proc/<pid>/cmdline` with spaces between the arguments (empty when gone).
pub fn command_line(pid: i32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ").trim_end().to_string()
}

/// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_tag_finds_a_daemonized_grandchild_the_tree_walk_cannot() {
        let tag = Tag::new();
        let mut cmd = Command::new("sh");
        // The middle shell starts a session leader and exits at once: the
        // sleeper's parent is gone before anyone looked.
        cmd.args(["-c", "setsid sh -c 'sleep 30 & exit 0'; exec sleep 30"]);
        tag.apply(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let root = child.id() as i32;
        let mut lineage = Lineage::tagged(root, tag.clone());
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut strays = Vec::new();
        while strays.is_empty() && Instant::now() < deadline {
            strays = lineage.refresh_tagged();
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(strays.len(), 1, "{strays:?}");
        assert!(strays[0].1.contains("sleep 30"), "{strays:?}");
        assert!(!crate::tree::descendants(root).contains(&strays[0].0), "outside the root's tree");
        assert!(lineage.signal(libc::SIGKILL) >= 2);
        let _ = child.wait();
        let gone = (0..500).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            lineage.reap();
            tag.members().is_empty()
        });
        assert!(gone, "left: {:?}", tag.members());
        assert!(Tag::new() != tag, "each tag is its own");
    }
}
