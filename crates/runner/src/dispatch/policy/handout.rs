//! The hand-out rule: which lane takes another unit of work now.
//!
//! This file owns the rule as a pure function. It never sends an assignment (the event loop
//! does) and never orders the queue (`work` does: pooled before standalone, runtimes together,
//! retries first).

/// Units a regular lane holds at once (one running, one waiting in its pipe), so it never waits
/// for the dispatcher between classes.
pub const BATCHES_IN_FLIGHT: usize = 2;

/// What the rule needs to know about a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneState {
    /// Its process is alive.
    pub alive: bool,
    /// A fresh lane (one bounded pass over a sink's cases, fed nothing else).
    pub fresh: bool,
    /// The multi-card phase's lane (fed nothing else).
    pub multi: bool,
    /// Its stdin was closed.
    pub closing: bool,
    /// It is being ended.
    pub killing: bool,
    /// Units it holds.
    pub batches: usize,
    /// Its card is quarantined.
    pub card_quarantined: bool,
}

/// Whether the lane takes another unit now: a live regular lane, not closing or being ended, on a
/// healthy card, holding fewer than [`BATCHES_IN_FLIGHT`] units.
pub fn wants_work(l: &LaneState) -> bool {
    l.alive
        && !l.fresh
        && !l.multi
        && !l.closing
        && !l.killing
        && !l.card_quarantined
        && l.batches < BATCHES_IN_FLIGHT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handout_table() {
        let ready = LaneState {
            alive: true,
            fresh: false,
            multi: false,
            closing: false,
            killing: false,
            batches: 0,
            card_quarantined: false,
        };
        #[rustfmt::skip]
        let rows: Vec<(&str, LaneState, bool)> = vec![
            ("an idle regular lane",            ready, true),
            ("one unit in flight",              LaneState { batches: 1, ..ready }, true),
            ("two units in flight",             LaneState { batches: BATCHES_IN_FLIGHT, ..ready }, false),
            ("a dead lane",                     LaneState { alive: false, ..ready }, false),
            ("a fresh lane gets nothing more",  LaneState { fresh: true, ..ready }, false),
            ("the multi-card lane",             LaneState { multi: true, ..ready }, false),
            ("a closing lane",                  LaneState { closing: true, ..ready }, false),
            ("a lane being ended",              LaneState { killing: true, ..ready }, false),
            ("a lane on a quarantined card",    LaneState { card_quarantined: true, ..ready }, false),
        ];
        for (what, l, want) in rows {
            assert_eq!(wants_work(&l), want, "{what}");
        }
    }
}
