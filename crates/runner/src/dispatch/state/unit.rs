//! A unit of work: the cases handed to a lane in one assignment. Its own file because both the
//! run's queue ([`super::work`]) and the per-card plans ([`super::plan_queues`]) hold units.

/// A piece of work handed to a lane in one assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Case indices, run in this order.
    pub cases: Vec<usize>,
}
