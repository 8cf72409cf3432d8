//! The `acl` driver's side of an arch's register mapping ([`crate::arch_hal`]): the driver as a
//! [`HalLibrary`] (symbol lookup across its libraries, the physical id), [`AclDriver::with_arch`],
//! and [`hal_symbol`], the typed lookup the arch crates' HAL calls use.
//!
//! This file owns the arch symbols' cache and the one conversion of a symbol address to its
//! function-pointer type. It never calls a symbol: the arch crates do (`platform_a5::hal`,
//! `platform_a2a3::hal`).

use std::ffi::c_void;

use super::driver::AclDriver;
use crate::arch_hal::{ArchHal, HalLibrary};
use crate::driver::{DeviceId, DriverCall, DriverResult};
use crate::error::{codes, DriverError};
use crate::visible::PhysicalId;

impl AclDriver {
    /// The same driver mapping registers with `arch` (without checking its symbols:
    /// [`AclDriver::load_for`] does; an absent one then fails its call).
    pub fn with_arch(mut self, arch: ArchHal) -> Self {
        self.arch = arch;
        self
    }

    /// The arch's required HAL symbols that no loaded library exports, in the arch's order.
    pub(super) fn missing_arch_symbols(&self) -> Vec<&'static str> {
        self.arch
            .required
            .iter()
            .copied()
            .filter(|s| self.symbol_address(s).is_none())
            .collect()
    }

    /// The arch's HAL symbols looked up so far (found or not), in lookup order.
    pub fn resolved_arch_symbols(&self) -> Vec<&'static str> {
        self.arch_syms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(name, _)| *name)
            .collect()
    }
}

impl HalLibrary for AclDriver {
    fn symbol_address(&self, name: &'static str) -> Option<*mut c_void> {
        let mut cache = self
            .arch_syms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, addr)) = cache.iter().find(|(n, _)| *n == name) {
            return addr.map(|a| a as *mut c_void);
        }
        // SAFETY: a data-pointer lookup reads only the symbol's address, never through it.
        let addr = unsafe { self.libs.lookup::<*mut c_void>(name) }.filter(|p| !p.is_null());
        cache.push((name, addr.map(|p| p as usize)));
        addr
    }

    fn hal_device(&self, call: DriverCall, device: DeviceId) -> DriverResult<PhysicalId> {
        self.visible
            .physical(device)
            .ok_or(DriverError::new(call, codes::INVALID_DEVICEID))
    }
}

/// The symbol `name` of `lib` as its function-pointer type `T`; `None` when absent.
///
/// # Safety
///
/// `T` must be the bindings' `PFN_<name>` (an `Option` of the `unsafe extern "C" fn` the header
/// declares `name` with), so that the address is a function of that type.
pub unsafe fn hal_symbol<T: Copy>(lib: &dyn HalLibrary, name: &'static str) -> Option<T> {
    const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<*mut c_void>()) };
    let addr = lib.symbol_address(name)?;
    // SAFETY: `T` is pointer-sized (checked above) and, per the caller, the nullable function
    // pointer type of the symbol at `addr`.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&addr) })
}
