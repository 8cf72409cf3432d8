//! The recovery state machine of one device runner, and the events its transitions emit.
//!
//! This module owns the runner's health: which state it is in, the first cause that took it out
//! of `healthy`, and the [`HealthEvent`]s every transition emits (to the runner's
//! [`HealthSubscriber`] and to `tracing`). It never calls the driver and never decides *when* to
//! transition: the runner base does ([`crate::runner_base`]).
//!
//! ```text
//!  healthy --fault(cause)--> faulted --mark_unusable(drain)--> unusable --begin_reset--> resetting
//!                                                                                  |  attempt(..) (loops)
//!                                              recovered <--recovered(proof)-------+
//!                                              failed    <--reset_failed-----------+
//! ```
//!
//! Illegal transitions are errors ([`IllegalTransition`]), never panics, and the one that matters
//! most is unrepresentable: leaving `resetting` for `recovered` needs a [`ProbeConfirmed`], which
//! only a confirmed post-reset probe in this crate can construct. So the unusable flag can only be
//! cleared by a probe that proved the card works.
//!
//! These are the only kinds of health event a runner's state machine knows. The runner crate
//! above embeds each [`HealthEvent`] whole in its report's health record and adds, beside them,
//! only the kinds that only it can see (a fresh lane process, a quarantine, a failed init); none
//! of those is declared here.
//!
//! - `machine`: [`Health`], the states and transitions, and [`ProbeConfirmed`];
//! - `event`: [`HealthEvent`] and its kinds, the drain's report, and [`HealthSubscriber`].

mod event;
mod machine;

pub(crate) use event::acl_rc;
pub use event::{Capability, DrainOutcome, DrainReport, HealthEvent, HealthEventKind, HealthSubscriber};
pub use machine::{Health, HealthState, IllegalTransition, ProbeConfirmed};
