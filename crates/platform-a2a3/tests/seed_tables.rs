//! The seed's tables, reproduced on the simulated card, each row iterated as the seed did (10x).
//! The tests are `platform_common::runner_base::testkit::suites::seed_tables`, run on this arch.

#![cfg(feature = "sim")]

mod common;

platform_common::arch_runner_tests!(seed_tables, common::UNDER_TEST);
