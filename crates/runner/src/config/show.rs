//! `--show-config`: the resolved settings, each with where it came from (flag, env, profile
//! `ci` at `FILE:LINE`, default), and the per-case overrides with how many cases of the suite
//! each takes on the arch.
//!
//! This file owns that text; it never resolves anything (`load` does).

use std::fmt::Write;

use platform_common::Arch;

use super::load::Config;
use super::settings::Source;
use super::source::CONFIG_PATH;
use super::values::show_secs;
use crate::case::Suite;

/// The `--show-config` text (lines, no trailing newline).
pub fn render(config: &Config, suite: &Suite, arch: Arch) -> String {
    let mut out = String::new();
    match &config.file {
        Some(f) => {
            let _ = writeln!(out, "config file: {} ({})", f.path.display(), f.found);
        }
        None if config.no_config => out.push_str("config file: none (--no-config)\n"),
        None => {
            let _ = writeln!(
                out,
                "config file: none (no {CONFIG_PATH} from {} upward)",
                config.searched_from.display()
            );
        }
    }
    let how = match &config.profile_source {
        Source::Default => "default".to_owned(),
        other => other.to_string(),
    };
    let _ = writeln!(out, "profile: {} ({how})", config.profile);
    let rows = config.settings.rows();
    let kw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let vw = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (key, value, source) in rows {
        let _ = writeln!(out, "  {key:kw$}  {value:vw$}  {source}");
    }
    if config.overrides.list.is_empty() {
        out.push_str("overrides: none");
        return out;
    }
    out.push_str("overrides (per setting, the first that takes a case wins over the case's own):");
    let takes = config.overrides.takes(suite, arch);
    for (o, n) in config.overrides.list.iter().zip(takes) {
        let mut set = Vec::new();
        if let Some(t) = o.timeout {
            set.push(format!("timeout {}", show_secs(&t)));
        }
        if let Some(r) = o.retries {
            set.push(format!("retries {r}"));
        }
        let _ = write!(
            out,
            "\n  filter \"{}\": {}  (profile {} at {}:{}; takes {n} case(s) on {})",
            o.selector,
            set.join(", "),
            o.profile,
            o.path.display(),
            o.line,
            arch.name()
        );
    }
    out
}
