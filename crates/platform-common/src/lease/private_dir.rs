//! Opening state files (lock files, sim card files) without following symlinks planted by
//! someone else.
//!
//! A state directory is created when missing, then opened itself with `O_NOFOLLOW|O_DIRECTORY`
//! and checked through that descriptor: a directory, owned by this process's effective user. Its
//! files are opened relative to that descriptor (`openat`) with `O_NOFOLLOW`, so a symlink put in
//! place of the directory or of a file is refused instead of followed (and truncated), and the
//! directory cannot be swapped between the check and the open. This file never locks or writes.

use std::fs::{DirBuilder, File};
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use rustix::fs::{fstat, open, openat, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Why a state directory or file was refused.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// It could not be created, opened or inspected.
    Io(std::io::Error),
    /// It exists but is not safe to use; the reason names what is wrong.
    Unsafe(String),
}

impl From<Errno> for Refusal {
    fn from(e: Errno) -> Self {
        match e {
            Errno::LOOP => Self::Unsafe("is a symbolic link (refused: it is never followed)".to_owned()),
            e => Self::Io(e.into()),
        }
    }
}

/// Creates `dir` when missing (missing parents too; the last component with `mode`), then opens
/// and checks it: a directory, not a symlink, owned by this process's effective user.
pub(crate) fn open_private_dir(dir: &Path, mode: u32) -> Result<OwnedFd, Refusal> {
    DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
        .map_err(|e| match e.raw_os_error().map(Errno::from_raw_os_error) {
            Some(Errno::EXIST | Errno::NOTDIR) => Refusal::Unsafe("is not a directory".to_owned()),
            _ => Refusal::Io(e),
        })?;
    let fd = open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        // Linux reports a symlink opened with O_DIRECTORY|O_NOFOLLOW as ENOTDIR: say which it is.
        Errno::NOTDIR | Errno::LOOP if is_symlink(dir) => Refusal::from(Errno::LOOP),
        Errno::NOTDIR => Refusal::Unsafe("is not a directory".to_owned()),
        e => Refusal::from(e),
    })?;
    let st = fstat(&fd).map_err(Refusal::from)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(Refusal::Unsafe("is not a directory".to_owned()));
    }
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me {
        return Err(Refusal::Unsafe(format!(
            "is owned by uid {}, not by this user (uid {me})",
            st.st_uid
        )));
    }
    Ok(fd)
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Opens (creating with `mode` when missing) the regular file `name` in the directory `dir` for
/// reading and writing, never following a symlink; the file is close-on-exec.
pub(crate) fn open_state_file(dir: &OwnedFd, name: &str, mode: u32) -> Result<File, Refusal> {
    let fd = openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(|e| match e {
        Errno::ISDIR => Refusal::Unsafe("is not a regular file".to_owned()),
        e => Refusal::from(e),
    })?;
    let st = fstat(&fd).map_err(Refusal::from)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(Refusal::Unsafe("is not a regular file".to_owned()));
    }
    Ok(File::from(fd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsafe_reason(r: Result<impl std::fmt::Debug, Refusal>) -> String {
        match r {
            Err(Refusal::Unsafe(reason)) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn symlinks_in_place_of_the_dir_or_a_file_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        let dir = open_private_dir(&real, 0o700).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(unsafe_reason(open_private_dir(&link, 0o700)).contains("symbolic link"));

        let victim = tmp.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        std::os::unix::fs::symlink(&victim, real.join("card-0.lock")).unwrap();
        assert!(unsafe_reason(open_state_file(&dir, "card-0.lock", 0o600)).contains("symbolic link"));
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");

        std::fs::create_dir(real.join("sub")).unwrap();
        assert!(unsafe_reason(open_state_file(&dir, "sub", 0o600)).contains("not a regular file"));
        let file_as_dir = tmp.path().join("victim");
        assert!(unsafe_reason(open_private_dir(&file_as_dir, 0o700)).contains("not a directory"));
    }
}
