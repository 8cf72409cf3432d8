//! Tests of the built-in suite's content: its size and shape per arch, the classes it must have,
//! its arch filters and block dims, deterministic generators, kernels that exist as blobs, and
//! goldens that hold when every launch runs on the host through the blobs.

use std::collections::{HashMap, HashSet};

use cardguard_reference::{HostArg, KernelCase};
use platform_common::kernel::{load_builtin, KernelBlob};
use platform_common::Arch;

use super::{builtin, host_run};
use crate::case::{ArchFilter, Body, CaseSpec, ClassSpec, Expected, Kind, Suite};

/// The cases of `suite` that a run on `arch` holds.
fn admitted(suite: &Suite, arch: Arch) -> Vec<(&ClassSpec, &CaseSpec)> {
    suite
        .classes
        .iter()
        .flat_map(|class| class.cases.iter().map(move |case| (class, case)))
        .filter(|(_, case)| case.arch.admits(arch))
        .collect()
}

/// The launches of every admitted compute case, with the case's id.
fn launches(suite: &Suite, arch: Arch) -> Vec<(String, &CaseSpec, Vec<KernelCase>)> {
    admitted(suite, arch)
        .into_iter()
        .filter_map(|(class, case)| match &case.body {
            Body::Compute { generator, .. } => {
                Some((class.case_id(case), case, generator(arch, case.seed).launches))
            }
            _ => None,
        })
        .collect()
}

fn blob(cache: &mut HashMap<String, KernelBlob>, arch: Arch, name: &str) -> KernelBlob {
    cache
        .entry(name.to_owned())
        .or_insert_with(|| load_builtin(arch, name).unwrap_or_else(|e| panic!("{arch} {name}: {e}")))
        .clone()
}

const REQUIRED_CLASSES: [&str; 9] = [
    "PagedAttentionUnrollManualScope",
    "PagedAttentionManualScope",
    "AicoreOpTimeout",
    "VectorAdd",
    "Matmul",
    "Softmax",
    "RmsNorm",
    "MultiLaunch",
    "Noop",
];

#[test]
fn each_arch_has_at_least_40_cases_over_8_classes_and_2_runtimes() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        suite.validate().unwrap();
        let cases = admitted(&suite, arch);
        let classes: HashSet<&str> = cases.iter().map(|(c, _)| c.name.as_str()).collect();
        let runtimes: HashSet<&str> = cases.iter().map(|(c, _)| c.runtime.name.as_str()).collect();
        assert!(cases.len() >= 40, "{arch}: {} cases", cases.len());
        assert!(classes.len() >= 8, "{arch}: classes {classes:?}");
        assert!(runtimes.len() >= 2, "{arch}: runtimes {runtimes:?}");
    }
}

#[test]
fn case_ids_are_unique() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let ids: Vec<String> = suite
            .classes
            .iter()
            .flat_map(|class| class.cases.iter().map(|case| class.case_id(case)))
            .collect();
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "{arch}: a case id is declared twice");
        assert_eq!(ids.len(), suite.len());
    }
}

#[test]
fn the_required_classes_exist_with_cases_on_each_arch() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        for name in REQUIRED_CLASSES {
            let class = suite
                .find_class(name)
                .unwrap_or_else(|| panic!("{arch}: no class {name}"));
            assert!(
                class.cases.iter().any(|c| c.arch.admits(arch)),
                "{arch}: class {name} has no case on this arch"
            );
        }
    }
}

#[test]
fn aicore_op_timeout_is_standalone_and_hangs_with_the_hang_kernel() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let class = suite.find_class("AicoreOpTimeout").unwrap();
        assert_eq!(class.kind, Kind::Standalone);
        for case in &class.cases {
            let expects = class.settings_of(case).expect.map(|e| e.expected);
            assert_eq!(
                expects,
                Some(Expected::OpTimeout),
                "{arch}: AicoreOpTimeout::{} does not expect the op-timeout",
                case.name
            );
            assert!(matches!(case.body, Body::Host(_)), "{arch}: a host-code case");
            assert_eq!(case.kernels, ["hang"]);
        }
        // Only standalone classes provoke faults on purpose.
        for class in suite.classes.iter().filter(|c| c.kind == Kind::Pooled) {
            assert!(
                class
                    .cases
                    .iter()
                    .all(|c| matches!(c.body, Body::Compute { .. }) && class.settings_of(c).expect.is_none()),
                "{arch}: pooled class {} has a case that is not compute or expects a failure",
                class.name
            );
        }
    }
}

#[test]
fn unrolled_paged_attention_runs_several_decode_steps_of_varied_shapes() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let all = launches(&suite, arch);
        let unrolled: Vec<_> = all
            .iter()
            .filter(|(id, _, _)| id.starts_with("PagedAttentionUnrollManualScope::"))
            .collect();
        assert!(unrolled.len() >= 4, "{arch}: {} unrolled cases", unrolled.len());
        let mut shapes = HashSet::new();
        for (id, _, steps) in &unrolled {
            assert!(steps.len() >= 2, "{arch} {id}: {} decode steps", steps.len());
            assert!(steps.iter().all(|l| l.kernel == "paged_attention"), "{arch} {id}");
            // Steps differ: each grows the contexts and draws fresh inputs.
            for pair in steps.windows(2) {
                assert_ne!(
                    pair[0].args[4], pair[1].args[4],
                    "{arch} {id}: same contexts twice"
                );
                assert_ne!(
                    pair[0].args[0], pair[1].args[0],
                    "{arch} {id}: same queries twice"
                );
            }
            // (num_heads, num_kv_heads, head_dim, block_size) of the first step.
            let shape: Vec<u64> = steps[0].args[7..11]
                .iter()
                .map(|a| match a {
                    HostArg::Scalar(v) => *v,
                    other => panic!("{arch} {id}: shape argument {other:?} is not a scalar"),
                })
                .collect();
            shapes.insert(shape);
        }
        assert_eq!(
            shapes.len(),
            unrolled.len(),
            "{arch}: two unrolled cases share a shape"
        );
    }
}

#[test]
fn multi_launch_cases_run_several_kernels() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let all = launches(&suite, arch);
        let multi: Vec<_> = all
            .iter()
            .filter(|(id, _, _)| id.starts_with("MultiLaunch::"))
            .collect();
        assert!(!multi.is_empty());
        for (id, _, l) in &multi {
            assert!(l.len() >= 2, "{arch} {id}: {} launches", l.len());
        }
        let most_kernels = multi
            .iter()
            .map(|(_, _, l)| l.iter().map(|k| k.kernel).collect::<HashSet<_>>().len())
            .max();
        assert!(
            most_kernels >= Some(5),
            "{arch}: no case runs every compute kernel"
        );
    }
}

#[test]
fn arch_filters_keep_some_cases_to_one_arch() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let only_here = admitted(&suite, arch)
            .iter()
            .filter(|(_, c)| c.arch == ArchFilter::Only(vec![arch]))
            .count();
        assert!(only_here >= 2, "{arch}: {only_here} cases run only on this arch");
        let elsewhere = suite.len() - admitted(&suite, arch).len();
        assert!(elsewhere >= 2, "{arch}: {elsewhere} cases are filtered out");
    }
}

#[test]
fn a_case_needs_two_cards() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let two = admitted(&suite, arch)
            .into_iter()
            .filter(|(_, c)| c.device_count == 2)
            .count();
        assert_eq!(two, 1, "{arch}");
        // Every other case runs on one card.
        assert!(admitted(&suite, arch).iter().all(|(_, c)| c.device_count <= 2));
    }
}

#[test]
fn generators_are_deterministic_and_follow_the_seed() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        for (class, case) in admitted(&suite, arch) {
            let Body::Compute { generator, .. } = &case.body else {
                continue;
            };
            let id = class.case_id(case);
            let first = generator(arch, case.seed);
            assert!(!first.launches.is_empty(), "{arch} {id}: no launch");
            assert_eq!(
                first,
                generator(arch, case.seed),
                "{arch} {id}: not deterministic"
            );
            let has_inputs = first
                .launches
                .iter()
                .any(|l| l.args.iter().any(|a| matches!(a, HostArg::Input(_))));
            if has_inputs {
                let other = generator(arch, case.seed.wrapping_add(1));
                assert_ne!(first, other, "{arch} {id}: the seed does not change the inputs");
            }
        }
    }
}

#[test]
fn every_kernel_exists_as_a_blob_and_every_launch_matches_its_spec() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let mut cache = HashMap::new();
        for (class, case) in admitted(&suite, arch) {
            let id = class.case_id(case);
            assert!(!case.kernels.is_empty(), "{arch} {id}: registers no kernel");
            for k in &case.kernels {
                blob(&mut cache, arch, k);
            }
            match &case.body {
                Body::Compute { generator, .. } => {
                    for l in generator(arch, case.seed).launches {
                        assert!(
                            case.kernels.iter().any(|k| k == l.kernel),
                            "{arch} {id}: {} unregistered",
                            l.kernel
                        );
                        assert!(l.matches_spec(), "{arch} {id}: {}", l.label);
                    }
                }
                Body::Host(_) => assert!(!case.kernels.is_empty(), "{arch} {id}"),
                Body::Trivial => panic!("{arch} {id}: the built-in suite does real work"),
            }
        }
    }
}

#[test]
fn block_dims_are_within_the_arch_and_kernel_limits_and_reach_them() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let mut cache = HashMap::new();
        // The widest launch of each kernel.
        let mut widest: HashMap<String, u32> = HashMap::new();
        for (class, case) in admitted(&suite, arch) {
            let id = class.case_id(case);
            let dims: Vec<(String, u32)> = match &case.body {
                Body::Compute { generator, .. } => generator(arch, case.seed)
                    .launches
                    .iter()
                    .map(|l| (l.kernel.to_owned(), l.block_dim))
                    .collect(),
                // The hang's one block is checked by the runner when it launches.
                Body::Host(_) | Body::Trivial => Vec::new(),
            };
            for (kernel, d) in dims {
                // What the runner allows: the arch's limit and the block dim the blob is written for.
                let max = crate::platform::arch_entry(arch)
                    .facts
                    .max_block_dim()
                    .min(blob(&mut cache, arch, &kernel).meta().block_dim);
                assert!(
                    (1..=max).contains(&d),
                    "{arch} {id}: {kernel} with block dim {d} (max {max})"
                );
                let w = widest.entry(kernel).or_default();
                *w = (*w).max(d);
            }
        }
        for (kernel, w) in widest {
            let max = crate::platform::arch_entry(arch)
                .facts
                .max_block_dim()
                .min(blob(&mut cache, arch, &kernel).meta().block_dim);
            assert_eq!(w, max, "{arch}: no {kernel} launch uses its full width");
        }
    }
}

#[test]
fn every_compute_case_passes_its_goldens_on_the_host() {
    for arch in Arch::ALL {
        let suite = builtin(arch);
        let mut cache = HashMap::new();
        for (id, case, launches) in launches(&suite, arch) {
            for (i, l) in launches.iter().enumerate() {
                let run = host_run::run(&blob(&mut cache, arch, l.kernel), l);
                let at = format!("{arch} {id} launch {} ({})", i + 1, l.label);
                assert_eq!(run.statuses.len(), l.block_dim as usize, "{at}");
                assert!(
                    run.statuses.iter().all(|&s| s == host_run::KERNEL_OK),
                    "{at}: {:?}",
                    run.statuses
                );
                assert!(run.canaries_intact, "{at}: a block wrote past an output");
                assert_eq!(run.waits, 0, "{at}: a compute kernel waited");
                let mut l = l.clone();
                if let Body::Compute {
                    tolerance: Some(t), ..
                } = case.body
                {
                    (l.rtol, l.atol) = (t.rtol, t.atol);
                }
                if let Err(e) = l.check(&run.outputs) {
                    panic!("{at}: {e}");
                }
            }
        }
    }
}

#[test]
fn the_host_check_catches_a_wrong_launch() {
    // Tell the first VectorAdd launch to add only half its elements: the rest stays unwritten.
    let arch = Arch::A5;
    let suite = builtin(arch);
    let (_, _, launches) = launches(&suite, arch)
        .into_iter()
        .find(|(id, _, l)| id.starts_with("VectorAdd::") && l.len() == 1 && l[0].expected[0].len() >= 2)
        .unwrap();
    let mut l = launches[0].clone();
    let HostArg::Scalar(n) = l.args[3] else {
        panic!("arg 3 of vector_add is n")
    };
    l.args[3] = HostArg::Scalar(n / 2);
    let run = host_run::run(&load_builtin(arch, "vector_add").unwrap(), &l);
    assert!(run.statuses.iter().all(|&s| s == host_run::KERNEL_OK));
    assert!(
        l.check(&run.outputs).is_err(),
        "a half-done vector_add passed its goldens"
    );
}
