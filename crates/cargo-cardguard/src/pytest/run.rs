//! The command itself: its arguments split at `--`, the default arch and interpreter, the
//! collection, the suite, and the lanes' command line handed to the runner's dispatcher.

use std::ffi::OsString;
use std::process::ExitCode;

use runner::app::{dispatch_foreign, ForeignLanes};

use super::{collect, selectors, suite};

/// The interpreter of the collection and the lanes.
pub const ENV_PYTHON: &str = "CARDGUARD_PYTHON";

/// Runs `cardguard pytest` with `args` (after the subcommand).
pub fn main(args: Vec<OsString>) -> ExitCode {
    let (mut flags, pytest_args) = split(args);
    if !flags
        .iter()
        .any(|f| f == "--arch" || f.to_string_lossy().starts_with("--arch="))
    {
        let arch = std::env::var_os("CARDGUARD_ARCH").unwrap_or_else(|| "a5".into());
        flags.insert(0, arch);
        flags.insert(0, "--arch".into());
    }
    let python = std::env::var_os(ENV_PYTHON)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into());
    let scratch = match tempfile::Builder::new().prefix("cardguard-pytest-").tempdir() {
        Ok(d) => d,
        Err(e) => return usage(&format!("cannot make a scratch dir: {e}")),
    };
    let items = match collect::collect(&python, &pytest_args, scratch.path()) {
        Ok(i) => i,
        Err(e) => return usage(&e.to_string()),
    };
    let flags = selectors::translate(flags, &items);
    let suite = match suite::suite(&items) {
        Ok(s) => s,
        Err(e) => return usage(&e.to_string()),
    };
    let mut lane_args: Vec<OsString> = [
        "-m",
        "pytest",
        "-p",
        "cardguard_pytest.lane",
        "-p",
        "no:cacheprovider",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    lane_args.extend(pytest_args);
    let lanes = ForeignLanes {
        exe: python.into(),
        args: lane_args,
        env: Vec::new(),
    };
    let mut argv: Vec<OsString> = vec!["cardguard pytest".into()];
    argv.extend(flags);
    dispatch_foreign(argv, &suite, &lanes)
}

/// The runner's flags and pytest's arguments, split at the first `--`.
fn split(args: Vec<OsString>) -> (Vec<OsString>, Vec<OsString>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args, Vec::new()),
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_pytest_arguments_split_at_the_first_double_dash() {
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        let (f, p) = split(v(&["--retries", "1", "--", "tests", "--", "-x"]));
        assert_eq!(f, v(&["--retries", "1"]));
        assert_eq!(p, v(&["tests", "--", "-x"]));
        let (f, p) = split(v(&["--list"]));
        assert_eq!((f, p), (v(&["--list"]), Vec::new()));
    }
}
