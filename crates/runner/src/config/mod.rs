//! The config file with profiles: `.config/cardguard.toml` (nextest's convention), its profiles
//! (`[profile.default]`, named ones inheriting from it), per-case overrides by selector, and the
//! precedence of every run setting: flag > environment > profile > built-in default.
//!
//! - `source`: where the file comes from (`--config`, `CARDGUARD_CONFIG`, the search upward)
//!   and its text, by which errors name a line; `file`: its TOML shape, errors with file, line
//!   and key;
//! - `settings`: the table of run settings (one line each) and their precedence ([`Source`]);
//! - `overrides`: `[[profile.NAME.overrides]]` and how they meet a case's own settings;
//! - `values`: one parser per setting (the flag's), TOML types, how values are shown;
//! - `load`: one run's [`Config`]; `show`: `--show-config`; `error`: [`ConfigError`].
//!
//! This module owns reading and resolving the settings; it never starts a run.

mod error;
mod file;
mod load;
mod overrides;
mod settings;
mod show;
mod source;
mod values;

#[cfg(test)]
mod tests;

pub use error::ConfigError;
pub use file::{key_at, parse, read, ConfigFile, LoadedFile};
pub use load::{load, Config, DEFAULT_PROFILE, ENV_PROFILE};
pub use overrides::{read_profile, Override, OverrideTable, Overrides};
pub use settings::{check_profile, Chain, Key, ProfileTable, Resolved, RunSettings, Source, KEYS};
pub use show::render as render_show_config;
pub use source::{locate, EnvLookup, FileText, Found, CONFIG_PATH, ENV_CONFIG};
pub use values::Kind;
