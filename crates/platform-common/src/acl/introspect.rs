//! What `libsim_acl.so` can tell about its simulated process (features `onboard` + `sim`): the
//! simulator's counters and a context's sticky error, through the `cgSimGetStats` and
//! `cgSimGetStickyError` extensions. Tests use them to measure the same things through the C ABI
//! as on the in-process simulator. Real CANN has neither: both return `None` there.

use super::bindings::{cgSimStats, ACL_SUCCESS, CG_CODE_SPACE_HAL};
use super::driver::AclDriver;
use crate::driver::DeviceId;
use crate::error::Code;
use crate::sim::SimStats;

impl AclDriver {
    /// The simulator's counters of this process (`None` without the extension or on failure).
    pub fn sim_stats(&self) -> Option<SimStats> {
        let f = self.symbols().cgSimGetStats(self.libs())?;
        let mut out = cgSimStats {
            calls: 0,
            errorStateSyncs: 0,
            aicoreLaunches: 0,
            forceResetsOk: 0,
        };
        // SAFETY: `out` is a valid, writable `cgSimStats` for the call.
        if unsafe { f(&mut out) } != ACL_SUCCESS {
            return None;
        }
        Some(SimStats {
            calls: out.calls,
            error_state_syncs: out.errorStateSyncs,
            aicore_launches: out.aicoreLaunches,
            force_resets_ok: out.forceResetsOk,
            ..SimStats::default()
        })
    }

    /// The sticky error of this process's context on `card` (`None` when it has none, or
    /// without the extension).
    pub fn sim_sticky_error(&self, card: DeviceId) -> Option<Code> {
        let f = self.symbols().cgSimGetStickyError(self.libs())?;
        let (mut poisoned, mut space, mut raw) = (0u32, 0u32, 0i32);
        // SAFETY: the three out-pointers are valid and writable for the call.
        let rc = unsafe { f(card, &mut poisoned, &mut space, &mut raw) };
        if rc != ACL_SUCCESS || poisoned == 0 {
            return None;
        }
        Some(if space == CG_CODE_SPACE_HAL {
            Code::hal(raw)
        } else {
            Code::acl(raw)
        })
    }
}
