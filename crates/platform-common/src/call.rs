//! [`DriverCall`]: the name of every driver call a runner makes, as CANN spells it.
//!
//! A leaf of the crate: the [`crate::driver::Driver`] trait names its calls with it and
//! [`crate::error::DriverError`] carries one, so both depend on this file and not on each other.
//! It never says what a call does (the trait's docs do) or what its codes mean (the code table
//! does).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Every driver call a runner makes; the name in messages and in serialised form (reports, the
/// lane protocol) is CANN's ([`DriverCall::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// `aclrtSetStreamFailureMode`.
    SetStreamFailureMode,
    /// `aclrtDestroyStreamForce`.
    DestroyStreamForce,
    /// `aclrtMemcpyAsync` device to device (an SDMA copy).
    SdmaCopy,
    /// `aclFinalize`.
    Finalize,
}

impl DriverCall {
    /// Every call, in declaration order.
    pub const ALL: [DriverCall; 22] = [
        Self::Init,
        Self::SetDevice,
        Self::ResetDevice,
        Self::ResetDeviceForce,
        Self::SetOpExecuteTimeout,
        Self::CreateStream,
        Self::DestroyStream,
        Self::SynchronizeStreamWithTimeout,
        Self::SynchronizeDeviceWithTimeout,
        Self::Malloc,
        Self::Free,
        Self::MemcpyToDevice,
        Self::MemcpyToHost,
        Self::RegisterKernel,
        Self::LaunchAicore,
        Self::LaunchAicpu,
        Self::HalResMap,
        Self::HalMemCtl,
        Self::SetStreamFailureMode,
        Self::DestroyStreamForce,
        Self::SdmaCopy,
        Self::Finalize,
    ];

    /// The call CANN names `name` ([`DriverCall::name`]'s inverse).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

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
            Self::SetStreamFailureMode => "aclrtSetStreamFailureMode",
            Self::DestroyStreamForce => "aclrtDestroyStreamForce",
            Self::SdmaCopy => "aclrtMemcpyAsync(device->device)",
            Self::Finalize => "aclFinalize",
        }
    }
}

impl DriverCall {
    /// What the call does, in an operator's words (`stream sync`, `AICore launch`): where a
    /// fault was met, as [`crate::fault_kind::describe`] says it.
    pub fn what(self) -> &'static str {
        match self {
            Self::Init => "init",
            Self::SetDevice => "device open",
            Self::ResetDevice => "soft reset",
            Self::ResetDeviceForce => "force reset",
            Self::SetOpExecuteTimeout => "setting the op-execute timeout",
            Self::CreateStream => "stream create",
            Self::DestroyStream => "stream destroy",
            Self::SynchronizeStreamWithTimeout => "stream sync",
            Self::SynchronizeDeviceWithTimeout => "device sync",
            Self::Malloc => "malloc",
            Self::Free => "free",
            Self::MemcpyToDevice => "copy to the device",
            Self::MemcpyToHost => "copy to the host",
            Self::RegisterKernel => "kernel registration",
            Self::LaunchAicore => "AICore launch",
            Self::LaunchAicpu => "AICPU launch",
            Self::HalResMap => "register mapping",
            Self::HalMemCtl => "register window",
            Self::SetStreamFailureMode => "setting a stream's failure mode",
            Self::DestroyStreamForce => "forced stream destroy",
            Self::SdmaCopy => "SDMA copy",
            Self::Finalize => "finalize",
        }
    }
}

impl Serialize for DriverCall {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for DriverCall {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Self::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown driver call {name:?}")))
    }
}

impl fmt::Display for DriverCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call serialises as CANN's name and reads back; `ALL` lists each call once.
    #[test]
    fn calls_serialise_as_cann_names_and_round_trip() {
        let mut names = std::collections::HashSet::new();
        for call in DriverCall::ALL {
            assert!(names.insert(call.name()), "{call:?} is named twice");
            let json = serde_json::to_string(&call).unwrap();
            assert_eq!(json, format!("{:?}", call.name()));
            assert_eq!(serde_json::from_str::<DriverCall>(&json).unwrap(), call);
        }
        assert!(serde_json::from_str::<DriverCall>("\"aclrtNope\"").is_err());
    }
}
