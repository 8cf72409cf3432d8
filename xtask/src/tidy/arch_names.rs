//! The arch rule: outside the arch crates, the registry crate (`cardguard-arches`), the `Arch`
//! type's own file and test code, no code names an `Arch` variant (`Arch::A5`, `Arch::A2a3`): what
//! differs between arches is read from the arch's `ArchEntry`, looked up in one place.
//!
//! This file owns which files may name a variant and how a variant is found in a line of code; the
//! caller (`tidy::check_file`) blanks comments and strings, skips `mod tests` bodies and a suite
//! case's `.only_on(...)` (which arches a case runs on is the case's data) and reports.

use platform_common::Arch;

/// Where naming an arch's variant is the point: the arch crates, the one lookup, the type.
pub const MAY_NAME_ARCHES: &[&str] = &[
    "crates/platform-a5/",
    "crates/platform-a2a3/",
    "crates/arches/",
    "crates/platform-common/src/arch.rs",
];

/// Whether `file` may name arch variants: a listed place, or test code (a `tests` folder, a
/// `tests.rs` or `*_tests.rs` file).
pub fn may_name_arches(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    MAY_NAME_ARCHES.iter().any(|p| file.starts_with(p))
        || file.split('/').any(|part| part == "tests")
        || name == "tests.rs"
        || name.ends_with("_tests.rs")
}

/// The first `Arch::<variant>` a line of code names (every variant of [`Arch::ALL`], as a whole
/// word: `Arch::ALL` or `Arch::DEFAULT` are not variants).
pub fn variant_in(code: &str) -> Option<String> {
    Arch::ALL.iter().map(|a| format!("Arch::{a:?}")).find(|needle| {
        code.match_indices(needle.as_str()).any(|(i, _)| {
            let ident = |c: char| c.is_alphanumeric() || c == '_';
            let before = code[..i].chars().next_back().is_some_and(ident);
            let after = code[i + needle.len()..].chars().next().is_some_and(ident);
            !before && !after
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_is_found_as_a_whole_word() {
        assert_eq!(variant_in("        Arch::A5 => 1,").as_deref(), Some("Arch::A5"));
        assert_eq!(
            variant_in("x == platform_common::Arch::A2a3").as_deref(),
            Some("Arch::A2a3")
        );
        assert_eq!(variant_in("for a in Arch::ALL {"), None);
        assert_eq!(variant_in("let a = Arch::DEFAULT;"), None);
        assert_eq!(variant_in("let a = MyArch::A5;"), None);
        assert_eq!(variant_in("let a = Arch::A50;"), None);
    }

    #[test]
    fn arch_crates_and_tests_may_name_arches_and_the_rest_may_not() {
        for ok in [
            "crates/platform-a5/src/facts.rs",
            "crates/arches/src/lookup.rs",
            "crates/platform-common/src/arch.rs",
            "crates/runner/tests/kernels_golden.rs",
            "crates/runner/src/dispatch/state/tests/harness.rs",
            "crates/runner/src/exec/tests.rs",
            "crates/runner/src/suite/sim_tests.rs",
        ] {
            assert!(may_name_arches(ok), "{ok}");
        }
        for not in [
            "crates/runner/src/platform.rs",
            "crates/sim-acl/src/state.rs",
            "crates/test-support/src/arches.rs",
            "xtask/src/build_kernels/cann.rs",
            "crates/platform-common/src/sim/config.rs",
        ] {
            assert!(!may_name_arches(not), "{not}");
        }
    }
}
