//! The README's suite: one class, one host case on the built-in `vector_add` kernel.

use runner::prelude::*;

fn add_twice(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let x = ctx.random_f32s(256, -1.0, 1.0);
    let dx = ctx.upload_f32(&x)?;
    let dy = ctx.alloc_f32(256)?;
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(dx), Arg::In(dx), Arg::Out(dy), Arg::count(256)],
    )?;
    let y = ctx.copy_out_f32(dy)?;
    let want: Vec<f32> = x.iter().map(|v| v + v).collect();
    ctx.assert_close(&y, &want, 0.0, 0.0)
}

fn suite(_arch: Arch) -> Suite {
    Suite::new().class(
        ClassSpec::pooled("Basics", Runtime::new("my_suite")).case(CaseSpec::host(
            "add_twice",
            &["vector_add"],
            add_twice,
        )),
    )
}

fn main() -> std::process::ExitCode {
    runner::app::main(suite)
}
