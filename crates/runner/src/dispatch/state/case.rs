//! What the state machine knows about one selected case: its id and place in the suite, the
//! cards it needs, its own timeout and retries, its attempts so far and whether its verdict is
//! final.
//!
//! This file owns that record. It never decides anything about the case (the policy does) and
//! never orders it among the others (`work` does).

use std::time::Duration;

use crate::case::Settings;

/// One selected case.
#[derive(Debug, Clone)]
pub struct CaseState {
    /// `Class::case`.
    pub id: String,
    /// Index of its class in the suite.
    pub class: usize,
    /// Index of the case in its class.
    pub case: usize,
    /// The length of its class's name, the part of `id` before `::`.
    class_len: usize,
    /// Cards it needs (more than one: it runs in the multi-card phase).
    pub devices: u32,
    /// Its class's runtime (an index of [`super::Work::runtime_names`]).
    pub runtime: u32,
    /// Whether it runs in its lane's pooled worker (a standalone case builds a worker of its own).
    pub pooled: bool,
    /// Its own timeout (a config override's, the case's or its class's), overriding
    /// `--case-timeout`.
    pub timeout: Option<Duration>,
    /// Its own retries (a config override's, the case's or its class's), overriding `--retries`.
    pub retries: Option<u32>,
    /// Attempts recorded so far.
    pub attempts: u32,
    /// Whether its verdict is final.
    pub done: bool,
}

impl CaseState {
    /// Its class's name.
    pub fn class_name(&self) -> &str {
        self.id.get(..self.class_len).unwrap_or_default()
    }

    /// The case's name after `Class::`.
    pub fn name(&self) -> &str {
        self.id.get(self.class_len + 2..).unwrap_or(&self.id)
    }
}

impl CaseState {
    /// Case `id`, the `case`-th of the suite's class `class` (`place`), whose class's name is
    /// `class_len` bytes of `id`, needing `devices` cards, on runtime `runtime` (pooled or not:
    /// `worker`), with its resolved `settings`.
    pub fn new(
        id: String,
        place: (usize, usize),
        class_len: usize,
        devices: u32,
        worker: (u32, bool),
        settings: &Settings,
    ) -> Self {
        Self {
            id,
            class: place.0,
            case: place.1,
            class_len,
            devices,
            runtime: worker.0,
            pooled: worker.1,
            timeout: settings.timeout,
            retries: settings.retries,
            attempts: 0,
            done: false,
        }
    }
}
