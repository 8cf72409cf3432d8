//! How long the dispatcher waits, before it ends a lane for a case timeout, for what it asked
//! about the hung case: the lane's breadcrumb (bounded by [`ANSWER_WAIT`]) and the native stacks
//! (bounded by the stack tool's own bound plus [`STACK_SLACK`]), so a lane that cannot answer is
//! still ended in time.
//!
//! This file owns that bound as a pure function. It never asks, captures or kills anything.

use std::time::Duration;

/// How long a stack tool may take on a hung lane (the process layer kills it then, keeping what it
/// printed).
pub const STACK_BOUND: Duration = Duration::from_secs(5);

/// How long the lane's answer is waited for.
pub const ANSWER_WAIT: Duration = Duration::from_secs(1);

/// Time over the stack tool's bound for its result to reach the event loop.
pub const STACK_SLACK: Duration = Duration::from_millis(500);

/// What a diagnosis still waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// When it started (the case's deadline passed).
    pub started: Duration,
    /// The lane has not answered yet.
    pub answer: bool,
    /// The stack tool has not finished yet.
    pub stacks: bool,
    /// The stack tool's bound.
    pub stack_bound: Duration,
}

/// When the diagnosis ends at the latest (the lane is then ended, answered or not); `None` when
/// nothing is awaited any more: end it now.
pub fn ends_at(w: &Waiting) -> Option<Duration> {
    let answer = w.answer.then_some(w.started + ANSWER_WAIT);
    let stacks = w.stacks.then_some(w.started + w.stack_bound + STACK_SLACK);
    answer.max(stacks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_bounded_by_what_is_still_awaited() {
        let t0 = Duration::ZERO;
        let bound = Duration::from_secs(5);
        #[rustfmt::skip]
        let rows: &[(&str, bool, bool, Option<Duration>)] = &[
            // what,                                   answer awaited, stacks awaited, ends at
            ("both awaited: the stack tool's bound",   true,  true,  Some(t0 + bound + STACK_SLACK)),
            ("the answer only: one second",            true,  false, Some(t0 + ANSWER_WAIT)),
            ("the stacks only",                        false, true,  Some(t0 + bound + STACK_SLACK)),
            ("nothing awaited: end the lane now",      false, false, None),
        ];
        for &(what, answer, stacks, want) in rows {
            let w = Waiting {
                started: t0,
                answer,
                stacks,
                stack_bound: bound,
            };
            assert_eq!(ends_at(&w), want, "{what}");
        }
    }
}
