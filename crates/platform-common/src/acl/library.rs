//! Opening the `acl` driver's libraries and looking symbols up across them.
//!
//! This file owns the `libloading` handles (kept for the life of the driver) and the only raw
//! symbol lookup. It never calls a symbol and never decides which symbols are needed.

use std::fmt;
use std::path::{Path, PathBuf};

use super::error::AclLoadError;

/// The loaded libraries, in load order.
pub(crate) struct Libraries {
    libs: Vec<(PathBuf, libloading::Library)>,
}

impl fmt::Debug for Libraries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.libs.iter().map(|(p, _)| p)).finish()
    }
}

impl Libraries {
    /// Opens every file, in order. Each is opened with `RTLD_NOW | RTLD_LOCAL`: its own
    /// dependencies resolve at once (a broken install fails here, naming the file), and its
    /// symbols stay out of the global namespace.
    pub(crate) fn open(files: &[PathBuf]) -> Result<Self, AclLoadError> {
        let mut libs = Vec::with_capacity(files.len());
        for path in files {
            if !path.exists() {
                return Err(AclLoadError::Missing { path: path.clone() });
            }
            libs.push((path.clone(), open_one(path)?));
        }
        Ok(Self { libs })
    }

    /// The files loaded, in order.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.libs.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Looks `name` up in each library in load order (each lookup also searches that library's
    /// own dependencies); `None` when no library has it.
    ///
    /// # Safety
    ///
    /// `T` must be the function-pointer type the symbol `name` is declared with (a `PFN_*` type
    /// of the bindings, which is an `Option<unsafe extern "C" fn(..)>`).
    pub(crate) unsafe fn lookup<T: Copy>(&self, name: &str) -> Option<T> {
        self.libs.iter().find_map(|(_, lib)| {
            // SAFETY: the caller guarantees that `T` is the symbol's declared pointer type; the
            // value is copied out and stays valid while `self` keeps the library loaded.
            unsafe { lib.get::<T>(name.as_bytes()) }.ok().map(|s| *s)
        })
    }
}

fn open_one(path: &Path) -> Result<libloading::Library, AclLoadError> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading a library runs its initialisers. The files are the CANN runtime (or
    // libsim_acl.so) as configured by the operator; cardguard calls nothing else in them.
    let lib =
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| AclLoadError::Open {
            path: path.to_owned(),
            reason: one_line(&e.to_string()),
        })?;
    Ok(lib.into())
}

/// The loader's message on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
