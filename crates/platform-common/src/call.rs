//! [`DriverCall`]: the name of every driver call a runner makes, as CANN spells it.
//!
//! A leaf of the crate: the [`crate::driver::Driver`] trait names its calls with it and
//! [`crate::error::DriverError`] carries one, so both depend on this file and not on each other.
//! It never says what a call does (the trait's docs do) or what its codes mean (the code table
//! does).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Every driver call a runner makes; the name in messages is CANN's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverCall {
    /// `aclInit`.
    Init,
    /// `aclrtSetDevice`.
    SetDevice,
    /// `aclrtResetDevice` (soft reset).
    ResetDevice,
    /// `aclrtResetDeviceForce`.
    ResetDeviceForce,
    /// `aclrtSetOpExecuteTimeOutV2`.
    SetOpExecuteTimeout,
    /// `aclrtCreateStream`.
    CreateStream,
    /// `aclrtDestroyStream`.
    DestroyStream,
    /// `aclrtSynchronizeStreamWithTimeout`.
    SynchronizeStreamWithTimeout,
    /// `aclrtSynchronizeDeviceWithTimeout`.
    SynchronizeDeviceWithTimeout,
    /// `aclrtMalloc`.
    Malloc,
    /// `aclrtFree`.
    Free,
    /// `aclrtMemcpy` host to device.
    MemcpyToDevice,
    /// `aclrtMemcpy` device to host.
    MemcpyToHost,
    /// `rtRegisterKernel` (allocates the kernel's registration buffer on the device).
    RegisterKernel,
    /// `rtKernelLaunchWithHandleV2` on an AICore stream.
    LaunchAicore,
    /// `rtAicpuKernelLaunchExWithArgs` on an AICPU stream.
    LaunchAicpu,
    /// `halResMap` (a5: one mapping per AICore).
    HalResMap,
    /// `halMemCtl` (a2a3: register window plus the partial-good mask).
    HalMemCtl,
}

impl DriverCall {
    /// CANN's name of the call.
    pub fn name(self) -> &'static str {
        match self {
            Self::Init => "aclInit",
            Self::SetDevice => "aclrtSetDevice",
            Self::ResetDevice => "aclrtResetDevice",
            Self::ResetDeviceForce => "aclrtResetDeviceForce",
            Self::SetOpExecuteTimeout => "aclrtSetOpExecuteTimeOutV2",
            Self::CreateStream => "aclrtCreateStream",
            Self::DestroyStream => "aclrtDestroyStream",
            Self::SynchronizeStreamWithTimeout => "aclrtSynchronizeStreamWithTimeout",
            Self::SynchronizeDeviceWithTimeout => "aclrtSynchronizeDeviceWithTimeout",
            Self::Malloc => "aclrtMalloc",
            Self::Free => "aclrtFree",
            Self::MemcpyToDevice => "aclrtMemcpy(host->device)",
            Self::MemcpyToHost => "aclrtMemcpy(device->host)",
            Self::RegisterKernel => "rtRegisterKernel",
            Self::LaunchAicore => "rtKernelLaunchWithHandleV2",
            Self::LaunchAicpu => "rtAicpuKernelLaunchExWithArgs",
            Self::HalResMap => "halResMap",
            Self::HalMemCtl => "halMemCtl",
        }
    }
}

impl fmt::Display for DriverCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
