//! The C++ host API of cardguard: a host written in C++ (as the upstream project's host code is)
//! drives the device runners through a [`cxx`] bridge.
//!
//! From C++ (`include/cardguard/cardguard.h`, namespace `cardguard`): open a driver of an arch
//! (`a5`, `a2a3`; the simulated card or the CANN runtime, loaded at run time), take a card's
//! lease, build a device runner, register kernels, launch, read its health events, and finalize
//! it with the lease (the force-reset chain; its `ResetReport` is returned). A failed call throws
//! a typed exception deriving from `std::runtime_error`: `cardguard::DeviceError` (class, call,
//! code, code name), `cardguard::Unusable` (refused at the guard), `cardguard::ResetFailed`,
//! `cardguard::InitError`, `cardguard::UsageError`, `cardguard::LeaseError`,
//! `cardguard::KernelError`, `cardguard::DriverError`.
//!
//! - [`bridge`]: the shared types and the functions C++ calls (`extern "Rust"` only);
//! - `host`: the driver, lease and runner objects behind them;
//! - `convert`: errors and reports as the bridge's structs, classified by type, never by text.
//!
//! The C++ example host program `cxx/probe_main.cc` (the seed's within-process probe: a hang,
//! then a noop refused at the guard, finalize force-resets, a new runner's noop passes) is the
//! `cardguard-cxx-probe` binary of this crate. Design choices: the bridge has no `extern "C++"`
//! block, so no `unsafe` here; every fallible call fills an `ErrorInfo` the C++ shim throws
//! from, so the exception's type never depends on a message.

pub mod bridge;
mod convert;
mod host;

pub use convert::HostError;
pub use host::{DriverHandle, Lease, Runner};
