//! How a run isolates its lanes (`--isolation`, [`Isolation`]) and when a lane checks its card
//! after a case (`--health-check`, [`HealthCheck`]).
//!
//! This file owns those two modes and their names. What a mode does is decided where it applies:
//! the dispatcher's hand-out rule (`dispatch::policy::handout`) and the lane's heal rule
//! (`lane::heal`), which re-export them.

use std::fmt;

/// How much a lane process runs before it is replaced by a fresh one (`--isolation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// One lane per card for the run (containment keeps it healthy).
    #[default]
    Pool,
    /// Every class in a fresh lane process.
    Class,
    /// Every case in a fresh lane process.
    Case,
}

impl Isolation {
    /// The name as the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::Pool => "pool",
            Isolation::Class => "class",
            Isolation::Case => "case",
        }
    }
}

impl fmt::Display for Isolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `--health-check`: when the lane checks its worker's card after a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum HealthCheck {
    /// After every case that touched the device and left its runner usable: a card left
    /// poisoned by a case whose own calls all succeeded is that case's failure.
    #[default]
    Each,
    /// Only after a case whose attempt failed without a device error (a result mismatch, a
    /// panic, a usage error, an expected failure): a poison left by a passing case is met by the
    /// next case.
    OnFailure,
    /// Never: only a device error of a case's own calls retires the worker.
    Off,
}

impl HealthCheck {
    /// The name as the flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            HealthCheck::Each => "each",
            HealthCheck::OnFailure => "on-failure",
            HealthCheck::Off => "off",
        }
    }
}
