//! `cardguard pytest [FLAGS] -- [PYTEST ARGS]`: a pytest suite in cardguard's lanes.
//!
//! The flags before `--` are the runner's (`--arch`, `--devices`, `--retries`, `--faults`,
//! `--report-dir`, ...; `--arch` defaults to `CARDGUARD_ARCH`, else a5); the arguments after it
//! are pytest's, given to the collection and to every lane. The interpreter is
//! [`ENV_PYTHON`] (default `python3`), which must have `pytest-cardguard` installed. The lanes
//! are `python -m pytest -p cardguard_pytest.lane -p no:cacheprovider PYTEST ARGS`, each on one
//! card; everything above the lane is the runner's ([`runner::app::dispatch_foreign`]).

pub mod collect;
mod run;
pub mod selectors;
pub mod suite;

pub use run::{main, ENV_PYTHON};
