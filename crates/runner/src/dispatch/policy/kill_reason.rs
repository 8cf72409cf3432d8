//! Why the dispatcher ends a lane: the vocabulary the clock rules (`watchdog`) return and the
//! blame (`blame`) reads.
//!
//! This file owns the reasons only. It never decides that a lane ends (the state machine does,
//! through the clock rules) and never signals one (the process layer does).

/// Why a lane is being ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// The running case exceeded `--case-timeout`.
    CaseTimeout,
    /// The lane had work outstanding but sent nothing for `--case-timeout` outside a case
    /// (building, switching or retiring a worker, or closing one before the multi-card phase).
    Watchdog,
    /// The lane was told to close (its channel shut down) and did not exit in time.
    CloseLate,
    /// Building a worker (an init) exceeded `--init-timeout`: the card's problem, no case's.
    InitTimeout,
    /// A signal interrupted the run: every lane is ended.
    Interrupted,
    /// The lane broke its protocol: a line longer than [`crate::protocol::MAX_LINE`].
    ProtocolLine,
}
