//! The NPU architectures cardguard knows, and their per-arch facts.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{codes, Code};

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

    /// The arch's name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Arch::A5 => "a5",
            Arch::A2a3 => "a2a3",
        }
    }

    /// Largest AICore block dim a launch may use.
    pub fn max_block_dim(self) -> u32 {
        match self {
            Arch::A5 => 36,
            Arch::A2a3 => 24,
        }
    }

    /// The code an AICore op-timeout surfaces with at the stream sync.
    pub fn op_timeout_code(self) -> Code {
        match self {
            Arch::A5 => codes::RT_INTERNAL_ERROR,
            Arch::A2a3 => codes::RT_AICPU_EXCEPTION,
        }
    }

    /// The code the bounded device drain returns on a poisoned context.
    pub fn drain_error_code(self) -> Code {
        match self {
            Arch::A5 => codes::RT_STREAM_SYNC_TIMEOUT,
            Arch::A2a3 => codes::RT_AICORE_EXCEPTION,
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
