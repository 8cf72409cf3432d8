//! Whose current device `set_device` selects in a [`super::SimDriver`]: one per value (the
//! in-process simulator) or one per thread (as CANN keeps it, for `libsim_acl.so`).

use std::thread::ThreadId;

/// Whose current device [`crate::driver::Driver::set_device`] selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CurrentDevice {
    /// One per `SimDriver` value, whichever thread calls (the in-process simulator).
    #[default]
    PerValue,
    /// One per calling thread, as CANN keeps it (`aclrtSetDevice`): for a value that serves every
    /// thread of a process (`libsim_acl.so`). A thread that never selected a device has none.
    PerThread,
}

impl CurrentDevice {
    /// The key of the calling thread's current device.
    pub(super) fn key(self) -> Option<ThreadId> {
        match self {
            Self::PerValue => None,
            Self::PerThread => Some(std::thread::current().id()),
        }
    }
}
