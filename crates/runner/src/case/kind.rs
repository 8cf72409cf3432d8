//! How a class's cases get a chip worker ([`Kind`]) and which arches a case runs on
//! ([`ArchFilter`]). (The pool key, [`Runtime`](crate::runtime::Runtime), is below the case API:
//! workers and the pool use it too.)
//!
//! This file owns those two small declarations. It never runs anything.

use platform_common::Arch;

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
