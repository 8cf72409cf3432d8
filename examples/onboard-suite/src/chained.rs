//! `Chained`: kernel A's output is kernel B's input. `scale` (this crate's kernel) computes
//! `y = 2x + 1` into a device buffer that `vector_add` (a built-in kernel) reads without a trip
//! to the host: `z = y + x`, checked on the host against `3x + 1`.

use runner::prelude::*;

/// `scale` then `vector_add` on `n` values drawn from the case's RNG.
fn scale_then_add(ctx: &mut CaseCtx<'_>, n: usize) -> Result<(), CaseFailure> {
    let x = ctx.random_f32s(n, -4.0, 4.0);
    let dx = ctx.upload_f32(&x)?;
    let dy = ctx.alloc_f32(n)?;
    let dz = ctx.alloc_f32(n)?;
    ctx.launch(
        "scale",
        8,
        &[
            Arg::In(dx),
            Arg::Out(dy),
            Arg::count(n),
            Arg::f32(2.0),
            Arg::f32(1.0),
        ],
    )?;
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(dy), Arg::In(dx), Arg::Out(dz), Arg::count(n)],
    )?;
    let z = ctx.copy_out_f32(dz)?;
    let want: Vec<f32> = x.iter().map(|v| (2.0 * v + 1.0) + v).collect();
    ctx.assert_close(&z, &want, 1e-6, 1e-6)
}

/// The class.
pub fn class(runtime: Runtime) -> ClassSpec {
    ClassSpec::pooled("Chained", runtime).cases([
        CaseSpec::host("scale_then_add", &["scale", "vector_add"], |ctx| {
            scale_then_add(ctx, 1000)
        }),
        CaseSpec::host("scale_then_add_large", &["scale", "vector_add"], |ctx| {
            scale_then_add(ctx, 1 << 16)
        })
        .tags(["slow"]),
    ])
}
