//! The SDMA tables of issue 22 on this arch, in process and through `libsim_acl.so`: the stream
//! failure modes, the handoff, the wedged engine's probes, the warm-up fault, simpler #1124's
//! post-reset probe results. The tests are `cardguard_test_support::suites::sdma_tables`.

#![cfg(feature = "sim")]

mod common;

cardguard_test_support::arch_runner_tests!(sdma_tables, common::UNDER_TEST);
