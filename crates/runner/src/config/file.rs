//! Finding and reading the config file: `--config FILE`, else `CARDGUARD_CONFIG`, else the first
//! `.config/cardguard.toml` from the current directory upward (nextest's `.config/nextest.toml`
//! convention; `cargo xtask onboard` passes the workspace's own with `--config` when neither is
//! given). The file is read with serde (`deny_unknown_fields` on every table) and every error
//! names the file, the line (from `toml`'s span) and the key's dotted path.
//!
//! This file owns where the config comes from and its TOML shape ([`ConfigFile`]); it never
//! checks a setting's value (`settings` and `overrides` do, with the flags' parsers).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::ConfigError;
use super::settings::ProfileTable;

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

/// The file's TOML shape: profiles only.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[profile.NAME]` tables.
    #[serde(default)]
    pub profile: BTreeMap<String, Spanned<ProfileTable>>,
}

/// A config file read and parsed.
#[derive(Debug)]
pub struct LoadedFile {
    /// The file, as found or given.
    pub path: PathBuf,
    /// How it was chosen.
    pub found: Found,
    /// Its text (for line numbers).
    pub text: String,
    /// Its profiles.
    pub doc: ConfigFile,
}

impl LoadedFile {
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

/// Reads and parses the file.
pub fn read(path: PathBuf, found: Found) -> Result<LoadedFile, ConfigError> {
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
        path: path.clone(),
        from: found.to_string(),
        source,
    })?;
    let doc = parse(&path, &text)?;
    Ok(LoadedFile {
        path,
        found,
        text,
        doc,
    })
}

/// Parses a config file's text; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ConfigError::At {
            path: path.to_path_buf(),
            line: line_of(text, span.start),
            key: key_at(text, &span),
            message: e.message().replace('\n', " ").trim_end().to_owned(),
        }
    })
}

fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|b| **b == b'\n').count() + 1
}

/// The dotted path of the innermost key whose key or value holds `span` (`None` for text that is
/// not TOML at all). The whole tree is searched (a `[table]`'s own span is its header only); a
/// key that is the span itself (an unknown key) beats a value that holds it.
pub fn key_at(text: &str, span: &Range<usize>) -> Option<String> {
    let table = DeTable::parse(text).ok()?;
    let mut best: Best = None;
    walk_table(table.get_ref(), span, &mut Vec::new(), &mut best);
    best.map(|(_, _, path)| path)
}

fn holds(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end.max(outer.start + 1)
}

/// (is a key hit, depth, path): the best so far.
type Best = Option<(bool, usize, String)>;

fn found(path: &[String], key_hit: bool, best: &mut Best) {
    if best
        .as_ref()
        .map_or(true, |(k, depth, _)| (key_hit, path.len()) > (*k, *depth))
    {
        let mut text = String::new();
        for seg in path {
            if !seg.starts_with('[') && !text.is_empty() {
                text.push('.');
            }
            text.push_str(seg);
        }
        *best = Some((key_hit, path.len(), text));
    }
}

fn walk_table(table: &DeTable<'_>, span: &Range<usize>, path: &mut Vec<String>, best: &mut Best) {
    for (k, v) in table {
        path.push(k.get_ref().to_string());
        if holds(&k.span(), span) {
            found(path, true, best);
        } else if holds(&v.span(), span) {
            found(path, false, best);
        }
        walk_value(v.get_ref(), span, path, best);
        path.pop();
    }
}

fn walk_value(v: &DeValue<'_>, span: &Range<usize>, path: &mut Vec<String>, best: &mut Best) {
    match v {
        DeValue::Table(t) => walk_table(t, span, path, best),
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                path.push(format!("[{i}]"));
                if holds(&item.span(), span) {
                    found(path, false, best);
                }
                walk_value(item.get_ref(), span, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}
