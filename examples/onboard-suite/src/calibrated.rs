//! `Calibrated`: a class fixture. Its host part builds a gain table once per lane (from the
//! class's fixed seed); its device part uploads it once per worker (a worker rebuilt after a
//! fault uploads it again). Each case adds its own input to the table on the device.

use runner::prelude::*;

/// The gain table, built once per lane.
#[derive(Debug)]
pub struct Gains(pub Vec<f32>);

const LEN: usize = 4096;

fn apply(ctx: &mut CaseCtx<'_>, offset: f32) -> Result<(), CaseFailure> {
    let gains = ctx.fixture::<Gains>()?;
    let on_device = *ctx.device_fixture::<DeviceBuffer>()?;
    let x: Vec<f32> = (0..LEN).map(|i| offset + i as f32 / LEN as f32).collect();
    let dx = ctx.upload_f32(&x)?;
    let dy = ctx.alloc_f32(LEN)?;
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(on_device), Arg::In(dx), Arg::Out(dy), Arg::count(LEN)],
    )?;
    let y = ctx.copy_out_f32(dy)?;
    let want: Vec<f32> = gains.0.iter().zip(&x).map(|(g, v)| g + v).collect();
    ctx.assert_close(&y, &want, 0.0, 0.0)
}

/// The class.
pub fn class(runtime: Runtime) -> ClassSpec {
    let fixture =
        Fixture::new(|info: &SetupInfo| Ok(Gains(SplitMix64::new(info.seed).f32_vec(LEN, 0.5, 1.5))))
            .device(|ctx: &mut CaseCtx<'_>, gains: &Gains| Ok(ctx.upload_f32(&gains.0)?));
    ClassSpec::pooled("Calibrated", runtime).fixture(fixture).cases([
        CaseSpec::host("offset_zero", &["vector_add"], |ctx| apply(ctx, 0.0)),
        CaseSpec::host("offset_ten", &["vector_add"], |ctx| apply(ctx, 10.0)),
    ])
}
