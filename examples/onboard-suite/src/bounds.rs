//! `BoundsCheck`: an expected failure. `scale` is launched with a size larger than its buffers;
//! the kernel's bounds check refuses it, which a card reports as an AICore exception (507015) and
//! which poisons the context: the case passes when exactly that happens. Standalone, so the fault
//! it provokes on purpose costs only its own worker (closing it force-resets the card).

use runner::prelude::*;

fn short_buffer(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let small = ctx.alloc_f32(16)?;
    let out = ctx.alloc_f32(16)?;
    ctx.launch(
        "scale",
        1,
        &[
            Arg::In(small),
            Arg::Out(out),
            Arg::count(1024),
            Arg::f32(1.0),
            Arg::f32(0.0),
        ],
    )?;
    Ok(())
}

/// The class.
pub fn class(runtime: Runtime) -> ClassSpec {
    ClassSpec::standalone("BoundsCheck", runtime).case(
        CaseSpec::host("short_buffer", &["scale"], short_buffer).expect_failure(
            "scale refuses buffers shorter than n",
            Expected::Code(codes::RT_AICORE_EXCEPTION),
        ),
    )
}
