//! Unpacking a suite archive and checking it: every member's SHA-256 and size against the
//! manifest, every listed member present, nothing unlisted, no path outside the archive's top
//! directory, nothing but regular files (and directories).
//!
//! The archive is read as a stream: the manifest comes first, so each later member is checked as
//! it is written out, and a member that cannot be read (a truncated or corrupt file) is named: the
//! one being read, or the one the manifest lists next when a header itself is cut. Files are
//! created with `O_EXCL` under a fresh directory, so nothing is written through a symlink. This
//! file never runs what it unpacked (`launch.rs` does).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::manifest::{hex, Manifest, FORMAT, MANIFEST_NAME};

/// The largest manifest read (a manifest lists a few dozen members).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// What is wrong with one member of an archive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberProblem {
    /// Its bytes do not have the manifest's checksum.
    #[error("checksum mismatch (the manifest says sha256 {expected}, the member has {found})")]
    Checksum {
        /// The manifest's.
        expected: String,
        /// The member's.
        found: String,
    },
    /// Its size is not the manifest's.
    #[error("size mismatch (the manifest says {expected} bytes, the member has {found})")]
    Size {
        /// The manifest's.
        expected: u64,
        /// The member's.
        found: u64,
    },
    /// Listed in the manifest, absent from the archive.
    #[error("is missing from the archive")]
    Missing,
    /// In the archive, not listed in the manifest.
    #[error("is not listed in the manifest")]
    Unlisted,
    /// In the archive twice.
    #[error("appears twice")]
    Duplicate,
    /// It cannot be read: the archive is truncated or corrupt there.
    #[error("cannot be read, the archive is truncated or corrupt: {0}")]
    Unreadable(String),
    /// A symlink, hard link, device or the like.
    #[error("is not a regular file")]
    NotAFile,
    /// An absolute path, a `..`, or a path outside the archive's top directory.
    #[error("has a path outside the archive's top directory")]
    UnsafePath,
    /// The manifest cannot be read or is not one this build understands.
    #[error("is not a valid manifest: {0}")]
    BadManifest(String),
}

/// An archive that cannot be unpacked.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The archive file cannot be opened.
    #[error("cannot open the archive {path}: {source}")]
    Open {
        /// The archive.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A member is bad (named).
    #[error("archive {archive}: member {member}: {problem}")]
    Member {
        /// The archive.
        archive: PathBuf,
        /// The member's path (under the top directory).
        member: String,
        /// What is wrong with it.
        problem: MemberProblem,
    },
    /// The archive has no member at all, or is not a zstd-compressed tar.
    #[error("archive {archive}: {reason}")]
    NotAnArchive {
        /// The archive.
        archive: PathBuf,
        /// Why.
        reason: String,
    },
    /// An unpacked file cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl ArchiveError {
    /// The member named by the error, when it names one.
    pub fn member(&self) -> Option<&str> {
        match self {
            Self::Member { member, .. } => Some(member),
            _ => None,
        }
    }
}

/// A checked, unpacked archive.
#[derive(Debug, Clone)]
pub struct Unpacked {
    /// The archive's top directory, unpacked.
    pub root: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

impl Unpacked {
    /// The suite binary.
    pub fn binary(&self) -> PathBuf {
        self.root.join(&self.manifest.suite.binary)
    }
}

/// Unpacks `archive` into `into` (an empty directory of this user's) and checks every member;
/// on an error, whatever was unpacked is left for the caller to remove with `into`.
pub fn unpack(archive: &Path, into: &Path) -> Result<Unpacked, ArchiveError> {
    let file = File::open(archive).map_err(|source| ArchiveError::Open {
        path: archive.to_owned(),
        source,
    })?;
    let not_archive = |reason: String| ArchiveError::NotAnArchive {
        archive: archive.to_owned(),
        reason,
    };
    let bad = |member: &str, problem| ArchiveError::Member {
        archive: archive.to_owned(),
        member: member.to_owned(),
        problem,
    };
    let decoder = zstd::stream::read::Decoder::new(file)
        .map_err(|e| not_archive(format!("not zstd-compressed: {e}")))?;
    let mut tar = tar::Archive::new(decoder);
    let mut entries = tar
        .entries()
        .map_err(|e| not_archive(format!("not a tar archive: {e}")))?;

    // The first member: `<top>/cardguard-archive.json`.
    let mut first = match entries.next() {
        None => {
            return Err(not_archive(
                "it has no members (empty or cut before its first)".into(),
            ))
        }
        Some(Err(e)) => return Err(bad(MANIFEST_NAME, MemberProblem::Unreadable(e.to_string()))),
        Some(Ok(entry)) => entry,
    };
    let first_path = entry_path(&first).ok_or_else(|| bad(MANIFEST_NAME, MemberProblem::UnsafePath))?;
    let top = match first_path.as_slice() {
        [top, name] if name == MANIFEST_NAME => top.clone(),
        _ => {
            return Err(bad(
                MANIFEST_NAME,
                MemberProblem::BadManifest(format!(
                    "the first member is {:?}, not <dir>/{MANIFEST_NAME}",
                    first_path.join("/")
                )),
            ))
        }
    };
    let (manifest, text) = read_manifest(&mut first).map_err(|p| bad(MANIFEST_NAME, p))?;
    drop(first);
    let root = into.join(&top);
    create_dir(&root)?;
    write_file(&root.join(MANIFEST_NAME), false, |f| f.write_all(&text))?;

    let mut seen: HashSet<String> = HashSet::new();
    loop {
        // The member the manifest lists next: what a cut header would have been.
        let next_listed = manifest
            .members
            .iter()
            .find(|m| !seen.contains(&m.path))
            .map_or("(after the last listed member)", |m| m.path.as_str());
        let mut entry = match entries.next() {
            None => break,
            Some(Err(e)) => return Err(bad(next_listed, MemberProblem::Unreadable(e.to_string()))),
            Some(Ok(entry)) => entry,
        };
        let parts = entry_path(&entry).ok_or_else(|| bad(&lossy_path(&entry), MemberProblem::UnsafePath))?;
        if parts.first() != Some(&top) || parts.len() < 2 {
            return Err(bad(&parts.join("/"), MemberProblem::UnsafePath));
        }
        let rel = parts[1..].join("/");
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            create_dir(&root.join(&rel))?;
            continue;
        }
        if !kind.is_file() {
            return Err(bad(&rel, MemberProblem::NotAFile));
        }
        let Some(member) = manifest.member(&rel) else {
            return Err(bad(&rel, MemberProblem::Unlisted));
        };
        if !seen.insert(rel.clone()) {
            return Err(bad(&rel, MemberProblem::Duplicate));
        }
        let path = root.join(&rel);
        if let Some(parent) = path.parent() {
            create_dir(parent)?;
        }
        let mut hasher = Sha256::new();
        let mut copied = 0u64;
        let mut read_error = None;
        write_file(&path, member.executable, |f| {
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = match entry.read(&mut buf) {
                    Ok(0) => return Ok(()),
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        read_error = Some(e.to_string());
                        return Ok(());
                    }
                };
                hasher.update(&buf[..n]);
                copied += n as u64;
                f.write_all(&buf[..n])?;
            }
        })?;
        let declared = entry.header().size().unwrap_or(copied);
        if let Some(e) = read_error {
            return Err(bad(&rel, MemberProblem::Unreadable(e)));
        }
        if copied < declared {
            return Err(bad(
                &rel,
                MemberProblem::Unreadable(format!("{copied} of its {declared} bytes are there")),
            ));
        }
        if copied != member.bytes {
            return Err(bad(
                &rel,
                MemberProblem::Size {
                    expected: member.bytes,
                    found: copied,
                },
            ));
        }
        let found = hex(&hasher.finalize());
        if found != member.sha256 {
            return Err(bad(
                &rel,
                MemberProblem::Checksum {
                    expected: member.sha256.clone(),
                    found,
                },
            ));
        }
    }
    if let Some(missing) = manifest.members.iter().find(|m| !seen.contains(&m.path)) {
        return Err(bad(&missing.path, MemberProblem::Missing));
    }
    Ok(Unpacked { root, manifest })
}

/// Reads and checks the manifest member: the manifest and its bytes.
fn read_manifest(entry: &mut impl Read) -> Result<(Manifest, Vec<u8>), MemberProblem> {
    let mut text = Vec::new();
    entry
        .take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| MemberProblem::Unreadable(e.to_string()))?;
    if text.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(MemberProblem::BadManifest(format!(
            "over {MAX_MANIFEST_BYTES} bytes"
        )));
    }
    let manifest: Manifest =
        serde_json::from_slice(&text).map_err(|e| MemberProblem::BadManifest(e.to_string()))?;
    if manifest.format != FORMAT {
        return Err(MemberProblem::BadManifest(format!(
            "format {} (this build reads format {FORMAT})",
            manifest.format
        )));
    }
    for m in &manifest.members {
        if member_parts(&m.path).is_none() || m.path == MANIFEST_NAME {
            return Err(MemberProblem::BadManifest(format!(
                "it lists a bad path {:?}",
                m.path
            )));
        }
    }
    match manifest.member(&manifest.suite.binary) {
        Some(b) if b.executable && !manifest.suite.binary.contains('/') => Ok((manifest, text)),
        _ => Err(MemberProblem::BadManifest(format!(
            "its suite binary {:?} is not an executable member at the top",
            manifest.suite.binary
        ))),
    }
}

/// A member path's components, when every one is a plain name.
fn member_parts(path: &str) -> Option<Vec<String>> {
    let parts: Vec<String> = Path::new(path)
        .components()
        .map(|c| match c {
            Component::Normal(n) => n.to_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then_some(parts)
}

fn entry_path<R: Read>(entry: &tar::Entry<'_, R>) -> Option<Vec<String>> {
    let path = entry.path().ok()?;
    member_parts(path.to_str()?)
}

fn lossy_path<R: Read>(entry: &tar::Entry<'_, R>) -> String {
    String::from_utf8_lossy(&entry.path_bytes()).into_owned()
}

fn create_dir(dir: &Path) -> Result<(), ArchiveError> {
    std::fs::create_dir_all(dir).map_err(|source| ArchiveError::Write {
        path: dir.to_owned(),
        source,
    })
}

/// Creates `path` (never an existing file, never through a symlink) and fills it with `fill`.
fn write_file(
    path: &Path,
    executable: bool,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), ArchiveError> {
    let write_error = |source| ArchiveError::Write {
        path: path.to_owned(),
        source,
    };
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o755 } else { 0o644 })
        .open(path)
        .map_err(write_error)?;
    fill(&mut f).map_err(write_error)
}
