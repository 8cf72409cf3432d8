//! The CANN compiler and the AICore compile of cardguard kernel sources.
//!
//! [`find_compiler`] looks for `ccec` (the AICore compiler), then `bisheng`, under the CANN
//! install: `$ASCEND_HOME_PATH`, `$ASCEND_TOOLKIT_HOME`, `/usr/local/Ascend/ascend-toolkit/latest`,
//! `/usr/local/Ascend/latest`, `/usr/local/Ascend/cann` and `$HOME/Ascend/ascend-toolkit/latest`,
//! each in `bin/` and `compiler/ccec_compiler/bin/` (the places CANN installs them); none found
//! is [`CompilerError::Absent`], naming every place looked at. [`compile_all`] compiles each
//! source once per arch with `-c -x cce -O2 -std=c++17 --cce-aicore-only
//! --cce-aicore-arch=<the arch entry's aicore_arch: dav-c310-vec on a5, dav-c220-vec on a2a3> -DCG_ARCH="<arch>"
//! -DCG_AICORE=1`, the include directories and `-o <name>.o`, then writes `manifest.json`. Not
//! exercised against a real CANN here (none is installed on the development machine): the tests
//! run a stand-in compiler and check the command lines and the manifest. This file never runs a
//! kernel.

use std::path::{Path, PathBuf};
use std::process::Command;

use platform_common::kernel::{load_named, MANIFEST};
use platform_common::Arch;

/// No CANN compiler was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompilerError {
    /// None of the places CANN installs its compiler holds one.
    #[error(
        "no CANN compiler (ccec or bisheng) is installed: looked in {}; AICore binaries need the \
         CANN toolkit (or give one with --compiler PATH); nothing was built",
        looked.join(", ")
    )]
    Absent {
        /// The directories looked in.
        looked: Vec<String>,
    },
}

/// The CANN install roots, in search order.
fn cann_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for var in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            roots.push(PathBuf::from(v));
        }
    }
    for fixed in [
        "/usr/local/Ascend/ascend-toolkit/latest",
        "/usr/local/Ascend/latest",
        "/usr/local/Ascend/cann",
    ] {
        roots.push(PathBuf::from(fixed));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        roots.push(PathBuf::from(home).join("Ascend/ascend-toolkit/latest"));
    }
    roots
}

/// The first `ccec`, else the first `bisheng`, under the CANN roots.
pub fn find_compiler() -> Result<PathBuf, CompilerError> {
    let dirs: Vec<PathBuf> = cann_roots()
        .into_iter()
        .flat_map(|r| [r.join("bin"), r.join("compiler/ccec_compiler/bin")])
        .collect();
    for name in ["ccec", "bisheng"] {
        if let Some(found) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
            return Ok(found);
        }
    }
    Err(CompilerError::Absent {
        looked: dirs.iter().map(|d| d.display().to_string()).collect(),
    })
}

/// The AICore target of an arch, as its arch crate's entry states it.
pub fn aicore_arch(arch: Arch) -> &'static str {
    cardguard_arches::entry(arch).aicore_arch
}

/// One device binary built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    /// The kernel.
    pub name: String,
    /// The binary.
    pub path: PathBuf,
}

/// Compiles every source for `arch` into `arch_dir/<name>.o` with `compiler` and writes
/// `arch_dir/manifest.json`, each kernel's metadata from its host blob in `hosts/<arch>/`.
pub fn compile_all(
    compiler: &Path,
    arch: Arch,
    sources: &[PathBuf],
    includes: &[PathBuf],
    arch_dir: &Path,
    hosts: &Path,
) -> Result<Vec<Built>, String> {
    std::fs::create_dir_all(arch_dir).map_err(|e| format!("cannot create {}: {e}", arch_dir.display()))?;
    let mut built = Vec::new();
    let mut kernels = serde_json::Map::new();
    for src in sources {
        let name = src
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{} has no kernel name", src.display()))?
            .to_owned();
        let meta = load_named(&hosts.join(arch.name()), arch, &name).map_err(|e| e.to_string())?;
        let path = arch_dir.join(format!("{name}.o"));
        let mut cmd = Command::new(compiler);
        cmd.args(["-c", "-x", "cce", "-O2", "-std=c++17", "--cce-aicore-only"])
            .arg(format!("--cce-aicore-arch={}", aicore_arch(arch)))
            .arg(format!("-DCG_ARCH=\"{}\"", arch.name()))
            .arg("-DCG_AICORE=1");
        for dir in includes {
            cmd.arg("-I").arg(dir);
        }
        cmd.arg("-o").arg(&path).arg(src);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", compiler.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} failed on {} ({}): {}",
                compiler.display(),
                src.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        if !path.is_file() {
            return Err(format!("{} left no {}", compiler.display(), path.display()));
        }
        kernels.insert(
            name.clone(),
            serde_json::json!({
                "file": format!("{name}.o"),
                "block_dim": meta.meta().block_dim,
                "num_args": meta.meta().num_args,
            }),
        );
        built.push(Built { name, path });
    }
    let manifest = serde_json::json!({ "kernels": kernels });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    std::fs::write(arch_dir.join(MANIFEST), text + "\n")
        .map_err(|e| format!("cannot write {}: {e}", arch_dir.join(MANIFEST).display()))?;
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aicore_targets_per_arch() {
        assert_eq!(aicore_arch(Arch::A5), "dav-c310-vec");
        assert_eq!(aicore_arch(Arch::A2a3), "dav-c220-vec");
    }
}
