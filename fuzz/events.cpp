// SPDX-License-Identifier: MIT
// Fuzz target: event lists parsed and resolved against the fixture trees.
//
// Input: byte 0 picks the tree (intel_skx, amd_zen3, arm_n1, hybrid_adl, modulo 4); the rest is the
// event list. A resolved set is printed as text and JSON; an error is rendered with its caret.
// perfspec::Error is the expected outcome of bad input; anything else (another exception, a crash, a
// hang, a leak, a sanitizer report) is a bug.
//
// Environment: PERFSPEC_FUZZ_EVENTS_DIR = perf-format JSON tables (e.g. ../shared/pmu-events/x86) to
// resolve vendor names too (skylakex for intel_skx, amdzen3 for amd_zen3, alderlake for hybrid_adl);
// its compiled index goes to the scratch folder. PERFSPEC_FUZZ_LIBPFM4=1 turns the libpfm4 provider on.
// PERFSPEC_FUZZ_REUSE=1 keeps one Machine per tree for the whole process (faster, but lazily loaded
// state then carries over between inputs); by default every input gets fresh Machines.
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz/common.hpp"
#include "perfspec/perfspec.hpp"

namespace {

constexpr std::array<const char*, 4> trees = {"intel_skx", "amd_zen3", "arm_n1", "hybrid_adl"};
constexpr std::array<const char*, 4> cpuids = {"GenuineIntel-6-55-4", "AuthenticAMD-25-21-0",
                                               "0x00000000410fd0c0", "GenuineIntel-6-97-2"};

perfspec::spec::MachineOptions options_for(std::size_t tree) {
  perfspec::spec::MachineOptions o;
  const char* pfm = std::getenv("PERFSPEC_FUZZ_LIBPFM4");
  o.libpfm4 = pfm && *pfm == '1';
  if (const char* d = std::getenv("PERFSPEC_FUZZ_EVENTS_DIR"); d && *d) {
    o.events_dir = d;
    o.cache_dir = fuzz::scratch() + "/cache";
  }
  o.cpuid = cpuids[tree];
  return o;
}

std::unique_ptr<perfspec::spec::Machine> make(std::size_t tree) {
  return std::make_unique<perfspec::spec::Machine>(fuzz::fixture(trees[tree]), options_for(tree));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const bool reuse = [] {
    const char* r = std::getenv("PERFSPEC_FUZZ_REUSE");
    return r && *r == '1';
  }();
  static std::array<std::unique_ptr<perfspec::spec::Machine>, 4> kept;
  std::size_t tree = data[0] % trees.size();
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::unique_ptr<perfspec::spec::Machine> fresh;
  const perfspec::spec::Machine* machine = nullptr;
  if (reuse) {
    if (!kept[tree]) kept[tree] = make(tree);
    machine = kept[tree].get();
  } else {
    fresh = make(tree);
    machine = fresh.get();
  }

  try {
    perfspec::EventSet set = perfspec::resolve(text, *machine);
    (void)perfspec::to_text(set);
    (void)perfspec::to_json(set);
  } catch (const perfspec::Error& e) {
    (void)perfspec::render(e, text);
    (void)perfspec::render(e, text, perfspec::Origin{"fuzz.toml", 3, 7});
  }
  return 0;
}
