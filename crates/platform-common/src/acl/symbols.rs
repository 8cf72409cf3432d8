//! The `acl` driver's symbol table: one `OnceLock` per C symbol, filled on first use.
//!
//! This file owns which symbols exist, their pointer types (from the generated bindings) and
//! which are required. A symbol absent from every loaded library resolves to `None` (remembered,
//! so it is looked up once); the caller turns that into a typed error. Nothing here calls a
//! symbol.

use std::fmt;
use std::sync::OnceLock;

use super::bindings::*;
use super::library::Libraries;

macro_rules! symbol_table {
    (
        required: [$($req:ident: $req_ty:ident),* $(,)?],
        optional: [$($opt:ident: $opt_ty:ident),* $(,)?] $(,)?
    ) => {
        /// Every symbol of the driver, each resolved at most once. A bindings `PFN_*` type is an
        /// `Option` of the function pointer: `None` is "no library exports it".
        #[allow(non_snake_case)]
        #[derive(Default)]
        pub(crate) struct Symbols {
            $($req: OnceLock<$req_ty>,)*
            $($opt: OnceLock<$opt_ty>,)*
        }

        /// The symbols the driver calls on every arch; [`super::AclDriver::load`] checks that all
        /// resolve. The register-mapping HAL symbols are each arch's own
        /// ([`crate::arch_hal::ArchHal::required`]).
        pub const REQUIRED_SYMBOLS: &[&str] = &[$(stringify!($req)),*];

        /// Symbols the driver calls only where they resolve, each with its fallback: the op-execute
        /// timeout in microseconds (V1, in seconds, without it), the version calls (the version
        /// is then unknown), the forced stream destroy (the plain destroy), and cardguard's `cgSim*` extensions (skipped).
        pub const OPTIONAL_SYMBOLS: &[&str] = &[$(stringify!($opt)),*];

        // The introspection extensions are read only with the simulator compiled in.
        #[allow(non_snake_case)]
        #[cfg_attr(not(feature = "sim"), allow(dead_code))]
        impl Symbols {
            $(
                /// The symbol, resolved on first use; `None` when no library exports it.
                pub(crate) fn $req(&self, libs: &Libraries) -> $req_ty {
                    *self.$req.get_or_init(|| {
                        // SAFETY: the type is the bindings' `PFN_<name>`, generated from the
                        // header's declaration of exactly this symbol.
                        unsafe { libs.lookup::<$req_ty>(stringify!($req)) }.flatten()
                    })
                }
            )*
            $(
                /// The optional symbol, resolved on first use; `None` when absent.
                pub(crate) fn $opt(&self, libs: &Libraries) -> $opt_ty {
                    *self.$opt.get_or_init(|| {
                        // SAFETY: as for the required symbols.
                        unsafe { libs.lookup::<$opt_ty>(stringify!($opt)) }.flatten()
                    })
                }
            )*

            /// Resolves every required symbol; returns the names of those absent, in order.
            pub(crate) fn missing(&self, libs: &Libraries) -> Vec<&'static str> {
                let mut out = Vec::new();
                $(if self.$req(libs).is_none() { out.push(stringify!($req)); })*
                out
            }

            /// The symbols looked up so far (found or not), in table order.
            pub(crate) fn resolved(&self) -> Vec<&'static str> {
                let mut out = Vec::new();
                $(if self.$req.get().is_some() { out.push(stringify!($req)); })*
                $(if self.$opt.get().is_some() { out.push(stringify!($opt)); })*
                out
            }
        }
    };
}

symbol_table! {
    required: [
        aclInit: PFN_aclInit,
        aclrtSetDevice: PFN_aclrtSetDevice,
        aclrtResetDevice: PFN_aclrtResetDevice,
        aclrtResetDeviceForce: PFN_aclrtResetDeviceForce,
        aclrtSetOpExecuteTimeOut: PFN_aclrtSetOpExecuteTimeOut,
        aclrtCreateStream: PFN_aclrtCreateStream,
        aclrtDestroyStream: PFN_aclrtDestroyStream,
        aclrtSetStreamFailureMode: PFN_aclrtSetStreamFailureMode,
        aclFinalize: PFN_aclFinalize,
        aclrtMemcpyAsync: PFN_aclrtMemcpyAsync,
        aclrtSynchronizeStreamWithTimeout: PFN_aclrtSynchronizeStreamWithTimeout,
        aclrtSynchronizeDeviceWithTimeout: PFN_aclrtSynchronizeDeviceWithTimeout,
        aclrtMalloc: PFN_aclrtMalloc,
        aclrtFree: PFN_aclrtFree,
        aclrtMemcpy: PFN_aclrtMemcpy,
        rtRegisterAllKernel: PFN_rtRegisterAllKernel,
        rtKernelLaunchWithHandleV2: PFN_rtKernelLaunchWithHandleV2,
        rtAicpuKernelLaunchExWithArgs: PFN_rtAicpuKernelLaunchExWithArgs,
    ],
    optional: [
        // Absent from CANN 8.1: the V1 call (seconds) stands in for it.
        aclrtSetOpExecuteTimeOutV2: PFN_aclrtSetOpExecuteTimeOutV2,
        // What a load error reports as the library's version, where either resolves.
        aclsysGetVersionStr: PFN_aclsysGetVersionStr,
        aclrtGetVersion: PFN_aclrtGetVersion,
        // The runtime's words for the last failure of this thread; absent: no message.
        aclGetRecentErrMsg: PFN_aclGetRecentErrMsg,
        // Dropping a stream without waiting for its work; absent: the plain destroy.
        aclrtDestroyStreamForce: PFN_aclrtDestroyStreamForce,
        cgSimSetLaunchInfo: PFN_cgSimSetLaunchInfo,
        cgSimStartRun: PFN_cgSimStartRun,
        cgSimGetStats: PFN_cgSimGetStats,
        cgSimGetStickyError: PFN_cgSimGetStickyError,
    ],
}

impl fmt::Debug for Symbols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Symbols")
            .field("resolved", &self.resolved())
            .finish()
    }
}
