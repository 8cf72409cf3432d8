//! Which arch crate an [`Arch`] is, for the commands that drive a simulated card in process
//! (`sim-probe`, `chaos`): the arch crates' entries, looked up by the arch their facts name.
//!
//! This file owns that lookup (it names the arch crates; nothing else in xtask does). It never
//! builds a runner itself.

use platform_common::runner_base::ArchEntry;
use platform_common::Arch;

/// Every arch crate's entry.
const ENTRIES: [ArchEntry; 2] = [platform_a5::ENTRY, platform_a2a3::ENTRY];

/// The entry of `arch`'s crate.
pub fn entry(arch: Arch) -> ArchEntry {
    ENTRIES
        .into_iter()
        .find(|e| e.facts.arch == arch)
        .expect("every arch has its crate's entry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_arch_has_its_own_entry() {
        for arch in Arch::ALL {
            assert_eq!(entry(arch).facts.arch, arch);
        }
    }
}
