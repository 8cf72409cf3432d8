//! The report's data model: what `report.json` holds, the journal's events, and how a case's final
//! outcome and the run's summary are derived from stored attempts.
//!
//! This module owns the schema and the derivation rules, one subject per file. It never renders
//! anything and never touches the file system: the writers in the sibling modules do that.
//!
//! - `outcome`: attempt and case outcomes;
//! - `verdict`: [`verdict`] (nextest's rule: store the attempts, derive the verdict);
//! - `attempt`: one attempt, its typed [`ErrorReport`], and the [`CaseReport`] holding them;
//! - `output`: what a lane wrote during a failed attempt ([`AttemptOutput`]);
//! - `diagnostics`: where a timed-out attempt was stuck ([`Diagnostics`]), carried with its
//!   output;
//! - `health`: a card's [`HealthRecord`] (the platform's event embedded, or one only the runner
//!   sees);
//! - `run`: the run's identity, [`Summary`] and [`RunReport`] (`report.json`'s top level);
//! - `event`: the journal's public event vocabulary ([`Event`]);
//! - `builder`: [`RunBuilder`], the fold from events to the report;
//! - `stress`: a stress run's iterations joined into one report ([`join_iterations`]).

mod attempt;
mod builder;
mod diagnostics;
mod event;
mod health;
mod outcome;
mod output;
mod run;
mod stress;
mod verdict;

pub use attempt::{Attempt, CaseReport, ErrorReport};
pub use builder::{ModelError, RunBuilder};
pub use diagnostics::Diagnostics;
pub use event::{Event, FixturePart, LaneStatus, WorkerAction};
pub use health::{CardEvent, HealthRecord, RunnerEvent, RunnerEventKind};
pub use outcome::{AttemptOutcome, FlakyResult, Outcome};
pub use output::{AttemptOutput, CAPTURE_LIMIT};
pub use run::{
    rfc3339_utc, DriverReport, Interruption, PartitionReport, Platform, RunInfo, RunReport, StressCase,
    StressIteration, StressReport, Summary, UnfiredFault,
};
pub use stress::{join_iterations, render_stress};
pub use verdict::verdict;
