//! The containment chain's edges on the simulated card: drain false negatives, failing force
//! resets and probes, SDMA runners, leases, golden mismatches, launch failures, teardown. The
//! tests are `platform_common::runner_base::testkit::suites::chain`, run on this arch.

#![cfg(feature = "sim")]

mod common;

platform_common::arch_runner_tests!(chain, common::UNDER_TEST);
