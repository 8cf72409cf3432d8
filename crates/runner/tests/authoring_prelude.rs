//! `use runner::prelude::*;` alone is enough for what the README's "Writing cases" examples use:
//! a compute case written from `KernelCase` and `HostArg`, a `Workload` with a `Tolerance`, the
//! byte helpers and `Duration` (a test that does not compile when one is missing).

use runner::prelude::*;

fn launch(n: usize) -> KernelCase {
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    KernelCase {
        kernel: "vector_add",
        label: format!("vector_add n={n}"),
        block_dim: 1,
        args: vec![
            HostArg::Input(f32s_to_bytes(&x)),
            HostArg::Input(f32s_to_bytes(&x)),
            HostArg::Output(n * 4),
            HostArg::Scalar(n as u64),
        ],
        expected: vec![x.iter().map(|v| v * 2.0).collect()],
        rtol: 1e-6,
        atol: 1e-6,
    }
}

#[test]
fn the_prelude_has_what_a_compute_case_is_written_with() {
    let suite = Suite::new().class(ClassSpec::pooled("Mine", Runtime::new("rt")).cases([
        CaseSpec::compute("one", &["vector_add"], |_, _| launch(8)).timeout(Duration::from_secs(5)),
        CaseSpec::compute("two", &["vector_add"], |_, _| {
            Workload::from(vec![launch(4), launch(2)])
        }),
    ]));
    suite.validate().unwrap();
    assert_eq!(bytes_to_f32s(&f32s_to_bytes(&[1.5])).unwrap(), [1.5]);
    assert_eq!(i32s_to_bytes(&[1]).len(), 4);
    let t = Tolerance { rtol: 0.1, atol: 0.0 };
    assert_eq!(t.rtol, 0.1);
    assert_eq!(suite.classes[0].cases.len(), 2);
}
