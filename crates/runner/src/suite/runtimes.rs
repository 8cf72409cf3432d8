//! The runtimes of the built-in suite: the pool keys its classes share.
//!
//! Three runtimes, so a lane switches its pooled worker between them (closing one, building the
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

/// The `tensormap_and_ringbuffer` runtime.
pub fn tensormap_and_ringbuffer() -> Runtime {
    Runtime::new(TENSORMAP_AND_RINGBUFFER)
}

/// The `host_build_graph` runtime.
pub fn host_build_graph() -> Runtime {
    Runtime::new(HOST_BUILD_GRAPH)
}

/// The `aicpu_build_graph` runtime: with the SDMA option on a2a3, without it on a5.
pub fn aicpu_build_graph(arch: Arch) -> Runtime {
    match arch {
        Arch::A2a3 => Runtime::sdma(AICPU_BUILD_GRAPH),
        Arch::A5 => Runtime::new(AICPU_BUILD_GRAPH),
    }
}
