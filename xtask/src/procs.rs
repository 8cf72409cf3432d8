//! Processes as `/proc` shows them, for the soak and chaos commands: parents, children, command
//! lines, and a SIGKILL that cannot hit a reused pid.
//!
//! This module owns reading `/proc/PID/stat` and `/proc/PID/cmdline` and the kill: a pidfd is
//! opened first and the process's parent checked afterwards, so the signal reaches the process that
//! was checked (a pid reused after an exit fails the check). It never decides what to kill.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};

/// The parent pid in a `/proc/PID/stat` line (the field after the `(comm)`, which may itself
/// hold spaces and parentheses).
pub fn stat_ppid(stat: &str) -> Option<u32> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

/// The parent of `pid`, while it lives.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    stat_ppid(&stat)
}

/// The NUL-separated command line of `pid`.
pub fn cmdline(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(Path::new("/proc").join(pid.to_string()).join("cmdline")).ok()
}

/// Every live process with its parent.
fn parents() -> HashMap<u32, u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect()
}

/// The children of `pid` now, by pid.
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut kids: Vec<u32> = parents()
        .into_iter()
        .filter(|&(_, parent)| parent == pid)
        .map(|(child, _)| child)
        .collect();
    kids.sort_unstable();
    kids
}

/// Every descendant of `root` now, each with its parent, parents before children.
pub fn descendants(root: u32) -> Vec<(u32, u32)> {
    let all = parents();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        let mut kids: Vec<u32> = all.iter().filter(|&(_, &pp)| pp == p).map(|(&c, _)| c).collect();
        kids.sort_unstable();
        for k in kids {
            out.push((k, p));
            frontier.push(k);
        }
    }
    out
}

/// A pidfd of `pid`, opened while `pid` is a child of `parent` (checked after the open, so the
/// pidfd is of the process that was checked, not of a later one with a reused pid).
fn pin_child(pid: u32, parent: u32) -> Option<OwnedFd> {
    let p = i32::try_from(pid).ok().and_then(Pid::from_raw)?;
    let fd = pidfd_open(p, PidfdFlags::empty()).ok()?;
    (parent_of(pid) == Some(parent)).then_some(fd)
}

/// SIGKILLs `pid` if it is (still) a child of `parent`; returns whether the signal was sent.
pub fn kill_if_child_of(pid: u32, parent: u32) -> bool {
    pin_child(pid, parent).is_some_and(|fd| pidfd_send_signal(&fd, Signal::Kill).is_ok())
}

/// SIGKILLs `root` (a child of this process) and every descendant it has now. Each process is
/// pinned by a pidfd while its parent is checked, before any signal is sent; so none escapes by
/// being reparented when its parent dies, and the root dies by the signal, not because a child it
/// waited for was killed first.
pub fn kill_tree(root: u32) {
    let mut pinned: Vec<OwnedFd> = pin_child(root, std::process::id()).into_iter().collect();
    pinned.extend(
        descendants(root)
            .into_iter()
            .filter_map(|(pid, parent)| pin_child(pid, parent)),
    );
    for fd in &pinned {
        let _ = pidfd_send_signal(fd, Signal::Kill);
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn stat_lines_are_read_as_proc_writes_them() {
        assert_eq!(stat_ppid("4242 (cardguard-suite) S 4000 4242 1 0"), Some(4000));
        assert_eq!(stat_ppid("7 (a (weird) name) R 1 7 7 0"), Some(1));
        assert_eq!(stat_ppid("garbage"), None);
        assert_eq!(
            parent_of(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }

    #[test]
    fn a_tree_is_found_and_killed_whole() {
        use std::io::{BufRead, BufReader};

        use rustix::event::{poll, PollFd, PollFlags};

        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("never");
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // sh starts a grandchild that blocks for good opening a FIFO nobody writes, says its pid,
        // and waits for it.
        let script = format!("cat {} & echo $!; wait", fifo.display());
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let sh = child.id();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let cat: u32 = line.trim().parse().expect("the grandchild's pid");
        assert!(descendants(sh).contains(&(cat, sh)), "{:?}", descendants(sh));
        assert_eq!(children_of(sh), [cat]);
        assert!(
            !kill_if_child_of(cat, std::process::id()),
            "not this process's child"
        );
        let cat_fd = pidfd_open(Pid::from_raw(cat as i32).unwrap(), PidfdFlags::empty()).unwrap();
        kill_tree(sh);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(9));
        // The grandchild's pidfd becomes readable when it has exited.
        let mut fds = [PollFd::new(&cat_fd, PollFlags::IN)];
        assert_eq!(poll(&mut fds, 120_000).unwrap(), 1, "the grandchild survived");
    }
}
