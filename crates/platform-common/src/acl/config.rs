//! Where the `acl` driver finds its libraries.
//!
//! This file owns [`AclConfig`] and the search path; it reads the variables `names` names. It never opens a
//! file: it only turns settings into the list of files to load ([`AclConfig::resolve`]).
//!
//! Order of precedence: `ONBOARD_ACL_LIB` (a `:`-separated list of files, loaded in that order),
//! else `ASCEND_HOME_PATH`, `ASCEND_TOOLKIT_HOME` and the usual install prefixes, searched for
//! `libascend_hal.so`, `libruntime.so` and `libascendcl.so`. Only `libascendcl.so` is required:
//! the runtime and the HAL are loaded when found (dependencies first, so that `libascendcl.so`'s
//! own references to them resolve to the same files), and a symbol is looked up across every
//! library loaded.

use std::path::{Path, PathBuf};

use super::error::AclLoadError;
use super::names::{join, ENV_ACL_LIB, ENV_ASCEND_HOME, ENV_TOOLKIT_HOME};

/// The ACL library: the one file that must be found.
pub const LIB_ACL: &str = "libascendcl.so";
/// The runtime library (`rt*` calls).
pub const LIB_RUNTIME: &str = "libruntime.so";
/// The HAL library (`hal*` calls), shipped with the driver.
pub const LIB_HAL: &str = "libascend_hal.so";

/// The libraries searched for, in load order (dependencies first), and whether each is required.
const SEARCHED: [(&str, bool); 3] = [(LIB_HAL, false), (LIB_RUNTIME, false), (LIB_ACL, true)];

/// Install prefixes tried after the variables, in order.
const DEFAULT_PREFIXES: [&str; 3] = [
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/latest",
    "/usr/local/Ascend/cann",
];

/// Driver library directories tried last (the HAL lives there).
const DRIVER_DIRS: [&str; 3] = [
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/Ascend/driver/lib64/driver",
    "/usr/local/Ascend/driver/lib64/common",
];

/// Where the libraries come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LibrarySource {
    /// Exactly these files, in this order (`ONBOARD_ACL_LIB`).
    Files(Vec<PathBuf>),
    /// Search these directories, in order, for each library.
    Search(Vec<PathBuf>),
}

/// The settings of the `acl` driver. Tests build one with [`AclConfig::files`]; binaries use
/// [`AclConfig::from_env`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclConfig {
    /// Where the libraries come from.
    pub source: LibrarySource,
}

impl AclConfig {
    /// Load exactly `files`, in order.
    pub fn files(files: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        Self {
            source: LibrarySource::Files(files.into_iter().map(Into::into).collect()),
        }
    }

    /// Search `dirs`, in order.
    pub fn search(dirs: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        Self {
            source: LibrarySource::Search(dirs.into_iter().map(Into::into).collect()),
        }
    }

    /// Settings from variables read by `lookup` (the process environment in
    /// [`AclConfig::from_env`]; tests pass their own).
    pub fn with_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, AclLoadError> {
        if let Some(list) = lookup(ENV_ACL_LIB) {
            let files: Vec<PathBuf> = list
                .split(':')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect();
            if files.is_empty() {
                return Err(AclLoadError::EmptyList { var: ENV_ACL_LIB });
            }
            return Ok(Self::files(files));
        }
        Ok(Self::search(search_dirs(&lookup)))
    }

    /// [`AclConfig::with_lookup`] from the process environment.
    pub fn from_env() -> Result<Self, AclLoadError> {
        crate::env::check(&[ENV_ACL_LIB])?;
        Self::with_lookup(|v| std::env::var(v).ok())
    }

    /// The files to load, in load order. In search mode, a missing `libascendcl.so` is an error
    /// naming every directory searched; a missing runtime or HAL is not (see the module docs).
    pub fn resolve(&self) -> Result<Vec<PathBuf>, AclLoadError> {
        match &self.source {
            LibrarySource::Files(files) => {
                if files.is_empty() {
                    return Err(AclLoadError::EmptyList { var: ENV_ACL_LIB });
                }
                Ok(files.clone())
            }
            LibrarySource::Search(dirs) => {
                let mut found = Vec::new();
                for (name, required) in SEARCHED {
                    match dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
                        Some(p) => found.push(p),
                        None if required => {
                            return Err(AclLoadError::NotFound {
                                library: name,
                                searched: dirs.clone(),
                            })
                        }
                        None => tracing::debug!(library = name, "not found; relying on libascendcl's own"),
                    }
                }
                Ok(found)
            }
        }
    }

    /// A one-line description of where libraries come from, for reports and errors.
    pub fn describe(&self) -> String {
        match &self.source {
            LibrarySource::Files(f) => format!("{ENV_ACL_LIB}={}", join(f)),
            LibrarySource::Search(d) => format!("search path {}", join(d)),
        }
    }
}

/// The directories searched when `ONBOARD_ACL_LIB` is unset, in order, without duplicates.
fn search_dirs(lookup: &impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut prefixes: Vec<PathBuf> = [ENV_ASCEND_HOME, ENV_TOOLKIT_HOME]
        .into_iter()
        .filter_map(lookup)
        .filter(|v| !v.trim().is_empty())
        .map(PathBuf::from)
        .collect();
    prefixes.extend(DEFAULT_PREFIXES.iter().map(PathBuf::from));
    if let Some(home) = lookup("HOME").filter(|h| !h.is_empty()) {
        prefixes.push(Path::new(&home).join("Ascend/ascend-toolkit/latest"));
    }
    let mut dirs = Vec::new();
    for p in &prefixes {
        for sub in [
            "lib64",
            "runtime/lib64",
            "aarch64-linux/lib64",
            "x86_64-linux/lib64",
        ] {
            push_unique(&mut dirs, p.join(sub));
        }
    }
    for d in DRIVER_DIRS {
        push_unique(&mut dirs, PathBuf::from(d));
    }
    dirs
}

fn push_unique(dirs: &mut Vec<PathBuf>, d: PathBuf) {
    if !dirs.contains(&d) {
        dirs.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn acl_lib_list_wins_and_keeps_its_order() {
        let cfg = AclConfig::with_lookup(env(&[
            (ENV_ACL_LIB, "/x/libhal.so::/y/libacl.so "),
            (ENV_ASCEND_HOME, "/opt/cann"),
        ]))
        .unwrap();
        assert_eq!(cfg, AclConfig::files(["/x/libhal.so", "/y/libacl.so"]));
    }

    #[test]
    fn an_empty_list_is_an_error_naming_the_variable() {
        let e = AclConfig::with_lookup(env(&[(ENV_ACL_LIB, " : ")])).unwrap_err();
        assert!(e.to_string().contains(ENV_ACL_LIB), "{e}");
    }

    #[test]
    fn variables_come_before_the_usual_prefixes() {
        let cfg = AclConfig::with_lookup(env(&[
            (ENV_ASCEND_HOME, "/opt/cann"),
            (ENV_TOOLKIT_HOME, "/opt/tk"),
        ]))
        .unwrap();
        let LibrarySource::Search(dirs) = cfg.source else {
            panic!("expected a search");
        };
        assert_eq!(dirs[0], PathBuf::from("/opt/cann/lib64"));
        assert_eq!(dirs[1], PathBuf::from("/opt/cann/runtime/lib64"));
        let tk = dirs.iter().position(|d| d == Path::new("/opt/tk/lib64")).unwrap();
        let usual = dirs
            .iter()
            .position(|d| d == Path::new("/usr/local/Ascend/ascend-toolkit/latest/lib64"))
            .unwrap();
        let driver = dirs
            .iter()
            .position(|d| d == Path::new("/usr/local/Ascend/driver/lib64"))
            .unwrap();
        assert!(tk < usual && usual < driver, "{dirs:?}");
    }

    #[test]
    fn search_finds_each_library_in_load_order() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(b.path().join(LIB_ACL), b"").unwrap();
        std::fs::write(a.path().join(LIB_HAL), b"").unwrap();
        std::fs::write(b.path().join(LIB_HAL), b"").unwrap();
        let files = AclConfig::search([a.path(), b.path()]).resolve().unwrap();
        assert_eq!(files, vec![a.path().join(LIB_HAL), b.path().join(LIB_ACL)]);
    }

    #[test]
    fn search_without_ascendcl_names_every_directory() {
        let a = tempfile::tempdir().unwrap();
        std::fs::write(a.path().join(LIB_RUNTIME), b"").unwrap();
        let e = AclConfig::search([a.path(), Path::new("/nonexistent/lib64")])
            .resolve()
            .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, AclLoadError::NotFound { library: LIB_ACL, .. }),
            "{e:?}"
        );
        assert!(text.contains(&a.path().display().to_string()), "{text}");
        assert!(text.contains("/nonexistent/lib64"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
}
