//! [`ConfigError`]: everything that can be wrong with the config file, a profile or a setting's
//! environment variable, each on one line naming the bad part (exit 2): the file, line and key
//! for the file, the variable for the environment, the flag for `--config` and `--profile`.
//!
//! This file owns the errors and their wording; it never reads a file or a variable.

use std::path::PathBuf;

/// A config that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file `--config` or `CARDGUARD_CONFIG` names (or the one found) cannot be read.
    #[error("cannot read the config file {} (given by {from})", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// How it was chosen: `--config`, `CARDGUARD_CONFIG`, or the search.
        from: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Something at a line of the file: bad TOML, an unknown key, a wrong type or a bad value.
    #[error("{}:{line}: {}{message}", path.display(), key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default())]
    At {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The key's dotted path (`profile.ci.retries`, `profile.ci.overrides[0].filter`), when
        /// the error has one.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A setting's environment variable holds a value its parser refuses (or not UTF-8).
    #[error("{var}={value:?}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// Its value (lossily decoded).
        value: String,
        /// What is wrong.
        message: String,
    },
    /// `--profile` or `CARDGUARD_PROFILE` names a profile the file does not have (or there is
    /// no file).
    #[error("{from} {name}: {message}")]
    Profile {
        /// `--profile` or `CARDGUARD_PROFILE`.
        from: String,
        /// The name given.
        name: String,
        /// What is wrong.
        message: String,
    },
}
