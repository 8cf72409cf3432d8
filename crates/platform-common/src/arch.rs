//! The NPU architectures cardguard knows, by name, and the shape of an arch's facts.
//!
//! [`Arch`] is the shared name (CLI, reports, blob metadata). [`ArchFacts`] is the shape of what
//! an arch crate says about its arch (block-dim limit, the codes its op-timeout and its bounded
//! drain surface with); the values live in the arch crates (`platform_a5::FACTS`,
//! `platform_a2a3::FACTS`) and reach this crate as data: the device runner through
//! `ArchRegisters::FACTS`, the simulator through `SimConfig::arch`. This file never states a
//! fact of any arch.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Code;

/// An NPU architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// Ascend950 (a5).
    A5,
    /// Ascend910 (a2a3).
    A2a3,
}

impl Arch {
    /// Both arches, in display order.
    pub const ALL: [Arch; 2] = [Arch::A5, Arch::A2a3];

    /// The arch a tool assumes when none is named (`libsim_acl.so` without `ONBOARD_SIM_ARCH`).
    pub const DEFAULT: Arch = Arch::A5;

    /// The arch's name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Arch::A5 => "a5",
            Arch::A2a3 => "a2a3",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An arch name that is neither `a5` nor `a2a3`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown arch {0:?} (expected a5 or a2a3)")]
pub struct UnknownArch(pub String);

impl FromStr for Arch {
    type Err = UnknownArch;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "a5" => Ok(Arch::A5),
            "a2a3" => Ok(Arch::A2a3),
            other => Err(UnknownArch(other.to_owned())),
        }
    }
}

/// What an arch crate says about its arch: the facts the arch-independent layers need, handed
/// to them as a value (this crate depends on no arch crate).
///
/// The device runner refuses a block dim over [`ArchFacts::max_block_dim`] before any driver
/// call; the simulator reports its op-timeouts and drains with these codes and limits its cores
/// to the block-dim limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArchFacts {
    /// The arch these facts are of.
    pub arch: Arch,
    /// Largest AICore block dim a launch may use.
    pub max_block_dim: u32,
    /// The code an AICore op-timeout surfaces with at the AICPU stream sync.
    pub op_timeout: Code,
    /// The code the bounded device drain returns on a poisoned context.
    pub drain_error: Code,
}

impl ArchFacts {
    /// The arch's name as the CLI spells it.
    pub fn name(&self) -> &'static str {
        self.arch.name()
    }

    /// Largest AICore block dim a launch may use.
    pub fn max_block_dim(&self) -> u32 {
        self.max_block_dim
    }

    /// The code an AICore op-timeout surfaces with at the AICPU stream sync.
    pub fn op_timeout_code(&self) -> Code {
        self.op_timeout
    }

    /// The code the bounded device drain returns on a poisoned context.
    pub fn drain_error_code(&self) -> Code {
        self.drain_error
    }
}

impl fmt::Display for ArchFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
