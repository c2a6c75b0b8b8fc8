//! The process tree to profile. A server may fork workers (Node's cluster,
//! uvicorn's workers) or run under a shell, so `perf record -p` must be given
//! every process below the root, not just the root; `-a` (the whole machine)
//! would also sample the load generator. The tree is read from `/proc`.

use std::collections::BTreeMap;
use std::fs;

/// `pid` and every live descendant, root first then by pid.
pub fn descendants(pid: u32) -> Vec<u32> {
    let parents = parent_map();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        let mut children: Vec<u32> =
            parents.iter().filter(|(_, ppid)| **ppid == parent).map(|(child, _)| *child).collect();
        children.sort_unstable();
        tree.extend(children);
        i += 1;
    }
    tree
}

/// True while `/proc/<pid>` exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat_fields(&stat).map(|(state, _)| state != 'Z').unwrap_or(false),
        Err(_) => false,
    }
}

/// The process's name as the kernel knows it (`/proc/<pid>/comm`).
pub fn name(pid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string()).filter(|s| !s.is_empty())
}

/// The file name of the process's executable, when readable.
pub fn exe_name(pid: u32) -> Option<String> {
    let exe = fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    Some(exe.file_name()?.to_string_lossy().into_owned())
}

/// pid → parent pid of every process on the machine.
fn parent_map() -> BTreeMap<u32, u32> {
    let mut map = BTreeMap::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return map;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(stat) = fs::read_to_string(entry.path().join("stat")) {
            if let Some((_, ppid)) = stat_fields(&stat) {
                map.insert(pid, ppid);
            }
        }
    }
    map
}

/// State and parent pid from a `/proc/<pid>/stat` line. The command name is
/// in parentheses and may itself contain spaces or parentheses, so the fields
/// are read after the last `)`.
fn stat_fields(stat: &str) -> Option<(char, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_parentheses_in_the_name_is_read_after_the_last_one() {
        let line = "42 (a) b (c)) S 7 42 42 0 -1 4194560";
        assert_eq!(stat_fields(line), Some(('S', 7)));
    }

    #[test]
    fn own_process_is_alive_and_its_child_is_in_its_tree() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let me = std::process::id();
        let tree = descendants(me);
        let found = tree.contains(&child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(tree[0], me);
        assert!(found, "child {} not in {:?}", child.id(), tree);
        assert!(alive(me));
        assert!(!alive(child.id()));
    }
}
