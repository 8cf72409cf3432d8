//! The typed errors of a device runner: init, run (unusable, device, usage) and finalize.
//!
//! Each carries what a report needs (card, call, raw code) as fields; [`RunError::class`] and
//! [`InitError::class`] classify by variant and code, never by message text.
//!
//! Messages are one line that already names the inner error (the driver call and its code, the
//! broken timeout rule): that line is what reports, refusals and logs print. So no inner error is
//! also marked `#[source]`, and a `{:#}` chain never prints it twice.

use crate::arch::Arch;
use crate::driver::DeviceId;
use crate::error::{DriverError, FailureClass};
use crate::health::Capability;
use crate::timeouts::{TimeoutError, TimeoutProfile};

use super::buffer_id::BufferId;
use super::reset::ResetFailed;

/// A runner could not be initialised on its card.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InitError {
    /// A driver call of init failed. A card's init failure is a health event of that card, not
    /// an attempt of any case.
    #[error("failed to init the {arch} runner on card {device}: {error}")]
    Driver {
        /// The card.
        device: DeviceId,
        /// The runner's arch.
        arch: Arch,
        /// The driver call that failed.
        error: DriverError,
        /// Errors of init calls that are logged, not fatal (an op-execute-timeout refusal), seen
        /// before the fatal one.
        logged: Vec<DriverError>,
        /// Where it failed: the compute setup, or the SDMA provisioning and its warm-up.
        capability: Capability,
    },
    /// The configured timeouts break a rule of the profile the runner's driver is held to
    /// ([`TimeoutProfile::for_driver`]); refused before any driver call.
    #[error("refusing to init the {arch} runner on card {device} with {profile} timeouts: {error}")]
    Timeouts {
        /// The card.
        device: DeviceId,
        /// The runner's arch.
        arch: Arch,
        /// The rules applied (from the driver's kind).
        profile: TimeoutProfile,
        /// The rule or value that is broken, naming its variable.
        error: TimeoutError,
    },
}

impl InitError {
    /// The card.
    pub fn device(&self) -> DeviceId {
        match self {
            Self::Driver { device, .. } | Self::Timeouts { device, .. } => *device,
        }
    }

    /// The runner's arch.
    pub fn arch(&self) -> Arch {
        match self {
            Self::Driver { arch, .. } | Self::Timeouts { arch, .. } => *arch,
        }
    }

    /// The driver call that failed (`None` for a configuration refused before any call).
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            Self::Driver { error, .. } => Some(*error),
            Self::Timeouts { .. } => None,
        }
    }

    /// Init calls whose failure was logged, not fatal, before the fatal one.
    pub fn logged(&self) -> &[DriverError] {
        match self {
            Self::Driver { logged, .. } => logged,
            Self::Timeouts { .. } => &[],
        }
    }

    /// The capability the init failed in (a configuration refused before any call: compute).
    pub fn capability(&self) -> Capability {
        match self {
            Self::Driver { capability, .. } => *capability,
            Self::Timeouts { .. } => Capability::Compute,
        }
    }

    /// The failure class: from the driver error's code, or usage for bad timeouts.
    pub fn class(&self) -> FailureClass {
        match self {
            Self::Driver { error, .. } => error.class(),
            Self::Timeouts { .. } => FailureClass::Usage,
        }
    }
}

/// A run refused because the runner is marked unusable. No driver call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "card {device} ({arch}) is marked unusable since {} failed with {}; the run was refused \
     without touching the device: finalize this runner (it force-resets card {device} and probes \
     it), then build a new one",
    first_cause.call,
    first_cause.code
)]
pub struct UnusableError {
    /// The card.
    pub device: DeviceId,
    /// The runner's arch.
    pub arch: Arch,
    /// The error that first poisoned the runner.
    pub first_cause: DriverError,
}

/// A request the runner refuses before any driver call because it is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    /// Block dim zero.
    #[error("block dim 0 is not allowed (at least one block)")]
    BlockDimZero,
    /// Block dim over the arch's limit.
    #[error("block dim {block_dim} exceeds the {arch} limit of {limit}")]
    BlockDimOverArchLimit {
        /// Requested.
        block_dim: u32,
        /// The arch.
        arch: Arch,
        /// The arch's limit.
        limit: u32,
    },
    /// Block dim over the usable cores of the card (a2a3 partial-good mask).
    #[error("block dim {block_dim} exceeds the {usable} usable AICores of card {device} (mask {mask:#x})")]
    BlockDimOverUsableCores {
        /// Requested.
        block_dim: u32,
        /// Usable cores.
        usable: u32,
        /// The card.
        device: DeviceId,
        /// The partial-good mask.
        mask: u64,
    },
    /// Block dim over what the kernel is written for.
    #[error("block dim {block_dim} exceeds the {max} blocks kernel {kernel:?} is written for")]
    BlockDimOverKernel {
        /// Requested.
        block_dim: u32,
        /// The kernel.
        kernel: String,
        /// The blob's block dim.
        max: u32,
    },
    /// No kernel of that name is registered.
    #[error("kernel {0:?} is not registered with this runner")]
    UnknownKernel(String),
    /// The argument count does not match the kernel's.
    #[error("kernel {kernel:?} takes {expected} arguments, the request has {got}")]
    ArgCount {
        /// The kernel.
        kernel: String,
        /// The blob's argument count.
        expected: u32,
        /// The request's.
        got: usize,
    },
    /// A zero-sized buffer argument.
    #[error("argument {index} of kernel {kernel:?} is an empty buffer")]
    EmptyBuffer {
        /// The kernel.
        kernel: String,
        /// The argument's index.
        index: usize,
    },
    /// An allocation of zero bytes.
    #[error("a device buffer needs at least 1 byte")]
    EmptyAllocation,
    /// An SDMA copy on a runner created without the SDMA option.
    #[error("an SDMA copy needs a worker created with the SDMA option (class or case setting `sdma`)")]
    NoSdma,
    /// A buffer handle of another runner: one that was closed (or rebuilt after a fault), or
    /// another card's. Nothing was sent to the device.
    #[error(
        "{buffer} does not belong to this runner (runner {runner}): buffers belong to the worker that \
         allocated them, and a closed or rebuilt worker's buffers are gone"
    )]
    ForeignBuffer {
        /// The handle.
        buffer: BufferId,
        /// This runner's tag.
        runner: u64,
    },
    /// A buffer handle that was freed.
    #[error("{0} was freed")]
    FreedBuffer(BufferId),
    /// A copy outside a buffer.
    #[error("{len} bytes at offset {offset} do not fit in {buffer} of {size} bytes")]
    BufferRange {
        /// The handle.
        buffer: BufferId,
        /// Where the copy starts.
        offset: usize,
        /// Bytes copied.
        len: usize,
        /// The buffer's size.
        size: usize,
    },
    /// A blob built for another arch.
    #[error("kernel blob {kernel:?} is built for {blob_arch}, this runner is {runner_arch}")]
    WrongArch {
        /// The kernel.
        kernel: String,
        /// The blob's arch.
        blob_arch: Arch,
        /// The runner's arch.
        runner_arch: Arch,
    },
}

/// Why a run (or a kernel registration) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// Refused at the guard: the runner is marked unusable (no driver call was made).
    #[error(transparent)]
    Unusable(UnusableError),
    /// A driver call failed during the run; the runner is now marked unusable.
    #[error("{0}; the runner is now marked unusable (finalize force-resets its card)")]
    Device(DriverError),
    /// The request was invalid; nothing was sent to the device.
    #[error(transparent)]
    Usage(UsageError),
}

impl RunError {
    /// The failure class: unusable and device errors are device-runtime (a driver error during a
    /// run always marks the runner unusable, whatever its code), usage errors are usage.
    pub fn class(&self) -> FailureClass {
        match self {
            Self::Unusable(_) | Self::Device(_) => FailureClass::DeviceRuntime,
            Self::Usage(_) => FailureClass::Usage,
        }
    }

    /// The driver error behind this error: the failed call, or for a refusal the first cause.
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            Self::Unusable(u) => Some(u.first_cause),
            Self::Device(error) => Some(*error),
            Self::Usage(_) => None,
        }
    }
}

impl From<UsageError> for RunError {
    fn from(e: UsageError) -> Self {
        Self::Usage(e)
    }
}

/// Finalize was handed the lease of another card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to finalize the runner of card {runner_device} with the lease of card {lease_card}: a \
     force reset needs the lease of the card it resets; nothing was reset"
)]
pub struct WrongLease {
    /// The runner's card.
    pub runner_device: DeviceId,
    /// The card the lease is for.
    pub lease_card: DeviceId,
}

/// Why finalize did not end with a usable card.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FinalizeError {
    /// The lease is for another card: nothing was force-reset (a healthy runner was still torn
    /// down normally; an unusable one's handles were abandoned and its card stays poisoned).
    #[error(transparent)]
    WrongLease(WrongLease),
    /// No force-reset attempt was confirmed by its probe.
    #[error(transparent)]
    ResetFailed(ResetFailed),
}

impl FinalizeError {
    /// The failure class: device-runtime for a failed reset, usage for a wrong lease.
    pub fn class(&self) -> FailureClass {
        match self {
            Self::WrongLease(_) => FailureClass::Usage,
            Self::ResetFailed(_) => FailureClass::DeviceRuntime,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::DriverCall;
    use crate::error::codes;

    fn cause() -> DriverError {
        DriverError::new(DriverCall::LaunchAicore, codes::RT_MEMORY_ALLOCATION)
    }

    #[test]
    fn classes_follow_the_variant_not_the_code() {
        let usage_coded = DriverError::new(DriverCall::Malloc, codes::INVALID_PARAM);
        assert_eq!(usage_coded.class(), FailureClass::Usage);
        // A driver error during a run marks the runner unusable, so it is device-runtime anyway.
        assert_eq!(RunError::Device(usage_coded).class(), FailureClass::DeviceRuntime);
        let refused = RunError::Unusable(UnusableError {
            device: 1,
            arch: Arch::A5,
            first_cause: cause(),
        });
        assert_eq!(refused.class(), FailureClass::DeviceRuntime);
        assert_eq!(refused.driver_error(), Some(cause()));
        let usage = RunError::from(UsageError::BlockDimZero);
        assert_eq!(usage.class(), FailureClass::Usage);
        assert_eq!(usage.driver_error(), None);
    }

    #[test]
    fn unusable_message_names_card_cause_code_and_next_step() {
        let e = UnusableError {
            device: 5,
            arch: Arch::A2a3,
            first_cause: cause(),
        };
        let msg = e.to_string();
        for part in [
            "card 5",
            "a2a3",
            "rtKernelLaunchWithHandleV2",
            "207001",
            "ACL_ERROR_RT_MEMORY_ALLOCATION",
            "finalize this runner",
        ] {
            assert!(msg.contains(part), "{part:?} missing from {msg:?}");
        }
    }

    #[test]
    fn inner_errors_are_printed_once() {
        use std::error::Error as _;
        let device = RunError::Device(cause());
        assert!(device.to_string().contains("207001"), "{device}");
        assert!(
            device.source().is_none(),
            "the message already names the driver error"
        );
        let init = InitError::Driver {
            device: 1,
            arch: Arch::A5,
            error: cause(),
            logged: Vec::new(),
            capability: Capability::Compute,
        };
        assert!(init.to_string().contains("rtKernelLaunchWithHandleV2"), "{init}");
        assert!(init.source().is_none());
        assert_eq!(init.class(), FailureClass::DeviceRuntime);
        assert_eq!(
            (init.device(), init.arch(), init.driver_error()),
            (1, Arch::A5, Some(cause()))
        );
    }

    #[test]
    fn wrong_lease_and_reset_failed_read_as_one_line() {
        let w = WrongLease {
            runner_device: 1,
            lease_card: 2,
        };
        assert!(w.to_string().contains("card 1") && w.to_string().contains("card 2"));
        assert_eq!(FinalizeError::WrongLease(w).class(), FailureClass::Usage);
        let r = ResetFailed {
            device: 3,
            arch: Arch::A5,
            first_cause: Some(cause()),
            attempts: Vec::new(),
        };
        assert!(!r.to_string().contains('\n'));
        assert!(r.to_string().contains("fresh process"), "{r}");
    }
}
