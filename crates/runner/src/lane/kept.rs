//! The multi-card workers a lane keeps between a pooled class's multi-card cases of one runtime
//! and width (`multi`), held in the lane's state (`session`). Its own file so both name it.
//!
//! This file owns the type only; when a set is kept, reused or closed is `multi`'s.

use crate::case::Runtime;
use crate::worker::ChipWorker;

/// The workers of the last multi-card case, kept for the next one of the same runtime and width:
/// the lane's own card's here, the further cards' on their threads.
#[derive(Debug)]
pub struct KeptMulti {
    /// Their runtime.
    pub runtime: Runtime,
    /// Cards the set spans (the lane's own and `cards - 1` further ones).
    pub cards: usize,
    /// The lane's own card's worker.
    pub own: ChipWorker,
}
