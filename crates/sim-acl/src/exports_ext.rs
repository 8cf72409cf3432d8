//! cardguard's extensions, absent from CANN: `cgSimSetLaunchInfo` (the next launch's origin and
//! argument roles), `cgSimStartRun` (install a fault plan, zero the counters) and the two
//! introspection calls tests use, `cgSimGetStats` and `cgSimGetStickyError`.

use std::ffi::{c_char, CStr};

use platform_common::acl::bindings::*;
use platform_common::driver::{LaunchOrigin, SdmaOrigin};
use platform_common::error::CodeSpace;
use platform_common::sim::{start_run_mapped, FaultPlan, ENV_SIM_FAULTS};

use crate::abi::call;
use crate::state::{set_next_launch, set_next_sdma, LaunchInfo};

const INVALID: aclError = ACL_ERROR_INVALID_PARAM;

/// `cgSimSetLaunchInfo`: describes the calling thread's next `rtKernelLaunchWithHandleV2`, or,
/// with a `CG_LAUNCH_ORIGIN_SDMA_*` origin, its next SDMA copy (`aclrtMemcpyAsync`).
///
/// # Safety
///
/// `arg_roles` is null (with `num_args` 0) or readable for `num_args` bytes.
#[no_mangle]
pub unsafe extern "C" fn cgSimSetLaunchInfo(origin: u32, arg_roles: *const u8, num_args: u32) -> aclError {
    call("cgSimSetLaunchInfo", |_| {
        let sdma = match origin {
            CG_LAUNCH_ORIGIN_SDMA_CASE => Some(SdmaOrigin::Case),
            CG_LAUNCH_ORIGIN_SDMA_WARMUP => Some(SdmaOrigin::Warmup),
            CG_LAUNCH_ORIGIN_SDMA_PROBE => Some(SdmaOrigin::Probe),
            _ => None,
        };
        if let Some(o) = sdma {
            if num_args != 0 {
                return INVALID;
            }
            set_next_sdma(o);
            return ACL_SUCCESS;
        }
        let origin = match origin {
            CG_LAUNCH_ORIGIN_CASE => LaunchOrigin::Case,
            CG_LAUNCH_ORIGIN_INTERNAL => LaunchOrigin::Internal,
            _ => return INVALID,
        };
        let Ok(n) = usize::try_from(num_args) else {
            return INVALID;
        };
        let roles = if n == 0 {
            Vec::new()
        } else if arg_roles.is_null() {
            return INVALID;
        } else {
            // SAFETY: non-null and readable for `num_args` bytes per the contract.
            unsafe { std::slice::from_raw_parts(arg_roles, n) }.to_vec()
        };
        if roles.iter().any(|&r| u32::from(r) > CG_ARG_SCALAR) {
            return INVALID;
        }
        set_next_launch(LaunchInfo { origin, roles });
        ACL_SUCCESS
    })
}

/// `cgSimStartRun`: starts a run on `num_cards` cards with the plan `plan` (NULL: the plan in
/// `ONBOARD_SIM_FAULTS`, none when unset). The cards and the plan's `dev=N` are logical ids under
/// the process's `ASCEND_RT_VISIBLE_DEVICES`; the faults go to the physical cards' state.
///
/// # Safety
///
/// `cards` is readable for `num_cards` ids (or null with 0); `plan` is null or a NUL-terminated
/// string.
#[no_mangle]
pub unsafe extern "C" fn cgSimStartRun(cards: *const u32, num_cards: u32, plan: *const c_char) -> aclError {
    call("cgSimStartRun", |sim| {
        let Ok(n) = usize::try_from(num_cards) else {
            return INVALID;
        };
        let cards = if n == 0 {
            &[][..]
        } else if cards.is_null() {
            return INVALID;
        } else {
            // SAFETY: non-null and readable for `num_cards` ids per the contract.
            unsafe { std::slice::from_raw_parts(cards, n) }
        };
        let text = if plan.is_null() {
            sim.settings.get(ENV_SIM_FAULTS).unwrap_or_default()
        } else {
            // SAFETY: non-null and NUL-terminated per the contract.
            match unsafe { CStr::from_ptr(plan) }.to_str() {
                Ok(t) => t.to_owned(),
                Err(_) => return INVALID,
            }
        };
        let cfg = sim.driver.config();
        let visible = sim.driver.visible();
        let plan = match FaultPlan::parse_for_cards(&text, visible.count().unwrap_or(cfg.cards)) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("libsim_acl: {e}");
                return INVALID;
            }
        };
        // The cards and the plan's `dev=N` are logical, as this process's ACL calls take them.
        match start_run_mapped(cfg, visible, cards, &plan) {
            Ok(()) => ACL_SUCCESS,
            Err(e) => {
                eprintln!("libsim_acl: {e}");
                INVALID
            }
        }
    })
}

/// `cgSimGetStats`: this process's simulator counters.
///
/// # Safety
///
/// `out` is null or valid for a write of a `cgSimStats`.
#[no_mangle]
pub unsafe extern "C" fn cgSimGetStats(out: *mut cgSimStats) -> aclError {
    call("cgSimGetStats", |sim| {
        if out.is_null() {
            return INVALID;
        }
        let s = sim.driver.stats();
        let stats = cgSimStats {
            calls: s.calls,
            errorStateSyncs: s.error_state_syncs,
            aicoreLaunches: s.aicore_launches,
            forceResetsOk: s.force_resets_ok,
        };
        // SAFETY: non-null and valid for a write per the contract.
        unsafe { out.write(stats) };
        ACL_SUCCESS
    })
}

/// `cgSimGetStickyError`: the sticky error of this process's context on `card`.
///
/// # Safety
///
/// `poisoned`, `space` and `raw` are each null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cgSimGetStickyError(
    card: u32,
    poisoned: *mut u32,
    space: *mut u32,
    raw: *mut i32,
) -> aclError {
    call("cgSimGetStickyError", |sim| {
        if poisoned.is_null() || space.is_null() || raw.is_null() {
            return INVALID;
        }
        let (p, sp, r) = match sim.driver.sticky_error(card) {
            None => (0, 0, 0),
            Some(code) => {
                let sp = match code.space {
                    CodeSpace::Hal => CG_CODE_SPACE_HAL,
                    _ => CG_CODE_SPACE_ACL,
                };
                (1, sp, code.raw)
            }
        };
        // SAFETY: all three are non-null and valid for a write per the contract.
        unsafe {
            poisoned.write(p);
            space.write(sp);
            raw.write(r);
        }
        ACL_SUCCESS
    })
}

// Each export has exactly the type the header declares.
const _: PFN_cgSimSetLaunchInfo = Some(cgSimSetLaunchInfo);
const _: PFN_cgSimStartRun = Some(cgSimStartRun);
const _: PFN_cgSimGetStats = Some(cgSimGetStats);
const _: PFN_cgSimGetStickyError = Some(cgSimGetStickyError);
