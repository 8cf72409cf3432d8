//! Reading cardguard's `ONBOARD_*` environment variables: one helper for every read, so that a
//! value that cannot be used is an error naming its variable, never a silent fallback to the
//! default.
//!
//! Rules: an unset variable means the default; a set variable must be valid UTF-8 unless it names
//! a path ([`PATH_VARS`]: any bytes a path may hold); a path variable that is set but empty is an
//! error (unset it for the default). [`check`] applies the rules to a list of variables up front
//! (the runner checks every variable it and this crate read, [`PLATFORM_VARS`], before anything
//! else); [`text`] and [`path`] read one variable under the same rules.
//!
//! This file owns how a variable is read. It never decides what a value means (the settings that
//! read one parse it and name it in their own errors) and never changes the environment.

use std::ffi::OsString;
use std::path::PathBuf;

/// What is wrong with a variable's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvProblem {
    /// The value is not valid UTF-8 (and the variable is not a path).
    NotUnicode,
    /// A path variable set to the empty string.
    Empty,
}

/// A variable whose value cannot be used: names the variable, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value:?} {}", self.reason())]
pub struct EnvError {
    /// The variable.
    pub var: &'static str,
    /// Its value (lossily decoded).
    pub value: String,
    /// What is wrong.
    pub problem: EnvProblem,
}

impl EnvError {
    /// What is wrong, as the message says it.
    pub fn reason(&self) -> &'static str {
        match self.problem {
            EnvProblem::NotUnicode => "is not valid UTF-8",
            EnvProblem::Empty => "is set but empty (unset it for the default)",
        }
    }
}

/// The variables that name paths: any bytes are allowed, the empty string is not.
pub const PATH_VARS: &[&str] = &["ONBOARD_SIM_ROOT", "ONBOARD_LOCK_DIR", "ONBOARD_KERNEL_DIR"];

/// Every variable this crate reads (the runner adds its own to [`check`]'s list).
pub const PLATFORM_VARS: &[&str] = &[
    "ONBOARD_SIM_ROOT",
    "ONBOARD_SIM_CARDS",
    "ONBOARD_SIM_FAULTS",
    "ONBOARD_LOCK_DIR",
    "ONBOARD_LEASE_FD",
    "ONBOARD_EXTRA_LEASE_FDS",
    "ONBOARD_SCHEDULER_TIMEOUT_MS",
    "ONBOARD_OP_EXECUTE_TIMEOUT_US",
    "ONBOARD_STREAM_SYNC_TIMEOUT_MS",
    "ONBOARD_ACL_LIB",
    "ONBOARD_KERNEL_DIR",
    "ONBOARD_TEST_DEVICE",
];

fn raw(var: &'static str) -> Result<Option<OsString>, EnvError> {
    let Some(v) = std::env::var_os(var) else {
        return Ok(None);
    };
    let bad = |problem| EnvError {
        var,
        value: v.to_string_lossy().into_owned(),
        problem,
    };
    if PATH_VARS.contains(&var) {
        if v.is_empty() {
            return Err(bad(EnvProblem::Empty));
        }
    } else if v.to_str().is_none() {
        return Err(bad(EnvProblem::NotUnicode));
    }
    Ok(Some(v))
}

/// A text variable: `None` when unset; an error naming it when its value is not UTF-8 (or, for
/// a path variable, empty).
pub fn text(var: &'static str) -> Result<Option<String>, EnvError> {
    Ok(raw(var)?.map(|v| v.to_string_lossy().into_owned()))
}

/// A path variable: `None` when unset; an error naming it when it is set but empty.
pub fn path(var: &'static str) -> Result<Option<PathBuf>, EnvError> {
    Ok(raw(var)?.map(PathBuf::from))
}

/// Checks every variable of `vars` under the rules above; the first bad one is the error.
pub fn check(vars: &[&'static str]) -> Result<(), EnvError> {
    vars.iter().try_for_each(|v| raw(v).map(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_variable_and_the_problem() {
        let e = EnvError {
            var: "ONBOARD_SIM_CARDS",
            value: "\u{fffd}x".into(),
            problem: EnvProblem::NotUnicode,
        };
        assert_eq!(
            e.to_string(),
            "ONBOARD_SIM_CARDS=\"\u{fffd}x\" is not valid UTF-8"
        );
        let e = EnvError {
            var: "ONBOARD_LOCK_DIR",
            value: String::new(),
            problem: EnvProblem::Empty,
        };
        assert_eq!(
            e.to_string(),
            "ONBOARD_LOCK_DIR=\"\" is set but empty (unset it for the default)"
        );
    }

    #[test]
    fn every_path_variable_is_a_platform_variable() {
        for v in PATH_VARS {
            assert!(PLATFORM_VARS.contains(v), "{v}");
            assert!(v.starts_with("ONBOARD_"), "{v}");
        }
    }
}
