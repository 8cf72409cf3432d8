//! The cxx bridge: the types C++ sees (shared structs, generated on both sides) and the Rust
//! functions it calls (`extern "Rust"` only: C++ calls Rust, never the other way, so this file
//! has no `unsafe`). The C++ side of this bridge is generated into `runner-cxx/src/bridge.rs.h`;
//! C++ hosts use it through the small shim of `include/cardguard/cardguard.h`, which turns a
//! failed call into a typed exception.
//!
//! Every fallible function takes an [`ffi::ErrorInfo`] to fill and returns a `Result`: cxx turns
//! the `Err` into a `rust::Error` (its `what()` is the one-line message), and the shim reads the
//! error's kind, class, call and code from the `ErrorInfo` (never from the message) to throw
//! `cardguard::DeviceError`, `cardguard::Unusable`, ... This file declares; the functions live in
//! `host.rs`, the conversions in `convert.rs`.

use crate::host::{new_runner, open_driver, start_sim_run, take_lease, DriverHandle, Lease, Runner};

#[cxx::bridge(namespace = "cardguard::ffi")]
pub mod ffi {
    /// What an [`ErrorInfo`] describes (`None`: no error).
    #[derive(Debug)]
    enum ErrorKind {
        /// No error.
        None = 0,
        /// A driver call failed during a run or a kernel registration; the runner is now unusable.
        Device,
        /// Refused at the guard: the runner is unusable (no driver call was made).
        Unusable,
        /// Finalize: no force-reset attempt was confirmed by its probe.
        ResetFailed,
        /// The card's init failed (a health event of the card, not a case's failure).
        Init,
        /// The request, an option or the lease given is invalid; nothing touched the device.
        Usage,
        /// The card's lease could not be taken (held by another holder, or the lock dir failed).
        Lease,
        /// A kernel blob could not be found or loaded.
        Kernel,
        /// The driver could not be opened (the simulated machine or the CANN libraries).
        Driver,
    }

    /// A failed call, as data: the shim throws from it.
    #[derive(Debug, Clone)]
    struct ErrorInfo {
        kind: ErrorKind,
        /// `device_runtime`, `usage`, `infrastructure` or `result` (the runner's failure classes).
        class_name: String,
        /// The driver call that failed (for `Unusable`: the first cause's); empty when none.
        call: String,
        /// Its raw code (0 when there is no driver call).
        code: i32,
        /// The code's numbering: `acl`, `hal` or `loader` (empty when there is no driver call).
        code_space: String,
        /// The code's name (`ACL_ERROR_RT_AICORE_TIMEOUT`, ...; empty when there is none).
        code_name: String,
        /// The card, when the error belongs to one.
        device: u32,
        /// The one-line message (also the `rust::Error`'s `what()`).
        message: String,
        /// `ResetFailed`: every force-reset attempt finalize made (empty otherwise).
        reset_attempts: Vec<ResetAttempt>,
    }

    /// Which driver a [`DriverOptions`] opens.
    #[derive(Debug)]
    enum DriverChoice {
        /// The simulated card (in this process), its card files under `sim_root`.
        Sim,
        /// The CANN runtime (or `libsim_acl.so`), loaded at run time.
        Acl,
    }

    /// What [`open_driver`] opens.
    #[derive(Debug, Clone)]
    struct DriverOptions {
        /// `a5` or `a2a3`.
        arch: String,
        driver: DriverChoice,
        /// Sim: the directory of the simulated cards' files (created when missing).
        sim_root: String,
        /// Acl: the library files to load, in order; empty: `ONBOARD_ACL_LIB`, else the CANN
        /// install.
        acl_libraries: Vec<String>,
    }

    /// What [`new_runner`] builds.
    #[derive(Debug, Clone)]
    struct RunnerOptions {
        device: u32,
        /// The SDMA option (one force-reset attempt instead of 3).
        sdma: bool,
        /// The kernel the post-reset probe runs (e.g. `noop`); empty: streams and memory only.
        probe_kernel: String,
        /// Where kernel blobs are found by name; empty: the arch's default (`ONBOARD_KERNEL_DIR`,
        /// `kernels/<arch>` beside the executable, else the build's blobs).
        kernel_dir: String,
    }

    /// One argument's kind.
    #[derive(Debug)]
    enum ArgKind {
        /// `input`: copied to the device before the launch.
        Input,
        /// `output_size` bytes the kernel writes, copied back.
        Output,
        /// `scalar`, passed by value.
        Scalar,
    }

    /// One argument of a launch, in the kernel's argument order.
    #[derive(Debug, Clone)]
    struct LaunchArg {
        kind: ArgKind,
        input: Vec<u8>,
        output_size: usize,
        scalar: u64,
    }

    /// A launch request: a registered kernel, its block dim, its arguments.
    #[derive(Debug, Clone)]
    struct LaunchRequest {
        kernel: String,
        block_dim: u32,
        args: Vec<LaunchArg>,
    }

    /// One output buffer.
    #[derive(Debug, Clone)]
    struct OutputBuffer {
        bytes: Vec<u8>,
    }

    /// A successful launch: every output, in argument order.
    #[derive(Debug, Clone)]
    struct LaunchOutput {
        outputs: Vec<OutputBuffer>,
    }

    /// One health event of a runner (`poisoned`, `marked_unusable`, `force_reset`, `probe`,
    /// `recovered`, `reset_failed`, ...).
    #[derive(Debug, Clone)]
    struct HealthEvent {
        kind: String,
        device: u32,
        /// The driver call it is about (empty when none).
        call: String,
        has_code: bool,
        code: i32,
        detail: String,
        unix_ms: u64,
        /// The whole event as the JSON the runner's reports use.
        json: String,
    }

    /// One force-reset attempt of finalize.
    #[derive(Debug, Clone)]
    struct ResetAttempt {
        attempt: u32,
        /// Whether `rc` is an ACL rc (false when the reset failed with a code of another space).
        has_rc: bool,
        rc: i32,
        /// The reset's own error, when it failed (empty otherwise).
        reset_error: String,
        /// Whether the post-reset probe confirmed the card.
        probe_ok: bool,
        /// `probe confirmed`, `probe failed: ...` or `probe not run`.
        probe: String,
        duration_ms: f64,
    }

    /// The force-reset chain's result: every attempt.
    #[derive(Debug, Clone)]
    struct ResetReport {
        device: u32,
        arch: String,
        /// The error that first poisoned the runner (`call code`; empty when unknown).
        first_cause: String,
        attempts: Vec<ResetAttempt>,
    }

    /// What finalize did.
    #[derive(Debug, Clone)]
    struct FinalizeReport {
        device: u32,
        /// Whether the card was force-reset (the runner was unusable); `reset` is then filled.
        force_reset: bool,
        reset: ResetReport,
        /// Teardown calls that failed and were logged (a healthy runner's finalize).
        teardown_errors: Vec<String>,
    }

    extern "Rust" {
        /// A driver: one simulated process of the sim, or the loaded CANN libraries.
        type DriverHandle;
        /// A card's lease (an exclusive lock on the card, released when dropped).
        type Lease;
        /// A device runner of one card.
        type Runner;

        fn open_driver(options: &DriverOptions, err: &mut ErrorInfo) -> Result<Box<DriverHandle>>;
        /// The arch the driver is for.
        fn arch_name(self: &DriverHandle) -> String;
        /// Sim only: starts a run on `cards` (installs the fault `plan`, zeroes the counters).
        fn start_sim_run(driver: &DriverHandle, cards: &[u32], plan: &str, err: &mut ErrorInfo)
            -> Result<()>;

        /// Takes `card`'s lease (failing at once when it is held). `lock_dir` empty: the driver's
        /// default (the sim root's locks; for real cards `ONBOARD_LOCK_DIR`, else host-wide).
        fn take_lease(
            driver: &DriverHandle,
            card: u32,
            holder: &str,
            lock_dir: &str,
            err: &mut ErrorInfo,
        ) -> Result<Box<Lease>>;
        fn card(self: &Lease) -> u32;

        fn new_runner(
            driver: &DriverHandle,
            options: &RunnerOptions,
            err: &mut ErrorInfo,
        ) -> Result<Box<Runner>>;
        fn device(self: &Runner) -> u32;
        /// Registers kernel `name` from the runner's kernel dir.
        fn register_kernel(self: &mut Runner, name: &str, err: &mut ErrorInfo) -> Result<()>;
        /// Registers the kernel blob at `path`.
        fn register_kernel_file(self: &mut Runner, path: &str, err: &mut ErrorInfo) -> Result<()>;
        fn launch(self: &mut Runner, request: &LaunchRequest, err: &mut ErrorInfo) -> Result<LaunchOutput>;
        fn is_unusable(self: &Runner) -> bool;
        /// `healthy`, `faulted`, `unusable`, `resetting`, ... (the runner's health state).
        fn health_state(self: &Runner) -> String;
        /// The health events since the last call, in order.
        fn take_health_events(self: &mut Runner) -> Vec<HealthEvent>;
        /// Ends the runner with its card's lease: a healthy runner is torn down; an unusable one
        /// force-resets its card (up to 3 attempts, each probed). The runner takes no more calls.
        fn finalize(self: &mut Runner, lease: &Lease, err: &mut ErrorInfo) -> Result<FinalizeReport>;
    }
}
