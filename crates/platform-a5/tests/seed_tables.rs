//! The seed's tables, reproduced on the simulated card, each row iterated as the seed did (10x).
//! The tests are `cardguard_test_support::suites::seed_tables`, run on this arch.

#![cfg(feature = "sim")]

mod common;

cardguard_test_support::arch_runner_tests!(seed_tables, common::UNDER_TEST);
