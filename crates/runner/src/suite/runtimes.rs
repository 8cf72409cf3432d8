//! The runtimes of the built-in suite: the pool keys its classes share.
//!
//! Four runtimes (`sdma`, the `SdmaCopy` class's, with the SDMA option on every arch, besides), so a lane switches its pooled worker between them (closing one, building the
//! next) as the seed's workers did: `tensormap_and_ringbuffer` (the runtime of the seed's
//! cascade: paged attention, the op-timeout class), `host_build_graph`, and `aicpu_build_graph`,
//! whose workers are created with the SDMA option on a2a3 (one force-reset attempt, as the a2a3
//! SDMA workers have). This file only names them.

use platform_common::Arch;

use crate::case::Runtime;

/// `tensormap_and_ringbuffer`.
pub const TENSORMAP_AND_RINGBUFFER: &str = "tensormap_and_ringbuffer";
/// `host_build_graph`.
pub const HOST_BUILD_GRAPH: &str = "host_build_graph";
/// `aicpu_build_graph`.
pub const AICPU_BUILD_GRAPH: &str = "aicpu_build_graph";
/// `sdma`: the `SdmaCopy` class's runtime.
pub const SDMA: &str = "sdma";

/// The `sdma` runtime: its workers are created with the SDMA option on every arch.
pub fn sdma() -> Runtime {
    Runtime::sdma(SDMA)
}

/// The `tensormap_and_ringbuffer` runtime.
pub fn tensormap_and_ringbuffer() -> Runtime {
    Runtime::new(TENSORMAP_AND_RINGBUFFER)
}

/// The `host_build_graph` runtime.
pub fn host_build_graph() -> Runtime {
    Runtime::new(HOST_BUILD_GRAPH)
}

/// The `aicpu_build_graph` runtime: with the SDMA option where the arch's entry says its workers
/// take it (a2a3), without it elsewhere (a5).
pub fn aicpu_build_graph(arch: Arch) -> Runtime {
    if crate::platform::arch_entry(arch).sdma_workers {
        Runtime::sdma(AICPU_BUILD_GRAPH)
    } else {
        Runtime::new(AICPU_BUILD_GRAPH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aicpu_graph_runtime_takes_sdma_on_a2a3_only() {
        assert!(aicpu_build_graph(Arch::A2a3).sdma);
        assert!(!aicpu_build_graph(Arch::A5).sdma);
        assert_eq!(aicpu_build_graph(Arch::A5).name, AICPU_BUILD_GRAPH);
    }
}
