// SPDX-License-Identifier: MIT
// The libpfm4 provider, with libpfm4 forced to Skylake-X (LIBPFM_FORCE_PMU=skx, set by ctest): its
// names resolve, and names libpfm4 and the perf JSON tables (skylakex) both know encode the same or
// differ for a reason listed here.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "perfspec/perfspec.hpp"
#include "perfspec/tables.hpp"
#include "spec/libpfm4.hpp"
#include "tests/support.hpp"

using namespace perfspec;

namespace {
std::string shared_events() { return test::source_dir() + "/../shared/pmu-events/x86"; }
std::string one(std::string_view text, const spec::Machine& m) {
  auto set = resolve(text, m);
  REQUIRE(set.events.size() == 1);
  return test::attr_summary(set.events[0].attr);
}
}  // namespace

TEST_CASE("libpfm4 names resolve through the provider, with perfspec modifiers and terms on top") {
  REQUIRE(spec::pfm::available());
  spec::Machine m(test::fixture("intel_skx"));
  CHECK(one("INST_RETIRED:ANY_P", m) == "type=4 config=0xc0");
  CHECK(one("INST_RETIRED.ANY_P:u", m) == "type=4 config=0xc0 exclude_kernel=1 exclude_hv=1");
  CHECK(one("INST_RETIRED:ANY_P:k", m) == "type=4 config=0xc0 exclude_user=1 exclude_hv=1");
  CHECK(one("skx::INST_RETIRED:ANY_P:u", m) == "type=4 config=0xc0 exclude_kernel=1 exclude_hv=1");
  CHECK(one("skx::INST_RETIRED:ANY_P:c=2", m) == "type=4 config=0x20000c0");
  CHECK(one("cpu/MEM_LOAD_RETIRED:L1_MISS,cmask=2/", m) == "type=4 config=0x20008d1");
  CHECK(one("OFFCORE_RESPONSE_0:DMND_DATA_RD:ANY_RESPONSE", m) == "type=4 config=0x1b7 config1=0x10001");
  auto set = resolve("INST_RETIRED.ANY_P", m);
  CHECK(set.events[0].pmu == "cpu");
  CHECK(
      test::error_of("skl::INST_RETIRED:ANY_P", m) ==
      "event syntax error: 'skl::INST_RETIRED:ANY_P'\n"
      "                     \\___ unknown event 'skl::INST_RETIRED:ANY_P'\n"
      "help: perfspec takes libpfm4's core events of model 'skx' (LIBPFM_FORCE_PMU), and 'skl' is not it\n");
  CHECK(test::error_of("skx::NO_SUCH_EVENT", m) ==
        "event syntax error: 'skx::NO_SUCH_EVENT'\n"
        "                     \\___ unknown event 'skx::NO_SUCH_EVENT'\n"
        "help: libpfm4 does not know it for model 'skx' (LIBPFM_FORCE_PMU)\n");
  // Intel's plain names (the architectural events) are libpfm4's too.
  CHECK(one("UNHALTED_CORE_CYCLES", m) == "type=4 config=0x3c");
  // a machine of another CPU (a cpuid no CPU has) is asked too: LIBPFM_FORCE_PMU picked the model
  spec::MachineOptions other;
  other.cpuid = "GenuineIntel-6-FF-F";
  CHECK(one("INST_RETIRED:ANY_P", spec::Machine(test::fixture("intel_skx"), other)) == "type=4 config=0xc0");
  // sysfs and the JSON tables come first
  spec::MachineOptions o;
  o.events_dir = shared_events();
  o.cpuid = "GenuineIntel-6-55-4";
  o.cache_dir = "none";
  if (std::filesystem::exists(shared_events())) {
    spec::Machine with_tables(test::fixture("intel_skx"), o);
    CHECK(one("inst_retired.any_p", with_tables) ==
          "type=4 config=0xc0 sample_period=2000003");  // the table's period
  }
}

TEST_CASE("names libpfm4 and the skylakex JSON table both know: same encoding, or a listed reason") {
  if (!std::filesystem::exists(shared_events())) return;
  auto tables = spec::EventTables::load_full(shared_events(), "skylakex");
  spec::MachineOptions o;
  o.events_dir = shared_events();
  o.cpuid = "GenuineIntel-6-55-4";
  o.cache_dir = "none";
  o.libpfm4 = false;
  spec::Machine m(test::fixture("intel_skx"), o);
  // Known and explained: Intel's table derives these cycle counts from UOPS_RETIRED.RETIRE_SLOTS
  // (umask 0x2; TOTAL_CYCLES with cmask 16), libpfm4 from UOPS_RETIRED.ALL (umask 0x1; cmask 10).
  // Both count stall/total cycles; the tables are Intel's current definition, which perf uses.
  const std::map<std::string, std::string> explained = {
      {"UOPS_RETIRED.STALL_CYCLES", "table 0x18002c2/0x0 libpfm4 0x18001c2/0x0"},
      {"UOPS_RETIRED.TOTAL_CYCLES", "table 0x108002c2/0x0 libpfm4 0xa8001c2/0x0"},
  };
  std::size_t both = 0, same = 0;
  std::map<std::string, std::string> differ;
  for (const auto& e : tables->events()) {
    if (!e.pmu.empty()) continue;  // core events: libpfm4's skx PMU
    auto pfm = spec::pfm::encode(e.alias.name);
    if (!pfm) continue;
    ++both;
    auto set = resolve(e.alias.name, m);
    const Attr& a = set.events[0].attr;
    CHECK(pfm->type == a.type);
    if (a.config == pfm->config && a.config1 == pfm->config1)
      ++same;
    else
      differ[e.alias.name] = fmt::format("table {:#x}/{:#x} libpfm4 {:#x}/{:#x}", a.config, a.config1,
                                         pfm->config, pfm->config1);
  }
  MESSAGE("names both know: " << both << ", same encoding: " << same);
  CHECK(both >= 250);
  CHECK(differ == explained);
}
