//! Which arch crate an [`Arch`] is, as the shared tests take it (by value): the registry crate's
//! lookup (`cardguard-arches`); this crate never matches on an arch itself.

use platform_common::runner_base::ArchEntry;
use platform_common::Arch;

/// The arch crate's entry points of `arch` (`platform_a5::ENTRY`, `platform_a2a3::ENTRY`).
pub fn entry(arch: Arch) -> ArchEntry {
    *cardguard_arches::entry(arch)
}
