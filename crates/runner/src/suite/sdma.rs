//! The `SdmaCopy` class: device-to-device copies on the card's SDMA engine, on the `sdma`
//! runtime, whose workers are created with the SDMA option on both arches (they provision SDMA
//! and warm it up at init). Standalone: each case gets a worker of its own, as upstream drops a
//! worker that touched SDMA from its pool even after a pass (simpler's conftest). Each case runs
//! the `noop` kernel once too (every built-in case registers a kernel). Tagged `sdma`, so `--exclude tag:sdma` leaves them out (upstream's
//! `-m "not sdma"`). Each case uploads seeded bytes, copies them with `sdma_copy` and checks the
//! copy on the host. The fault plan's `sdma_fault@K` counts these copies.

use platform_common::Arch;

use super::runtimes;
use crate::case::{CaseCtx, CaseFailure, CaseSpec, ClassSpec, Suite};

/// The SDMA class (both arches).
pub fn builtin(_arch: Arch) -> Suite {
    Suite::new().class(
        ClassSpec::standalone("SdmaCopy", runtimes::sdma())
            .tags(["sdma"])
            .cases([copy("copy_64_bytes", 64), copy("copy_4096_bytes", 4096)]),
    )
}

fn copy(name: &str, bytes: usize) -> CaseSpec {
    CaseSpec::host(name, &["noop"], move |ctx| copy_and_check(ctx, bytes))
}

fn copy_and_check(ctx: &mut CaseCtx<'_>, bytes: usize) -> Result<(), CaseFailure> {
    let data: Vec<u8> = ctx
        .random_f32s(bytes.div_ceil(4), -1.0, 1.0)
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .take(bytes)
        .collect();
    ctx.launch("noop", 1, &[])?;
    let src = ctx.upload(&data)?;
    let dst = ctx.alloc(bytes)?;
    ctx.sdma_copy(dst, src, bytes)?;
    let back = ctx.copy_out(dst)?;
    if back == data {
        Ok(())
    } else {
        let first = back.iter().zip(&data).position(|(a, b)| a != b).unwrap_or(0);
        Err(CaseFailure::result(format!(
            "SDMA copy of {bytes} bytes: the copy differs from its source at byte {first}"
        )))
    }
}
