//! [`arch_runner_tests!`](crate::arch_runner_tests): the `#[test]` functions of one test file of
//! an arch crate, each calling its body in [`suites`](super) with the crate's [`ArchUnderTest`].
//! Every path in it is `$crate` (this crate), never a crate above it.
//!
//! The macro writes only the test functions and their attributes; every test body is an ordinary
//! function of this crate, compiled and type-checked once.
//!
//! [`ArchUnderTest`]: super::ArchUnderTest

/// Writes the `#[test]` functions of one of the arch crates' test files, each named as its body
/// in [`suites`](crate::suites) and calling it with the arch crate's
/// [`ArchUnderTest`](crate::suites::ArchUnderTest). Every path it writes is `$crate`: this crate,
/// a dev-dependency of the calling crate.
///
/// - `arch_runner_tests!(seed_tables, ARCH)`: the seed's tables on the simulated card;
/// - `arch_runner_tests!(chain, ARCH)`: the containment chain's edges on the simulated card;
/// - `arch_runner_tests!(seed_tables_acl, ARCH)`: the same measurements through
///   `libsim_acl.so`;
/// - `arch_runner_tests!(sdma_tables, ARCH)`: the SDMA tables, in process and through
///   `libsim_acl.so`;
/// - `arch_runner_tests!(onboard, ARCH, #[serial])`: the hardware variants, each
///   `#[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]` (needs the
///   feature `onboard`), with the attributes given after the arch on every test (the hardware
///   test files pass `serial_test`'s `#[serial]`, which the calling crate names: one test at a
///   time inside the binary, whatever `--test-threads`).
///
/// The test file gates itself on the arch crate's features (`#![cfg(feature = "sim")]`, ...).
#[macro_export]
macro_rules! arch_runner_tests {
    (seed_tables, $arch:expr $(,)?) => {
        $crate::arch_runner_tests!(@tests seed_tables (&$arch) [
            raw_driver_hang_then_noop_cascades_10_of_10,
            runner_refuses_noop_at_the_guard_10_of_10,
            unusable_message_names_card_cause_and_next_step,
            hang_in_one_process_then_compute_in_another_0_of_10,
            compute_alone_0_of_10,
            soft_reset_then_reinit_fails_10_of_10,
            force_reset_recovery_10_of_10,
        ]);
    };
    (chain, $arch:expr $(,)?) => {
        $crate::arch_runner_tests!(@tests chain (&$arch) [
            drain_false_negative_still_marks_unusable_and_recovers_10_of_10,
            drain_on_a_poisoned_card_fails_with_the_arch_code,
            force_reset_fail_2_third_attempt_confirms,
            force_reset_fail_3_is_a_typed_error_with_three_attempts,
            sdma_runner_makes_one_attempt_only,
            probe_fail_1_first_attempt_not_confirmed_although_reset_rc_0,
            wrong_card_lease_is_refused,
            golden_mismatch_never_marks_the_runner_unusable,
            health_check_catches_a_poison_left_by_a_passing_case,
            launch_fail_207001_behaves_like_the_seed_trigger,
            finalize_of_a_faulted_runner_never_syncs_an_error_state_stream,
            block_dim_over_the_arch_limit_is_a_usage_error,
            registration_is_refused_once_unusable,
            init_on_a_dead_card_is_a_typed_init_error,
            bad_timeouts_are_a_typed_init_error_before_any_driver_call,
            a_runner_moved_to_another_thread_still_runs_and_recovers,
            a_second_runner_on_a_poisoned_context_fails_where_the_seed_did,
        ]);
    };
    (seed_tables_acl, $arch:expr $(,)?) => {
        $crate::arch_runner_tests!(@tests seed_tables_acl (&$arch) [
            raw_driver_hang_then_noop_is_the_same_through_the_c_abi,
            guarded_hang_then_noop_is_the_same_through_the_c_abi,
            soft_reset_then_reinit_is_the_same_through_the_c_abi,
            hang_in_one_process_then_compute_in_another_is_the_same_through_the_c_abi,
            force_reset_recovery_is_the_same_through_the_c_abi,
            every_fault_of_the_recovery_chain_is_the_same_through_the_c_abi,
            a_dead_card_fails_init_the_same_through_the_c_abi,
            the_acl_driver_is_held_to_the_real_card_timeout_rules,
        ]);
    };
    (sdma_tables, $arch:expr $(,)?) => {
        $crate::arch_runner_tests!(@tests sdma_tables (&$arch) [
            an_sdma_fault_surfaces_as_its_streams_failure_mode_says,
            a_reset_without_the_handoff_wait_blocks_and_does_not_confirm,
            the_sdma_runners_handoff_wait_makes_its_one_attempt_confirm,
            a_compute_only_probe_passes_a_wedged_engine_the_sdma_probe_fails,
            an_sdma_warmup_fault_fails_the_init,
            the_post_reset_probe_results_of_simpler_1124,
        ]);
    };
    (onboard, $arch:expr $(, #[$attr:meta])* $(,)?) => {
        $crate::arch_runner_tests!(@hardware_tests onboard (&$arch) ($(#[$attr])*) [
            onboard_healthy_runner_runs_and_finalizes_without_reset,
            onboard_block_dim_over_the_limit_is_a_usage_error,
            onboard_wrong_card_lease_is_refused,
            onboard_hang_then_noop_is_refused_at_the_guard_10x,
            onboard_soft_reset_then_reinit_fails_10x,
            onboard_force_reset_recovery_10x,
            onboard_raw_driver_hang_then_noop_cascades_10x,
            onboard_compute_alone_10x,
        ]);
    };
    (@tests $suite:ident $args:tt [$($name:ident),* $(,)?]) => {
        $(
            #[test]
            fn $name() {
                $crate::suites::$suite::$name $args
            }
        )*
    };
    (@hardware_tests $suite:ident $args:tt $attrs:tt [$($name:ident),* $(,)?]) => {
        $(
            $crate::arch_runner_tests!(@hardware_test $suite $args $attrs $name);
        )*
    };
    (@hardware_test $suite:ident $args:tt ($(#[$attr:meta])*) $name:ident) => {
        #[test]
        #[ignore = "needs a real card: set ONBOARD_TEST_DEVICE, run with --ignored"]
        $(#[$attr])*
        fn $name() {
            $crate::suites::$suite::$name $args
        }
    };
}
