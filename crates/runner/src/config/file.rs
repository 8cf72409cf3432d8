//! Reading the config file (found by `source`: `--config FILE`, else `CARDGUARD_CONFIG`, else the
//! first `.config/cardguard.toml` upward, nextest's `.config/nextest.toml` convention; `cargo
//! xtask onboard` passes the workspace's own with `--config` when neither is given). The file is
//! read with serde (`deny_unknown_fields` on every table) and every error names the file, the
//! line (from `toml`'s span) and the key's dotted path.
//!
//! This file owns the TOML shape ([`ConfigFile`]) and parsing it; it never checks a setting's
//! value (`settings` and `overrides` do, with the flags' parsers).

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::error::ConfigError;
use super::settings::ProfileTable;
use super::source::{line_of, FileText, Found};

/// The file's TOML shape: profiles only.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[profile.NAME]` tables.
    #[serde(default)]
    pub profile: BTreeMap<String, Spanned<ProfileTable>>,
}

/// A config file read and parsed: its text (where it came from, for messages) and its profiles.
/// It reads as its [`FileText`] (`file.path`, `file.error_at(..)`), which is all that a message
/// about one of its lines needs.
#[derive(Debug)]
pub struct LoadedFile {
    /// Its text and where it came from.
    pub source: FileText,
    /// Its profiles.
    pub doc: ConfigFile,
}

impl std::ops::Deref for LoadedFile {
    type Target = FileText;

    fn deref(&self) -> &FileText {
        &self.source
    }
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
        source: FileText { path, found, text },
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
