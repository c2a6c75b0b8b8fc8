//! Finds every descendant of a process through the `children` file of each of
//! its threads (a child is listed under the thread that forked it), so cluster
//! workers, uvicorn workers and anything started by `sh -c` are sampled with
//! the process the orchestrator spawned.

use std::collections::BTreeSet;
use std::fs;

/// The thread ids of `pid`, from `/proc/<pid>/task`. Empty when it is gone.
pub fn threads_of(pid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<i32> = dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok()).collect();
    tids.sort_unstable();
    tids
}

/// `root` and all its descendants that exist now, root first.
pub fn descendants(root: i32) -> Vec<i32> {
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        if !seen.insert(pid) {
            continue;
        }
        let tids = threads_of(pid);
        if tids.is_empty() {
            continue;
        }
        order.push(pid);
        for tid in tids {
            let Ok(text) = fs::read_to_string(format!("/proc/{pid}/task/{tid}/children")) else {
                continue;
            };
            queue.extend(text.split_whitespace().filter_map(|c| c.parse::<i32>().ok()));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    #[test]
    fn finds_grandchildren_started_by_a_shell() {
        let mut child = Command::new("sh").args(["-c", "sleep 30 & sleep 30 & wait"]).spawn().unwrap();
        let root = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut found = Vec::new();
        while Instant::now() < deadline {
            found = descendants(root);
            if found.len() >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = Command::new("pkill").args(["-P", &root.to_string()]).status();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found.len(), 3, "expected sh and two sleeps, got {found:?}");
        assert_eq!(found[0], root);
    }

    #[test]
    fn a_missing_process_has_no_descendants() {
        assert!(descendants(i32::MAX - 7).is_empty());
    }
}
