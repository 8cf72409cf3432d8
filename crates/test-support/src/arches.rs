//! Which arch crate an [`Arch`] is: the one place this crate maps a name to an arch crate.

use platform_common::runner_base::ArchEntry;
use platform_common::Arch;

/// The arch crate's entry points of `arch` (`platform_a5::ENTRY`, `platform_a2a3::ENTRY`).
pub fn entry(arch: Arch) -> ArchEntry {
    match arch {
        Arch::A5 => platform_a5::ENTRY,
        Arch::A2a3 => platform_a2a3::ENTRY,
    }
}
