//! `cargo xtask chaos [--plans N] [--seed S] [--kill]`: N random fault plans (every fault of
//! DESIGN section 4, 2 to 4 simulated cards, either arch) each run once through the suite binary,
//! optionally with one lane SIGKILLed at a random moment, each checked on its `report.json` and
//! exit status. The last line is `chaos: <held>/<N> plans held every invariant (seed S)`; exit 1
//! unless every plan held, 2 when the suite cannot be built or run.
//!
//! - `faults`: the table of faults, one line each;
//! - `plan`: plans drawn from the seed;
//! - `run`: one plan's run (temp dirs, environment, the kill, the bound);
//! - `lanes`: finding and killing a run's lane processes;
//! - `check`: the invariants;
//! - `unfired`: the rules `faults_unfired` must list, from the sim's counters (every run has
//!   `--faults-must-fire`);
//! - `command`: the flags, the loop and the output.

mod check;
#[cfg(test)]
mod check_tests;
mod command;
mod faults;
mod lanes;
mod plan;
mod run;
mod unfired;

pub use command::{run, Args};
