//! The variables `libsim_acl.so` reads, and where it reads them.
//!
//! A variable is read from the settings file beside the library (`<library file>.env`, lines of
//! `NAME=value`, `#` comments), when there is one, else from the process environment. The file
//! lets a test give each copy of the library its own sim root without touching the environment.
//! This file owns the lookup and the file's format; it never interprets a value.
//!
//! Variables: [`ENV_SIM_ARCH`] (`a5` unless set), `ONBOARD_SIM_ROOT`, `ONBOARD_SIM_CARDS`,
//! `ASCEND_RT_VISIBLE_DEVICES`,
//! `ONBOARD_SIM_FAULTS`, the timeout overrides (`ONBOARD_*_TIMEOUT_*`) and `RUST_LOG`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The arch the library's cards simulate: `a5` (default) or `a2a3`.
pub const ENV_SIM_ARCH: &str = "ONBOARD_SIM_ARCH";

/// The settings file of the library at `lib`: `<lib>.env`.
pub fn settings_file(lib: &Path) -> PathBuf {
    let mut name = lib.file_name().unwrap_or_default().to_os_string();
    name.push(".env");
    lib.with_file_name(name)
}

/// Renders `pairs` in the settings file's format.
pub fn render(pairs: &[(&str, String)]) -> String {
    pairs.iter().map(|(k, v)| format!("{k}={v}\n")).collect()
}

/// Parses the settings file's format; the error names the bad line.
pub fn parse(text: &str) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(format!("line {}: {line:?} is not NAME=value", i + 1));
        };
        out.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    Ok(out)
}

/// Where this process's copy of the library reads its variables.
#[derive(Debug, Default)]
pub(crate) struct Settings {
    file: HashMap<String, String>,
}

impl Settings {
    /// The settings of the library this code is in.
    pub(crate) fn load() -> Result<Self, String> {
        let Some(lib) = own_path() else {
            return Ok(Self::default());
        };
        let path = settings_file(&lib);
        match std::fs::read_to_string(&path) {
            Ok(text) => parse(&text)
                .map(|file| Self { file })
                .map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// A variable: the file's value, else the environment's.
    pub(crate) fn get(&self, name: &str) -> Option<String> {
        self.file.get(name).cloned().or_else(|| std::env::var(name).ok())
    }
}

/// The file this code was loaded from: the mapping of `/proc/self/maps` that holds this
/// function's address.
fn own_path() -> Option<PathBuf> {
    let here = own_path as fn() -> Option<PathBuf> as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| mapping_path(line, here))
}

/// The path of a `/proc/self/maps` line when its range holds `addr`.
fn mapping_path(line: &str, addr: usize) -> Option<PathBuf> {
    let mut fields = line.splitn(6, ' ');
    let range = fields.next()?;
    let (lo, hi) = range.split_once('-')?;
    let lo = usize::from_str_radix(lo, 16).ok()?;
    let hi = usize::from_str_radix(hi, 16).ok()?;
    if !(lo..hi).contains(&addr) {
        return None;
    }
    let path = fields.nth(4)?.trim_start();
    path.starts_with('/').then(|| PathBuf::from(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_format_round_trips_and_names_bad_lines() {
        let text = render(&[("A", "1".into()), ("B", "/x y".into())]);
        let parsed = parse(&format!("# c\n\n{text}")).unwrap();
        assert_eq!(parsed["A"], "1");
        assert_eq!(parsed["B"], "/x y");
        let e = parse("A=1\nnonsense\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn a_maps_line_yields_its_path_only_around_the_address() {
        let line = "7f00-7f80 r-xp 00001000 08:01 1234                       /tmp/x/libsim_acl.so";
        assert_eq!(
            mapping_path(line, 0x7f10),
            Some(PathBuf::from("/tmp/x/libsim_acl.so"))
        );
        assert_eq!(mapping_path(line, 0x7f80), None);
        assert_eq!(mapping_path("7f00-7f80 rw-p 00000000 00:00 0 ", 0x7f10), None);
    }

    #[test]
    fn this_code_finds_its_own_file() {
        let me = own_path().expect("own mapping");
        assert!(me.is_file(), "{}", me.display());
        assert_eq!(
            settings_file(Path::new("/a/libsim_acl.so")),
            PathBuf::from("/a/libsim_acl.so.env")
        );
    }
}
