//! Where the config file comes from (`--config FILE`, else `CARDGUARD_CONFIG`, else the first
//! `.config/cardguard.toml` from the current directory upward) and its text, by which every
//! message names a line ([`FileText`]).
//!
//! This file owns finding the file and pointing into it. It never parses the file (`file` does)
//! nor checks a setting (`settings` and `overrides` do).

use std::ffi::OsString;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// Where the config file is looked for, from a directory upward.
pub const CONFIG_PATH: &str = ".config/cardguard.toml";

/// The variable that names the config file (below `--config`).
pub const ENV_CONFIG: &str = "CARDGUARD_CONFIG";

/// A lookup of the environment (the process's in the suite binary, a map in tests).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// How the config file was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `--config FILE`.
    Flag,
    /// `CARDGUARD_CONFIG`.
    Env,
    /// The first `.config/cardguard.toml` upward from this directory.
    Search(PathBuf),
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Flag => f.write_str("--config"),
            Found::Env => f.write_str(ENV_CONFIG),
            Found::Search(from) => write!(f, "found upward from {}", from.display()),
        }
    }
}

/// A config file's text and where it came from: what a message about a line of it needs.
#[derive(Debug)]
pub struct FileText {
    /// The file, as found or given.
    pub path: PathBuf,
    /// How it was chosen.
    pub found: Found,
    /// Its text (for line numbers).
    pub text: String,
}

impl FileText {
    /// The line (from 1) of byte offset `span.start`.
    pub fn line(&self, span: &Range<usize>) -> usize {
        line_of(&self.text, span.start)
    }

    /// An error at `span`, naming `key`.
    pub fn error_at(
        &self,
        span: &Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError::At {
            path: self.path.clone(),
            line: self.line(span),
            key: Some(key.into()),
            message: message.into(),
        }
    }

    /// What a relative path in the file is relative to: the directory holding `.config/` for a
    /// file in a `.config` directory (the workspace root), else the file's own directory.
    pub fn base_dir(&self) -> PathBuf {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        match dir.file_name() {
            Some(n) if n == ".config" => dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
            _ => dir.to_path_buf(),
        }
    }
}

/// The config file to read, if any: `flag`, else `CARDGUARD_CONFIG`, else the search from `cwd`.
pub fn locate(
    flag: Option<&Path>,
    env: EnvLookup<'_>,
    cwd: &Path,
) -> Result<Option<(PathBuf, Found)>, ConfigError> {
    if let Some(p) = flag {
        return Ok(Some((p.to_path_buf(), Found::Flag)));
    }
    if let Some(p) = env(ENV_CONFIG) {
        if p.is_empty() {
            return Err(ConfigError::Env {
                var: ENV_CONFIG.to_owned(),
                value: String::new(),
                message: "is set but empty (unset it to search for .config/cardguard.toml)".to_owned(),
            });
        }
        return Ok(Some((PathBuf::from(p), Found::Env)));
    }
    Ok(cwd
        .ancestors()
        .map(|d| d.join(CONFIG_PATH))
        .find(|p| p.is_file())
        .map(|p| (p, Found::Search(cwd.to_path_buf()))))
}

/// The line (from 1) of byte offset `offset` of `text`.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|b| **b == b'\n').count() + 1
}
