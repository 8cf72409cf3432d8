//! Collection: pytest collects the suite through the `cardguard_pytest.collect` plugin, which
//! writes one JSON object per item ([`Item`]) to the file [`ENV_COLLECT_OUT`] names. pytest's own
//! collection errors stop the run (exit 2, pytest's last line of output named).

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

/// The variable naming the file the collect plugin writes its items to.
pub const ENV_COLLECT_OUT: &str = "CARDGUARD_COLLECT_OUT";

/// One collected pytest item, as the plugin writes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Item {
    /// pytest's node id.
    pub nodeid: String,
    /// The cardguard class: the module's dotted path, and `.Class` for a method.
    pub class: String,
    /// The cardguard case name (the function's name with its parameters).
    pub case: String,
    /// The module's dotted path.
    pub module: String,
    /// The runtime (the pool key) from the `cardguard` marker, the item's own over its class's.
    pub runtime: String,
    /// Cards the item needs.
    pub devices: u32,
    /// Its timeout in seconds, if its marker sets one.
    pub timeout: Option<f64>,
    /// Its retries, if its marker sets them.
    pub retries: Option<u32>,
    /// Its other markers (tags).
    pub tags: Vec<String>,
    /// Set when pytest would skip it (`skip`, a true `skipif`): the reason.
    pub skip: Option<String>,
    /// Set when it is `xfail`: the reason (the lane judges it as pytest does).
    pub xfail: Option<String>,
}

/// Collection could not give the items.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// pytest could not be started.
    #[error("cannot start {python:?} for pytest's collection: {source}")]
    Start {
        /// The interpreter.
        python: OsString,
        /// Why.
        source: std::io::Error,
    },
    /// pytest's collection failed.
    #[error("pytest's collection failed (exit {code}): {last}")]
    Failed {
        /// Its exit code.
        code: i32,
        /// Its last line of output.
        last: String,
    },
    /// The plugin's file could not be read.
    #[error("cannot read the collected items: {0}")]
    Read(std::io::Error),
    /// A line of it is not an item.
    #[error("collected item line {line}: {source}")]
    Line {
        /// Its number, from 1.
        line: usize,
        /// Why.
        source: serde_json::Error,
    },
}

/// Collects `pytest_args` with `python`; pytest's exit 5 (nothing collected) is an empty list.
pub fn collect(
    python: &OsString,
    pytest_args: &[OsString],
    scratch: &Path,
) -> Result<Vec<Item>, CollectError> {
    let out_file = scratch.join("items.jsonl");
    let out = Command::new(python)
        .args([
            "-m",
            "pytest",
            "-p",
            "cardguard_pytest.collect",
            "--collect-only",
            "-q",
        ])
        .args(["-p", "no:cacheprovider"])
        .args(pytest_args)
        .env(ENV_COLLECT_OUT, &out_file)
        .output()
        .map_err(|source| CollectError::Start {
            python: python.clone(),
            source,
        })?;
    let code = out.status.code().unwrap_or(-1);
    if code == 5 {
        return Ok(Vec::new());
    }
    if code != 0 {
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output")
            .trim()
            .to_owned();
        return Err(CollectError::Failed { code, last });
    }
    let text = std::fs::read_to_string(&out_file).map_err(CollectError::Read)?;
    parse(&text)
}

/// The items of the plugin's file.
pub fn parse(text: &str) -> Result<Vec<Item>, CollectError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|source| CollectError::Line { line: i + 1, source }))
        .collect()
}
