//! The containment chain's edges on the simulated card: drain false negatives, failing force
//! resets and probes, SDMA runners, leases, golden mismatches, launch failures, teardown. The
//! tests are `cardguard_test_support::suites::chain`, run on this arch.

#![cfg(feature = "sim")]

mod common;

cardguard_test_support::arch_runner_tests!(chain, common::UNDER_TEST);
