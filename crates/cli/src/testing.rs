//! Test helpers: the built-in suite binary of this repository, built as `cargo xtask` builds it.

use std::path::{Path, PathBuf};

use crate::cargo_build::build_suite;
use crate::workspace::{Workspace, BUILTIN_PACKAGE};

/// This repository's workspace, with the built-in suite as its default package.
pub fn repository() -> Workspace {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut ws = Workspace::discover(&root).expect("cargo metadata of the repository");
    ws.default_package = Some(BUILTIN_PACKAGE.to_owned());
    ws
}

/// The built-in suite binary (debug, both drivers).
pub fn builtin_suite() -> PathBuf {
    let ws = repository();
    let suite = ws.suite(None, None).expect("the built-in suite");
    build_suite(&ws, &suite, "dev").expect("the suite binary builds")
}
