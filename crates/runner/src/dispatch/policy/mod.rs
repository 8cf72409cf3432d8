//! The dispatcher's decisions, each a pure function of facts with a table test (nextest's
//! dispatcher shape: events in, responses out). The state machine gathers the facts, calls these
//! and applies what they return; nothing here starts a process, reads a clock or writes a report.
//!
//! - `retry`: step 6, whether an ended attempt is retried;
//! - `blame`: step 6, which case pays for a lane's crash or timeout, and which deaths are
//!   infrastructure kills (a signal the dispatcher did not send);
//! - `sink_rerun`: step 5, which unfinished cases the poison sink sends to a fresh lane;
//! - `lane_exit`: steps 5 and 7 after every lane exit (requeue, fresh lane, init timeout,
//!   quarantine, a preflight's verdict), naming the strike an exit is;
//! - `strikes`: step 7, what a strike's count in a row means (lane deaths, infrastructure kills,
//!   init timeouts, multi-card init failures);
//! - `quarantine`: step 7, the reasons a card leaves the run, whether the card or the host is
//!   blamed, and the multi-card phase's cards;
//! - `watchdog`: the deadlines of a lane (case timeout, init timeout, watchdog, close) and how it
//!   is ended; `kill_reason`: why a lane is ended;
//! - `diagnosis`: how long a hung case's diagnosis may delay the end of its lane;
//! - `placement`: where a retried case runs (a card holding its runtime, or its own card once
//!   reset, within an init's wait);
//! - `plan`: the hand-out plan (which cards get a lane, which lanes take the next units);
//!   `handout`: which lane takes more work, how much, and when it closes (`--isolation`);
//! - `spawn`: whether a failed lane spawn is tried again, and when;
//! - `skip`: the skip of a case that needs more cards than the run has (or whose skip condition
//!   holds, or whose kernel has no binary).
//!
//! Step 8 (one verdict per case) is [`crate::report::model::verdict`].

pub mod blame;
pub mod diagnosis;
pub mod handout;
pub mod kill_reason;
pub mod lane_exit;
pub mod placement;
pub mod plan;
pub mod planner;
pub mod quarantine;
pub mod retry;
pub mod sink_rerun;
pub mod skip;
pub mod spawn;
pub mod strikes;
pub mod watchdog;

pub use blame::{blame, describe_signal, infrastructure_kill, Blame, DeathFacts};
pub use handout::{
    closes_now, fresh_pass, releases_now, take, wants_work, Isolation, LaneState, Take, BATCHES_IN_FLIGHT,
};
pub use kill_reason::KillReason;
pub use lane_exit::{after_exit, ExitDecision, ExitFacts, InitFailure, LaneKind, PreflightStep};
pub use plan::{plan, Give, Plan, PlanFacts};
pub use quarantine::{multi_card_phase, Blamed, MultiFacts, MultiPhase, MAX_INFRA_KILLS, MAX_LANE_DEATHS};
pub use retry::{after_attempt, retries_for, retryable, AttemptDecision, AttemptFacts};
pub use sink_rerun::{rerun_from_sink, Outstanding, SinkRerun};
pub use skip::{skip_reason, SkipFacts};
pub use spawn::{retry_after as spawn_retry_after, SPAWN_TRIES};
pub use strikes::{after_strike, Strike, StrikeKind, StrikeStep};
pub use watchdog::{case_limit, LaneTimes, Limits, KILL_GRACE};
