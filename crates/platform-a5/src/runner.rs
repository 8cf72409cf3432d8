//! The a5 `DeviceRunner`: the shared `ArchRunner` with a5's registers, mapped at every run.
//!
//! init: the shared init (timeouts checked, set device, op-execute timeout logged on failure,
//! AICPU and AICore streams); a5 maps nothing there. run: the guard (no driver call when
//! unusable), the shared request checks (block dim over [`crate::FACTS`]'s 36 is a usage error),
//! the card made current on the calling thread, then one `halResMap` per core
//! ([`CoreRegisters`]; the runner sends a failure through the fail-fast chain), then the shared
//! pipeline (allocate, copy in, AICore launch before AICPU, bounded syncs, copy out, free).
//! finalize: the shared finalize (force reset when unusable). This file names the runner; it
//! never reimplements the chain.

use platform_common::runner_base::ArchRunner;

use crate::registers::CoreRegisters;

/// The a5 (Ascend950) device runner of one card. [`ArchRunner::registers`] holds the addresses
/// the last run mapped, one per core.
pub type DeviceRunner = ArchRunner<CoreRegisters>;
