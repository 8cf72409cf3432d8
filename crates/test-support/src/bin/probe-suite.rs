//! `probe-suite`: a suite binary of the probe suite (`cardguard_test_support::probe_suite`),
//! dispatcher and lane as `cardguard-suite` is, for the runner's authoring tests.

fn main() -> std::process::ExitCode {
    runner::app::main(cardguard_test_support::probe_suite::suite)
}
