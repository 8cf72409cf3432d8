//! Where the simulated cards keep their state and their locks, how many there are, and the
//! timeouts they use.
//!
//! This file owns [`SimConfig`] and its defaults from the environment. It never touches a card.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::SimError;
use crate::arch::ArchFacts;
use crate::lease::{LeaseConfig, ENV_LOCK_DIR};
use crate::timeouts::{TimeoutProfile, Timeouts};

/// Environment variable naming the sim root (the directory of the card files).
pub const ENV_SIM_ROOT: &str = "ONBOARD_SIM_ROOT";
/// Environment variable giving the number of simulated cards.
pub const ENV_SIM_CARDS: &str = "ONBOARD_SIM_CARDS";
/// Cards a sim has unless told otherwise.
pub const DEFAULT_CARDS: u32 = 8;
/// Device memory of a simulated card unless told otherwise (4 GiB; real host memory backs what is
/// allocated, so keep it modest).
pub const DEFAULT_CARD_MEMORY: u64 = 4 << 30;

/// The settings of a simulated machine. Tests build one with their own temp root; binaries use
/// [`SimConfig::from_env`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// The arch the cards simulate: its name, codes and limits, as its arch crate states them
    /// (`platform_a5::FACTS`, ...).
    pub arch: ArchFacts,
    /// Directory of the per-card state files (created on demand).
    pub root: PathBuf,
    /// Cards `0..cards`.
    pub cards: u32,
    /// The timeouts; `timeouts.op_execute` is a context's op-execute timeout until
    /// `set_op_execute_timeout` changes it. Set them with [`SimConfig::with_timeouts`], which
    /// checks their ordering.
    pub timeouts: Timeouts,
    /// The a2a3 partial-good mask `halMemCtl` reports: bit `i` set = AICore `i` usable. `None`:
    /// every core of the arch ([`ArchFacts::max_block_dim`]) is usable.
    pub core_mask: Option<u64>,
    /// Bytes of device memory each card has; an `aclrtMalloc` beyond what is left fails with
    /// 207001 (`ACL_ERROR_RT_MEMORY_ALLOCATION`).
    pub card_memory: u64,
    /// How long a force reset that walks a wedged SDMA engine's CP-process streams blocks (the
    /// remote-event timeout: 300 s on real cards, [`crate::sdma::SIM_REMOTE_EVENT_TIMEOUT`] by
    /// default here), and `aclFinalize` after such a reset.
    pub sdma_remote_event: Duration,
    /// The lease lock dir of these cards, when set explicitly ([`ENV_LOCK_DIR`]); `None`: with
    /// the sim root ([`SimConfig::lease_config`]).
    pub lock_dir: Option<PathBuf>,
}

impl SimConfig {
    /// 8 cards with the sim's default timeouts, state under `root`.
    pub fn new(arch: ArchFacts, root: impl Into<PathBuf>) -> Self {
        Self {
            arch,
            root: root.into(),
            cards: DEFAULT_CARDS,
            timeouts: Timeouts::defaults(TimeoutProfile::Sim),
            core_mask: None,
            card_memory: DEFAULT_CARD_MEMORY,
            sdma_remote_event: crate::sdma::SIM_REMOTE_EVENT_TIMEOUT,
            lock_dir: None,
        }
    }

    /// The same settings with this remote-event timeout (see [`Self::sdma_remote_event`]).
    pub fn with_sdma_remote_event(mut self, timeout: Duration) -> Self {
        self.sdma_remote_event = timeout;
        self
    }

    /// The same settings with `cards` cards.
    pub fn with_cards(mut self, cards: u32) -> Self {
        self.cards = cards;
        self
    }

    /// The same settings with these timeouts, when they keep the ordering rules of the sim
    /// profile ([`Timeouts::validate`]); otherwise [`SimError::Timeouts`] naming the broken rule.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Result<Self, SimError> {
        timeouts.validate(TimeoutProfile::Sim)?;
        self.timeouts = timeouts;
        Ok(self)
    }

    /// The same settings with this a2a3 partial-good mask (bit `i` set = AICore `i` usable);
    /// `halMemCtl` reports it, limited to the arch's cores.
    pub fn with_core_mask(mut self, mask: u64) -> Self {
        self.core_mask = Some(mask);
        self
    }

    /// The same settings with `bytes` of device memory per card.
    pub fn with_card_memory(mut self, bytes: u64) -> Self {
        self.card_memory = bytes;
        self
    }

    /// Where the leases of these cards are locked: [`Self::lock_dir`] when set, else `locks` in
    /// the sim root, so the same sim root always means the same locks (whatever `TMPDIR` says)
    /// and two sim roots never share a lock. The dir is private to its user (0700), as the sim
    /// root is.
    pub fn lease_config(&self) -> LeaseConfig {
        LeaseConfig {
            dir: self.lock_dir.clone().unwrap_or_else(|| self.root.join("locks")),
        }
    }

    /// The partial-good mask `halMemCtl` reports: [`Self::core_mask`] limited to the arch's
    /// cores, or all of them.
    pub fn effective_core_mask(&self) -> u64 {
        let all = match self.arch.max_block_dim() {
            n if n >= 64 => u64::MAX,
            n => (1u64 << n) - 1,
        };
        self.core_mask.map_or(all, |m| m & all)
    }

    /// Settings from the environment: [`ENV_SIM_ROOT`] (default: `sim` in the cargo target
    /// directory, else under the temp dir), [`ENV_SIM_CARDS`] (default 8), [`ENV_LOCK_DIR`]
    /// (default: with the sim root; an empty value is an error naming the variable) and the
    /// timeout overrides of [`Timeouts::from_env`].
    pub fn from_env(arch: ArchFacts) -> Result<Self, SimError> {
        let env_error = |e: crate::env::EnvError| SimError::Env {
            var: e.var,
            value: e.value.clone(),
            reason: e.reason(),
        };
        let root = crate::env::path(ENV_SIM_ROOT)
            .map_err(env_error)?
            .unwrap_or_else(default_root);
        let cards = match crate::env::text(ENV_SIM_CARDS).map_err(env_error)? {
            None => DEFAULT_CARDS,
            Some(v) => parse_cards(&v)?,
        };
        let lock_dir = crate::env::path(ENV_LOCK_DIR).map_err(env_error)?;
        Ok(Self {
            arch,
            root,
            cards,
            timeouts: Timeouts::from_env(TimeoutProfile::Sim)?,
            core_mask: None,
            card_memory: DEFAULT_CARD_MEMORY,
            sdma_remote_event: crate::sdma::SIM_REMOTE_EVENT_TIMEOUT,
            lock_dir,
        })
    }

    /// The state file of `card`.
    pub fn card_path(&self, card: u32) -> PathBuf {
        self.root.join(card_file_name(card))
    }
}

/// The name of `card`'s state file in the sim root.
pub(crate) fn card_file_name(card: u32) -> String {
    format!("card-{card}.json")
}

fn parse_cards(v: &str) -> Result<u32, SimError> {
    let bad = |reason| SimError::Env {
        var: ENV_SIM_CARDS,
        value: v.to_owned(),
        reason,
    };
    match crate::number::whole(v).map(u32::try_from) {
        None => Err(bad("is not a whole number")),
        Some(Ok(0)) => Err(bad("must be at least 1")),
        Some(Ok(n)) => Ok(n),
        Some(Err(_)) => Err(bad("is too large")),
    }
}

/// Whether the sim root is the per-user temp-dir fallback (no [`ENV_SIM_ROOT`], no cargo target
/// dir): not the documented `<target>/sim`, so a run says where its cards are.
pub fn root_is_temp_fallback() -> bool {
    matches!(crate::env::path(ENV_SIM_ROOT), Ok(None))
        && !std::env::var_os("CARGO_TARGET_DIR").is_some_and(|t| !t.is_empty())
        && std::env::current_exe()
            .ok()
            .as_deref()
            .and_then(target_ancestor)
            .is_none()
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
        assert_eq!(parse_cards("4").unwrap(), 4);
        for bad in ["", "x", "-1", "0", "99999999999", " 4 ", "4 "] {
            let e = parse_cards(bad).unwrap_err();
            assert!(e.to_string().contains(ENV_SIM_CARDS), "{e}");
        }
    }

    #[test]
    fn the_lock_dir_lives_with_the_sim_root_unless_set() {
        // The facts do not matter here: any arch's.
        let facts = ArchFacts {
            arch: crate::Arch::A5,
            max_block_dim: 1,
            op_timeout: crate::Code::acl(1),
            drain_error: crate::Code::acl(2),
        };
        let cfg = SimConfig::new(facts, "/x/sim");
        assert_eq!(cfg.lease_config().dir, PathBuf::from("/x/sim/locks"));
        let set = SimConfig {
            lock_dir: Some("/y/locks".into()),
            ..cfg
        };
        assert_eq!(set.lease_config().dir, PathBuf::from("/y/locks"));
    }

    #[test]
    fn target_is_found_above_the_executable() {
        let p = Path::new("/w/target/debug/deps/x-123");
        assert_eq!(target_ancestor(p), Some(PathBuf::from("/w/target")));
        assert_eq!(target_ancestor(Path::new("/usr/bin/x")), None);
    }
}
