// cardguard's C++ host API: card leases and the a5 / a2a3 device runners, with typed exceptions.
//
// The objects are the Rust ones behind a cxx bridge (runner-cxx/src/bridge.rs); this header is
// the small shim over it: every failed call throws one of the exception types below, chosen from
// the error's kind (never from its message).
//
//   cardguard::Driver driver = cardguard::Driver::sim("a5", "/tmp/sim");
//   cardguard::Lease lease = cardguard::Lease::take(driver, 0, "my-host");
//   cardguard::Runner runner(driver, 0, "noop");     // the probe kernel of the force reset
//   runner.register_kernel("hang");
//   try {
//       runner.launch(cardguard::request("hang", 1));
//   } catch (const cardguard::DeviceError& e) {      // e.error_class(), e.call(), e.code(), e.code_name()
//   }
//   // every later launch throws cardguard::Unusable (no driver call)
//   auto report = runner.finalize(lease);            // force-resets the card; report.reset.attempts
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "rust/cxx.h"
#include "runner-cxx/src/bridge.rs.h"

namespace cardguard {

using ffi::ErrorKind;
using ffi::FinalizeReport;
using ffi::HealthEvent;
using ffi::LaunchArg;
using ffi::LaunchOutput;
using ffi::LaunchRequest;
using ffi::ResetAttempt;
using ffi::ResetReport;

// Every error of the API: the one-line message (what()), the failure class (device_runtime,
// usage, infrastructure) and, where a driver call is involved, the call, its raw code and name.
class Error : public std::runtime_error {
public:
    explicit Error(const ffi::ErrorInfo& info);
    ErrorKind kind() const noexcept { return kind_; }
    const std::string& error_class() const noexcept { return class_; }
    const std::string& call() const noexcept { return call_; }
    std::int32_t code() const noexcept { return code_; }
    const std::string& code_space() const noexcept { return code_space_; }
    const std::string& code_name() const noexcept { return code_name_; }
    std::uint32_t device() const noexcept { return device_; }

private:
    ErrorKind kind_;
    std::string class_;
    std::string call_;
    std::int32_t code_;
    std::string code_space_;
    std::string code_name_;
    std::uint32_t device_;
};

// A driver call failed during a launch or a kernel registration; the runner is now unusable
// (finalize force-resets its card).
class DeviceError : public Error {
public:
    using Error::Error;
};

// Refused at the guard: the runner is unusable since its first cause (call(), code()); no
// driver call was made. Finalize the runner, then build a new one.
class Unusable : public Error {
public:
    using Error::Error;
};

// Finalize: no force-reset attempt was confirmed by its probe; the card stays poisoned in this
// process (a fresh process is needed). attempts() are every attempt made.
class ResetFailed : public Error {
public:
    explicit ResetFailed(const ffi::ErrorInfo& info);
    const std::vector<ResetAttempt>& attempts() const noexcept { return attempts_; }

private:
    std::vector<ResetAttempt> attempts_;
};

// The card's init failed (a health event of the card, not a failure of the work on it).
class InitError : public Error {
public:
    using Error::Error;
};

// An invalid request, option or lease; nothing touched the device.
class UsageError : public Error {
public:
    using Error::Error;
};

// The card's lease could not be taken (another holder has it; the message names it).
class LeaseError : public Error {
public:
    using Error::Error;
};

// A kernel blob could not be found or loaded.
class KernelError : public Error {
public:
    using Error::Error;
};

// The driver could not be opened (the CANN libraries or the simulated machine).
class DriverError : public Error {
public:
    using Error::Error;
};

// Throws the exception type of `info.kind`.
[[noreturn]] void throw_error(const ffi::ErrorInfo& info);

// One driver of one arch: a simulated process, or the CANN runtime loaded at run time.
class Driver {
public:
    // The simulated card of `arch` ("a5", "a2a3"), its card files under `sim_root`.
    static Driver sim(const std::string& arch, const std::string& sim_root);
    // The CANN runtime: `libraries` loaded in order, or (empty) ONBOARD_ACL_LIB / the CANN install.
    static Driver acl(const std::string& arch, const std::vector<std::string>& libraries = {});

    std::string arch() const;
    // Simulated cards only: starts a run on `cards` with a fault plan ("" for none).
    void start_sim_run(const std::vector<std::uint32_t>& cards, const std::string& plan) const;
    const ffi::DriverHandle& handle() const noexcept { return *handle_; }

private:
    explicit Driver(rust::Box<ffi::DriverHandle> handle) : handle_(std::move(handle)) {}
    rust::Box<ffi::DriverHandle> handle_;
};

// A card's lease: exclusive, released when destroyed (or when the process dies).
class Lease {
public:
    // Takes `card`'s lease at once (LeaseError when held). `lock_dir` "": the driver's default.
    static Lease take(const Driver& driver, std::uint32_t card, const std::string& holder,
                      const std::string& lock_dir = "");
    std::uint32_t card() const { return lease_->card(); }
    const ffi::Lease& handle() const noexcept { return *lease_; }

private:
    explicit Lease(rust::Box<ffi::Lease> lease) : lease_(std::move(lease)) {}
    rust::Box<ffi::Lease> lease_;
};

// A device runner of one card (the arch's DeviceRunner, with its containment chain).
class Runner {
public:
    // `probe_kernel`: the kernel finalize's post-reset probe runs ("" for streams and memory
    // only); `kernel_dir` "": the arch's default blob directory.
    Runner(const Driver& driver, std::uint32_t device, const std::string& probe_kernel = "",
           bool sdma = false, const std::string& kernel_dir = "");

    std::uint32_t device() const { return runner_->device(); }
    void register_kernel(const std::string& name);
    void register_kernel_file(const std::string& path);
    // Throws DeviceError (the runner is now unusable), Unusable (refused at the guard) or
    // UsageError (refused before any driver call; the runner stays healthy).
    LaunchOutput launch(const LaunchRequest& request);
    bool unusable() const { return runner_->is_unusable(); }
    std::string health_state() const;
    // The health events since the last call, in order.
    std::vector<HealthEvent> take_health_events();
    // Ends the runner with its card's lease: a healthy runner is torn down; an unusable one
    // force-resets its card (report.force_reset, report.reset.attempts). Throws ResetFailed
    // when no attempt was confirmed, UsageError for another card's lease.
    FinalizeReport finalize(const Lease& lease);

private:
    rust::Box<ffi::Runner> runner_;
};

// A launch request of `kernel` with `block_dim` blocks and `args`.
LaunchRequest request(const std::string& kernel, std::uint32_t block_dim,
                      std::vector<LaunchArg> args = {});
LaunchArg input(const std::vector<std::uint8_t>& bytes);
LaunchArg output(std::size_t bytes);
LaunchArg scalar(std::uint64_t value);

}  // namespace cardguard
