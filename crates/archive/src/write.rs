//! Writing a suite archive: one zstd-compressed tar whose first member is the manifest, then
//! every file in the manifest's order, all under one top directory.
//!
//! The caller (`cargo xtask archive`) gathers the files and fills the manifest's description;
//! this file checksums them, fills in the members and writes the archive to a temporary file
//! beside the output, renamed into place when complete (a failed write leaves no half archive).
//! It never builds anything.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::manifest::{sha256_file, Manifest, Member, MANIFEST_NAME};

/// The zstd level: zstd's default, a few seconds for a release binary.
const ZSTD_LEVEL: i32 = 3;

/// One file to archive.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Its path in the archive, under the top directory (`kernels/a5/noop.so`).
    pub path: String,
    /// Where it is now.
    pub source: PathBuf,
    /// Unpacked with mode 0755 (else 0644).
    pub executable: bool,
}

/// An archive that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file to archive cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The archive cannot be written.
    #[error("cannot write the archive {path}: {source}")]
    Write {
        /// The archive.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Two files have the same path in the archive.
    #[error("two files would be {0} in the archive")]
    Duplicate(String),
}

/// Writes `files` under the top directory `top` into the archive `out`, with `manifest` (its
/// `members` replaced by the files' checksums, in order) as the first member; returns the
/// manifest written.
pub fn write_archive(
    out: &Path,
    top: &str,
    mut manifest: Manifest,
    files: &[SourceFile],
) -> Result<Manifest, WriteError> {
    manifest.members.clear();
    for f in files {
        if f.path == MANIFEST_NAME || manifest.member(&f.path).is_some() {
            return Err(WriteError::Duplicate(f.path.clone()));
        }
        let (sha256, bytes) = sha256_file(&f.source).map_err(|source| WriteError::Read {
            path: f.source.clone(),
            source,
        })?;
        manifest.members.push(Member {
            path: f.path.clone(),
            sha256,
            bytes,
            executable: f.executable,
        });
    }
    let write_error = |source| WriteError::Write {
        path: out.to_owned(),
        source,
    };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".cardguard-archive-")
        .tempfile_in(dir)
        .map_err(write_error)?;
    let encoder = zstd::stream::write::Encoder::new(tmp, ZSTD_LEVEL).map_err(write_error)?;
    let mut tar = tar::Builder::new(encoder);
    let mtime = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| write_error(io::Error::other(e)))?;
    let mut header = file_header(text.len() as u64, false, mtime);
    tar.append_data(&mut header, format!("{top}/{MANIFEST_NAME}"), &text[..])
        .map_err(write_error)?;
    for (f, member) in files.iter().zip(&manifest.members) {
        let file = File::open(&f.source).map_err(|source| WriteError::Read {
            path: f.source.clone(),
            source,
        })?;
        let mut header = file_header(member.bytes, f.executable, mtime);
        // At most the bytes checksummed (the header promised that size); a file that changed
        // since its checksum was taken fails the check when the archive is unpacked.
        tar.append_data(
            &mut header,
            format!("{top}/{}", f.path),
            io::Read::take(file, member.bytes),
        )
        .map_err(write_error)?;
    }
    let encoder = tar.into_inner().map_err(write_error)?;
    let mut tmp = encoder.finish().map_err(write_error)?;
    tmp.flush().map_err(write_error)?;
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(write_error)?;
    }
    tmp.persist(out).map_err(|e| write_error(e.error))?;
    Ok(manifest)
}

fn file_header(size: u64, executable: bool, mtime: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(size);
    h.set_mode(if executable { 0o755 } else { 0o644 });
    h.set_mtime(mtime);
    h
}
