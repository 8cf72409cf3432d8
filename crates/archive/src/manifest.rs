//! The manifest of a suite archive (`cardguard-archive.json`, the archive's first member): what
//! was built (arch, suite package and binary, git revision, build profile) and the SHA-256 and
//! size of every other member.
//!
//! This file owns the manifest's format and the checksum function both sides use; it never reads
//! or writes an archive (`write.rs` and `unpack.rs` do).

use std::io::{self, Read};
use std::path::Path;

use platform_common::Arch;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The manifest's file name, inside the archive's top directory.
pub const MANIFEST_NAME: &str = "cardguard-archive.json";

/// The manifest format this build writes and reads.
pub const FORMAT: u32 = 1;

/// Where an archive keeps the kernel blobs: `kernels/<arch>/<name>.so` beside the binary (what
/// `platform_common::kernel::blob_dir` looks for beside the running executable).
pub const KERNELS_DIR: &str = platform_common::kernel::INSTALLED_KERNEL_DIR;

/// Where an archive keeps `libsim_acl.so`.
pub const SIM_ACL_LIB: &str = "lib/libsim_acl.so";

/// The suite an archive holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// The cargo package it was built from.
    pub package: String,
    /// Its binary: a member at the top of the archive.
    pub binary: String,
}

/// One member of the archive besides the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Its path under the archive's top directory (`/`-separated, relative, no `..`).
    pub path: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Whether it is unpacked executable (mode 0755, else 0644).
    pub executable: bool,
}

/// `cardguard-archive.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The arch the suite was archived for (its kernel blobs are this arch's).
    pub arch: Arch,
    /// The suite.
    pub suite: SuiteInfo,
    /// `git rev-parse HEAD` of the checkout it was built in, when it was a git checkout.
    pub git_revision: Option<String>,
    /// Whether that checkout had uncommitted changes.
    pub git_dirty: Option<bool>,
    /// The cargo profile the binaries were built with (`release`, `dev`, ...).
    pub profile: String,
    /// When the archive was written (RFC 3339, UTC).
    pub created_at: String,
    /// Every other member, in archive order.
    pub members: Vec<Member>,
}

impl Manifest {
    /// The member named `path`.
    pub fn member(&self, path: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.path == path)
    }
}

/// SHA-256 of everything `r` yields, lowercase hex, and the byte count.
pub fn sha256_hex(mut r: impl Read) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex(&hasher.finalize()), total))
}

/// SHA-256 of the file at `path`.
pub fn sha256_file(path: &Path) -> io::Result<(String, u64)> {
    sha256_hex(std::fs::File::open(path)?)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_the_standard_one() {
        // FIPS 180-2 test vector.
        let (sum, n) = sha256_hex(&b"abc"[..]).unwrap();
        assert_eq!(
            sum,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(n, 3);
    }

    #[test]
    fn manifests_round_trip_and_refuse_unknown_fields() {
        let m = Manifest {
            format: FORMAT,
            arch: Arch::A2a3,
            suite: SuiteInfo {
                package: "runner".into(),
                binary: "cardguard-suite".into(),
            },
            git_revision: Some("abc".into()),
            git_dirty: Some(false),
            profile: "release".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            members: vec![Member {
                path: "cardguard-suite".into(),
                sha256: "00".into(),
                bytes: 1,
                executable: true,
            }],
        };
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<Manifest>(&text).unwrap(), m);
        assert!(m.member("cardguard-suite").is_some() && m.member("x").is_none());
        let extra = text.replacen('{', "{\"surprise\":1,", 1);
        assert!(serde_json::from_str::<Manifest>(&extra).is_err());
    }
}
