//! `Invariants`: properties checked on the host instead of a golden. Softmax rows (the built-in
//! `softmax` kernel) sum to one, stay in [0, 1] and keep each row's argmax; `scale` by 1 with a
//! shift of 0 gives back its input bit for bit.

use runner::prelude::*;

const ROWS: usize = 16;
const COLS: usize = 96;

fn softmax_rows(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let logits = ctx.random_f32s(ROWS * COLS, -8.0, 8.0);
    let dx = ctx.upload_f32(&logits)?;
    let dy = ctx.alloc_f32(ROWS * COLS)?;
    // softmax's arguments: x, y, rows, cols.
    ctx.launch(
        "softmax",
        8,
        &[Arg::In(dx), Arg::Out(dy), Arg::count(ROWS), Arg::count(COLS)],
    )?;
    let y = ctx.copy_out_f32(dy)?;
    for (r, (row, inp)) in y.chunks(COLS).zip(logits.chunks(COLS)).enumerate() {
        let sum: f32 = row.iter().sum();
        if (sum - 1.0).abs() > 1e-4 {
            return Err(CaseFailure::result(format!("row {r} sums to {sum}")));
        }
        if let Some(v) = row.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(CaseFailure::result(format!("row {r} has {v}, outside [0, 1]")));
        }
        let argmax = |v: &[f32]| (0..v.len()).fold(0, |m, i| if v[i] > v[m] { i } else { m });
        if argmax(row) != argmax(inp) {
            return Err(CaseFailure::result(format!("row {r} lost its argmax")));
        }
    }
    Ok(())
}

fn scale_identity(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let x = ctx.random_f32s(513, -1e6, 1e6);
    let dx = ctx.upload_f32(&x)?;
    let dy = ctx.alloc_f32(x.len())?;
    ctx.launch(
        "scale",
        3,
        &[
            Arg::In(dx),
            Arg::Out(dy),
            Arg::count(x.len()),
            Arg::f32(1.0),
            Arg::f32(0.0),
        ],
    )?;
    let y = ctx.copy_out_f32(dy)?;
    if y.iter().zip(&x).any(|(a, b)| a.to_bits() != b.to_bits()) {
        return Err(CaseFailure::result("scale by 1 plus 0 changed a value"));
    }
    Ok(())
}

/// The class (`arch` only to show that a suite may differ per arch: both get the same cases).
pub fn class(runtime: Runtime, arch: Arch) -> ClassSpec {
    let _ = arch;
    ClassSpec::pooled("Invariants", runtime).cases([
        CaseSpec::host("softmax_rows", &["softmax"], softmax_rows),
        CaseSpec::host("scale_identity", &["scale"], scale_identity),
    ])
}
