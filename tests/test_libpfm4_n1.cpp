// SPDX-License-Identifier: MIT
// The libpfm4 provider with libpfm4 forced to Neoverse N1 (LIBPFM_FORCE_PMU=arm_n1, set by ctest) on
// the arm_n1 fixture. libpfm4 has the models of the architecture it was built for: this file runs
// where it was built for arm64 (x86's libpfm4 has Skylake-X and Zen 3 instead, test_libpfm4.cpp and
// test_libpfm4_zen3.cpp). The names are ones only libpfm4 gives on this fixture (its sysfs lists none
// of them), with the Arm architecture's event numbers.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>

#include "perfspec/perfspec.hpp"
#include "spec/libpfm4.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {
std::string shared_events() { return test::source_dir() + "/../shared/pmu-events/arm64"; }
const spec::Machine& n1() {
  static spec::Machine m(test::fixture("arm_n1"));
  return m;
}
std::string one(std::string_view text, const spec::Machine& m = n1()) {
  auto set = resolve(text, m);
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].pmu == "armv8_pmuv3_0");
  return test::attr_summary(set.events[0].attr);
}
}  // namespace

TEST_CASE("libpfm4 forced to Neoverse N1: the model libpfm4 took is the forced one") {
  REQUIRE(spec::pfm::available());
  const auto& m = spec::pfm::models();
  CHECK(m.forced == "arm_n1");
  CHECK(m.active == std::vector<std::string>{"arm_n1"});
}

TEST_CASE("Neoverse N1 names from libpfm4 resolve on the fixture's armv8_pmuv3_0, exactly") {
  // armv8_pmuv3_0 has a dynamic type (10 on the fixture) and `event config:0-15`: libpfm4's
  // PERF_TYPE_RAW encoding goes to it, the event number in config.
  CHECK(one("BUS_ACCESS_RD") == "type=10 config=0x60");
  CHECK(one("bus_access_rd") == "type=10 config=0x60");  // libpfm4 names are case-insensitive
  CHECK(one("EXC_IRQ") == "type=10 config=0x86");
  CHECK(one("L2D_CACHE_REFILL_RD") == "type=10 config=0x52");
  CHECK(one("MEM_ACCESS_RD") == "type=10 config=0x66");
  // The model's prefix, modifiers and the PMU's terms on top.
  CHECK(one("arm_n1::BUS_ACCESS_RD:u") == "type=10 config=0x60 exclude_kernel=1 exclude_hv=1");
  CHECK(one("EXC_IRQ:k") == "type=10 config=0x86 exclude_user=1 exclude_hv=1");
  CHECK(one("armv8_pmuv3_0/L2D_CACHE_REFILL_RD,period=100/") == "type=10 config=0x52 sample_period=100");
  CHECK(one("armv8_pmuv3_0/MEM_ACCESS_RD,long=1/") == "type=10 config=0x66 config1=0x1");
  auto group = resolve("{BUS_ACCESS_RD,EXC_IRQ}:u", n1());
  REQUIRE(group.events.size() == 2);
  CHECK(group.events[1].leader == 0);
  // perf's generic names stay perf's: libpfm4 is not asked for them.
  auto cycles = resolve("cycles", n1());
  CHECK(test::attr_summary(cycles.events.at(0).attr) == "type=0");
  // Without libpfm4 the fixture does not know them: these tests are libpfm4's.
  spec::Machine bare(test::fixture("arm_n1"), test::no_libpfm4());
  CHECK(test::error_of("BUS_ACCESS_RD", bare) ==
        "event syntax error: 'BUS_ACCESS_RD'\n"
        "                     \\___ unknown event 'BUS_ACCESS_RD'\n"
        "help: did you mean 'bus_access'?\n");
}

TEST_CASE("Neoverse N1 libpfm4 names agree with perf's neoverse-n1 table for the same events") {
  if (!std::filesystem::exists(shared_events())) return;
  spec::MachineOptions o;
  o.events_dir = shared_events();
  o.cpuid = "0x00000000410fd0c0";  // MIDR of a Neoverse N1 r4p0, perf's mapfile's arm/neoverse-n1
  o.cache_dir = "none";
  o.libpfm4 = false;
  spec::Machine tables(test::fixture("arm_n1"), o);
  // Every name of the table that the fixture's sysfs does not list (those would resolve through
  // sysfs, not libpfm4) and libpfm4 knows: perf's are the architecture's, in lower case.
  const char* const names[] = {"ASE_SPEC",
                               "BR_IMMED_SPEC",
                               "BR_INDIRECT_SPEC",
                               "BR_RETURN_SPEC",
                               "BUS_ACCESS_RD",
                               "BUS_ACCESS_WR",
                               "CRYPTO_SPEC",
                               "DMB_SPEC",
                               "DP_SPEC",
                               "DSB_SPEC",
                               "EXC_DABORT",
                               "EXC_FIQ",
                               "EXC_HVC",
                               "EXC_IRQ",
                               "EXC_PABORT",
                               "EXC_SMC",
                               "EXC_SVC",
                               "EXC_TRAP_DABORT",
                               "EXC_TRAP_FIQ",
                               "EXC_TRAP_IRQ",
                               "EXC_TRAP_OTHER",
                               "EXC_TRAP_PABORT",
                               "EXC_UNDEF",
                               "ISB_SPEC",
                               "L1D_CACHE_INVAL",
                               "L1D_CACHE_RD",
                               "L1D_CACHE_REFILL_INNER",
                               "L1D_CACHE_REFILL_OUTER",
                               "L1D_CACHE_REFILL_RD",
                               "L1D_CACHE_REFILL_WR",
                               "L1D_CACHE_WB_CLEAN",
                               "L1D_CACHE_WB_VICTIM",
                               "L1D_CACHE_WR",
                               "L1D_TLB_RD",
                               "L1D_TLB_REFILL_RD",
                               "L1D_TLB_REFILL_WR",
                               "L1D_TLB_WR",
                               "L2D_CACHE_INVAL",
                               "L2D_CACHE_RD",
                               "L2D_CACHE_REFILL_RD",
                               "L2D_CACHE_REFILL_WR",
                               "L2D_CACHE_WB_CLEAN",
                               "L2D_CACHE_WB_VICTIM",
                               "L2D_CACHE_WR",
                               "L2D_TLB_RD",
                               "L2D_TLB_REFILL_RD",
                               "L2D_TLB_REFILL_WR",
                               "L2D_TLB_WR",
                               "L3D_CACHE",
                               "L3D_CACHE_ALLOCATE",
                               "L3D_CACHE_REFILL",
                               "LDREX_SPEC",
                               "LD_SPEC",
                               "MEM_ACCESS_RD",
                               "MEM_ACCESS_WR",
                               "PC_WRITE_SPEC",
                               "RC_LD_SPEC",
                               "RC_ST_SPEC",
                               "SAMPLE_COLLISION",
                               "SAMPLE_FEED",
                               "SAMPLE_FILTRATE",
                               "SAMPLE_POP",
                               "STREX_FAIL_SPEC",
                               "STREX_PASS_SPEC",
                               "STREX_SPEC",
                               "ST_SPEC",
                               "UNALIGNED_LDST_SPEC",
                               "UNALIGNED_LD_SPEC",
                               "UNALIGNED_ST_SPEC",
                               "VFP_SPEC"};
  for (std::string name : names) {
    CAPTURE(name);
    std::string lower = name;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    CHECK(one(name) == one(lower, tables));
  }
  // The one name of the table libpfm4's arm_n1 model does not have.
  CHECK(one("l3d_cache_rd", tables) == "type=10 config=0xa0");
  CHECK(test::error_of("arm_n1::L3D_CACHE_RD", n1())
            .find("help: libpfm4 does not know it for model 'arm_n1'") != std::string::npos);
}

TEST_CASE("Neoverse N1: what libpfm4 does not know, and a model prefix that is not the forced one") {
  CHECK(test::error_of("arm_n1::NO_SUCH_EVENT", n1()) ==
        "event syntax error: 'arm_n1::NO_SUCH_EVENT'\n"
        "                     \\___ unknown event 'arm_n1::NO_SUCH_EVENT'\n"
        "help: libpfm4 does not know it for model 'arm_n1' (LIBPFM_FORCE_PMU)\n");
  CHECK(test::error_of("n1::BUS_ACCESS_RD", n1()) ==
        "event syntax error: 'n1::BUS_ACCESS_RD'\n"
        "                     \\___ unknown event 'n1::BUS_ACCESS_RD'\n"
        "help: perfspec takes libpfm4's core events of model 'arm_n1' (LIBPFM_FORCE_PMU), and 'n1' is not "
        "it\n");
}
