//! Opening a lock dir under the rules of the lock model, opening its lock files, and holding the
//! dir itself for a run ([`LockDirHold`]).
//!
//! Rules (see the `lease` module docs for why): the lock dir is never a symlink; when others can
//! write to it, it must have the sticky bit (as `/var/lock` and `/tmp`), so nobody can delete or
//! swap another user's lock file; a dir of another user is used only when it is shared in that
//! way; its parent is owned by root or this user and, when others can write to it, is sticky too,
//! so nobody can swap the lock dir. A missing lock dir is created as shared as its parent: in a
//! sticky world-writable parent (`/var/lock`, `/tmp`) with mode 1777, elsewhere 0700, the mode
//! set explicitly whatever the umask. Lock files are created once with 0644, never renamed or
//! deleted, and opened relative to the checked dir descriptor with `O_NOFOLLOW`: read-write when
//! this user may, read-only otherwise (another user's lock file; `flock` works on a read-only
//! descriptor). This file never writes a holder record (`record.rs`) and never takes a card's
//! lock (`lock.rs`).

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use rustix::fs::{
    fchmod, flock, fstat, mkdirat, open, openat, statat, AtFlags, FileType, FlockOperation, Mode, OFlags,
    Stat,
};
use rustix::io::Errno;

use super::config::{lock_file_name, LeaseConfig};
use super::error::{LeaseError, LockDirRule};
use crate::driver::DeviceId;

/// Permission bits that let group or others write.
pub(crate) const WRITABLE_BY_OTHERS: u32 = 0o022;
/// The sticky bit: in such a dir only a file's owner (or the dir's, or root) may unlink it.
pub(crate) const STICKY: u32 = 0o1000;
/// Mode of a lock file.
const LOCK_FILE_MODE: u32 = 0o644;

/// An opened and checked lock dir.
#[derive(Debug)]
pub(crate) struct LockDir {
    pub(crate) fd: OwnedFd,
    pub(crate) path: PathBuf,
}

pub(crate) fn mode_of(st: &Stat) -> u32 {
    st.st_mode & 0o7777
}

/// Whether others may write to a dir of `mode` only under the sticky bit (or not at all).
pub(crate) fn shared(mode: u32) -> bool {
    mode & WRITABLE_BY_OTHERS != 0 && mode & STICKY != 0
}

fn io(path: &Path, e: impl Into<std::io::Error>) -> LeaseError {
    LeaseError::Io {
        path: path.to_owned(),
        source: e.into(),
    }
}

fn rule(path: &Path, rule: LockDirRule) -> LeaseError {
    LeaseError::LockDir {
        path: path.to_owned(),
        rule,
    }
}

impl LockDir {
    /// Opens the lock dir of `cfg`, creating it (and missing parents, 0700) when missing, and
    /// checks it and its parent against the rules.
    pub(crate) fn open(cfg: &LeaseConfig) -> Result<Self, LeaseError> {
        let path = cfg.dir.as_path();
        let name = path
            .file_name()
            .ok_or_else(|| rule(path, LockDirRule::NotADirectory))?;
        let parent_path = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !parent_path.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent_path)
                .map_err(|e| io(parent_path, e))?;
        }
        // The parent may be reached through symlinks (`/var/lock` is one); the lock dir may not.
        let parent = open(
            parent_path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io(parent_path, e))?;
        let pst = fstat(&parent).map_err(|e| io(parent_path, e))?;
        let me = rustix::process::geteuid().as_raw();
        if pst.st_uid != 0 && pst.st_uid != me {
            return Err(rule(
                path,
                LockDirRule::ParentOwner {
                    parent: parent_path.to_owned(),
                    uid: pst.st_uid,
                    me,
                },
            ));
        }
        let pmode = mode_of(&pst);
        if pmode & WRITABLE_BY_OTHERS != 0 && pmode & STICKY == 0 {
            return Err(rule(
                path,
                LockDirRule::ParentWritableWithoutSticky {
                    parent: parent_path.to_owned(),
                    mode: pmode,
                },
            ));
        }
        let want = if shared(pmode) { 0o1777 } else { 0o700 };
        // A parent this user may not write (a root-made lock dir's) refuses the mkdir: the dir
        // may exist all the same, so the open below decides.
        let (created, denied) = match mkdirat(&parent, name, Mode::from_raw_mode(0o700)) {
            Ok(()) => (true, None),
            Err(Errno::EXIST) => (false, None),
            Err(e @ (Errno::ACCESS | Errno::PERM | Errno::ROFS)) => (false, Some(e)),
            Err(e) => return Err(io(path, e)),
        };
        let fd = openat(
            &parent,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOENT if denied.is_some() => io(path, denied.unwrap_or(e)),
            // Linux reports a symlink opened with O_DIRECTORY|O_NOFOLLOW as ENOTDIR: say which.
            Errno::NOTDIR | Errno::LOOP => match statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                    rule(path, LockDirRule::Symlink)
                }
                _ => rule(path, LockDirRule::NotADirectory),
            },
            e => io(path, e),
        })?;
        if created {
            // Set explicitly: mkdir's mode went through the umask.
            fchmod(&fd, Mode::from_raw_mode(want)).map_err(|e| io(path, e))?;
            tracing::debug!(dir = %path.display(), mode = format_args!("{want:04o}"), "lock dir created");
        }
        let st = fstat(&fd).map_err(|e| io(path, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            return Err(rule(path, LockDirRule::NotADirectory));
        }
        let mode = mode_of(&st);
        if mode & WRITABLE_BY_OTHERS != 0 && mode & STICKY == 0 {
            return Err(rule(path, LockDirRule::WritableWithoutSticky { mode }));
        }
        if st.st_uid != me && !shared(mode) {
            return Err(rule(path, LockDirRule::OwnedByOther { uid: st.st_uid, me }));
        }
        Ok(Self {
            fd,
            path: path.to_owned(),
        })
    }

    /// Opens `card`'s lock file, creating it 0644 when missing; read-only when this user may not
    /// write it.
    pub(crate) fn open_lock_file(&self, card: DeviceId) -> Result<(File, PathBuf), LeaseError> {
        self.open_shared_file(&lock_file_name(card))
    }

    /// Opens the lock-model file `name` of the lock dir (a card's lock file, the queue's lock),
    /// creating it 0644 when missing; read-only when this user may not write it.
    pub(crate) fn open_shared_file(&self, name: &str) -> Result<(File, PathBuf), LeaseError> {
        let path = self.path.join(name);
        let base = OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = match openat(
            &self.fd,
            name,
            OFlags::RDWR | OFlags::CREATE | base,
            Mode::from_raw_mode(LOCK_FILE_MODE),
        ) {
            Err(denied @ (Errno::ACCESS | Errno::PERM)) => {
                match openat(&self.fd, name, OFlags::RDONLY | base, Mode::empty()) {
                    // Not there, and this user may not create it: say so.
                    Err(Errno::NOENT) => Err(denied),
                    other => other,
                }
            }
            other => other,
        }
        .map_err(|e| match e {
            Errno::LOOP => LeaseError::Unsafe {
                path: path.clone(),
                reason: "is a symbolic link (refused: it is never followed)".to_owned(),
            },
            Errno::ISDIR => LeaseError::Unsafe {
                path: path.clone(),
                reason: "is not a regular file".to_owned(),
            },
            e => io(&path, e),
        })?;
        let st = fstat(&fd).map_err(|e| io(&path, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(LeaseError::Unsafe {
                path,
                reason: "is not a regular file".to_owned(),
            });
        }
        // Ours and not 0644 (just created under a umask, or by an older version 0600): fix it, so
        // other users can open it for their flock.
        if st.st_uid == rustix::process::geteuid().as_raw() && st.st_mode & 0o7777 != LOCK_FILE_MODE {
            fchmod(&fd, Mode::from_raw_mode(LOCK_FILE_MODE)).map_err(|e| io(&path, e))?;
        }
        Ok((File::from(fd), path))
    }
}

/// A lock dir held with a shared `flock` for as long as the value lives (a run holds it from
/// before it takes its first lease until after it frees the last).
///
/// Why: a temp cleaner that deletes the lock dir or a lock file under a running run (a cron
/// `find -delete`, `systemd-tmpfiles --clean` on a dir under `/tmp`) would silently end exclusion:
/// the next run would create a new lock file and take a card that is still in use.
/// `systemd-tmpfiles` skips a directory that another process holds a `flock` on (it tries an
/// exclusive non-blocking lock first and leaves the dir alone when that fails), so holding the
/// dir shared keeps it and the lock files in it safe from that cleaner, while any number of runs
/// (each shared) use the dir at once. Cleaners that ignore locks are caught by
/// [`super::DeviceLease::verify`] instead.
#[derive(Debug)]
pub struct LockDirHold {
    dir: File,
    path: PathBuf,
}

impl LockDirHold {
    /// Opens the lock dir of `cfg` (creating and checking it as a lease does) and takes a shared
    /// `flock` on it, waiting while a cleaner holds it exclusively.
    pub fn acquire(cfg: &LeaseConfig) -> Result<Self, LeaseError> {
        let dir = LockDir::open(cfg)?;
        flock(&dir.fd, FlockOperation::LockShared).map_err(|e| io(&dir.path, e))?;
        tracing::debug!(dir = %dir.path.display(), "lock dir held (shared)");
        Ok(Self {
            dir: File::from(dir.fd),
            path: dir.path,
        })
    }

    /// The lock dir held.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LockDirHold {
    fn drop(&mut self) {
        // Explicit, so a copy of the descriptor in a child forked meanwhile does not keep it.
        let _ = flock(&self.dir, FlockOperation::Unlock);
    }
}
