// The example C++ host program: the seed's within-process probe through cardguard's C++ API.
//
//   cardguard-cxx-probe --arch a5|a2a3 --sim-root DIR [--lock-dir DIR] [--card N]
//   cardguard-cxx-probe --arch a5|a2a3 --acl LIB[:LIB...] [--lock-dir DIR] [--card N]
//
// On one card, in one process: a runner launches `hang` (an AICore op-timeout: DeviceError),
// then `noop` (refused at the guard: Unusable, no driver call), finalize force-resets the card
// with its lease (the ResetReport's attempts are printed), then a new runner's `noop` passes and
// its finalize is a healthy teardown. One line per step; exit 0 when every step went as the
// containment chain says, 1 when one did not, 2 for bad usage.

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cardguard/cardguard.h"

namespace {

struct Args {
    std::string arch;
    std::string sim_root;
    std::string acl;
    std::string lock_dir;
    std::uint32_t card = 0;
};

int usage(const std::string& why) {
    std::cerr << "error: " << why << "\n"
              << "usage: cardguard-cxx-probe --arch a5|a2a3 (--sim-root DIR | --acl LIB[:LIB...]) "
                 "[--lock-dir DIR] [--card N]\n";
    return 2;
}

bool parse(int argc, char** argv, Args& a, std::string& why) {
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        if (i + 1 >= argc) {
            why = flag + " needs a value";
            return false;
        }
        std::string value = argv[++i];
        if (flag == "--arch") {
            a.arch = value;
        } else if (flag == "--sim-root") {
            a.sim_root = value;
        } else if (flag == "--acl") {
            a.acl = value;
        } else if (flag == "--lock-dir") {
            a.lock_dir = value;
        } else if (flag == "--card") {
            char* end = nullptr;
            unsigned long n = std::strtoul(value.c_str(), &end, 10);
            if (value.empty() || *end != '\0' || n > 0xffffffffUL) {
                why = "--card " + value + ": expected a card number";
                return false;
            }
            a.card = static_cast<std::uint32_t>(n);
        } else {
            why = "unknown flag " + flag;
            return false;
        }
    }
    if (a.arch.empty()) {
        why = "--arch is required";
        return false;
    }
    if (a.sim_root.empty() == a.acl.empty()) {
        why = "give exactly one of --sim-root and --acl";
        return false;
    }
    return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, sep);) {
        if (!part.empty()) {
            parts.push_back(part);
        }
    }
    return parts;
}

std::string describe(const cardguard::Error& e) {
    std::ostringstream out;
    out << "class=" << e.error_class() << " call=" << e.call() << " code=" << e.code()
        << " name=" << e.code_name() << " card=" << e.device();
    return out.str();
}

// One step's verdict: prints the line, remembers a failure.
struct Steps {
    bool ok = true;
    void line(const std::string& step, bool as_expected, const std::string& what) {
        std::cout << step << ": " << (as_expected ? "ok" : "UNEXPECTED") << ": " << what << "\n";
        ok = ok && as_expected;
    }
};

int probe(const Args& a) {
    cardguard::Driver driver = a.acl.empty() ? cardguard::Driver::sim(a.arch, a.sim_root)
                                             : cardguard::Driver::acl(a.arch, split(a.acl, ':'));
    if (a.acl.empty()) {
        driver.start_sim_run({a.card}, "");
    }
    cardguard::Lease lease = cardguard::Lease::take(driver, a.card, "cardguard-cxx-probe", a.lock_dir);
    Steps steps;

    cardguard::Runner runner(driver, a.card, "noop");
    runner.register_kernel("hang");
    runner.register_kernel("noop");
    try {
        runner.launch(cardguard::request("hang", 1));
        steps.line("hang", false, "the launch returned");
    } catch (const cardguard::DeviceError& e) {
        steps.line("hang", runner.unusable(), "DeviceError " + describe(e));
    }
    try {
        runner.launch(cardguard::request("noop", 1));
        steps.line("noop", false, "the launch returned on an unusable runner");
    } catch (const cardguard::Unusable& e) {
        steps.line("noop", true, "Unusable " + describe(e));
    }

    cardguard::FinalizeReport report = runner.finalize(lease);
    bool confirmed = !report.reset.attempts.empty() && report.reset.attempts.back().probe_ok;
    std::ostringstream what;
    what << "force_reset=" << (report.force_reset ? "yes" : "no")
         << " attempts=" << report.reset.attempts.size();
    for (const cardguard::ResetAttempt& at : report.reset.attempts) {
        what << " [attempt " << at.attempt << " rc=" << (at.has_rc ? std::to_string(at.rc) : "none")
             << " " << std::string(at.probe) << "]";
    }
    steps.line("finalize", report.force_reset && confirmed, what.str());

    std::string events;
    for (const cardguard::HealthEvent& e : runner.take_health_events()) {
        events += (events.empty() ? "" : " ") + std::string(e.kind);
    }
    steps.line("events", !events.empty(), events);

    cardguard::Runner fresh(driver, a.card, "noop");
    fresh.register_kernel("noop");
    fresh.launch(cardguard::request("noop", 1));
    steps.line("new runner noop", !fresh.unusable(), "passed");
    cardguard::FinalizeReport healthy = fresh.finalize(lease);
    steps.line("new runner finalize", !healthy.force_reset,
               healthy.force_reset ? "force-reset" : "torn down, no force reset");

    std::cout << "probe " << driver.arch() << " card " << a.card << ": "
              << (steps.ok ? "contained" : "NOT CONTAINED") << "\n";
    return steps.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    std::string why;
    if (!parse(argc, argv, args, why)) {
        return usage(why);
    }
    try {
        return probe(args);
    } catch (const cardguard::UsageError& e) {
        return usage(e.what());
    } catch (const cardguard::Error& e) {
        // A step that threw where the chain says it must not (a lease held, a failed init, a
        // failed reset, a launch of the new runner): the run is not as expected.
        std::cout << "error: " << e.what() << " (" << describe(e) << ")\n";
        return 1;
    }
}
