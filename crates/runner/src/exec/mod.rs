//! The case executor: one attempt of a case body on a chip worker, and how it is judged.
//!
//! - `run`: [`execute`], one attempt: kernels, the class's device fixture, the body under
//!   `catch_unwind`, the body's leftover buffers freed, and the runner's state has the last word;
//! - `compute`: the compute body (reference launches with goldens) written on the context;
//! - `fixture`: the lane's host fixtures ([`HostFixtures`]) and the setup steps' journal notes;
//! - `expect`: judging an expected failure ([`judge`]); `liveness`: the bounds of an expected
//!   device fault (its surfacing and its close);
//! - `attempt`: [`CaseRun`] and the classification of kernel setup errors; `panic`: catching a
//!   body's panic and telling it in one line.
//!
//! Classification comes from the typed errors, never from message text. This module never
//! retires, retries or escalates anything (the lane's heal policy and the dispatcher decide, from
//! the attempt's class).

mod attempt;
mod compute;
pub mod expect;
mod fixture;
pub mod liveness;
pub mod panic;
mod run;

pub use attempt::{setup_error_report, CaseRun};
pub use expect::{judge, Judged};
pub use fixture::{FixtureNote, HostFixture, HostFixtures};
pub use liveness::{close_bound, run_bound, LIVENESS_SLACK};
pub use run::{execute, CaseInput, Executed};

#[cfg(all(test, feature = "sim"))]
mod tests;
