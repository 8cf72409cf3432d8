//! cardguard's commands as a library, with thin binaries over it: `cardguard` (its first
//! subcommand `pytest`, a pytest suite dispatched into cardguard's lanes). Every run setting,
//! config key, report file and exit status is the runner's own ([`runner::app`]): this crate
//! only finds the cases and names the lanes' program.
//!
//! - [`pytest`]: `cardguard pytest [FLAGS] -- [PYTEST ARGS]`: collection through the
//!   `cardguard_pytest.collect` plugin, the collected items as a runner [`runner::case::Suite`],
//!   and the lanes as `python -m pytest -p cardguard_pytest.lane`.

pub mod pytest;
