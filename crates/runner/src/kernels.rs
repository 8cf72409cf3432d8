//! A run's kernel registry, and which selected cases have no kernel binary for the run's
//! platform.
//!
//! The registry of a run ([`registry`]) searches `ONBOARD_KERNEL_DIR` (when set), the suite's own
//! kernel dirs ([`Suite::kernel_dirs`]) and the built-in kernels' dir, for the binary kind the
//! platform runs ([`PlatformInfo::kernels`]): the dispatcher asks it which cases lack a binary
//! ([`missing`]: under `missing-kernel = "skip"`, onboard's default, they are skipped with that
//! reason before hand-out; under `"fail"`, sim's default, the run stops with [`missing_error`];
//! `--list` shows them either way) and
//! each lane loads its kernels from the same one. This file owns that question; it never loads
//! or registers a kernel.

use std::collections::{BTreeMap, HashMap};

use platform_common::kernel::{KernelError, KernelRegistry, Lookup};
use platform_common::Arch;

use crate::case::Suite;
use crate::platform::PlatformInfo;
use crate::select::Selection;

/// The kernel registry of a run of `suite` on `info`'s platform for `arch`.
pub fn registry(info: &PlatformInfo, arch: Arch, suite: &Suite) -> KernelRegistry {
    KernelRegistry::new(arch, info.kernels, KernelRegistry::run_roots(&suite.kernel_dirs))
}

/// A case whose kernels lack a binary for the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingKernels {
    /// The kernels without a binary, in the case's order.
    pub kernels: Vec<String>,
    /// The skip reason: the first missing kernel's lookup, and how many more.
    pub reason: String,
}

/// The selected cases (by id) whose kernels have no binary in `registry`. An error is a manifest
/// that cannot be read (bad input: the run stops before it takes cards).
pub fn missing(
    suite: &Suite,
    selection: &Selection,
    registry: &KernelRegistry,
) -> Result<BTreeMap<String, MissingKernels>, KernelError> {
    let mut looked: HashMap<&str, Option<String>> = HashMap::new();
    let mut out = BTreeMap::new();
    for sc in &selection.classes {
        let class = &suite.classes[sc.class];
        for &i in &sc.cases {
            let case = &class.cases[i];
            let mut kernels = Vec::new();
            let mut first = None;
            for k in &case.kernels {
                if !looked.contains_key(k.as_str()) {
                    let why = match registry.find(k)? {
                        Lookup::Found(_) => None,
                        Lookup::Missing(why) => Some(why),
                    };
                    looked.insert(k.as_str(), why);
                }
                if let Some(Some(why)) = looked.get(k.as_str()) {
                    kernels.push(k.clone());
                    first.get_or_insert_with(|| why.clone());
                }
            }
            if let Some(why) = first {
                let more = match kernels.len() {
                    1 => String::new(),
                    n => format!(" (and {} more kernel(s) of the case)", n - 1),
                };
                out.insert(
                    class.case_id(case),
                    MissingKernels {
                        kernels,
                        reason: format!("no kernel binary for this platform: {why}{more}"),
                    },
                );
            }
        }
    }
    Ok(out)
}

/// The run's error when a selected case lacks a kernel binary and missing kernels fail the run
/// (`missing-kernel = "fail"`, the default on sim): the first such case (by id), its lookup (the
/// kernel and the dirs searched) and how many more cases lack one; `None` when none does.
pub fn missing_error(missing: &BTreeMap<String, MissingKernels>) -> Option<String> {
    let (id, m) = missing.iter().next()?;
    let more = match missing.len() {
        1 => String::new(),
        n => format!(
            " ({} more case(s) lack a kernel binary too; --list shows them)",
            n - 1
        ),
    };
    Some(format!(
        "case {id}: {}{more}; build the kernel or fix its name, or --missing-kernel skip to skip such cases",
        m.reason
    ))
}

#[cfg(test)]
mod tests {
    use platform_common::kernel::{built_blob_root, BinaryKind};

    use super::*;
    use crate::case::{CaseSpec, ClassSpec, Runtime};
    use crate::select::{select, Filter};

    #[test]
    fn cases_with_a_kernel_without_binary_are_named() {
        let suite = Suite::new().class(ClassSpec::pooled("K", Runtime::new("rt")).cases([
            CaseSpec::compute("has", &["vector_add"], |_, _| Vec::new()),
            CaseSpec::compute("lacks", &["vector_add", "no_such_kernel", "nor_this"], |_, _| {
                Vec::new()
            }),
            CaseSpec::trivial("none"),
        ]));
        let sel = select(&suite, Arch::A5, &Filter::default()).unwrap();
        let sim = KernelRegistry::new(Arch::A5, BinaryKind::HostBlob, vec![built_blob_root()]);
        let m = missing(&suite, &sel, &sim).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["K::lacks"]);
        let lacks = &m["K::lacks"];
        assert_eq!(lacks.kernels, ["no_such_kernel", "nor_this"]);
        assert!(
            lacks.reason.starts_with(
                "no kernel binary for this platform: no a5 host blob of kernel \"no_such_kernel\""
            ),
            "{}",
            lacks.reason
        );
        assert!(
            lacks.reason.ends_with("(and 1 more kernel(s) of the case)"),
            "{}",
            lacks.reason
        );
        // On real cards without device binaries every kernel is missing.
        let real = KernelRegistry::new(
            Arch::A5,
            BinaryKind::DeviceBinary { host_fallback: false },
            vec![built_blob_root()],
        );
        let m = missing(&suite, &sel, &real).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["K::has", "K::lacks"]);
    }
}
