//! The two faults that strike the host rather than the card: `crash@K` and `stall@K`.
//!
//! Both are called by the driver with no lock held and never return. Nothing else lives here.

use std::time::Duration;

use rustix::process::{getpid, getrlimit, kill_process, setrlimit, Resource, Rlimit, Signal};

use crate::driver::DeviceId;

/// `crash@K`: the process dies at once with SIGSEGV, as a segfaulting host would.
pub(crate) fn crash_now(card: DeviceId, launch: u64) -> ! {
    tracing::error!(card, launch, "sim fault crash: the process dies with SIGSEGV");
    // A simulated crash leaves no core file behind (the soft limit only; the hard one is kept).
    let core = getrlimit(Resource::Core);
    let _ = setrlimit(
        Resource::Core,
        Rlimit {
            current: Some(0),
            maximum: core.maximum,
        },
    );
    let me = getpid();
    // The standard library's SIGSEGV handler (stack-overflow detection) sees that the signal is
    // not a guard-page fault, restores the default action and returns; the next one kills.
    for _ in 0..50 {
        let _ = kill_process(me, Signal::Segv);
        std::thread::sleep(Duration::from_millis(10));
    }
    std::process::abort()
}

/// `stall@K`: the calling host thread blocks forever inside the launch, with no device error.
/// Never inlined, and named for what it is, so a native stack dump of a hung lane shows the frame
/// (`sim_stall_forever`) under the driver call it stalled in.
#[inline(never)]
pub(crate) fn sim_stall_forever(card: DeviceId, launch: u64) -> ! {
    tracing::warn!(
        card,
        launch,
        "sim fault stall: the launching thread blocks forever"
    );
    loop {
        std::thread::park();
    }
}
