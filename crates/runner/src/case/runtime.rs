//! The pool key of a class ([`Runtime`]), how its cases get a chip worker ([`Kind`]) and which
//! arches a case runs on ([`ArchFilter`]).
//!
//! This file owns those three small declarations. It never runs anything.

use std::fmt;

use platform_common::Arch;

/// A runtime: the key of the chip-worker pool. Cases of one runtime share a pooled worker on a card.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Runtime {
    /// The runtime's name, e.g. `tensormap_and_ringbuffer`.
    pub name: String,
    /// Workers of this runtime are created with the SDMA option (one force-reset attempt, as the
    /// a2a3 SDMA workers have).
    pub sdma: bool,
}

impl Runtime {
    /// A runtime without the SDMA option.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sdma: false,
        }
    }

    /// A runtime whose workers are created with the SDMA option.
    pub fn sdma(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sdma: true,
        }
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// How a class's cases get a chip worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The lane's pooled worker of the class's runtime, reused across cases.
    Pooled,
    /// A worker of its own, built after the lane's pooled worker is closed and closed after the
    /// case (one process per card at a time).
    Standalone,
}

impl Kind {
    /// `pooled` or `standalone`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Pooled => "pooled",
            Kind::Standalone => "standalone",
        }
    }
}

/// Which arches a case runs on. A case whose filter excludes the run's arch is not part of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchFilter {
    /// Every arch.
    Any,
    /// Only the listed arches.
    Only(Vec<Arch>),
}

impl ArchFilter {
    /// Whether the filter admits `arch`.
    pub fn admits(&self, arch: Arch) -> bool {
        match self {
            ArchFilter::Any => true,
            ArchFilter::Only(list) => list.contains(&arch),
        }
    }

    /// The arches it admits, by name (`--list --format json`'s `arch`).
    pub fn names(&self) -> Vec<&'static str> {
        match self {
            ArchFilter::Any => Arch::ALL.iter().map(|a| a.name()).collect(),
            ArchFilter::Only(list) => list.iter().map(|a| a.name()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_filter_admits_and_names() {
        assert!(ArchFilter::Any.admits(Arch::A5));
        let only = ArchFilter::Only(vec![Arch::A2a3]);
        assert!(!only.admits(Arch::A5));
        assert!(only.admits(Arch::A2a3));
        assert_eq!(only.names(), ["a2a3"]);
        assert_eq!(ArchFilter::Any.names().len(), Arch::ALL.len());
    }
}
