//! Hardware variants of the chain tests: a real card through the CANN driver.
//!
//! Behind the `onboard` feature and a card number in `ONBOARD_TEST_DEVICE`; every test is ignored
//! by default so it never passes silently (`cargo test -p platform-a2a3 --features onboard --test
//! onboard -- --ignored`). The tests are `cardguard_test_support::suites::onboard`,
//! run on this arch; each takes the card's lease (blocking, in the host-wide lock directory),
//! which serialises processes, and each is `#[serial]` (`serial_test`), which serialises the tests
//! of this binary whatever `--test-threads` says: a test never waits on the lease its neighbour
//! thread holds, and no two tests of one process ever share the card. The same mechanism on
//! simulated cards is checked by the workspace test `tests/tests/serial.rs`.

#![cfg(feature = "onboard")]

mod common;

use serial_test::serial;

cardguard_test_support::arch_runner_tests!(onboard, common::UNDER_TEST, #[serial]);
