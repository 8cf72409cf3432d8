//! Holder records: who holds a card, for the next caller's refusal message.
//!
//! A record is a file of its own beside the lock file, one per card and user:
//! `card-N.holder-<uid>`, owned by that user, 0644, replaced whole (temp file with an
//! unpredictable name, then a rename) by the holder while it holds the card's lock. Why not in
//! the lock file: in a shared lock dir the lock file belongs to whoever created it first, and
//! another user can lock it (read-only) but not write it; a lock file made 0666 would let anyone
//! forge or blank every record. A record file can be written only by its owner, so the uid a
//! refusal names is the file's owner, not a claim in its text, and in a sticky dir nobody else can
//! replace it. The current holder's record is the newest (by start time) of the card's records:
//! older ones are left by holders that were killed (a holder that lets go removes its own record
//! before it unlocks). An empty, garbled or missing record is tolerated: the holder is then
//! unknown, never a crash. This file never locks anything.

use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{fstat, openat, renameat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::driver::DeviceId;

/// Bytes of a record read at most (a record is a few short lines).
const MAX_RECORD: u64 = 4096;
/// Mode of a record file.
const RECORD_MODE: u32 = 0o644;

/// What a card's holder records say of its holder. Every field is optional: an empty or garbled
/// record (a holder killed mid-write, another tool's file) is tolerated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HolderRecord {
    /// The holder's user: the owner of its record file.
    pub uid: Option<u32>,
    /// The holder's process id.
    pub pid: Option<u32>,
    /// The host it runs on.
    pub host: Option<String>,
    /// When it took the lease (milliseconds since the epoch).
    pub started_ms: Option<u64>,
    /// Its run id.
    pub run_id: Option<String>,
}

impl HolderRecord {
    /// The record of this process taking a lease for `run_id` now.
    pub(crate) fn mine(run_id: &str) -> Self {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Self {
            uid: Some(rustix::process::geteuid().as_raw()),
            pid: Some(std::process::id()),
            host: Some(rustix::system::uname().nodename().to_string_lossy().into_owned()),
            started_ms: Some(started),
            run_id: Some(run_id.to_owned()),
        }
    }

    pub(crate) fn parse(text: &str) -> Self {
        let mut rec = Self::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            let v = v.trim();
            let text = || Some(v.to_owned()).filter(|s| !s.is_empty());
            match k.trim() {
                "pid" => rec.pid = v.parse().ok(),
                "host" => rec.host = text(),
                "started_ms" => rec.started_ms = v.parse().ok(),
                "run_id" => rec.run_id = text(),
                _ => {}
            }
        }
        rec
    }

    pub(crate) fn render(&self) -> String {
        format!(
            "uid={}\npid={}\nhost={}\nstarted_ms={}\nrun_id={}\n",
            self.uid.unwrap_or(0),
            self.pid.unwrap_or(0),
            self.host.as_deref().unwrap_or(""),
            self.started_ms.unwrap_or(0),
            self.run_id.as_deref().unwrap_or("")
        )
    }
}

impl fmt::Display for HolderRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pid.is_none() && self.run_id.is_none() && self.started_ms.is_none() {
            f.write_str("an unknown holder (empty or unreadable record")?;
            if let Some(uid) = self.uid {
                write!(f, " of uid {uid}")?;
            }
            return f.write_str(")");
        }
        let unknown = || "?".to_owned();
        write!(
            f,
            "uid {} pid {}",
            self.uid.map_or_else(unknown, |u| u.to_string()),
            self.pid.map_or_else(unknown, |p| p.to_string())
        )?;
        if let Some(host) = &self.host {
            write!(f, " on {host}")?;
        }
        if let Some(ms) = self.started_ms {
            let at = UNIX_EPOCH + Duration::from_millis(ms);
            write!(f, " since {}", humantime::format_rfc3339_seconds(at))?;
        }
        if let Some(run) = &self.run_id {
            write!(f, " (run {run})")?;
        }
        Ok(())
    }
}

/// The record file name of `card` for user `uid`.
pub(crate) fn record_file_name(card: DeviceId, uid: u32) -> String {
    format!("card-{card}.holder-{uid}")
}

fn record_prefix(card: DeviceId) -> String {
    format!("card-{card}.holder-")
}

/// Writes `rec` as this user's record of `card` in the lock dir `dir` (temp file, then rename).
pub(crate) fn write(
    dir: &OwnedFd,
    dir_path: &std::path::Path,
    card: DeviceId,
    rec: &HolderRecord,
) -> std::io::Result<()> {
    let uid = rustix::process::geteuid().as_raw();
    replace_file(
        dir,
        dir_path,
        &record_file_name(card, uid),
        rec.render().as_bytes(),
    )
}

/// Replaces the file `name` of the lock dir `dir` whole with `bytes` (mode 0644): a temp file
/// with an unpredictable name, opened `O_EXCL|O_NOFOLLOW` relative to the dir, then a rename, so
/// a reader sees the old file or the new one, never a part. Holder and health records use it.
pub(crate) fn replace_file(
    dir: &OwnedFd,
    dir_path: &std::path::Path,
    name: &str,
    bytes: &[u8],
) -> std::io::Result<()> {
    let (file, temp) = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .disable_cleanup(true)
        .make_in(dir_path, |p| {
            openat(
                dir,
                p.file_name().unwrap_or_default(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(RECORD_MODE),
            )
            .map(File::from)
            .map_err(std::io::Error::from)
        })?
        .into_parts();
    let temp_name = temp.file_name().map(ToOwned::to_owned).unwrap_or_default();
    let written = rustix::fs::fchmod(&file, Mode::from_raw_mode(RECORD_MODE))
        .map_err(std::io::Error::from)
        .and_then(|()| (&file).write_all(bytes))
        .and_then(|()| renameat(dir, &temp_name, dir, name).map_err(std::io::Error::from));
    if written.is_err() {
        let _ = unlinkat(dir, &temp_name, AtFlags::empty());
    }
    written
}

/// Removes this user's record of `card` (a holder letting go, before it unlocks).
pub(crate) fn remove(dir: &OwnedFd, card: DeviceId) {
    let name = record_file_name(card, rustix::process::geteuid().as_raw());
    match unlinkat(dir, name.as_str(), AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => tracing::debug!(card, error = %e, "cannot remove the holder record"),
    }
}

/// The current holder of `card` as its records in `dir` say: the newest readable one.
pub(crate) fn current(dir: &OwnedFd, card: DeviceId) -> HolderRecord {
    let prefix = record_prefix(card);
    let Ok(mut entries) = Dir::read_from(dir) else {
        return HolderRecord::default();
    };
    let mut best: Option<HolderRecord> = None;
    while let Some(Ok(entry)) = entries.read() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().ok().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if !rest.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(rec) = read_one(dir, name) else {
            continue;
        };
        if best.as_ref().map_or(true, |b| rec.started_ms > b.started_ms) {
            best = Some(rec);
        }
    }
    best.unwrap_or_default()
}

/// One record file, its uid taken from the file's owner.
fn read_one(dir: &OwnedFd, name: &std::ffi::CStr) -> Option<HolderRecord> {
    let (bytes, uid) = read_small(dir, name, MAX_RECORD)?;
    let mut rec = HolderRecord::parse(&String::from_utf8_lossy(&bytes));
    rec.uid = Some(uid);
    Some(rec)
}

/// At most `max` bytes of the regular file `name` of the dir `dir` (never through a symlink) and
/// the uid of its owner; `None` when it cannot be read or is not a regular file.
pub(crate) fn read_small(dir: &OwnedFd, name: &std::ffi::CStr, max: u64) -> Option<(Vec<u8>, u32)> {
    let fd = openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    File::from(fd).take(max).read_to_end(&mut bytes).ok()?;
    Some((bytes, st.st_uid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_reads_as_the_refusal_says_it() {
        let rec = HolderRecord {
            uid: Some(1001),
            pid: Some(4242),
            host: Some("node7".to_owned()),
            started_ms: Some(1_790_000_000_123),
            run_id: Some("20260922-run".to_owned()),
        };
        let mut back = HolderRecord::parse(&rec.render());
        assert_eq!(back.uid, None, "the uid is the file's owner, never the text's");
        back.uid = rec.uid;
        assert_eq!(back, rec);
        assert_eq!(
            rec.to_string(),
            "uid 1001 pid 4242 on node7 since 2026-09-21T14:13:20Z (run 20260922-run)"
        );
        let blank = HolderRecord {
            uid: Some(7),
            ..HolderRecord::default()
        };
        assert_eq!(
            blank.to_string(),
            "an unknown holder (empty or unreadable record of uid 7)"
        );
        assert_eq!(
            HolderRecord::parse("\u{fffd}garbage=\n=pid=x"),
            HolderRecord::default()
        );
    }
}
