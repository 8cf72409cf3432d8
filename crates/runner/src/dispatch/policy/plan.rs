//! The hand-out plan: the one call the state machine makes when work may go out (after a case
//! finished, a lane exited or started, the run began). Given the cards without a lane and the
//! live lanes, it says whether lanes must start first and, once they run, which lane takes the
//! queue's next unit, in order.
//!
//! Today's plan is the queue's order (suite order, retries first), dealt round-robin: every
//! healthy card without a lane gets a regular lane first; then one unit per lane per round, each
//! lane taking while [`super::handout::wants_work`] says it has room, until the queue runs out
//! (the state machine stops pulling then). A planner that orders by duration or runtime (issue
//! 23) replaces this function and its facts; the state machine only follows what it returns.
//!
//! This file owns that plan as a pure function. It never pops the queue, starts a lane or sends
//! an assignment (the state machine does).

use super::handout::{take, wants_work, Isolation, LaneState, Take};

/// What the plan needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFacts {
    /// Healthy cards (indices) that have no lane, in run order.
    pub idle_cards: Vec<usize>,
    /// Whether work is queued.
    pub queued: bool,
    /// Whether the run is closing its lanes (every verdict is in).
    pub finishing: bool,
    /// The live lanes (id and state), in start order.
    pub lanes: Vec<(usize, LaneState)>,
    /// The run's isolation mode.
    pub isolation: Isolation,
}

/// What to do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Start a regular lane on each of these cards (indices) first; the work goes out once they
    /// run (every lane then takes its share, the new ones with the others).
    Start(Vec<usize>),
    /// Hand out work to the live lanes in this order, as long as the queue lasts.
    Give(Rounds),
}

/// One hand-out: lane `lane` takes `take` of the queue's next unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Give {
    /// The lane's id.
    pub lane: usize,
    /// How much it takes.
    pub take: Take,
}

/// The hand-outs, round after round: in each round every lane that still wants work takes one
/// unit; a round in which nobody takes ends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rounds {
    lanes: Vec<(usize, LaneState)>,
    take: Take,
    next: usize,
    gave: bool,
}

impl Iterator for Rounds {
    type Item = Give;

    fn next(&mut self) -> Option<Give> {
        loop {
            if self.next == self.lanes.len() {
                if !self.gave {
                    return None;
                }
                self.gave = false;
                self.next = 0;
            }
            let (lane, state) = &mut self.lanes[self.next];
            self.next += 1;
            if wants_work(state) {
                // What it holds after this hand-out, for the next round's question.
                state.batches += 1;
                state.units_taken += 1;
                self.gave = true;
                return Some(Give {
                    lane: *lane,
                    take: self.take,
                });
            }
        }
    }
}

/// Today's plan (see the module docs).
pub fn plan(f: PlanFacts) -> Plan {
    if f.queued && !f.finishing && !f.idle_cards.is_empty() {
        return Plan::Start(f.idle_cards);
    }
    let lanes = if f.queued { f.lanes } else { Vec::new() };
    Plan::Give(Rounds {
        lanes,
        take: take(f.isolation),
        next: 0,
        gave: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Isolation::{Case, Class, Pool};

    fn lane(isolation: Isolation) -> LaneState {
        LaneState {
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
            isolation,
        }
    }

    /// The first `n` hand-outs of a plan, as `lane:take` (or `start c...`).
    fn first(plan: Plan, n: usize) -> Vec<String> {
        match plan {
            Plan::Start(cards) => vec![format!("start {cards:?}")],
            Plan::Give(rounds) => rounds
                .take(n)
                .map(|g| match g.take {
                    Take::Unit => format!("{}", g.lane),
                    Take::AtMost(k) => format!("{}:{k}", g.lane),
                })
                .collect(),
        }
    }

    #[test]
    fn plan_table() {
        let busy = LaneState {
            batches: 1,
            units_taken: 3,
            ..lane(Pool)
        };
        let fresh = LaneState {
            fresh: true,
            ..lane(Pool)
        };
        type Row = (
            &'static str,
            Vec<usize>,
            bool,
            bool,
            Vec<(usize, LaneState)>,
            Isolation,
            &'static [&'static str],
        );
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // what,                                       idle cards, queued, finishing, lanes,                     isolation, first hand-outs
            ("idle cards get lanes first",                 vec![1, 2], true,  false, vec![(0, lane(Pool))],              Pool,  &["start [1, 2]"]),
            ("nothing queued: no lane starts",             vec![1],    false, false, vec![(0, lane(Pool))],              Pool,  &[]),
            ("finishing: no lane starts",                  vec![1],    true,  true,  vec![],                             Pool,  &[]),
            ("pool: round-robin, two units each",          vec![],     true,  false, vec![(0, lane(Pool)), (1, lane(Pool))], Pool, &["0", "1", "0", "1"]),
            ("a lane holding one unit takes one more",     vec![],     true,  false, vec![(0, busy), (1, lane(Pool))],   Pool,  &["0", "1", "1"]),
            ("a fresh lane is fed nothing",                vec![],     true,  false, vec![(3, fresh), (4, lane(Pool))],  Pool,  &["4", "4"]),
            ("class: one unit per lane",                   vec![],     true,  false, vec![(0, lane(Class)), (1, lane(Class))], Class, &["0", "1"]),
            ("case: one case per lane",                    vec![],     true,  false, vec![(0, lane(Case)), (1, lane(Case))], Case, &["0:1", "1:1"]),
            ("no live lane: nothing",                      vec![],     true,  false, vec![],                             Pool,  &[]),
        ];
        for (what, idle_cards, queued, finishing, lanes, isolation, want) in rows {
            let p = plan(PlanFacts {
                idle_cards,
                queued,
                finishing,
                lanes,
                isolation,
            });
            assert_eq!(first(p, 10), want, "{what}");
        }
    }
}
