// The C++ shim of cardguard's host API (include/cardguard/cardguard.h): each call passes an
// ErrorInfo to the Rust side and, when cxx raises rust::Error for a failed call, throws the
// exception type the ErrorInfo's kind names. The type comes from the kind, never from the text.

#include "cardguard/cardguard.h"

#include <utility>

namespace cardguard {

namespace {

std::string str(const rust::String& s) { return std::string(s.data(), s.size()); }

rust::Str view(const std::string& s) { return rust::Str(s.data(), s.size()); }

ffi::ErrorInfo empty_info() {
    ffi::ErrorInfo info{};
    info.kind = ErrorKind::None;
    return info;
}

// Calls f(info); a rust::Error becomes the typed exception of the filled-in info.
template <class F>
auto checked(F&& f) -> decltype(f(std::declval<ffi::ErrorInfo&>())) {
    ffi::ErrorInfo info = empty_info();
    try {
        return f(info);
    } catch (const rust::Error& e) {
        if (info.kind == ErrorKind::None) {
            info.message = rust::String(e.what());
        }
        throw_error(info);
    }
}

}  // namespace

Error::Error(const ffi::ErrorInfo& info)
    : std::runtime_error(str(info.message)),
      kind_(info.kind),
      class_(str(info.class_name)),
      call_(str(info.call)),
      code_(info.code),
      code_space_(str(info.code_space)),
      code_name_(str(info.code_name)),
      device_(info.device) {}

ResetFailed::ResetFailed(const ffi::ErrorInfo& info)
    : Error(info), attempts_(info.reset_attempts.begin(), info.reset_attempts.end()) {}

void throw_error(const ffi::ErrorInfo& info) {
    switch (info.kind) {
    case ErrorKind::Device: throw DeviceError(info);
    case ErrorKind::Unusable: throw Unusable(info);
    case ErrorKind::ResetFailed: throw ResetFailed(info);
    case ErrorKind::Init: throw InitError(info);
    case ErrorKind::Usage: throw UsageError(info);
    case ErrorKind::Lease: throw LeaseError(info);
    case ErrorKind::Kernel: throw KernelError(info);
    case ErrorKind::Driver: throw DriverError(info);
    case ErrorKind::None:
    default: throw Error(info);
    }
}

Driver Driver::sim(const std::string& arch, const std::string& sim_root) {
    ffi::DriverOptions options{};
    options.arch = rust::String(arch);
    options.driver = ffi::DriverChoice::Sim;
    options.sim_root = rust::String(sim_root);
    return Driver(checked([&](ffi::ErrorInfo& err) { return ffi::open_driver(options, err); }));
}

Driver Driver::acl(const std::string& arch, const std::vector<std::string>& libraries) {
    ffi::DriverOptions options{};
    options.arch = rust::String(arch);
    options.driver = ffi::DriverChoice::Acl;
    for (const auto& lib : libraries) {
        options.acl_libraries.push_back(rust::String(lib));
    }
    return Driver(checked([&](ffi::ErrorInfo& err) { return ffi::open_driver(options, err); }));
}

std::string Driver::arch() const { return str(handle_->arch_name()); }

void Driver::start_sim_run(const std::vector<std::uint32_t>& cards, const std::string& plan) const {
    rust::Slice<const std::uint32_t> slice(cards.data(), cards.size());
    checked([&](ffi::ErrorInfo& err) { ffi::start_sim_run(*handle_, slice, view(plan), err); });
}

Lease Lease::take(const Driver& driver, std::uint32_t card, const std::string& holder,
                  const std::string& lock_dir) {
    return Lease(checked([&](ffi::ErrorInfo& err) {
        return ffi::take_lease(driver.handle(), card, view(holder), view(lock_dir), err);
    }));
}

namespace {

rust::Box<ffi::Runner> build(const Driver& driver, std::uint32_t device,
                             const std::string& probe_kernel, bool sdma,
                             const std::string& kernel_dir) {
    ffi::RunnerOptions options{};
    options.device = device;
    options.sdma = sdma;
    options.probe_kernel = rust::String(probe_kernel);
    options.kernel_dir = rust::String(kernel_dir);
    return checked([&](ffi::ErrorInfo& err) { return ffi::new_runner(driver.handle(), options, err); });
}

}  // namespace

Runner::Runner(const Driver& driver, std::uint32_t device, const std::string& probe_kernel,
               bool sdma, const std::string& kernel_dir)
    : runner_(build(driver, device, probe_kernel, sdma, kernel_dir)) {}

void Runner::register_kernel(const std::string& name) {
    checked([&](ffi::ErrorInfo& err) { runner_->register_kernel(view(name), err); });
}

void Runner::register_kernel_file(const std::string& path) {
    checked([&](ffi::ErrorInfo& err) { runner_->register_kernel_file(view(path), err); });
}

LaunchOutput Runner::launch(const LaunchRequest& request) {
    return checked([&](ffi::ErrorInfo& err) { return runner_->launch(request, err); });
}

std::string Runner::health_state() const { return str(runner_->health_state()); }

std::vector<HealthEvent> Runner::take_health_events() {
    rust::Vec<HealthEvent> events = runner_->take_health_events();
    return std::vector<HealthEvent>(events.begin(), events.end());
}

FinalizeReport Runner::finalize(const Lease& lease) {
    return checked([&](ffi::ErrorInfo& err) { return runner_->finalize(lease.handle(), err); });
}

LaunchRequest request(const std::string& kernel, std::uint32_t block_dim, std::vector<LaunchArg> args) {
    LaunchRequest req{};
    req.kernel = rust::String(kernel);
    req.block_dim = block_dim;
    for (auto& a : args) {
        req.args.push_back(std::move(a));
    }
    return req;
}

LaunchArg input(const std::vector<std::uint8_t>& bytes) {
    LaunchArg a{};
    a.kind = ffi::ArgKind::Input;
    for (auto b : bytes) {
        a.input.push_back(b);
    }
    return a;
}

LaunchArg output(std::size_t bytes) {
    LaunchArg a{};
    a.kind = ffi::ArgKind::Output;
    a.output_size = bytes;
    return a;
}

LaunchArg scalar(std::uint64_t value) {
    LaunchArg a{};
    a.kind = ffi::ArgKind::Scalar;
    a.scalar = value;
    return a;
}

}  // namespace cardguard
