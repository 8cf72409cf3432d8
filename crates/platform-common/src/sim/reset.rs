//! The card-file side of a force reset: counting the attempt and deciding, from the plan, whether
//! it fails (`dead`, `force_reset_fail=K`), or succeeds and bumps the generation, and whether that
//! success is spoiled (`probe_fail=K`: the sticky error is not really cleared).
//!
//! A reset while the card's SDMA engine is wedged, before the handoff window (`sdma.rs`), is
//! `Blocked`: it waits out the remote-event timeout and confirms nothing (no generation bump, the
//! sticky error and the wedge stay, and the wedge counts as unobserved from then on, so a second
//! attempt blocks again). A reset that returns 0 otherwise clears the wedge.
//!
//! This file only decides; the driver tears the process's context down and clears it.

use super::card_file::CardState;
use super::plan::Fault;

/// What one force reset does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResetVerdict {
    /// The card is `dead`: the reset fails.
    Dead,
    /// Attempt `attempt` is one of the first K that `force_reset_fail=K` fails.
    Fails { attempt: u64 },
    /// The card's SDMA engine is wedged and the handoff window has not passed: the reset walks the
    /// CP-process streams into the remote-event timeout, returns 0 and confirms nothing.
    Blocked,
    /// The reset returns 0 and the card is now at `generation`; `spoiled` when `probe_fail` keeps
    /// the sticky error in place.
    Done { generation: u64, spoiled: bool },
}

/// Counts a force reset of the card whose record is `s` and decides its verdict; `sdma_blocks`
/// says whether a wedged SDMA engine makes it block (`sdma::reset_blocks`).
pub(crate) fn decide(s: &mut CardState, sdma_blocks: bool) -> ResetVerdict {
    s.counters.force_resets += 1;
    if s.has(|f| *f == Fault::Dead) {
        ResetVerdict::Dead
    } else if s.counters.force_resets <= s.force_reset_fail() {
        ResetVerdict::Fails {
            attempt: s.counters.force_resets,
        }
    } else if sdma_blocks {
        // The reset walked the CP-process streams with no retirement fence: from now on the
        // card behaves as after an unobserved fault, and every later reset blocks too.
        if let Some(w) = s.sdma_wedge.as_mut() {
            w.observed = false;
        }
        ResetVerdict::Blocked
    } else {
        s.sdma_wedge = None;
        s.counters.post_reset_probes += 1;
        s.generation += 1;
        ResetVerdict::Done {
            generation: s.generation,
            spoiled: s.counters.post_reset_probes <= s.probe_fail(),
        }
    }
}
