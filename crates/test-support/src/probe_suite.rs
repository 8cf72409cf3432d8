//! The probe suite: cases that exercise the runner's public authoring API from outside the
//! runner crate, one behaviour each, for the runner's process tests (`authoring_*.rs`) through
//! the `probe-suite` binary ([`crate::bins::probe_suite`]), which hands this suite to
//! `runner::app::main` exactly as a team's suite binary would.
//!
//! Classes (every one on the `probe` runtime but where said):
//! - `Body`: `chain` (kernel A's output is kernel B's input, checked on the host), `leak` (leaves
//!   buffers behind), `panics` then `after_panic` (a panic fails only its case), `mismatch` (a
//!   comparison failure), `swallow` (a body that ignores a device error and returns `Ok`);
//! - `Settings`: `stall` (its own 1 s timeout, no retries), `own_retries` (its own 3 retries),
//!   `tagged` (tags `slow` and `sdma`), `skipped` (skipped on a run with fewer than 8 cards);
//! - `Expect`: `result` (expects its own `result` failure), `missing` (expects a failure that
//!   never happens), `bounds` (expects the kernel's bounds check, 507015, a device fault, in a
//!   pooled class: it heals the card);
//! - `Fixtured`: three cases on a host fixture and a device fixture (weights uploaded once per
//!   worker);
//! - `BrokenSetup`: a fixture whose setup fails, and three cases;
//! - `Kernels`: `fake` launches `fake_add` (a kernel no build makes: a test gives its binary) and
//!   `absent` launches `absent_kernel` (which nothing provides);
//! - `Skips` (runtime `skips`): `trigger`, `skipped` (always skipped), `after`.
//!
//! Every case is deterministic; the fault plans of the tests decide which fail.

use std::time::Duration;

use platform_common::error::codes;
use runner::prelude::*;

/// The `probe` runtime.
fn probe() -> Runtime {
    Runtime::new("probe")
}

/// `c = a + b`, then `d = c + a` on the device; both checked on the host.
pub fn chain(ctx: &mut CaseCtx<'_>) -> Result<(), CaseFailure> {
    let n = 777;
    let a = ctx.random_f32s(n, -1.0, 1.0);
    let b = ctx.random_f32s(n, -1.0, 1.0);
    let (da, db) = (ctx.upload_f32(&a)?, ctx.upload_f32(&b)?);
    let (dc, dd) = (ctx.alloc_f32(n)?, ctx.alloc_f32(n)?);
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(da), Arg::In(db), Arg::Out(dc), Arg::count(n)],
    )?;
    ctx.launch(
        "vector_add",
        8,
        &[Arg::In(dc), Arg::In(da), Arg::Out(dd), Arg::count(n)],
    )?;
    let d = ctx.copy_out_f32(dd)?;
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| (x + y) + x).collect();
    ctx.assert_close(&d, &want, 1e-6, 1e-6)
}

fn body_class() -> ClassSpec {
    ClassSpec::pooled("Body", probe()).cases([
        CaseSpec::host("chain", &["vector_add"], chain),
        CaseSpec::host("leak", &["vector_add"], |ctx| {
            for _ in 0..4 {
                ctx.upload_f32(&[2.0; 64])?;
            }
            Ok(())
        }),
        CaseSpec::host("panics", &["vector_add"], |ctx| {
            ctx.upload_f32(&[1.0; 16])?;
            panic!("probe panic in {}", ctx.case_id())
        }),
        CaseSpec::host("after_panic", &["vector_add"], chain),
        CaseSpec::host("mismatch", &[], |ctx| {
            ctx.assert_close(&[1.0, 2.0], &[1.0, 2.5], 0.0, 0.0)
        }),
        CaseSpec::host("swallow", &["vector_add"], |ctx| {
            let _ignored = chain(ctx);
            Ok(())
        }),
    ])
}

fn settings_class() -> ClassSpec {
    ClassSpec::pooled("Settings", probe()).cases([
        CaseSpec::host("stall", &["vector_add"], chain)
            .timeout(Duration::from_secs(1))
            .retries(0),
        CaseSpec::host("own_retries", &["vector_add"], chain).retries(3),
        CaseSpec::host("tagged", &["vector_add"], chain).tags(["slow", "sdma"]),
        CaseSpec::host("skipped", &["vector_add"], chain)
            .skip_if("needs 8 cards for its all-to-all", |run: &RunInfo| {
                run.cards() < 8
            }),
    ])
}

fn expect_class() -> ClassSpec {
    ClassSpec::pooled("Expect", probe()).cases([
        CaseSpec::host("result", &[], |_| Err(CaseFailure::result("known rounding bug")))
            .expect_failure("issue 4: rounding", Expected::Class(FailureClass::Result)),
        CaseSpec::host("missing", &["vector_add"], chain)
            .expect_failure("issue 5: should fail", Expected::Class(FailureClass::Result)),
        CaseSpec::host("bounds", &["vector_add"], |ctx| {
            // n = 64 over buffers of 16 elements: the kernel's bounds check refuses the launch.
            let small = ctx.alloc_f32(16)?;
            ctx.launch(
                "vector_add",
                1,
                &[Arg::In(small), Arg::In(small), Arg::Out(small), Arg::count(64)],
            )?;
            Ok(())
        })
        .expect_failure(
            "the kernel refuses buffers shorter than n",
            Expected::Code(codes::RT_AICORE_EXCEPTION),
        ),
    ])
}

/// Weights of the `Fixtured` class: built once per lane.
#[derive(Debug)]
pub struct Weights(pub Vec<f32>);

fn fixtured_class() -> ClassSpec {
    let fixture =
        Fixture::new(|info: &SetupInfo| Ok(Weights(SplitMix64::new(info.seed).f32_vec(512, -1.0, 1.0))))
            .device(|ctx: &mut CaseCtx<'_>, w: &Weights| Ok(ctx.upload_f32(&w.0)?));
    let case = |name: &str, scale: f32| {
        CaseSpec::host(name, &["vector_add"], move |ctx| {
            let w = ctx.fixture::<Weights>()?;
            let dw = *ctx.device_fixture::<DeviceBuffer>()?;
            let x: Vec<f32> = (0..w.0.len()).map(|i| i as f32 * scale).collect();
            let dx = ctx.upload_f32(&x)?;
            let dy = ctx.alloc_f32(x.len())?;
            ctx.launch(
                "vector_add",
                8,
                &[Arg::In(dw), Arg::In(dx), Arg::Out(dy), Arg::count(x.len())],
            )?;
            let y = ctx.copy_out_f32(dy)?;
            let want: Vec<f32> = w.0.iter().zip(&x).map(|(a, b)| a + b).collect();
            ctx.assert_close(&y, &want, 0.0, 0.0)
        })
    };
    ClassSpec::pooled("Fixtured", probe()).fixture(fixture).cases([
        case("one", 1.0),
        case("two", 2.0),
        case("three", 3.0),
    ])
}

fn broken_setup_class() -> ClassSpec {
    let fixture = Fixture::new(|_: &SetupInfo| -> Result<Weights, SetupError> {
        Err("weights file /nonexistent/w.bin is missing".into())
    });
    ClassSpec::pooled("BrokenSetup", probe())
        .fixture(fixture)
        .cases(["a", "b", "c"].map(|n| CaseSpec::host(n, &[], |_| Ok(()))))
}

fn kernels_class() -> ClassSpec {
    ClassSpec::pooled("Kernels", probe()).cases([
        CaseSpec::host("fake", &["fake_add"], |ctx| {
            let x = ctx.random_f32s(100, 0.0, 1.0);
            let dx = ctx.upload_f32(&x)?;
            let dy = ctx.alloc_f32(x.len())?;
            ctx.launch(
                "fake_add",
                4,
                &[Arg::In(dx), Arg::In(dx), Arg::Out(dy), Arg::count(x.len())],
            )?;
            let y = ctx.copy_out_f32(dy)?;
            let want: Vec<f32> = x.iter().map(|v| v + v).collect();
            ctx.assert_close(&y, &want, 0.0, 0.0)
        }),
        CaseSpec::host("absent", &["absent_kernel"], |ctx| {
            Ok(ctx.launch("absent_kernel", 1, &[])?)
        }),
    ])
}

fn skips_class() -> ClassSpec {
    ClassSpec::pooled("Skips", Runtime::new("skips")).cases([
        CaseSpec::host("trigger", &["vector_add"], chain),
        CaseSpec::host("skipped", &["vector_add"], chain).skip_if("never runs here", |_| true),
        CaseSpec::host("after", &["vector_add"], chain),
    ])
}

/// The probe suite (the same on both arches).
pub fn suite(arch: Arch) -> Suite {
    let _ = arch;
    Suite::new()
        .class(body_class())
        .class(settings_class())
        .class(expect_class())
        .class(fixtured_class())
        .class(broken_setup_class())
        .class(kernels_class())
        .class(skips_class())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_suite_is_valid_on_both_arches() {
        for arch in Arch::ALL {
            suite(arch).validate().unwrap();
        }
    }
}
