//! [`AclDriver::start_sim_run`]: cardguard's `cgSimStartRun` extension, which `libsim_acl.so`
//! exports and real CANN does not (the call is then skipped).

use std::ptr;

use super::bindings::ACL_SUCCESS;
use super::driver::AclDriver;
use super::error::ExtensionError;
use crate::driver::DeviceId;
use crate::error::{codes, Code};

impl AclDriver {
    /// Starts a simulated run on `cards` through the extension `cgSimStartRun`: installs the
    /// fault plan `plan` (`None`: the library reads `ONBOARD_SIM_FAULTS` itself) and zeroes the
    /// cards' counters, as the dispatcher does on the simulated platform. `cards` and the plan's
    /// `dev=N` are logical ids (the library installs the faults on their physical cards under
    /// its `ASCEND_RT_VISIBLE_DEVICES`). Returns `Ok(false)`
    /// without doing anything where the library has no such extension (real CANN).
    pub fn start_sim_run(&self, cards: &[DeviceId], plan: Option<&str>) -> Result<bool, ExtensionError> {
        const SYMBOL: &str = "cgSimStartRun";
        let Some(f) = self.syms.cgSimStartRun(&self.libs) else {
            return Ok(false);
        };
        let invalid = ExtensionError {
            symbol: SYMBOL,
            code: codes::INVALID_PARAM,
        };
        let n = u32::try_from(cards.len()).map_err(|_| invalid)?;
        let plan = plan
            .map(|p| std::ffi::CString::new(p).map_err(|_| invalid))
            .transpose()?;
        let plan_ptr = plan.as_ref().map_or(ptr::null(), |p| p.as_ptr());
        // SAFETY: `cards` holds `n` ids and `plan_ptr` is null or a NUL-terminated string, both
        // alive for the call.
        let rc = unsafe { f(cards.as_ptr(), n, plan_ptr) };
        if rc == ACL_SUCCESS {
            Ok(true)
        } else {
            Err(ExtensionError {
                symbol: SYMBOL,
                code: Code::acl(rc),
            })
        }
    }
}
