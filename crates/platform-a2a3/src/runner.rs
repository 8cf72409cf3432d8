//! The a2a3 `DeviceRunner`: the shared `ArchRunner` with a2a3's registers, mapped once at init,
//! and the partial-good mask.
//!
//! init: the shared init (timeouts checked, set device, op-execute timeout logged on failure,
//! AICPU and AICore streams), then `halMemCtl` ([`CardRegisters`]: register window and
//! partial-good mask; a failure ends the init). run: the guard (no driver call when unusable),
//! the shared request checks (block dim over [`crate::FACTS`]'s 24 is a usage error), then the
//! mask (block dim over its usable cores is a usage error, no driver call), then the card made
//! current on the calling thread and the shared pipeline (allocate, copy in, AICore launch before
//! AICPU, bounded syncs, copy out, free; on a poisoned context its first buffer's `aclrtMalloc`
//! meets 507899, as the seed's a2a3 CI did). finalize: the shared finalize (force reset when
//! unusable; one attempt for an SDMA runner). This file names the runner; it never reimplements
//! the chain.

use platform_common::runner_base::ArchRunner;

use crate::registers::CardRegisters;

/// The a2a3 (Ascend910) device runner of one card. [`ArchRunner::registers`] holds the register
/// window and partial-good mask mapped at init.
pub type DeviceRunner = ArchRunner<CardRegisters>;
