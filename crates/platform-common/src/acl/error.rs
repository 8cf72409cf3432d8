//! Why the `acl` driver could not be loaded.
//!
//! This file owns [`AclLoadError`]: every message is one line that names what was searched, which
//! file, or which symbols. A symbol that turns out absent at call time is not a load error: it is
//! a [`crate::DriverError`] with [`crate::error::codes::LOADER_SYMBOL_MISSING`].

use std::path::PathBuf;

use super::names::{join, ENV_ACL_LIB, ENV_ASCEND_HOME};
use crate::error::{Code, FailureClass};

/// The `acl` driver's libraries could not be found, opened, or are not a CANN runtime.
#[derive(Debug, thiserror::Error)]
pub enum AclLoadError {
    /// `ONBOARD_ACL_LIB` is set but names no file.
    #[error("{var} is set but names no library file")]
    EmptyList {
        /// The variable.
        var: &'static str,
    },
    /// No CANN install on the search path.
    #[error(
        "CANN not found: no {library} in {} (set {ENV_ASCEND_HOME} or {ENV_ACL_LIB})",
        join(searched)
    )]
    NotFound {
        /// The library that is required.
        library: &'static str,
        /// Every directory searched, in order.
        searched: Vec<PathBuf>,
    },
    /// A file named in `ONBOARD_ACL_LIB` does not exist.
    #[error("{ENV_ACL_LIB} names {}, which does not exist", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// The dynamic loader refused a file (not a shared object, wrong machine, missing dependency).
    #[error("cannot load {}: {reason}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The loader's one-line reason.
        reason: String,
    },
    /// The files loaded do not export `aclInit`: they are not a CANN runtime.
    #[error("{} is not a CANN runtime: it does not export {symbol}", join(libraries))]
    NotCann {
        /// The files loaded.
        libraries: Vec<PathBuf>,
        /// The probe symbol.
        symbol: &'static str,
    },
    /// The files loaded lack symbols the driver calls.
    #[error(
        "{} (CANN {}) lacks {}",
        join(libraries),
        version.as_deref().unwrap_or("version unknown"),
        symbols.join(", ")
    )]
    MissingSymbols {
        /// The files loaded.
        libraries: Vec<PathBuf>,
        /// The absent symbols, in the driver's order.
        symbols: Vec<&'static str>,
        /// The version the library reports (`aclsysGetVersionStr("runtime")`, else
        /// `aclrtGetVersion`), where it exports either.
        version: Option<String>,
    },
    /// `ONBOARD_ACL_LIB` is not valid UTF-8.
    #[error(transparent)]
    Env(#[from] crate::env::EnvError),
    /// `ASCEND_RT_VISIBLE_DEVICES` cannot be used.
    #[error(transparent)]
    Visible(#[from] crate::visible::VisibleError),
}

impl AclLoadError {
    /// A load failure is never a device's fault: the harness around the cards is broken.
    pub fn class(&self) -> FailureClass {
        FailureClass::Infrastructure
    }
}

/// A cardguard extension call (`cgSim*`, exported by `libsim_acl.so` only) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{symbol} failed: {code}")]
pub struct ExtensionError {
    /// The extension symbol.
    pub symbol: &'static str,
    /// The raw code it returned.
    pub code: Code,
}
