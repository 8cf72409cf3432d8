//! The hand-out rule: which lane takes another unit of work now, how much of the queue's next
//! unit it takes, and whether a lane closes once it holds nothing more (`--isolation`).
//!
//! Isolation modes: `pool` (the default) keeps a lane per card for the whole run, fed unit after
//! unit; `class` gives every lane one unit (a class's cases, or one retried case) and closes it
//! after that unit, so every class runs in a fresh lane process; `case` does the same with units
//! of one case. A lane closed by design exits 0 with nothing unfinished: a clean exit, never a
//! death, never a `fresh_process` (`lane_exit`). Containment is the same in every mode: a fault
//! inside a unit is healed, escalated and retried as in `pool`.
//!
//! This file owns those rules as pure functions. It never sends an assignment or closes a channel
//! (the event loop does) and never orders the queue (`work` does: pooled before standalone,
//! runtimes together, retries first).

/// Units a `pool` lane holds at once (one running, one waiting in its channel), so it never waits
/// for the dispatcher between classes.
pub const BATCHES_IN_FLIGHT: usize = 2;

pub use crate::settings::Isolation;

/// How much of the queue's next unit one hand-out takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// The whole unit (a class's cases, or a retried case).
    Unit,
    /// At most this many cases from its front; the rest stays first in the queue.
    AtMost(usize),
}

/// What the rule needs to know about a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneState {
    /// Its process is alive.
    pub alive: bool,
    /// A fresh lane (one bounded pass over a sink's cases, fed nothing else).
    pub fresh: bool,
    /// A multi-card lane (fed nothing but its cases).
    pub multi: bool,
    /// A multi-card lane asked to release its further cards, not yet answered.
    pub releasing: bool,
    /// Its channel was closed for writing.
    pub closing: bool,
    /// It is being ended.
    pub killing: bool,
    /// Units it holds.
    pub batches: usize,
    /// Units it was given since it started.
    pub units_taken: usize,
    /// Cases it holds (running or waiting).
    pub outstanding: usize,
    /// Its card is quarantined.
    pub card_quarantined: bool,
    /// The run's isolation mode.
    pub isolation: Isolation,
}

/// Whether the lane takes another unit now: a live regular lane, not closing or being ended, on a
/// healthy card, holding fewer than [`BATCHES_IN_FLIGHT`] units in `pool`; in `class` and `case`,
/// only a lane that has had no unit yet.
pub fn wants_work(l: &LaneState) -> bool {
    let room = match l.isolation {
        Isolation::Pool => l.batches < BATCHES_IN_FLIGHT,
        Isolation::Class | Isolation::Case => l.units_taken == 0,
    };
    l.alive && !l.fresh && !l.multi && !l.closing && !l.killing && !l.card_quarantined && room
}

/// How much of the next unit a hand-out takes: one case in `case`, the whole unit otherwise.
pub fn take(isolation: Isolation) -> Take {
    match isolation {
        Isolation::Case => Take::AtMost(1),
        Isolation::Pool | Isolation::Class => Take::Unit,
    }
}

/// Whether the lane's channel is closed now (it finishes, closes its workers and exits 0): a live
/// lane that holds nothing more and is done by design: a fresh lane after its one bounded pass,
/// the multi-card lane after its cases, and in `class` and `case` any lane after its unit.
pub fn closes_now(l: &LaneState) -> bool {
    let done_by_design = l.fresh || l.multi || (l.isolation != Isolation::Pool && l.units_taken > 0);
    l.alive && !l.closing && !l.killing && !l.releasing && l.outstanding == 0 && done_by_design
}

/// Whether a multi-card lane that holds nothing more is asked to release its further cards
/// ([`crate::protocol::ToLane::Release`]) instead of closing: in `pool` (whose lanes take unit
/// after unit), on a healthy card, not closing, being ended or releasing already, while the run
/// `goes_on` (work is left, and the lane's card is not reserved for the next N-card cases, whose
/// lane needs it free). It then goes on as its own card's regular lane with the worker it holds
/// there: the card's next init is saved.
pub fn releases_now(l: &LaneState, goes_on: bool) -> bool {
    goes_on
        && l.alive
        && l.multi
        && !l.releasing
        && !l.closing
        && !l.killing
        && !l.card_quarantined
        && l.outstanding == 0
        && l.isolation == Isolation::Pool
}

/// A fresh lane's one bounded pass: the cases its card's poison sink named, in sink order, then
/// the still-queued retries of cases that failed on that card (the trigger that poisoned it), each
/// once. The fresh process is the freshly reset card DESIGN step 6 retries on, and its worker is
/// built anyway: handed to a busy lane instead, a retry waits behind that lane's unit and costs it
/// another init. Retries go last so a trigger that poisons again never costs the sink's cases
/// their run.
pub fn fresh_pass(sink: Vec<usize>, queued_retries: Vec<usize>) -> Vec<usize> {
    let mut pass = sink;
    for i in queued_retries {
        if !pass.contains(&i) {
            pass.push(i);
        }
    }
    pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use Isolation::{Case, Class, Pool};

    const READY: LaneState = LaneState {
        alive: true,
        fresh: false,
        multi: false,
        releasing: false,
        closing: false,
        killing: false,
        batches: 0,
        units_taken: 0,
        outstanding: 0,
        card_quarantined: false,
        isolation: Pool,
    };

    #[test]
    fn handout_table() {
        let ready = READY;
        #[rustfmt::skip]
        let rows: Vec<(&str, LaneState, bool)> = vec![
            ("an idle regular lane",            ready, true),
            ("one unit in flight",              LaneState { batches: 1, units_taken: 3, outstanding: 5, ..ready }, true),
            ("two units in flight",             LaneState { batches: BATCHES_IN_FLIGHT, ..ready }, false),
            ("a dead lane",                     LaneState { alive: false, ..ready }, false),
            ("a fresh lane gets nothing more",  LaneState { fresh: true, ..ready }, false),
            ("the multi-card lane",             LaneState { multi: true, ..ready }, false),
            ("a closing lane",                  LaneState { closing: true, ..ready }, false),
            ("a lane being ended",              LaneState { killing: true, ..ready }, false),
            ("a lane on a quarantined card",    LaneState { card_quarantined: true, ..ready }, false),
            ("class: a new lane takes its unit", LaneState { isolation: Class, ..ready }, true),
            ("class: one unit is all it gets",  LaneState { isolation: Class, units_taken: 1, batches: 1, outstanding: 4, ..ready }, false),
            ("class: even once it is done",     LaneState { isolation: Class, units_taken: 1, ..ready }, false),
            ("case: a new lane takes its case", LaneState { isolation: Case, ..ready }, true),
            ("case: one case is all it gets",   LaneState { isolation: Case, units_taken: 1, batches: 1, outstanding: 1, ..ready }, false),
            ("case: a quarantined card's lane", LaneState { isolation: Case, card_quarantined: true, ..ready }, false),
            ("case: a fresh lane",              LaneState { isolation: Case, fresh: true, ..ready }, false),
        ];
        for (what, l, want) in rows {
            assert_eq!(wants_work(&l), want, "{what}");
        }
    }

    #[test]
    fn close_table() {
        let ready = READY;
        #[rustfmt::skip]
        let rows: Vec<(&str, LaneState, bool)> = vec![
            ("pool: an idle lane stays for more work", LaneState { units_taken: 4, ..ready }, false),
            ("pool: a lane with work",                 LaneState { units_taken: 1, outstanding: 2, batches: 1, ..ready }, false),
            ("a fresh lane after its pass",            LaneState { fresh: true, units_taken: 1, ..ready }, true),
            ("a fresh lane with cases left",           LaneState { fresh: true, units_taken: 1, outstanding: 1, ..ready }, false),
            ("the multi-card lane after its cases",    LaneState { multi: true, units_taken: 1, ..ready }, true),
            ("a multi-card lane releasing its cards",  LaneState { multi: true, units_taken: 1, releasing: true, ..ready }, false),
            ("class: after its unit",                  LaneState { isolation: Class, units_taken: 1, ..ready }, true),
            ("class: its unit still running",          LaneState { isolation: Class, units_taken: 1, outstanding: 3, ..ready }, false),
            ("class: a new lane without a unit yet",   LaneState { isolation: Class, ..ready }, false),
            ("case: after its case",                   LaneState { isolation: Case, units_taken: 1, ..ready }, true),
            ("case: its case running",                 LaneState { isolation: Case, units_taken: 1, outstanding: 1, ..ready }, false),
            ("case: already closing",                  LaneState { isolation: Case, units_taken: 1, closing: true, ..ready }, false),
            ("case: being ended",                      LaneState { isolation: Case, units_taken: 1, killing: true, ..ready }, false),
            ("case: dead already",                     LaneState { isolation: Case, units_taken: 1, alive: false, ..ready }, false),
        ];
        for (what, l, want) in rows {
            assert_eq!(closes_now(&l), want, "{what}");
        }
    }

    #[test]
    fn release_table() {
        let done = LaneState {
            multi: true,
            units_taken: 1,
            ..READY
        };
        #[rustfmt::skip]
        let rows: Vec<(&str, LaneState, bool, bool)> = vec![
            ("a multi-card lane after its cases",      done, true, true),
            ("the run ends, or its card is reserved",  done, false, false),
            ("its cases still running",                LaneState { outstanding: 1, batches: 1, ..done }, true, false),
            ("a regular lane",                         LaneState { multi: false, ..done }, true, false),
            ("a fresh lane",                           LaneState { multi: false, fresh: true, ..done }, true, false),
            ("asked already",                          LaneState { releasing: true, ..done }, true, false),
            ("closing",                                LaneState { closing: true, ..done }, true, false),
            ("being ended",                            LaneState { killing: true, ..done }, true, false),
            ("dead",                                   LaneState { alive: false, ..done }, true, false),
            ("its card quarantined",                   LaneState { card_quarantined: true, ..done }, true, false),
            ("class: a lane per unit",                 LaneState { isolation: Class, ..done }, true, false),
            ("case: a lane per case",                  LaneState { isolation: Case, ..done }, true, false),
        ];
        for (what, l, goes_on, want) in rows {
            assert_eq!(releases_now(&l, goes_on), want, "{what}");
            if want {
                assert!(closes_now(&l), "{what}: closed when not released");
            }
        }
    }

    /// A row of the fresh-pass table: what, the sink's cases, the queued retries, the pass.
    type PassRow = (&'static str, &'static [usize], &'static [usize], &'static [usize]);

    #[test]
    fn fresh_pass_table() {
        #[rustfmt::skip]
        let rows: [PassRow; 6] = [
            ("the sink alone",                 &[4, 5, 6], &[],     &[4, 5, 6]),
            ("the trigger's retry goes last",  &[4, 5, 6], &[3],    &[4, 5, 6, 3]),
            ("retries in their order",         &[4],       &[3, 1], &[4, 3, 1]),
            ("a retry the sink names, once",   &[4, 3],    &[3],    &[4, 3]),
            ("a retry alone",                  &[],        &[3],    &[3]),
            ("a retry scheduled twice, once",  &[4],       &[3, 3], &[4, 3]),
        ];
        for (what, sink, retries, want) in rows {
            assert_eq!(fresh_pass(sink.to_vec(), retries.to_vec()), want, "{what}");
        }
    }

    #[test]
    fn case_isolation_takes_one_case_of_a_unit() {
        assert_eq!(take(Pool), Take::Unit);
        assert_eq!(take(Class), Take::Unit);
        assert_eq!(take(Case), Take::AtMost(1));
        assert_eq!(
            [Pool, Class, Case].map(Isolation::name),
            ["pool", "class", "case"]
        );
    }
}
