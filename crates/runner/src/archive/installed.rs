//! A suite binary that runs from an unpacked archive: how it knows (the manifest beside it), and
//! which kernel blob files a suite needs, so `cargo xtask archive` can pack exactly those.
//!
//! The kernel blobs themselves are found beside the binary by the kernel registry's run roots
//! (`platform_common::kernel::KernelRegistry::run_roots`); this file never loads a blob.

use std::path::PathBuf;

use platform_common::kernel::{BinaryKind, KernelError, KernelRegistry, Lookup};
use platform_common::Arch;

use crate::case::Suite;
use cardguard_archive::MANIFEST_NAME;

/// The kernel the post-reset probe runs on simulated cards (always packed).
use crate::platform::PROBE_KERNEL;

/// The directory of the running executable when it is an unpacked archive's binary (the manifest
/// is beside it).
pub fn installed_root() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    dir.join(MANIFEST_NAME).is_file().then(|| dir.to_path_buf())
}

/// The blob file of every kernel `suite`'s cases on `arch` register, and of the probe kernel,
/// sorted and without duplicates, as this binary's lanes would load them; a kernel whose blob is
/// missing is an error naming it and the first case that declares it (an archive without it
/// would fail on the card host, so `cargo xtask archive` refuses to build it).
pub fn kernel_files(suite: &Suite, arch: Arch) -> Result<Vec<PathBuf>, KernelError> {
    let declared_by = |name: &str| {
        suite.classes.iter().find_map(|c| {
            c.cases
                .iter()
                .find(|case| case.arch.admits(arch) && case.kernels.iter().any(|k| k == name))
                .map(|case| c.case_id(case))
        })
    };
    let mut names: Vec<&str> = suite
        .classes
        .iter()
        .flat_map(|c| &c.cases)
        .filter(|case| case.arch.admits(arch))
        .flat_map(|case| case.kernels.iter().map(String::as_str))
        .chain([PROBE_KERNEL])
        .collect();
    names.sort_unstable();
    names.dedup();
    let registry = KernelRegistry::new(
        arch,
        BinaryKind::HostBlob,
        KernelRegistry::run_roots(&suite.kernel_dirs),
    );
    names
        .into_iter()
        .map(|name| match registry.find(name)? {
            Lookup::Found(f) => Ok(f.path().to_owned()),
            Lookup::Missing(reason) => Err(KernelError::Missing {
                name: name.to_owned(),
                reason: match declared_by(name) {
                    Some(id) => format!("declared by case {id}: {reason}; an archive would lack it"),
                    None => format!("the probe kernel: {reason}; an archive would lack it"),
                },
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_suite_needs_its_kernels_and_the_probe() {
        for arch in Arch::ALL {
            let files = kernel_files(&crate::suite::builtin(arch), arch).unwrap();
            let names: Vec<String> = files
                .iter()
                .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
                .collect();
            for k in ["noop", "hang", "vector_add"] {
                assert!(names.iter().any(|n| n == k), "{arch}: {names:?}");
            }
            assert!(files.iter().all(|f| f.is_file()));
        }
    }

    #[test]
    fn a_kernel_without_a_blob_names_the_case_that_declares_it() {
        use crate::case::{CaseSpec, ClassSpec, Runtime};
        let suite = Suite::new().class(ClassSpec::pooled("Relu", Runtime::new("rt")).cases([
            CaseSpec::compute("typo", &["reluu"], |_, _| Vec::new()),
            CaseSpec::compute("fine", &["vector_add"], |_, _| Vec::new()),
        ]));
        let e = kernel_files(&suite, Arch::A5).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "kernel \"reluu\": declared by case Relu::typo: no a5 host blob of kernel \"reluu\""
            ),
            "{e}"
        );
        assert!(e.ends_with("; an archive would lack it"), "{e}");
    }

    #[test]
    fn a_test_binary_is_no_unpacked_archive() {
        assert_eq!(installed_root(), None);
    }
}
