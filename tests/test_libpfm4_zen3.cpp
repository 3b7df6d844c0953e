// SPDX-License-Identifier: MIT
// The libpfm4 provider with libpfm4 forced to Zen 3 (LIBPFM_FORCE_PMU=amd64_fam19h_zen3, set by ctest)
// on the amd_zen3 fixture, whatever this host's CPU: libpfm4's names resolve onto the fixture's `cpu`
// PMU with the encoding of AMD's event code and unit mask, AMD's plain names (no unit mask) too.
#include <doctest/doctest.h>

#include <filesystem>

#include "perfspec/perfspec.hpp"
#include "spec/libpfm4.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {
std::string shared_events() { return test::source_dir() + "/../shared/pmu-events/x86"; }
const spec::Machine& zen3() {
  static spec::Machine m(test::fixture("amd_zen3"));
  return m;
}
std::string one(std::string_view text, const spec::Machine& m = zen3()) {
  auto set = resolve(text, m);
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].pmu == "cpu");
  return test::attr_summary(set.events[0].attr);
}
}  // namespace

TEST_CASE("libpfm4 forced to Zen 3: the model libpfm4 took is the forced one, whatever this host is") {
  REQUIRE(spec::pfm::available());
  const auto& m = spec::pfm::models();
  CHECK(m.forced == "amd64_fam19h_zen3");
  CHECK(m.active == std::vector<std::string>{"amd64_fam19h_zen3"});
}

TEST_CASE("Zen 3 names from libpfm4 resolve on the amd_zen3 fixture's cpu PMU, exactly") {
  // AMD's event select: event bits 0-7 and 32-35 (`event config:0-7,32-35`), unit mask 8-15; libpfm4's
  // encoding of each, and the fixture's formats given the same code and mask, agree.
  CHECK(one("RETIRED_INSTRUCTIONS") == "type=4 config=0xc0");  // PMCx0C0, no unit mask
  CHECK(one("retired_instructions") == "type=4 config=0xc0");  // libpfm4 names are case-insensitive
  CHECK(one("CYCLES_NOT_IN_HALT") == "type=4 config=0x76");    // PMCx076
  // PMCx18E IC Tag Hit/Miss, unit mask 0x18 (IcMiss): the event's bit 8 goes to config bit 32.
  CHECK(one("IC_TAG_HIT_MISS:IC_MISS") == "type=4 config=0x10000188e");
  CHECK(one("IC_TAG_HIT_MISS.IC_MISS") == "type=4 config=0x10000188e");
  CHECK(one("cpu/event=0x18e,umask=0x18/") == "type=4 config=0x10000188e");
  // PMCx28F Op Cache Hit/Miss, unit mask 0x04 (OcMiss).
  CHECK(one("OP_CACHE_HIT_MISS:OC_MISS") == "type=4 config=0x20000048f");
  CHECK(one("cpu/event=0x28f,umask=0x4/") == "type=4 config=0x20000048f");
  // PMCx064 Core to L2 Cacheable Request Access Status, unit mask 0x08 (LsRdBlkC).
  CHECK(one("CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C") == "type=4 config=0x864");
  // A unit mask libpfm4 sets by default when none is given (RETIRED_SSE_AVX_FLOPS:ANY, 0xf).
  CHECK(one("RETIRED_SSE_AVX_FLOPS") == "type=4 config=0xf03");
  // The model's prefix, modifiers (perfspec's and libpfm4's) and the PMU's terms on top.
  CHECK(one("amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:u") ==
        "type=4 config=0xc0 exclude_kernel=1 exclude_hv=1");
  CHECK(one("RETIRED_INSTRUCTIONS:k") == "type=4 config=0xc0 exclude_user=1 exclude_hv=1");
  CHECK(one("amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:c=2") == "type=4 config=0x20000c0");
  CHECK(one("cpu/RETIRED_INSTRUCTIONS,cmask=2/") == "type=4 config=0x20000c0");
  CHECK(one("cpu/event=RETIRED_INSTRUCTIONS/u") == "type=4 config=0xc0 exclude_kernel=1 exclude_hv=1");
  auto group = resolve("{RETIRED_INSTRUCTIONS,CYCLES_NOT_IN_HALT}:u", zen3());
  REQUIRE(group.events.size() == 2);
  CHECK(group.events[1].leader == 0);
  // perf's generic names stay perf's: libpfm4 is not asked for them.
  CHECK(one("cycles") == "type=0");
  CHECK(one("cpu/cycles/") == "type=0");
}

TEST_CASE("Zen 3 libpfm4 names agree with perf's amdzen3 table for the same events") {
  if (!std::filesystem::exists(shared_events())) return;
  spec::MachineOptions o;
  o.events_dir = shared_events();
  o.cpuid = "AuthenticAMD-25-21-0";  // family 19h model 21h: Zen 3 (Vermeer) in perf's mapfile
  o.cache_dir = "none";
  o.libpfm4 = false;
  spec::Machine tables(test::fixture("amd_zen3"), o);
  const std::pair<const char*, const char*> same[] = {
      {"RETIRED_INSTRUCTIONS", "ex_ret_instr"},
      {"CYCLES_NOT_IN_HALT", "ls_not_halted_cyc"},
      {"IC_TAG_HIT_MISS:IC_MISS", "ic_tag_hit_miss.instruction_cache_miss"},
      {"OP_CACHE_HIT_MISS:OC_MISS", "op_cache_hit_miss.op_cache_miss"},
      {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", "l2_cache_req_stat.ls_rd_blk_c"},
  };
  for (auto [pfm, table] : same) {
    CAPTURE(pfm);
    CHECK(one(pfm) == one(table, tables));
  }
}

TEST_CASE("Zen 3: what libpfm4 does not know, and a model prefix that is not the forced one") {
  CHECK(test::error_of("RETIRED_INSTRUCTONS", zen3()) ==
        "event syntax error: 'RETIRED_INSTRUCTONS'\n"
        "                     \\___ unknown event 'RETIRED_INSTRUCTONS'\n");
  CHECK(test::error_of("amd64_fam19h_zen3::NO_SUCH_EVENT", zen3()) ==
        "event syntax error: 'amd64_fam19h_zen3::NO_SUCH_EVENT'\n"
        "                     \\___ unknown event 'amd64_fam19h_zen3::NO_SUCH_EVENT'\n"
        "help: libpfm4 does not know it for model 'amd64_fam19h_zen3' (LIBPFM_FORCE_PMU)\n");
  CHECK(test::error_of("zen3::RETIRED_INSTRUCTIONS", zen3()) ==
        "event syntax error: 'zen3::RETIRED_INSTRUCTIONS'\n"
        "                     \\___ unknown event 'zen3::RETIRED_INSTRUCTIONS'\n"
        "help: perfspec takes libpfm4's core events of model 'amd64_fam19h_zen3' (LIBPFM_FORCE_PMU), and "
        "'zen3' is not it\n");
  // An Intel tree: libpfm4's core events are PERF_TYPE_RAW, and its `cpu` is type 4, so they would
  // land there; the model is the user's choice (LIBPFM_FORCE_PMU), as with perf's own libpfm4 support.
  spec::Machine skx(test::fixture("intel_skx"));
  CHECK(one("RETIRED_INSTRUCTIONS", skx) == "type=4 config=0xc0");
}

TEST_CASE(
    "libpfm4's PERF_TYPE_RAW encoding goes to the core PMU whatever its type number, or to the one of type "
    "4") {
  // One core PMU with a dynamic type, as arm64's armv8_pmuv3_0: the kernel gives it raw events.
  test::TempTree one_core;
  one_core.pmu("armv8_pmuv3_0", 10);
  one_core.write("bus/event_source/devices/armv8_pmuv3_0/cpus", "0-3\n");
  one_core.write("bus/event_source/devices/armv8_pmuv3_0/format/event", "config:0-7,32-35\n");
  spec::Machine m1(one_core.root());
  auto set = resolve("RETIRED_INSTRUCTIONS", m1);
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].pmu == "armv8_pmuv3_0");
  CHECK(test::attr_summary(set.events[0].attr) == "type=10 config=0xc0");
  // Two core PMUs (hybrid): libpfm4 names its own PMU's type; RAW is the one of type 4 only.
  test::TempTree hybrid;
  for (auto [name, type] : {std::pair{"cpu_core", 4u}, {"cpu_atom", 10u}}) {
    hybrid.pmu(name, type);
    hybrid.write(fmt::format("bus/event_source/devices/{}/cpus", name), type == 4 ? "0-7\n" : "8-15\n");
  }
  spec::Machine m2(hybrid.root());
  set = resolve("RETIRED_INSTRUCTIONS", m2);
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].pmu == "cpu_core");
  CHECK(test::attr_summary(set.events[0].attr) == "type=4 config=0xc0");
}
