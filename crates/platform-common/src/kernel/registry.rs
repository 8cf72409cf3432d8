//! The kernel registry: where a kernel's binary for a platform and an arch is, and loading it.
//!
//! Kernels are looked up by name in a list of roots, in order (a suite's own kernel dirs, the
//! built-in kernels' dir; `ONBOARD_KERNEL_DIR` before both when it is set), each holding one
//! directory per arch. What is looked for follows the platform ([`BinaryKind`]):
//!
//! - simulated cards run host blobs: `<root>/<arch>/<name>.so`;
//! - real cards take device binaries: an entry of `<root>/<arch>/manifest.json`
//!   (`{"kernels": {"<name>": {"file": "<path>", "block_dim": N, "num_args": N}}}`, the path
//!   relative to the manifest's directory), else `<root>/<arch>/<name>.o`, whose metadata then
//!   comes from the host blob of the same name (built from the same source). Behind
//!   `libsim_acl.so` (the simulator behind the CANN ABI) a kernel with no device binary falls back
//!   to its host blob, whose bytes that library runs.
//!
//! [`KernelRegistry::find`] only looks at files (the dispatcher asks it which cases have no
//! binary, so they are skipped before hand-out); [`KernelRegistry::load`] also loads (a lane
//! registers what it returns). This file never registers or runs a kernel.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::arch::Arch;

use super::blobs::{blob_path, built_blob_root, KERNEL_DIR_ENV};
use super::loader::{KernelBlob, KernelError, KernelMeta};

/// The extension of a device binary without a manifest entry (`<name>.o`).
pub const DEVICE_BINARY_EXTENSION: &str = "o";

/// The manifest of an arch's device binaries (`<root>/<arch>/manifest.json`).
pub const MANIFEST: &str = "manifest.json";

/// What kind of binary a platform runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryKind {
    /// Host blobs (`<name>.so`): the simulated card.
    HostBlob,
    /// Device binaries (a manifest entry or `<name>.o`): real cards. With `host_fallback`, a
    /// kernel without one uses its host blob (the driver is `libsim_acl.so`, which runs them).
    DeviceBinary {
        /// Whether a host blob stands in for a missing device binary.
        host_fallback: bool,
    },
}

/// Where a kernel's binary was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A host blob.
    HostBlob(PathBuf),
    /// A device binary and its metadata's source.
    DeviceBinary {
        /// The binary.
        path: PathBuf,
        /// The manifest entry's metadata, or `None` when the host blob of the same name gives it.
        meta: Option<ManifestMeta>,
    },
}

impl Found {
    /// The binary's path.
    pub fn path(&self) -> &Path {
        match self {
            Found::HostBlob(p) | Found::DeviceBinary { path: p, .. } => p,
        }
    }
}

/// What a lookup gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The binary.
    Found(Found),
    /// No binary of this kernel for the platform; why, for a skip reason.
    Missing(String),
}

/// A manifest entry's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ManifestMeta {
    /// The block dim the kernel is written for.
    pub block_dim: u32,
    /// How many u64 arguments it takes.
    pub num_args: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestEntry {
    file: PathBuf,
    block_dim: u32,
    num_args: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    kernels: BTreeMap<String, ManifestEntry>,
}

/// The kernels of one arch on one platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRegistry {
    arch: Arch,
    kind: BinaryKind,
    roots: Vec<PathBuf>,
}

impl KernelRegistry {
    /// A registry over `roots`, searched in order.
    pub fn new(arch: Arch, kind: BinaryKind, roots: Vec<PathBuf>) -> Self {
        Self { arch, kind, roots }
    }

    /// The roots of a run: `ONBOARD_KERNEL_DIR` when it is set and not empty, then `kernels/`
    /// beside the running executable (an unpacked suite archive), then `suite_dirs`, then the built-in kernels' dir (what this crate's `build.rs` built).
    pub fn run_roots(suite_dirs: &[PathBuf]) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = std::env::var_os(KERNEL_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .into_iter()
            .collect();
        // An unpacked suite archive's blobs, beside its binary, before the dirs the build named
        // (which do not exist on a card host).
        roots.extend(super::blobs::installed_blob_root());
        roots.extend(suite_dirs.iter().cloned());
        roots.push(built_blob_root());
        roots
    }

    /// The built-in kernels of `arch` as host blobs, from [`Self::run_roots`] with no suite dir.
    pub fn builtin(arch: Arch) -> Self {
        Self::new(arch, BinaryKind::HostBlob, Self::run_roots(&[]))
    }

    /// The arch.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// What kind of binary it looks for.
    pub fn kind(&self) -> BinaryKind {
        self.kind
    }

    /// The roots, in search order.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn arch_dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.roots.iter().map(|r| r.join(self.arch.name()))
    }

    fn host_blob(&self, name: &str) -> Option<PathBuf> {
        self.arch_dirs()
            .map(|d| blob_path(&d, name))
            .find(|p| p.is_file())
    }

    /// Where kernel `name`'s binary for this platform is, looking at files only. An error is a
    /// manifest that cannot be read or parsed (bad input, naming the file).
    pub fn find(&self, name: &str) -> Result<Lookup, KernelError> {
        match self.kind {
            BinaryKind::HostBlob => Ok(match self.host_blob(name) {
                Some(p) => Lookup::Found(Found::HostBlob(p)),
                None => Lookup::Missing(format!(
                    "no {} host blob of kernel {name:?} (looked for {name}.so in {})",
                    self.arch,
                    self.dirs_text()
                )),
            }),
            BinaryKind::DeviceBinary { host_fallback } => {
                for dir in self.arch_dirs() {
                    if let Some(entry) = manifest_entry(&dir, name)? {
                        return Ok(Lookup::Found(entry));
                    }
                    let o = dir.join(format!("{name}.{DEVICE_BINARY_EXTENSION}"));
                    if o.is_file() {
                        if self.host_blob(name).is_none() {
                            return Ok(Lookup::Missing(format!(
                                "device binary {} has no {MANIFEST} entry and no host blob {name}.so to \
                                 read its metadata from",
                                o.display()
                            )));
                        }
                        return Ok(Lookup::Found(Found::DeviceBinary { path: o, meta: None }));
                    }
                }
                if host_fallback {
                    if let Some(p) = self.host_blob(name) {
                        return Ok(Lookup::Found(Found::HostBlob(p)));
                    }
                }
                Ok(Lookup::Missing(format!(
                    "no {} device binary of kernel {name:?} (looked for a {MANIFEST} entry and {name}.o \
                     in {})",
                    self.arch,
                    self.dirs_text()
                )))
            }
        }
    }

    /// Finds and loads kernel `name`: a host blob is loaded (and its metadata checked against
    /// the name and arch), a device binary gets its manifest's metadata or its host blob's.
    pub fn load(&self, name: &str) -> Result<KernelBlob, KernelError> {
        match self.find(name)? {
            Lookup::Missing(reason) => Err(KernelError::Missing {
                name: name.to_owned(),
                reason,
            }),
            Lookup::Found(Found::HostBlob(path)) => {
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                super::blobs::load_named(&dir, self.arch, name)
            }
            Lookup::Found(Found::DeviceBinary { path, meta }) => {
                let (block_dim, num_args) = match meta {
                    Some(m) => (m.block_dim, m.num_args),
                    None => {
                        let host = self.host_blob(name).ok_or_else(|| KernelError::Missing {
                            name: name.to_owned(),
                            reason: format!("no metadata for device binary {}", path.display()),
                        })?;
                        let dir = host.parent().map(Path::to_path_buf).unwrap_or_default();
                        let m = super::blobs::load_named(&dir, self.arch, name)?;
                        (m.meta().block_dim, m.meta().num_args)
                    }
                };
                let meta = KernelMeta {
                    name: name.to_owned(),
                    arch: self.arch,
                    block_dim,
                    num_args,
                };
                Ok(KernelBlob::device_binary(&path, meta))
            }
        }
    }

    fn dirs_text(&self) -> String {
        if self.roots.is_empty() {
            return "no kernel dir".to_owned();
        }
        self.arch_dirs()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Kernel `name`'s entry in `dir`'s manifest, if the dir has a manifest with one.
fn manifest_entry(dir: &Path, name: &str) -> Result<Option<Found>, KernelError> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(KernelError::Manifest {
                path,
                reason: e.to_string(),
            })
        }
    };
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| KernelError::Manifest {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let Some(entry) = manifest.kernels.get(name) else {
        return Ok(None);
    };
    let file = dir.join(&entry.file);
    if !file.is_file() {
        return Err(KernelError::Manifest {
            path,
            reason: format!("kernel {name:?}: {} is not a file", file.display()),
        });
    }
    Ok(Some(Found::DeviceBinary {
        path: file,
        meta: Some(ManifestMeta {
            block_dim: entry.block_dim,
            num_args: entry.num_args,
        }),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let arch_dir = dir.path().join("a5");
        std::fs::create_dir(&arch_dir).unwrap();
        (dir, arch_dir)
    }

    use super::super::blobs::built_blob_dir;

    fn builtin_root() -> PathBuf {
        built_blob_root()
    }

    #[test]
    fn sim_finds_host_blobs_in_root_order() {
        let (dir, arch_dir) = root();
        std::fs::copy(
            blob_path(&built_blob_dir(Arch::A5), "noop"),
            blob_path(&arch_dir, "noop"),
        )
        .unwrap();
        let r = KernelRegistry::new(
            Arch::A5,
            BinaryKind::HostBlob,
            vec![dir.path().to_owned(), builtin_root()],
        );
        assert_eq!(
            r.find("noop").unwrap(),
            Lookup::Found(Found::HostBlob(blob_path(&arch_dir, "noop"))),
            "the first root wins"
        );
        assert_eq!(
            r.find("vector_add").unwrap(),
            Lookup::Found(Found::HostBlob(blob_path(
                &built_blob_dir(Arch::A5),
                "vector_add"
            )))
        );
        let Lookup::Missing(why) = r.find("nope").unwrap() else {
            panic!("found a kernel that does not exist")
        };
        assert!(
            why.contains("nope.so") && why.contains(&arch_dir.display().to_string()),
            "{why}"
        );
        assert!(r.load("noop").unwrap().is_host());
    }

    #[test]
    fn onboard_takes_manifest_entries_then_dot_o_files() {
        let (dir, arch_dir) = root();
        let fake = arch_dir.join("fake_add.bin");
        std::fs::write(&fake, b"not a real binary").unwrap();
        std::fs::write(
            arch_dir.join(MANIFEST),
            r#"{"kernels": {"fake_add": {"file": "fake_add.bin", "block_dim": 8, "num_args": 4}}}"#,
        )
        .unwrap();
        std::fs::write(arch_dir.join("vector_add.o"), b"device bytes").unwrap();
        std::fs::write(arch_dir.join("orphan.o"), b"device bytes").unwrap();
        let roots = vec![dir.path().to_owned(), builtin_root()];
        let r = KernelRegistry::new(
            Arch::A5,
            BinaryKind::DeviceBinary { host_fallback: false },
            roots.clone(),
        );

        let fake_blob = r.load("fake_add").unwrap();
        assert!(!fake_blob.is_host());
        assert_eq!(fake_blob.path(), fake);
        assert_eq!((fake_blob.meta().block_dim, fake_blob.meta().num_args), (8, 4));
        // `.o` without an entry: the metadata of the built-in host blob of the same name.
        let add = r.load("vector_add").unwrap();
        assert!(!add.is_host());
        assert_eq!(add.meta().num_args, 4);
        let Lookup::Missing(why) = r.find("orphan").unwrap() else {
            panic!("a .o without metadata was found")
        };
        assert!(why.contains("no manifest.json entry"), "{why}");
        // No device binary: missing on real CANN, the host blob behind libsim_acl.so.
        assert!(matches!(r.find("noop").unwrap(), Lookup::Missing(_)));
        let sim_acl = KernelRegistry::new(Arch::A5, BinaryKind::DeviceBinary { host_fallback: true }, roots);
        assert!(matches!(
            sim_acl.find("noop").unwrap(),
            Lookup::Found(Found::HostBlob(_))
        ));
        assert!(sim_acl.load("noop").unwrap().is_host());
    }

    #[test]
    fn a_bad_manifest_is_an_error_naming_it() {
        let (dir, arch_dir) = root();
        std::fs::write(arch_dir.join(MANIFEST), "{\"kernels\": 3}").unwrap();
        let r = KernelRegistry::new(
            Arch::A5,
            BinaryKind::DeviceBinary { host_fallback: false },
            vec![dir.path().to_owned()],
        );
        let e = r.find("x").unwrap_err();
        assert!(e.to_string().contains("manifest.json"), "{e}");
        std::fs::write(
            arch_dir.join(MANIFEST),
            r#"{"kernels": {"x": {"file": "gone.o", "block_dim": 1, "num_args": 0}}}"#,
        )
        .unwrap();
        let e = r.find("x").unwrap_err();
        assert!(e.to_string().contains("gone.o"), "{e}");
    }
}
