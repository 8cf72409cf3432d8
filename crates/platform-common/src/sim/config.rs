//! Where the simulated cards keep their state, how many there are, and the timeouts they use.
//!
//! This file owns [`SimConfig`] and its defaults from the environment. It never touches a card.

use std::path::{Path, PathBuf};

use super::error::SimError;
use crate::arch::Arch;
use crate::timeouts::{TimeoutProfile, Timeouts};

/// Environment variable naming the sim root (the directory of the card files).
pub const ENV_SIM_ROOT: &str = "ONBOARD_SIM_ROOT";
/// Environment variable giving the number of simulated cards.
pub const ENV_SIM_CARDS: &str = "ONBOARD_SIM_CARDS";
/// Cards a sim has unless told otherwise.
pub const DEFAULT_CARDS: u32 = 8;

/// The settings of a simulated machine. Tests build one with their own temp root; binaries use
/// [`SimConfig::from_env`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// The arch the cards simulate (its codes and limits).
    pub arch: Arch,
    /// Directory of the per-card state files (created on demand).
    pub root: PathBuf,
    /// Cards `0..cards`.
    pub cards: u32,
    /// The timeouts; `timeouts.op_execute` is a context's op-execute timeout until
    /// `set_op_execute_timeout` changes it.
    pub timeouts: Timeouts,
}

impl SimConfig {
    /// 8 cards with the sim's default timeouts, state under `root`.
    pub fn new(arch: Arch, root: impl Into<PathBuf>) -> Self {
        Self {
            arch,
            root: root.into(),
            cards: DEFAULT_CARDS,
            timeouts: Timeouts::defaults(TimeoutProfile::Sim),
        }
    }

    /// The same settings with `cards` cards.
    pub fn with_cards(mut self, cards: u32) -> Self {
        self.cards = cards;
        self
    }

    /// The same settings with these timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Settings from the environment: [`ENV_SIM_ROOT`] (default: `sim` in the cargo target
    /// directory, else under the temp dir), [`ENV_SIM_CARDS`] (default 8) and the timeout overrides
    /// of [`Timeouts::from_env`].
    pub fn from_env(arch: Arch) -> Result<Self, SimError> {
        let root = match std::env::var_os(ENV_SIM_ROOT) {
            Some(r) if !r.is_empty() => PathBuf::from(r),
            _ => default_root(),
        };
        let cards = match std::env::var(ENV_SIM_CARDS) {
            Err(_) => DEFAULT_CARDS,
            Ok(v) => parse_cards(&v)?,
        };
        Ok(Self {
            arch,
            root,
            cards,
            timeouts: Timeouts::from_env(TimeoutProfile::Sim)?,
        })
    }

    /// The state file of `card`.
    pub fn card_path(&self, card: u32) -> PathBuf {
        self.root.join(format!("card-{card}.json"))
    }
}

fn parse_cards(v: &str) -> Result<u32, SimError> {
    let bad = |reason| SimError::Env {
        var: ENV_SIM_CARDS,
        value: v.to_owned(),
        reason,
    };
    let t = v.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("is not a whole number"));
    }
    match t.parse::<u32>() {
        Ok(0) => Err(bad("must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(bad("is too large")),
    }
}

/// `<target>/sim`: `CARGO_TARGET_DIR`, else the nearest ancestor of the running executable named
/// `target`, else a per-user directory under the temp dir.
fn default_root() -> PathBuf {
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR").filter(|t| !t.is_empty()) {
        return PathBuf::from(t).join("sim");
    }
    if let Some(t) = std::env::current_exe().ok().as_deref().and_then(target_ancestor) {
        return t.join("sim");
    }
    let uid = rustix::process::getuid().as_raw();
    std::env::temp_dir().join(format!("cardguard-{uid}")).join("sim")
}

fn target_ancestor(exe: &Path) -> Option<PathBuf> {
    exe.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "target"))
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_must_be_a_positive_number() {
        assert_eq!(parse_cards(" 4 ").unwrap(), 4);
        for bad in ["", "x", "-1", "0", "99999999999"] {
            let e = parse_cards(bad).unwrap_err();
            assert!(e.to_string().contains(ENV_SIM_CARDS), "{e}");
        }
    }

    #[test]
    fn target_is_found_above_the_executable() {
        let p = Path::new("/w/target/debug/deps/x-123");
        assert_eq!(target_ancestor(p), Some(PathBuf::from("/w/target")));
        assert_eq!(target_ancestor(Path::new("/usr/bin/x")), None);
    }
}
