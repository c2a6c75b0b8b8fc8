//! `stampede_probe::lifeline` with real processes. Kept out of the crate's
//! unit tests, which read this process's own tree and must not see these
//! children.

use std::process::Command;
use std::time::{Duration, Instant};

use stampede_probe::lifeline::{alive, die_with_parent, Lineage};

fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

#[test]
fn a_child_that_left_the_group_is_remembered_and_reached() {
    // The shell starts a `sleep` in a session of its own, then waits.
    let mut child = Command::new("sh").args(["-c", "setsid sleep 30 & wait"]).spawn().unwrap();
    let root = child.id() as i32;
    let mut lineage = Lineage::new(root);
    assert!(wait_for(|| {
        lineage.refresh();
        lineage.living().len() >= 2
    }));
    let escaped: Vec<i32> = lineage.living().into_iter().filter(|p| *p != root).collect();
    assert!(!escaped.is_empty());
    lineage.signal(libc::SIGKILL);
    let _ = child.wait();
    assert!(wait_for(|| escaped.iter().all(|p| !alive(*p))), "{escaped:?} survived");
    assert!(lineage.living().is_empty());
}

#[test]
fn a_child_dies_with_the_thread_that_spawned_it() {
    let pid = std::thread::spawn(|| die_with_parent(&mut Command::new("sleep")).arg("30").spawn().unwrap().id() as i32)
        .join()
        .unwrap();
    // The spawning thread has exited: the kernel sends the child SIGKILL
    // (it stays a zombie until reaped below; `alive` counts a zombie as dead).
    assert!(wait_for(|| !alive(pid)), "pid {pid} outlived the thread that spawned it");
    // SAFETY: reaps our own child's zombie.
    unsafe {
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}
