//! The seed's tables a second time, through the `acl` driver against `libsim_acl.so`: every
//! measurement of `seed_tables.rs` and `chain.rs` runs on the in-process simulator and, on a
//! machine of its own, with each simulated process a fresh copy of the library loaded through
//! the C ABI. The outcomes and codes must be the same, field by field (timings aside). The tests
//! are `cardguard_test_support::suites::seed_tables_acl`, run on this arch.

#![cfg(feature = "sim")]

mod common;

cardguard_test_support::arch_runner_tests!(seed_tables_acl, common::UNDER_TEST);
