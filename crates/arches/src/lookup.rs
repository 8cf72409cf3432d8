//! The lookup itself: an [`Arch`] to its crate's [`ArchEntry`], by the one match on the arch's
//! variants (a new arch without its arm does not compile).

use platform_common::runner_base::ArchEntry;
use platform_common::Arch;

static A5: ArchEntry = platform_a5::ENTRY;
static A2A3: ArchEntry = platform_a2a3::ENTRY;

/// The entry of `arch`'s crate (`platform_a5::ENTRY`, `platform_a2a3::ENTRY`).
pub fn entry(arch: Arch) -> &'static ArchEntry {
    match arch {
        Arch::A5 => &A5,
        Arch::A2a3 => &A2A3,
    }
}

/// Every arch's entry, in [`Arch::ALL`]'s order.
pub fn all() -> impl Iterator<Item = &'static ArchEntry> {
    Arch::ALL.into_iter().map(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_arch_has_its_own_entry() {
        for arch in Arch::ALL {
            assert_eq!(entry(arch).facts.arch, arch);
        }
        let names: Vec<_> = all().map(|e| e.facts.name()).collect();
        assert_eq!(names, ["a5", "a2a3"]);
    }

    #[test]
    fn every_arch_has_its_own_compiler_target() {
        let mut targets: Vec<_> = all().map(|e| e.aicore_arch).collect();
        targets.sort_unstable();
        targets.dedup();
        assert_eq!(targets.len(), Arch::ALL.len());
        assert!(targets.iter().all(|t| t.starts_with("dav-")));
    }
}
