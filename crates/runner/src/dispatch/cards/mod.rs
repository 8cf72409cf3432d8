//! The run's cards outside the state machine: taking them (`leases`: `--devices` /
//! `--device-num`; `card_wait`: `--wait-for-cards`, waiting in the host-wide queue for busy cards)
//! and their health records beside their locks (`memory`).
//!
//! This layer owns the leases and the record files. It never decides what happens to a card
//! during the run (the state machine does) and never starts a lane (the process layer does).

pub mod card_wait;
pub mod leases;
pub mod memory;
