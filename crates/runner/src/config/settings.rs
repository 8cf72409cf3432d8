//! The run settings that a flag, an environment variable and a profile key can each give, and
//! which one wins: flag > environment > profile (the selected one, then `default`) > built-in
//! default. Every resolved value keeps where it came from ([`Source`]) for `--show-config`.
//!
//! The table in [`run_settings!`]'s invocation below is the one place a setting is declared: its
//! `Cli` field (an `Option`, so an absent flag is told apart from a default), resolved type and
//! built-in default, its key (the flag's name without `--`), variable, TOML kind, parser (the
//! flag's own) and how it is shown. Adding a flag to the config is one line there (plus its
//! docs/reference/config-keys.md row). This file owns that table and the precedence; it never reads a file (`file`
//! does) and never applies a setting to a run (`crate::app` does).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::error::ConfigError;
use super::overrides::OverrideTable;
use super::source::{EnvLookup, FileText};
use super::values::*;
use crate::cli::{Cli, FlakyArg, IsolationArg, MissingKernelArg, PlatformArg};
use crate::settings::{
    parse_count, parse_iterations, parse_secs, parse_wait, DeviceSpec, HealthCheck, DEFAULT_CASE_TIMEOUT,
    DEFAULT_INIT_TIMEOUT,
};

/// Where a resolved setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Its flag (`--retries`).
    Flag(&'static str),
    /// Its environment variable.
    Env(&'static str),
    /// A profile of the config file, at a line.
    Profile {
        /// The profile.
        name: String,
        /// The file.
        path: PathBuf,
        /// The value's line.
        line: usize,
    },
    /// The built-in default.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Profile { name, path, line } => write!(f, "profile {name} at {}:{line}", path.display()),
            Source::Default => f.write_str("default"),
        }
    }
}

impl Source {
    /// How an error found later in the value names its source: the flag, the variable, or
    /// `FILE:LINE: profile.NAME.KEY`.
    pub fn label(&self, key: &str) -> String {
        match self {
            Source::Flag(flag) => (*flag).to_owned(),
            Source::Env(var) => (*var).to_owned(),
            Source::Profile { name, path, line } => {
                format!("{}:{line}: profile.{name}.{key}", path.display())
            }
            Source::Default => format!("the default {key}"),
        }
    }
}

/// One setting's value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved<T> {
    /// The value.
    pub value: T,
    /// The value as `--show-config` prints it (the default's description for a default).
    pub shown: String,
    /// Where it came from.
    pub source: Source,
}

/// A setting's names and type, for errors, `--show-config` and docs/reference/config-keys.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The config key (the flag's name without `--`).
    pub key: &'static str,
    /// The flag.
    pub flag: &'static str,
    /// The environment variable.
    pub env: &'static str,
    /// The TOML type.
    pub kind: Kind,
    /// The built-in default, described.
    pub default: &'static str,
}

/// The profiles a setting is looked up in, first hit wins: the selected one, then `default`.
#[derive(Debug)]
pub struct Chain<'a> {
    /// The file they are in (none: no config file, no profile values).
    pub file: Option<&'a FileText>,
    /// (name, table), selected first.
    pub profiles: Vec<(&'a str, &'a ProfileTable)>,
}

/// A profile's value checked: the right TOML type, then the flag's parser.
fn profile_value<X>(
    k: &Key,
    file: &FileText,
    profile: &str,
    v: &Spanned<toml::Value>,
    parse: fn(&str) -> Result<X, String>,
) -> Result<X, ConfigError> {
    let at = |m: String| file.error_at(&v.span(), format!("profile.{profile}.{}", k.key), m);
    let text = as_flag_text(k.kind, v.get_ref()).map_err(at)?;
    parse(&text).map_err(at)
}

/// Flag, else variable, else profile, else `default`.
#[allow(clippy::too_many_arguments)]
fn pick<X, T>(
    k: &Key,
    flag: Option<X>,
    parse: fn(&str) -> Result<X, String>,
    show: fn(&X) -> String,
    default: T,
    env: EnvLookup<'_>,
    chain: &Chain<'_>,
    get: fn(&ProfileTable) -> Option<&Spanned<toml::Value>>,
) -> Result<Resolved<T>, ConfigError>
where
    X: Into<T>,
{
    let resolved = |x: X, source| Resolved {
        shown: show(&x),
        value: x.into(),
        source,
    };
    if let Some(x) = flag {
        return Ok(resolved(x, Source::Flag(k.flag)));
    }
    if let Some(raw) = env(k.env) {
        let bad = |message: String| ConfigError::Env {
            var: k.env.to_owned(),
            value: raw.to_string_lossy().into_owned(),
            message,
        };
        let text = raw.to_str().ok_or_else(|| bad("is not valid UTF-8".to_owned()))?;
        return Ok(resolved(parse(text).map_err(bad)?, Source::Env(k.env)));
    }
    if let Some(file) = chain.file {
        for (name, table) in &chain.profiles {
            if let Some(v) = get(table) {
                let x = profile_value(k, file, name, v, parse)?;
                let source = Source::Profile {
                    name: (*name).to_owned(),
                    path: file.path.clone(),
                    line: file.line(&v.span()),
                };
                return Ok(resolved(x, source));
            }
        }
    }
    Ok(Resolved {
        value: default,
        shown: k.default.to_owned(),
        source: Source::Default,
    })
}

/// Declares the run settings: see the module docs. Each line:
/// `field: Type = default, "default described", "key", "VARIABLE", Kind, parser, show;`
macro_rules! run_settings {
    ($($field:ident: $ty:ty = $default:expr, $dtext:literal, $key:literal, $env:literal, $kind:ident, $parse:expr, $show:expr;)*) => {
        /// One `[profile.NAME]` table as written (values kept with their spans for errors).
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct ProfileTable {
            $(
                #[allow(missing_docs)]
                #[serde(rename = $key, default)]
                pub $field: Option<Spanned<toml::Value>>,
            )*
            /// `[[profile.NAME.overrides]]`: per-case settings by selector.
            #[serde(default)]
            pub overrides: Vec<Spanned<OverrideTable>>,
        }

        /// Every run setting's names, in the table's order.
        pub const KEYS: &[Key] = &[$(Key {
            key: $key,
            flag: concat!("--", $key),
            env: $env,
            kind: Kind::$kind,
            default: $dtext,
        }),*];

        /// The run settings, resolved.
        #[derive(Debug, Clone, PartialEq)]
        pub struct RunSettings {
            $(
                #[allow(missing_docs)]
                pub $field: Resolved<$ty>,
            )*
        }

        impl RunSettings {
            /// Resolves every setting: `cli`'s flag, else its variable in `env`, else the
            /// profiles of `chain`, else the built-in default.
            pub fn resolve(cli: &Cli, env: EnvLookup<'_>, chain: &Chain<'_>) -> Result<Self, ConfigError> {
                let mut keys = KEYS.iter();
                Ok(RunSettings {$(
                    $field: pick(
                        keys.next().expect("one key per setting"),
                        cli.$field.clone(),
                        $parse,
                        $show,
                        $default,
                        env,
                        chain,
                        |t| t.$field.as_ref(),
                    )?,
                )*})
            }

            /// (key, value shown, source) of every setting, in the table's order.
            pub fn rows(&self) -> Vec<(&'static str, &str, &Source)> {
                vec![$(($key, self.$field.shown.as_str(), &self.$field.source)),*]
            }
        }

        /// Checks every value of profile `name` (a profile that is not selected too: a typo is
        /// found on any run).
        pub fn check_profile(file: &FileText, name: &str, table: &ProfileTable) -> Result<(), ConfigError> {
            let mut keys = KEYS.iter();
            $(
                let k = keys.next().expect("one key per setting");
                if let Some(v) = &table.$field {
                    profile_value(k, file, name, v, $parse)?;
                }
            )*
            let _ = keys;
            Ok(())
        }
    };
}

run_settings! {
    platform: Option<PlatformArg> = None, "onboard when CANN is found, else sim", "platform", "CARDGUARD_PLATFORM", Text, parse_enum::<PlatformArg>, show_enum;
    devices: DeviceSpec = DeviceSpec::Auto, "auto", "devices", "CARDGUARD_DEVICES", Text, parse_from_str::<DeviceSpec>, show_display;
    device_num: Option<u32> = None, "2 on sim, every free card on real ones", "device-num", "CARDGUARD_DEVICE_NUM", Count, parse_count, show_display;
    retries: u32 = 2, "2", "retries", "CARDGUARD_RETRIES", Count, parse_count, show_display;
    flaky_result: FlakyArg = FlakyArg::Pass, "pass", "flaky-result", "CARDGUARD_FLAKY_RESULT", Text, parse_enum::<FlakyArg>, show_enum;
    case_timeout: Duration = DEFAULT_CASE_TIMEOUT, "300 s", "case-timeout", "CARDGUARD_CASE_TIMEOUT", Secs, parse_secs, show_secs;
    init_timeout: Duration = DEFAULT_INIT_TIMEOUT, "120 s", "init-timeout", "CARDGUARD_INIT_TIMEOUT", Secs, parse_secs, show_secs;
    wait_for_cards: Duration = Duration::ZERO, "0 s", "wait-for-cards", "CARDGUARD_WAIT_FOR_CARDS", Secs, parse_wait, show_secs;
    health_check: HealthCheck = HealthCheck::Each, "each", "health-check", "CARDGUARD_HEALTH_CHECK", Text, parse_enum::<HealthCheck>, show_enum;
    isolation: IsolationArg = IsolationArg::Pool, "pool", "isolation", "CARDGUARD_ISOLATION", Text, parse_enum::<IsolationArg>, show_enum;
    missing_kernel: Option<MissingKernelArg> = None, "fail on sim, skip on onboard", "missing-kernel", "CARDGUARD_MISSING_KERNEL", Text, parse_enum::<MissingKernelArg>, show_enum;
    faults: Option<String> = None, "none", "faults", "ONBOARD_SIM_FAULTS", Text, parse_text, show_display;
    faults_must_fire: bool = false, "false", "faults-must-fire", "CARDGUARD_FAULTS_MUST_FIRE", Switch, parse_switch, show_display;
    keep_sdma_workers: bool = false, "false", "keep-sdma-workers", "CARDGUARD_KEEP_SDMA_WORKERS", Switch, parse_switch, show_display;
    report_dir: Option<PathBuf> = None, "target/onboard/<arch>/<run-id>", "report-dir", "CARDGUARD_REPORT_DIR", Text, parse_path, show_path;
    stress_count: Option<u32> = None, "off", "stress-count", "CARDGUARD_STRESS_COUNT", Count, parse_iterations, show_display;
    stress_duration: Option<Duration> = None, "off", "stress-duration", "CARDGUARD_STRESS_DURATION", Secs, parse_secs, show_secs;
    no_progress: bool = false, "false", "no-progress", "CARDGUARD_NO_PROGRESS", Switch, parse_switch, show_display;
}
