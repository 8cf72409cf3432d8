//! `[[profile.NAME.overrides]]`: per-case settings (`retries`, `timeout`) for the cases a
//! selector takes (`filter`, the grammar of `--case`: `Class`, `Class::`, `Class::case`,
//! `tag:NAME`).
//!
//! Precedence, per setting: the first override that takes the case and sets it (the selected
//! profile's overrides in file order, then `default`'s) > the case's own declaration > its
//! class's > the run-wide value (flag > environment > profile > built-in default). A setting that
//! names the case beats one that does not; of the two that name it, the operator's override (about
//! this host) beats the author's declaration (about the case). The overrides land where the case
//! API's settings do ([`Overrides::settings_of`] stands in for `ClassSpec::settings_of`): the
//! dispatcher's timeout and retries, and `--list --format json`. This file owns reading and
//! applying them; it never runs anything.

use std::path::PathBuf;
use std::time::Duration;

use platform_common::Arch;
use serde::Deserialize;
use toml::Spanned;

use super::error::ConfigError;
use super::source::FileText;
use super::values::{as_flag_text, Kind};
use crate::case::{CaseSpec, ClassSpec, Settings, Suite};
use crate::select::Selector;
use crate::settings::{parse_count, parse_secs};

/// One override as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideTable {
    /// The selector.
    pub filter: Spanned<toml::Value>,
    /// Retries for the cases it takes.
    #[serde(default)]
    pub retries: Option<Spanned<toml::Value>>,
    /// A timeout (seconds) for the cases it takes.
    #[serde(default)]
    pub timeout: Option<Spanned<toml::Value>>,
}

/// One override, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// Which cases it takes.
    pub selector: Selector,
    /// Their retries.
    pub retries: Option<u32>,
    /// Their timeout.
    pub timeout: Option<Duration>,
    /// The profile it is in.
    pub profile: String,
    /// The config file.
    pub path: PathBuf,
    /// The line of its `[[profile.NAME.overrides]]` header.
    pub line: usize,
}

/// The run's overrides, in precedence order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// First match wins, per setting.
    pub list: Vec<Override>,
}

fn checked<X>(
    file: &FileText,
    key: &str,
    kind: Kind,
    v: &Spanned<toml::Value>,
    parse: fn(&str) -> Result<X, String>,
) -> Result<X, ConfigError> {
    let at = |m: String| file.error_at(&v.span(), key, m);
    parse(&as_flag_text(kind, v.get_ref()).map_err(at)?).map_err(at)
}

impl Overrides {
    /// The overrides of `profiles` (selected first), each checked.
    pub fn read(
        file: &FileText,
        profiles: &[(&str, &[Spanned<OverrideTable>])],
    ) -> Result<Self, ConfigError> {
        let mut list = Vec::new();
        for (name, overrides) in profiles {
            list.extend(read_profile(file, name, overrides)?);
        }
        Ok(Overrides { list })
    }

    /// Case `case`'s settings with the overrides over its own and its class's.
    pub fn settings_of(&self, class: &ClassSpec, case: &CaseSpec) -> Settings {
        let mut s = class.settings_of(case);
        let mut taking = self.list.iter().filter(|o| o.selector.matches_case(class, case));
        if let Some(t) = taking.clone().find_map(|o| o.timeout) {
            s.timeout = Some(t);
        }
        if let Some(r) = taking.find_map(|o| o.retries) {
            s.retries = Some(r);
        }
        s
    }

    /// How many cases of `suite` that run on `arch` each override takes (a filter that takes
    /// none is no error, the file serving every suite and arch, but `--show-config` shows it).
    pub fn takes(&self, suite: &Suite, arch: Arch) -> Vec<usize> {
        self.list
            .iter()
            .map(|o| {
                suite
                    .classes
                    .iter()
                    .flat_map(|c| c.cases.iter().map(move |k| (c, k)))
                    .filter(|(c, k)| k.arch.admits(arch) && o.selector.matches_case(c, k))
                    .count()
            })
            .collect()
    }
}

/// Profile `name`'s overrides, checked (also for a profile that is not selected).
pub fn read_profile(
    file: &FileText,
    name: &str,
    overrides: &[Spanned<OverrideTable>],
) -> Result<Vec<Override>, ConfigError> {
    let mut out = Vec::new();
    for (i, o) in overrides.iter().enumerate() {
        let key = |k: &str| format!("profile.{name}.overrides[{i}].{k}");
        let t = o.get_ref();
        let selector = checked(file, &key("filter"), Kind::Text, &t.filter, |s| {
            s.parse::<Selector>().map_err(|e| e.to_string())
        })?;
        let retries = t
            .retries
            .as_ref()
            .map(|v| checked(file, &key("retries"), Kind::Count, v, parse_count))
            .transpose()?;
        let timeout = t
            .timeout
            .as_ref()
            .map(|v| checked(file, &key("timeout"), Kind::Secs, v, parse_secs))
            .transpose()?;
        if retries.is_none() && timeout.is_none() {
            return Err(file.error_at(
                &o.span(),
                format!("profile.{name}.overrides[{i}]"),
                "sets neither retries nor timeout",
            ));
        }
        out.push(Override {
            selector,
            retries,
            timeout,
            profile: name.to_owned(),
            path: file.path.clone(),
            line: file.line(&o.span()),
        });
    }
    Ok(out)
}
