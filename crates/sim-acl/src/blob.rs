//! Kernel binaries received as bytes (`rtRegisterAllKernel`), loaded through a memory file.
//!
//! CANN takes a device binary's bytes; the simulator's loader opens a shared object by path. This
//! file bridges the two: the bytes go into a `memfd` and the blob is loaded from
//! `/proc/self/fd/N` with the project's kernel loader. The dynamic loader knows a library by the
//! path it was opened with, so a descriptor number must never be reused while its blob is
//! loaded: each distinct binary is staged once per process and its descriptor and blob are kept
//! for the life of the process (the same bytes registered again reuse them, as the in-process
//! simulator's loads of one path share one library). This file never runs a kernel.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use platform_common::kernel::{KernelBlob, KernelError};
use rustix::fs::{memfd_create, MemfdFlags};

/// Why bytes could not become a kernel blob.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BlobError {
    /// The memory file could not be made or written.
    #[error("cannot stage the kernel binary in a memory file: {0}")]
    Stage(#[from] std::io::Error),
    /// The loader refused the bytes.
    #[error(transparent)]
    Load(#[from] KernelError),
}

/// One staged binary: its bytes, the open memory file and the blob loaded from it.
struct Staged {
    bytes: Vec<u8>,
    blob: KernelBlob,
    _file: File,
}

static STAGED: Mutex<Vec<Staged>> = Mutex::new(Vec::new());

/// The kernel blob of these bytes (loaded on first sight, then reused).
pub(crate) fn load(bytes: &[u8]) -> Result<KernelBlob, BlobError> {
    let mut staged = STAGED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = staged.iter().find(|s| s.bytes == bytes) {
        return Ok(s.blob.clone());
    }
    let fd = memfd_create("cardguard-kernel", MemfdFlags::CLOEXEC).map_err(std::io::Error::from)?;
    let mut file = File::from(fd);
    file.write_all(bytes)?;
    let path = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&file)
    ));
    let blob = KernelBlob::load(&path)?;
    staged.push(Staged {
        bytes: bytes.to_vec(),
        blob: blob.clone(),
        _file: file,
    });
    Ok(blob)
}
