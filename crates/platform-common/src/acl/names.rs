//! The names the `acl` driver's settings and its load errors share: the environment variables
//! it reads and how a list of library paths is written in a message.
//!
//! A leaf: it imports nothing of this module, so [`super::config`] (which reads the variables)
//! and [`super::error`] (whose messages name them) both depend on it and not on each other. It
//! never reads a variable itself.

use std::path::PathBuf;

/// A `:`-separated list of library files to load instead of searching; wins over everything.
pub const ENV_ACL_LIB: &str = "ONBOARD_ACL_LIB";
/// The CANN install in use, as CANN's `set_env.sh` sets it (e.g. `.../ascend-toolkit/latest`).
pub const ENV_ASCEND_HOME: &str = "ASCEND_HOME_PATH";
/// The toolkit install, as older CANN `set_env.sh` scripts set it.
pub const ENV_TOOLKIT_HOME: &str = "ASCEND_TOOLKIT_HOME";

/// `a, b, c` of paths.
pub(crate) fn join(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
