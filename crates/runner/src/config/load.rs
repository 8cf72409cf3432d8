//! Loading the config for one run: the file (if any), the selected profile (`--profile NAME`,
//! else `CARDGUARD_PROFILE`, else `default`; a named profile inherits every key and override it
//! does not set from `default`), the run settings and the per-case overrides.
//!
//! Every profile of the file is checked, not only the selected one, so a bad value anywhere is
//! found on any run. This file owns that order; it never decides what a setting means for the
//! run (`crate::app` does).

use std::path::Path;

use super::error::ConfigError;
use super::file::{read, LoadedFile};
use super::overrides::{read_profile, Overrides};
use super::settings::{check_profile, Chain, ProfileTable, RunSettings, Source};
use super::source::{locate, EnvLookup, CONFIG_PATH, ENV_CONFIG};
use crate::cli::Cli;

/// The variable that selects a profile (below `--profile`).
pub const ENV_PROFILE: &str = "CARDGUARD_PROFILE";

/// The profile every other inherits from, and the one used when none is selected.
pub const DEFAULT_PROFILE: &str = "default";

/// A run's config, resolved.
#[derive(Debug)]
pub struct Config {
    /// The config file, if one was given or found.
    pub file: Option<LoadedFile>,
    /// Where the search started (for `--show-config` when no file was found).
    pub searched_from: std::path::PathBuf,
    /// `--no-config`: no file was looked for.
    pub no_config: bool,
    /// The selected profile.
    pub profile: String,
    /// How it was selected (`--profile`, `CARDGUARD_PROFILE` or the default).
    pub profile_source: Source,
    /// The run settings.
    pub settings: RunSettings,
    /// The per-case overrides, in precedence order.
    pub overrides: Overrides,
}

/// Loads the config for `cli`: `env` is the environment, `cwd` where the search starts.
pub fn load(cli: &Cli, env: EnvLookup<'_>, cwd: &Path) -> Result<Config, ConfigError> {
    let located = if cli.no_config {
        None
    } else {
        locate(cli.config.as_deref(), env, cwd)?
    };
    let file = match located {
        Some((path, found)) => Some(read(path, found)?),
        None => None,
    };
    let (profile, profile_source) = if cli.no_config {
        (DEFAULT_PROFILE.to_owned(), Source::Default)
    } else {
        selected_profile(cli, env)?
    };
    let mut profiles: Vec<(&str, &ProfileTable)> = Vec::new();
    if let Some(f) = &file {
        for (name, table) in &f.doc.profile {
            check_profile(f, name, table.get_ref())?;
            read_profile(f, name, &table.get_ref().overrides)?;
        }
        if profile != DEFAULT_PROFILE {
            let Some(t) = f.doc.profile.get(&profile) else {
                let known: Vec<&str> = f.doc.profile.keys().map(String::as_str).collect();
                return Err(ConfigError::Profile {
                    from: profile_source.label("profile"),
                    name: profile,
                    message: format!(
                        "no such profile in {} (it has: {})",
                        f.path.display(),
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ),
                });
            };
            profiles.push((profile.as_str(), t.get_ref()));
        }
        if let Some(t) = f.doc.profile.get(DEFAULT_PROFILE) {
            profiles.push((DEFAULT_PROFILE, t.get_ref()));
        }
    } else if profile != DEFAULT_PROFILE {
        return Err(ConfigError::Profile {
            from: profile_source.label("profile"),
            name: profile,
            message: format!(
                "there is no config file (none given by --config or {ENV_CONFIG}, and no {CONFIG_PATH} from {} upward)",
                cwd.display()
            ),
        });
    }
    let chain = Chain {
        file: file.as_deref(),
        profiles,
    };
    let mut settings = RunSettings::resolve(cli, env, &chain)?;
    let overrides = match &file {
        Some(f) => {
            let overrides: Vec<_> = chain
                .profiles
                .iter()
                .map(|(n, t)| (*n, t.overrides.as_slice()))
                .collect();
            Overrides::read(f, &overrides)?
        }
        None => Overrides::default(),
    };
    // A profile's relative report dir is relative to the workspace root the file is in, not to
    // wherever the run was started.
    if let (Some(f), Source::Profile { .. }) = (&file, &settings.report_dir.source) {
        if let Some(dir) = settings.report_dir.value.as_mut() {
            if dir.is_relative() {
                *dir = f.base_dir().join(&*dir);
                settings.report_dir.shown = dir.display().to_string();
            }
        }
    }
    Ok(Config {
        file,
        searched_from: cwd.to_path_buf(),
        no_config: cli.no_config,
        profile,
        profile_source,
        settings,
        overrides,
    })
}

fn selected_profile(cli: &Cli, env: EnvLookup<'_>) -> Result<(String, Source), ConfigError> {
    if let Some(p) = &cli.profile {
        return Ok((p.clone(), Source::Flag("--profile")));
    }
    match env(ENV_PROFILE) {
        None => Ok((DEFAULT_PROFILE.to_owned(), Source::Default)),
        Some(raw) => match raw.to_str() {
            Some(p) if !p.is_empty() => Ok((p.to_owned(), Source::Env(ENV_PROFILE))),
            _ => Err(ConfigError::Env {
                var: ENV_PROFILE.to_owned(),
                value: raw.to_string_lossy().into_owned(),
                message: "is not a profile name (empty or not UTF-8)".to_owned(),
            }),
        },
    }
}
