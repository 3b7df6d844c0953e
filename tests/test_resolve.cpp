// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <chrono>

#include "perfspec/perfspec.hpp"
#include "perfspec/runtime.hpp"
#include "resolver/suggest.hpp"
#include "tests/support.hpp"

using perfspec::spec::Machine;

namespace {
const Machine& skx() {
  static Machine m(test::fixture("intel_skx"), test::no_libpfm4());
  return m;
}
const Machine& adl() {
  static Machine m(test::fixture("hybrid_adl"), test::no_libpfm4());
  return m;
}
const Machine& zen() {
  static Machine m(test::fixture("amd_zen3"), test::no_libpfm4());
  return m;
}
const Machine& arm() {
  static Machine m(test::fixture("arm_n1"), test::no_libpfm4());
  return m;
}
std::vector<std::string> summaries(std::string_view text, const Machine& m) {
  std::vector<std::string> out;
  for (const auto& e : perfspec::resolve(text, m).events) out.push_back(test::attr_summary(e.attr));
  return out;
}
std::string one(std::string_view text, const Machine& m) {
  auto s = summaries(text, m);
  REQUIRE(s.size() == 1);
  return s[0];
}
}  // namespace

TEST_CASE("the brief's example strings") {
  CHECK(one("cpu/event=0x2,inv,ldlat=3/u", skx()) ==
        "type=4 config=0x800002 exclude_kernel=1 exclude_hv=1 config1=0x3");
  CHECK(summaries("{cycles,instructions}:u", skx()) ==
        std::vector<std::string>{"type=0 exclude_kernel=1 exclude_hv=1",
                                 "type=0 config=0x1 exclude_kernel=1 exclude_hv=1"});
  CHECK(one("L1D.READ.MISS", skx()) == "type=3 config=0x10000");
  CHECK(summaries("uncore_imc/cas_count_read/", skx()).size() == 6);
  CHECK(one("sched:sched_switch", skx()).starts_with("type=2 config="));
}

TEST_CASE("AMD's split event field") {
  CHECK(one("cpu/event=0x1c0,umask=0x2/", zen()) == "type=4 config=0x1000002c0");
  CHECK(one("cpu/event=0xfff/", zen()) == "type=4 config=0xf000000ff");
  CHECK(test::error_of("cpu/event=0x1000/", zen()) ==
        "event syntax error: 'cpu/event=0x1000/'\n"
        "                               \\___ value too big for format (event), maximum is 4095\n");
}

TEST_CASE("a later term replaces an earlier one's bits; config= sets the whole word") {
  CHECK(one("cpu/event=0x3c,event=0x2/", skx()) == "type=4 config=0x2");
  CHECK(one("cpu/config=0xffff,umask=0/", skx()) == "type=4 config=0xff");
  CHECK(one("cpu/umask=1,config=0x3c/", skx()) == "type=4 config=0x3c");
  CHECK(one("cpu/config1=5,config2=6,config3=7/", skx()) == "type=4 config1=0x5 config2=0x6 config3=0x7");
}

TEST_CASE("aliases: bare, pmu/name/, pmu/event=name/, user terms override alias terms") {
  CHECK(one("mem-loads", skx()) == "type=4 config=0x1cd config1=0x3");
  CHECK(one("MEM-LOADS", skx()) == "type=4 config=0x1cd config1=0x3");
  CHECK(one("cpu/mem-loads/", skx()) == "type=4 config=0x1cd config1=0x3");
  CHECK(one("cpu/event=mem-loads/", skx()) == "type=4 config=0x1cd config1=0x3");
  CHECK(one("cpu/mem-loads,ldlat=7/", skx()) == "type=4 config=0x1cd config1=0x7");
  CHECK(one("cpu/ldlat=7,mem-loads/", skx()) == "type=4 config=0x1cd config1=0x7");
  CHECK(one("cpu/cycles-ct/", skx()) == "type=4 config=0x30000003c");
  auto set = perfspec::resolve("topdown-total-slots", skx());
  CHECK(set.events[0].scale == 2.0);
  CHECK(test::error_of("cpu/mem-loads,cpu-cycles/", skx()) ==
        "event syntax error: 'cpu/mem-loads,cpu-cycles/'\n"
        "                                   \\___ more than one event named in the terms of pmu 'cpu'\n"
        "help: 'mem-loads' already names the event\n");
}

TEST_CASE("param=? aliases need the parameter") {
  test::TempTree tree;
  tree.pmu("uncore_cha_0", 19);
  const std::string d = "bus/event_source/devices/uncore_cha_0/";
  tree.write(d + "format/event", "config:0-7\n");
  tree.write(d + "format/filter_tid", "config1:0-8\n");
  tree.write(d + "events/tid_lookup", "event=0x34,filter_tid=?\n");
  Machine m(tree.root());
  CHECK(test::error_of("uncore_cha_0/tid_lookup/", m) ==
        "event syntax error: 'uncore_cha_0/tid_lookup/'\n"
        "                                  \\___ event 'tid_lookup' of pmu 'uncore_cha_0' needs "
        "'filter_tid=N'\n"
        "help: its definition says filter_tid=?\n");
  CHECK(one("uncore_cha_0/tid_lookup,filter_tid=0x1f/", m) == "type=19 config=0x34 config1=0x1f");
}

TEST_CASE("a bare name resolves the same every time: the first, from the Machine's name memo, any spelling") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.pmu("uncore_x_0", 20);
  tree.pmu("uncore_x_1", 21);
  const std::string cpu = "bus/event_source/devices/cpu/";
  tree.write(cpu + "format/event", "config:0-7\n");
  tree.write(cpu + "format/umask", "config:8-15\n");
  tree.write(cpu + "format/edge", "config:18\n");
  tree.write(cpu + "events/loads", "event=0xd0,umask=0x81\n");
  // An alias named like one of the PMU's formats: as a bare name it is that format's bit, not the alias.
  tree.write(cpu + "events/edge", "event=0x5\n");
  for (const char* u : {"uncore_x_0", "uncore_x_1"}) {
    tree.write(fmt::format("bus/event_source/devices/{}/format/event", u), "config:0-7\n");
    tree.write(fmt::format("bus/event_source/devices/{}/events/clockticks", u), "event=0xff\n");
  }
  tree.write("bus/event_source/devices/uncore_x_1/events/tid", "event=0x34,event2=?\n");
  tree.write("bus/event_source/devices/uncore_x_1/format/event2", "config1:0-7\n");
  tree.write(cpu + "events/mem_inst_retired_all_loads", "event=0xd0,umask=0x83\n");
  Machine m(tree.root(), test::no_libpfm4());
  // Spellings are kept apart in the name memo, up to a bound (65,536); past it they resolve the longer
  // way, with the same answer.
  std::string name = "mem_inst_retired_all_loads";
  std::size_t differ = 0;
  for (std::uint32_t variant = 0; variant < 70000; ++variant) {
    std::string spelled = name;
    for (std::size_t k = 0, bit = 0; k < spelled.size(); ++k)
      if (spelled[k] != '_' && (variant >> bit++ & 1)) spelled[k] = static_cast<char>(spelled[k] - 'a' + 'A');
    differ += perfspec::resolve(spelled, m).events.at(0).attr.config != 0x83d0;
  }
  CHECK(differ == 0);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    CHECK(one("loads", m) == "type=4 config=0x81d0");
    CHECK(one("LOADS:u", m) == "type=4 config=0x81d0 exclude_kernel=1 exclude_hv=1");
    CHECK(one("cpu/event=edge/", m) == "type=4 config=0x5");  // the alias, encoded and kept in the memo
    CHECK(one("edge", m) == "type=4 config=0x40000");
    CHECK(summaries("clockticks", m) ==
          std::vector<std::string>{"type=20 config=0xff", "type=21 config=0xff"});
    auto set = perfspec::resolve("{Loads,clockticks}:k", m);
    REQUIRE(set.events.size() == 3);
    CHECK(set.events[0].name == "Loads");
    CHECK(set.events[0].pmu == "cpu");
    CHECK(set.events[1].pmu == "uncore_x_0");
    CHECK(set.events[2].name == "clockticks");
    CHECK(set.events[2].attr.exclude_user == 1);
    CHECK(set.groups.size() == 3);  // split per PMU
    // Errors point into the text each time, whether or not the name was seen before.
    CHECK(test::error_of("cycles,{loads:pp}:pp", m) ==
          "event syntax error: 'cycles,{loads:pp}:pp'\n"
          "                                       \\___ precise level 4 is too high: the event's 'p' and its "
          "group's "
          "add up to more than 3\n");
    CHECK(test::error_of("tid", m) ==
          "event syntax error: 'tid'\n"
          "                     \\___ event 'tid' of pmu 'uncore_x_1' needs 'event2=N'\n"
          "help: its definition says event2=?\n");
  }
}

TEST_CASE("hardware symbols inside a PMU prefer the PMU's own alias") {
  CHECK(one("cpu/instructions/", skx()) == "type=4 config=0xc0");
  CHECK(one("cpu/cycles/", skx()) == "type=0");  // no `cycles` alias on Intel: the generic event
  CHECK(one("cpu/instructions/u", skx()) == "type=4 config=0xc0 exclude_kernel=1 exclude_hv=1");
}

TEST_CASE("hybrid: generic hardware and cache events become one per core PMU with the extended type") {
  CHECK(summaries("cycles", adl()) ==
        std::vector<std::string>{"type=0 config=0xa00000000", "type=0 config=0x400000000"});
  CHECK(summaries("L1-dcache-load-misses", adl()) ==
        std::vector<std::string>{"type=3 config=0xa00010000", "type=3 config=0x400010000"});
  auto set = perfspec::resolve("instructions:u", adl());
  REQUIRE(set.events.size() == 2);
  CHECK(set.events[0].pmu == "cpu_atom");
  CHECK(set.events[1].pmu == "cpu_core");
  CHECK(set.events[0].leader == 0);
  CHECK(set.events[1].leader == 1);
  CHECK(one("cpu_atom/cycles/", adl()) == "type=0 config=0xa00000000");
  CHECK(one("cpu_core/event=0x3c/", adl()) == "type=4 config=0x3c");
  // type:config and raw are literal: no fan-out, no extended type
  CHECK(one("0:1", adl()) == "type=0 config=0x1");
  CHECK(one("3:0x10000", adl()) == "type=3 config=0x10000");
  CHECK(one("r1a8", adl()) == "type=4 config=0x1a8");
  CHECK(one("task-clock", adl()) == "type=1 config=0x1");
  CHECK(test::error_of("cpu/event=1/", adl()).find("unknown PMU 'cpu'") != std::string::npos);
}

TEST_CASE("a PMU filter (stat --cputype): lookups across PMUs pick that one; a PMU written stays") {
  // each event's PMU and attr, a `|` apart (a difference shows whole)
  auto filtered = [](std::string_view text, const Machine& m, const char* pmu) {
    std::string out;
    for (const auto& e : perfspec::resolve(text, m, {.pmu_filter = pmu}).events)
      out += (out.empty() ? "" : "|") + e.pmu + " " + test::attr_summary(e.attr);
    return out;
  };
  // generic events fanned out over the core PMUs, and an alias both have
  CHECK(filtered("cycles,L1-dcache-load-misses,mem-loads", adl(), "cpu_atom") ==
        "cpu_atom type=0 config=0xa00000000|cpu_atom type=3 config=0xa00010000|cpu_atom type=10 config=0x5d0 "
        "config1=0x3");
  CHECK(filtered("instructions:u", adl(), "cpu_core") ==
        "cpu_core type=0 config=0x400000001 exclude_kernel=1 exclude_hv=1");
  // a PMU by its own name is as written, whatever the filter; literal events are no lookup
  CHECK(filtered("cpu_core/event=0x3c/,r1a8,task-clock", adl(), "cpu_atom") ==
        "cpu_core type=4 config=0x3c|cpu_core type=4 config=0x1a8|software type=1 config=0x1");
  // a wildcard PMU name matches the filter's PMU only
  auto set = perfspec::resolve("imc/cas_count_read/", skx(), {.pmu_filter = "uncore_imc_3"});
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].pmu == "uncore_imc_3");
  // an alias only another PMU has: said, with where it is
  CHECK(test::error_of("topdown-heavy-ops", adl(), {.pmu_filter = "cpu_atom"}) ==
        "event syntax error: 'topdown-heavy-ops'\n"
        "                     \\___ PMU 'cpu_atom' has no event 'topdown-heavy-ops' (--cputype)\n"
        "help: 'topdown-heavy-ops' is an event of cpu_core\n");
  CHECK(test::error_of("cycles", adl(), {.pmu_filter = "msr"}) ==
        "event syntax error: 'cycles'\n"
        "                     \\___ 'cycles' is counted by the core PMUs (cpu_atom, cpu_core), and --cputype "
        "picks 'msr'\n");
  // the memo of names resolved is neither used nor filled under a filter
  CHECK(filtered("mem-loads", adl(), "cpu_core") == "cpu_core type=4 config=0x1cd config1=0x3");
  CHECK(summaries("mem-loads", adl()).size() == 2);
  CHECK(filtered("mem-loads", adl(), "cpu_atom") == "cpu_atom type=10 config=0x5d0 config1=0x3");
}

TEST_CASE("wildcard and glob PMU names") {
  auto set = perfspec::resolve("imc/cas_count_read/", skx());
  REQUIRE(set.events.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(set.events[i].pmu == fmt::format("uncore_imc_{}", i));
    CHECK(set.events[i].attr.type == 13 + i);
    CHECK(set.events[i].attr.config == 0x304);
    CHECK(set.events[i].unit == "MiB");
    CHECK(set.events[i].leader == i);
  }
  CHECK(summaries("uncore_cha_[02]/event=1/", skx()) ==
        std::vector<std::string>{"type=19 config=0x1", "type=21 config=0x1"});
  // A wildcard keeps the PMUs that accept the terms (filter_tid is a CHA format, not an IMC one); the
  // PMUs that refuse them leave nothing behind.
  auto cha = perfspec::resolve("uncore_*/event=1,filter_tid=3/", skx());
  REQUIRE(cha.events.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(cha.events[i].pmu == fmt::format("uncore_cha_{}", i));
    CHECK(cha.events[i].name == "uncore_*/event=1,filter_tid=3/");
    CHECK(cha.events[i].group == i);
  }
  CHECK(cha.groups.size() == 4);
  CHECK(summaries("uncore_imc_free_running/data_read/", adl()).size() == 2);
  CHECK(summaries("*imc_free*/data_read/", adl()).size() == 2);
  CHECK(
      test::error_of("uncore_imc/nonesuch/", skx()) ==
      "event syntax error: 'uncore_imc/nonesuch/'\n"
      "                                \\___ unknown term 'nonesuch' for pmu 'uncore_imc_0'\n"
      "help: valid terms: "
      "edge,event,inv,thresh,umask,config,config1,config2,config3,name,period,freq,branch_type,"
      "time,call-graph,stack-size,max-stack,nr,inherit,no-inherit,overwrite,no-overwrite,percore,aux-output,"
      "aux-sample-size,metric-id,cpu\n");
}

TEST_CASE("modifiers: u/k/h, G/H, I, precise, P from caps/max_precise") {
  CHECK(one("cycles:u", skx()) == "type=0 exclude_kernel=1 exclude_hv=1");
  CHECK(one("cycles:k", skx()) == "type=0 exclude_user=1 exclude_hv=1");
  CHECK(one("cycles:h", skx()) == "type=0 exclude_user=1 exclude_kernel=1");
  CHECK(one("cycles:uk", skx()) == "type=0 exclude_hv=1");
  CHECK(one("cycles:ukh", skx()) == "type=0");
  CHECK(one("cycles:G", skx()) == "type=0 exclude_host=1");
  CHECK(one("cycles:H", skx()) == "type=0 exclude_guest=1");
  CHECK(one("cycles:GH", skx()) == "type=0");
  CHECK(one("cycles:I", skx()) == "type=0 exclude_idle=1");
  CHECK(one("cycles:ppp", skx()) == "type=0 precise_ip=3");
  CHECK(one("cycles:P", skx()) == "type=0 precise_ip=3");
  CHECK(one("task-clock:P", skx()) == "type=1 config=0x1");  // the software PMU has no max_precise
  CHECK(one("cpu/event=0x3c/S", skx()) == "type=4 config=0x3c sample_type=0x10");
  CHECK(one("cpu/event=0x3c/D", skx()) == "type=4 config=0x3c pinned=1");
  CHECK(one("cpu/event=0x3c/e", skx()) == "type=4 config=0x3c exclusive=1");
  auto b = perfspec::resolve("cycles:bR", skx());
  CHECK(b.events[0].bpf_counter);
  CHECK(b.events[0].retire_latency);
}

TEST_CASE("group modifiers apply on top of members' own") {
  CHECK(summaries("{instructions:k}:u", skx()) == std::vector<std::string>{"type=0 config=0x1 exclude_hv=1"});
  CHECK(summaries("{cycles:u,instructions:kp}:p", skx()) ==
        std::vector<std::string>{"type=0 exclude_kernel=1 exclude_hv=1 precise_ip=1",
                                 "type=0 config=0x1 exclude_user=1 exclude_hv=1 precise_ip=2"});
  CHECK(test::error_of("{cycles:pp,instructions}:pp", skx()) ==
        "event syntax error: '{cycles:pp,instructions}:pp'\n"
        "                                              \\___ precise level 4 is too high: the event's 'p' "
        "and its "
        "group's add up to more than 3\n");
  CHECK(summaries("{cycles,instructions}:S", skx()) ==
        std::vector<std::string>{"type=0 sample_type=0x10 read_format=0x8",
                                 "type=0 config=0x1 sample_type=0x10 read_format=0x8"});
  CHECK(summaries("{cycles,instructions}:D", skx()) ==
        std::vector<std::string>{"type=0 pinned=1", "type=0 config=0x1"});
}

TEST_CASE("leader-only and group-only modifiers") {
  CHECK(test::error_of("cycles:W", skx()) ==
        "event syntax error: 'cycles:W'\n                            \\___ Weak modifier is for use with "
        "groups\n");
  CHECK(test::error_of("{cycles,instructions:D}", skx()) ==
        "event syntax error: '{cycles,instructions:D}'\n"
        "                                          \\___ the 'D' (pinned) modifier is only valid on a group "
        "leader\n");
  CHECK(test::error_of("{cycles,instructions:e}", skx())
            .find("'e' (exclusive) modifier is only valid on a group leader") != std::string::npos);
  CHECK(one("cycles:pP", skx()) == "type=0 precise_ip=3");  // P wins, as perf's precise_max does
  CHECK(summaries("{cycles:p}:P", skx()) == std::vector<std::string>{"type=0 precise_ip=3"});
  auto set = perfspec::resolve("{cycles:D,instructions}:W", skx());
  CHECK(set.groups.size() == 1);
  CHECK(set.groups[0].weak);
  CHECK(set.events[0].attr.pinned == 1);
}

TEST_CASE("group structure: leader index, members, names") {
  auto set = perfspec::resolve("cs,g1{cycles,task-clock,instructions}:W,faults", skx());
  REQUIRE(set.events.size() == 5);
  REQUIRE(set.groups.size() == 3);
  CHECK(set.groups[1].name == "g1");
  CHECK(set.groups[1].braces);
  CHECK(set.groups[1].weak);
  CHECK(set.groups[1].members == std::vector<std::size_t>{1, 2, 3});
  for (std::size_t i = 1; i <= 3; ++i) {
    CHECK(set.events[i].leader == 1);
    CHECK(set.events[i].group == 1);
  }
  CHECK(set.events[4].leader == 4);
  CHECK(set.events[4].group == 2);
  CHECK_FALSE(set.groups[2].braces);
  CHECK(set.events[0].name == "cs");
  CHECK(set.events[2].name == "task-clock");
}

TEST_CASE("a group whose events land on several PMUs is split per PMU; software events stay with the first") {
  auto set = perfspec::resolve("{cycles,uncore_imc/clockticks/,task-clock}:u", skx());
  REQUIRE(set.events.size() == 8);
  REQUIRE(set.groups.size() == 7);
  CHECK(set.groups[0].members == std::vector<std::size_t>{0, 1});  // cycles + task-clock
  CHECK(set.events[1].name == "task-clock");
  CHECK(set.events[1].leader == 0);
  for (std::size_t g = 1; g < 7; ++g) {
    CHECK(set.groups[g].members == std::vector<std::size_t>{g + 1});
    CHECK(set.events[g + 1].pmu == fmt::format("uncore_imc_{}", g - 1));
    CHECK(set.events[g + 1].attr.exclude_kernel == 1);
  }
  auto hy = perfspec::resolve("{cycles,instructions}:D", adl());
  REQUIRE(hy.groups.size() == 2);
  CHECK(hy.events[0].pmu == "cpu_atom");
  CHECK(hy.events[1].pmu == "cpu_atom");
  CHECK(hy.events[2].pmu == "cpu_core");
  CHECK(hy.events[2].leader == 2);
  // the leader-only modifier lands on each new leader
  CHECK(hy.events[0].attr.pinned == 1);
  CHECK(hy.events[1].attr.pinned == 0);
  CHECK(hy.events[2].attr.pinned == 1);
}

TEST_CASE("display names: the text as written unless name=") {
  auto set = perfspec::resolve("cpu/event=0x3c,name=mycycles/,cpu/event=0xc0,name='a:b'/u", skx());
  CHECK(set.events[0].name == "mycycles");
  CHECK(set.events[1].name == "a:b");
  CHECK(test::error_of("cycles/name=5/", skx()).find("expected string value") != std::string::npos);
}

TEST_CASE("built-in terms") {
  CHECK(one("cycles/period=1000/", skx()) == "type=0 sample_period=1000");
  CHECK(one("cycles/freq=4000/", skx()) == "type=0 sample_period=4000 freq=1");
  CHECK(one("cycles/freq=4000,period=7/", skx()) == "type=0 sample_period=7");
  CHECK(one("cycles/time=1/", skx()) == "type=0 sample_type=0x4");
  CHECK(one("cycles/call-graph=fp/", skx()) == "type=0 sample_type=0x20");
  // The user registers are the running architecture's (perf's PERF_REGS_MASK is compiled in).
#if defined(__aarch64__)
  const std::string regs = "sample_regs_user=0x1ffffffff";  // x0-x30, sp, pc
#else
  const std::string regs = "sample_regs_user=0xff0fff";
#endif
  CHECK(one("cycles/call-graph=dwarf,stack-size=4096/", skx()) ==
        "type=0 sample_type=0x3020 exclude_callchain_user=1 " + regs + " sample_stack_user=4096");
  CHECK(one("cycles/max-stack=32/", skx()) == "type=0 sample_max_stack=32");
  // perf's `nr=` (its max-events term) belongs to no attr field: the event keeps it for perf trace
  {
    perfspec::EventSet set = perfspec::resolve("cycles/nr=3/", skx());
    CHECK(set.events.at(0).max_events == 3);
    CHECK(one("cycles/nr=3/", skx()) == "type=0");
  }
  CHECK(one("cycles/inherit/", skx()) == "type=0 inherit=1");
  CHECK(one("cycles/no-inherit/", skx()) == "type=0");
  CHECK(one("cycles/overwrite/", skx()) == "type=0 write_backward=1");
  CHECK(one("cycles/branch_type=any/", skx()) == "type=0 sample_type=0x800 branch_sample_type=0x8");
  CHECK(one("intel_pt/aux-output/", skx()) == "type=10 aux_output=1");
  CHECK(one("cycles/aux-sample-size=4096/", skx()) == "type=0 sample_type=0x100000 aux_sample_size=4096");
  auto set = perfspec::resolve("cpu/event=1,metric-id=m1,cpu=0-3,percore,@cfg=2/", skx());
  CHECK(set.events[0].metric_id == "m1");
  CHECK(set.events[0].cpus == "0-3");
  CHECK(set.events[0].percore);
  CHECK(set.events[0].driver_config == "cfg=2");
  CHECK(test::error_of("cycles/period=abc/", skx()) ==
        "event syntax error: 'cycles/period=abc/'\n                                   \\___ expected numeric "
        "value\n");
  CHECK(test::error_of("cycles/call-graph=xyz/", skx()).find("unknown call-graph mode 'xyz'") !=
        std::string::npos);
  CHECK(test::error_of("cycles/event=1/", skx()) ==
        "event syntax error: 'cycles/event=1/'\n"
        "                            \\___ unknown term 'event' for event 'cycles'\n"
        "help: valid terms: "
        "config,config1,config2,config3,name,period,freq,branch_type,time,call-graph,stack-size,"
        "max-stack,nr,inherit,no-inherit,overwrite,no-overwrite,percore,aux-output,aux-sample-size,metric-id,"
        "cpu\n");
}

TEST_CASE("raw, numeric and breakpoint events") {
  CHECK(one("r1a8", skx()) == "type=4 config=0x1a8");
  CHECK(one("r1a8/period=3/u", skx()) == "type=4 config=0x1a8 sample_period=3 exclude_kernel=1 exclude_hv=1");
  CHECK(one("cpu/r0x1a8/", skx()) == "type=4 config=0x1a8");
  CHECK(one("cpu/r1a8,umask=0/", skx()) == "type=4 config=0xa8");
  CHECK(one("1:1", skx()) == "type=1 config=0x1");
  CHECK(one("4:0x1a8:k", skx()) == "type=4 config=0x1a8 exclude_user=1 exclude_hv=1");
  CHECK(test::error_of("4:0x1a8/umask=1/", skx()).find("unknown term 'umask' for event '4:0x1a8'") !=
        std::string::npos);
  CHECK(test::error_of("r1a8/umask=1/", skx()).find("unknown term 'umask' for event 'r1a8'") !=
        std::string::npos);
  CHECK(one("mem:0x1000", skx()) == "type=5 sample_period=1 bp_type=3 config1=0x1000 config2=0x4");
  CHECK(one("mem:0x1000/8:w", skx()) == "type=5 sample_period=1 bp_type=2 config1=0x1000 config2=0x8");
  CHECK(one("mem:0x2000:x", skx()) == "type=5 sample_period=1 bp_type=4 config1=0x2000 config2=0x8");
  CHECK(one("mem:4096:r:u", skx()) ==
        "type=5 sample_period=1 exclude_kernel=1 exclude_hv=1 bp_type=1 config1=0x1000 config2=0x4");
}

TEST_CASE("tracepoints: ids, globs, unknown names") {
  Machine m(test::fixture("intel_skx"));
  auto id = m.tracepoint_id("sched", "sched_switch");
  REQUIRE(id);
  CHECK(one("sched:sched_switch", skx()) ==
        fmt::format("type=2 config={:#x} sample_period=1 sample_type=0x584", *id));
  auto set = perfspec::resolve("sched:sched_*:u", skx());
  CHECK(set.events.size() == 3);
  CHECK(set.events[0].name == "sched:sched_process_exec:u");
  CHECK(test::error_of("sched:nonesuch", skx()) ==
        "event syntax error: 'sched:nonesuch'\n                     \\___ unknown tracepoint "
        "'sched:nonesuch'\n");
  CHECK(test::error_of("sched:sched_switch/event=1/", skx()).find("unknown term 'event' for tracepoint") !=
        std::string::npos);
}

TEST_CASE("tracepoints: an unknown one gets the closest names that exist") {
  CHECK(test::error_of("sched:sched_swich", skx()) ==
        "event syntax error: 'sched:sched_swich'\n"
        "                     \\___ unknown tracepoint 'sched:sched_swich'\n"
        "help: did you mean 'sched:sched_switch'?\n");
  CHECK(test::error_of("cycles,shced:sched_wakeup/period=3/", skx()) ==
        "event syntax error: 'cycles,shced:sched_wakeup/period=3/'\n"
        "                            \\___ unknown tracepoint 'shced:sched_wakeup'\n"
        "help: did you mean 'sched:sched_wakeup'?\n");
  // A glob that matches nothing has no closest name.
  CHECK(test::error_of("sched:nomatch*", skx()) ==
        "event syntax error: 'sched:nomatch*'\n"
        "                     \\___ unknown tracepoint 'sched:nomatch*'\n");
  // The files beside the tracepoint folders (`enable`, `filter`) are not tracepoints to suggest.
  test::TempTree tree;
  tree.write("kernel/tracing/events/sched/sched_switch/id", "316\n");
  tree.write("kernel/tracing/events/sched/enable", "0\n");
  tree.write("kernel/tracing/events/sched/filter", "none\n");
  tree.write("kernel/tracing/events/enable", "0\n");
  Machine m(tree.root(), test::no_libpfm4());
  CHECK(m.tracepoint_names() == std::vector<std::string>{"sched:sched_switch"});
  CHECK(test::error_of("sched:enabled", m) ==
        "event syntax error: 'sched:enabled'\n"
        "                     \\___ unknown tracepoint 'sched:enabled'\n");
}

TEST_CASE("a tracepoint that appears later resolves: tracepoints not found are not remembered") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("kernel/tracing/events/sched/sched_switch/id", "316\n");
  Machine m(tree.root(), test::no_libpfm4());
  CHECK(one("sched:sched_switch", m) == "type=2 config=0x13c sample_period=1 sample_type=0x584");
  for (int round = 0; round < 2; ++round)
    CHECK(test::error_of("mymod:probe", m) ==
          "event syntax error: 'mymod:probe'\n"
          "                     \\___ unknown tracepoint 'mymod:probe'\n");
  tree.write("kernel/tracing/events/mymod/probe/id", "1200\n");  // a module loads
  CHECK(one("mymod:probe", m) == "type=2 config=0x4b0 sample_period=1 sample_type=0x584");
}

TEST_CASE("thousands of unknown PMU names: each is still unknown, and wildcards still resolve") {
  Machine m(test::fixture("intel_skx"), test::no_libpfm4());  // its own: the names it is given stay in it
  std::size_t unknown = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string text = fmt::format("nopmu{}/event=1/", i);
    unknown += test::error_of(text, m).find(fmt::format("unknown PMU 'nopmu{}'", i)) != std::string::npos;
  }
  CHECK(unknown == 5000);
  CHECK(summaries("uncore_imc/cas_count_read/", m).size() == 6);
  CHECK(test::error_of("nopmu7/event=1/", m).find("unknown PMU 'nopmu7'") != std::string::npos);
}

TEST_CASE("suggestions: the closest three by distance and then name, each once, up to a third of the name") {
  test::TempTree tree;
  for (const char* pmu : {"cpu", "uncore_x"}) {
    tree.pmu(pmu, std::string_view(pmu) == "cpu" ? 4 : 20);
    for (const char* alias : {"abcdeg", "abcdgh", "abcdefgh", "abzzzz", "ABCDEF_X"})
      tree.write(fmt::format("bus/event_source/devices/{}/events/{}", pmu, alias), "config=1\n");
  }
  Machine m(tree.root(), test::no_libpfm4());
  auto help = [&](const std::string& text) {
    try {
      perfspec::resolve(text, m);
    } catch (const perfspec::Error& e) {
      return e.help();
    }
    return std::string("resolved");
  };
  // abcdeg 1, ABCDEF_X 2 (case is ignored), abcdefgh 2 (two longer: found only if the search reaches a
  // length difference equal to its bound), abcdgh 2; abzzzz 4 is past the limit of 2.
  for (int round = 0; round < 2; ++round) {
    CHECK(help("abcdef") == "did you mean 'abcdeg', 'ABCDEF_X' or 'abcdefgh'?");
    CHECK(help("abcdefghij") == "did you mean 'abcdefgh'?");
    CHECK(help("qqqqqq") == "");
  }
}

TEST_CASE("the bit-vector distance equals the table's, for every pattern length up to 64") {
  using perfspec::resolver::bit_distance;
  using perfspec::resolver::edit_distance;
  std::uint64_t state = 12345;
  auto next = [&] {  // a fixed LCG: the same strings every run
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<unsigned>(state >> 33);
  };
  const std::string alphabet = "abcdeABCDE_.x";
  auto random_text = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += alphabet[next() % alphabet.size()];
    return s;
  };
  std::size_t compared = 0, differ = 0;
  for (std::size_t m = 1; m <= 64; ++m)
    for (int k = 0; k < 40; ++k) {
      std::string a = random_text(m);
      for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      // Some b are edits of a (close), some unrelated; lengths 0 to 80.
      std::string b = k % 2 ? random_text(next() % 81) : a;
      if (k % 2 == 0)
        for (unsigned e = next() % 6; e > 0 && !b.empty(); --e)
          b[next() % b.size()] = alphabet[next() % alphabet.size()];
      unsigned table = edit_distance(a, b, 1000), bits = bit_distance(a, b);
      differ += table != bits;
      if (table != bits) MESSAGE(a << " / " << b << ": table " << table << ", bits " << bits);
      ++compared;
    }
  CHECK(compared == 64 * 40);
  CHECK(differ == 0);
  CHECK(edit_distance("kitten", "SITTING", 100) == 3);
  CHECK(bit_distance("kitten", "SITTING") == 3);
  CHECK(bit_distance("abc", "") == 3);
  CHECK(edit_distance("abcdefgh", "zzzzzzzz", 2) > 2);  // past the limit: any value above it
}

TEST_CASE("unknown names get suggestions") {
  CHECK(test::error_of("cylces", skx()) ==
        "event syntax error: 'cylces'\n                     \\___ unknown event 'cylces'\nhelp: did you mean "
        "'cycles'?\n");
  CHECK(test::error_of("cpuu/event=1/", skx()) ==
        "event syntax error: 'cpuu/event=1/'\n                     \\___ unknown PMU 'cpuu'\nhelp: did you "
        "mean 'cpu'?\n");
  CHECK(test::error_of("msr", skx()) ==
        "event syntax error: 'msr'\n                     \\___ 'msr' is a PMU, not an event\n"
        "help: write 'msr/.../' with terms, e.g. 'msr/config=0x1/'\n");
  CHECK(test::error_of("L1-icache-stores", skx()) ==
        "event syntax error: 'L1-icache-stores'\n"
        "                     \\___ invalid cache event 'L1-icache-stores': the L1-icache cache has no "
        "store events (the kernel's generic cache table has none)\n");
}

TEST_CASE("ARM: core PMU aliases and formats") {
  CHECK(one("armv8_pmuv3_0/cpu_cycles/", arm()) == "type=10 config=0x11");
  CHECK(one("inst_retired", arm()) == "type=10 config=0x8");
  CHECK(one("armv8_pmuv3_0/event=0x11,long/", arm()) == "type=10 config=0x11 config1=0x1");
  CHECK(one("arm_spe_0/ts_enable,load_filter,min_latency=20/", arm()) ==
        "type=11 config=0x200000001 config2=0x14");
  CHECK(one("cycles", arm()) == "type=0");
}

TEST_CASE("super-linear inputs stay fast (generous bounds; found by fuzzing)") {
  auto ms = [](auto&& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::string huge(100000, 'a');
  CHECK(ms([&] { test::error_of(huge, skx()); }) < 2000);  // no suggestions for it
  CHECK(ms([&] { test::error_of("cpu/event=" + huge + "/", skx()); }) < 2000);
  std::string many;
  for (int i = 0; i < 10000; ++i) many += fmt::format("{}cpu/event={}/", i ? "," : "", i % 256);
  CHECK(ms([&] { CHECK(perfspec::resolve(many, skx()).events.size() == 10000); }) < 5000);
  std::string braces(10000, '{');
  CHECK(ms([&] { CHECK_FALSE(test::error_of(braces, skx()).empty()); }) < 2000);
  std::string group = "{";
  for (int i = 0; i < 1000; ++i) group += fmt::format("{}cpu/event={}/", i ? "," : "", i % 256);
  group += "}:W";
  CHECK(ms([&] { CHECK(perfspec::resolve(group, skx()).groups.size() == 1); }) < 2000);
  std::string glob = "sched:";
  for (int i = 0; i < 60; ++i) glob += "*?";
  CHECK(ms([&] { test::error_of(glob, skx()); }) < 2000);
  std::string terms = "cpu/";
  for (int i = 0; i < 10000; ++i)
    terms += fmt::format("{}{}={}", i ? "," : "", i % 2 ? "umask" : "event", i % 256);
  terms += "/";
  // The last event= and umask= win: 9998 % 256 = 14, 9999 % 256 = 15.
  CHECK(ms([&] { CHECK(perfspec::resolve(terms, skx()).events.at(0).attr.config == 0x0f0e); }) < 2000);
  std::string pmu_glob;
  for (int i = 0; i < 1000; ++i) pmu_glob += "*?";
  CHECK(ms([&] {
          CHECK(test::error_of(pmu_glob + "/event=1/", skx()).find("unknown PMU") != std::string::npos);
        }) < 2000);
}

TEST_CASE("clear(): a reused event or group is default-constructed again, its strings keep their storage") {
  perfspec::ResolvedEvent e =
      perfspec::resolve("uncore_imc_0/cas_count_read,name=a_long_name_beyond_the_small_string/u", skx())
          .events[0];
  e.metric_id = e.driver_config = e.cpus = std::string(40, 'x');
  e.placement.cpus = std::string(40, 'c');
  e.placement.missing = e.bpf_counter = e.retire_latency = e.precise_max = e.percore = e.per_pkg =
      e.snapshot = true;
  e.group = e.leader = 7;
  e.span = perfspec::Span{1, 2};
  const char* name_storage = e.name.data();
  e.clear();
  const perfspec::ResolvedEvent fresh;
  CHECK(e.name.empty());
  CHECK(e.name.data() == name_storage);  // the buffer was handed back
  CHECK(test::attr_summary(e.attr) == test::attr_summary(fresh.attr));
  CHECK(e.attr.size == fresh.attr.size);
  CHECK(e.pmu == fresh.pmu);
  CHECK(e.placement == fresh.placement);
  CHECK(e.unit == fresh.unit);
  CHECK(e.scale == fresh.scale);
  CHECK(e.metric_id == fresh.metric_id);
  CHECK(e.driver_config == fresh.driver_config);
  CHECK(e.cpus == fresh.cpus);
  CHECK(e.group == 0);
  CHECK(e.leader == 0);
  CHECK(e.span == perfspec::Span{});
  CHECK_FALSE((e.per_pkg || e.snapshot || e.bpf_counter || e.retire_latency || e.precise_max || e.percore));
  perfspec::EventGroup g{"name_of_a_group_longer_than_fifteen", {1, 2, 3}, true, true};
  const std::size_t* members = g.members.data();
  g.clear();
  CHECK(g.name.empty());
  CHECK(g.members.empty());
  CHECK(g.members.data() == members);
  CHECK_FALSE((g.braces || g.weak));
}

TEST_CASE("an error's kind says what is wrong") {
  using perfspec::ErrorKind;
  auto kind_of = [](std::string_view text, const Machine& m) {
    try {
      perfspec::resolve(text, m);
    } catch (const perfspec::Error& e) {
      return e.kind();
    }
    FAIL("resolved: " << text);
    return ErrorKind::usage;
  };
  CHECK(kind_of("cycles,", skx()) == ErrorKind::syntax);
  CHECK(kind_of("cycles:uu", skx()) == ErrorKind::syntax);
  CHECK(kind_of("cycles:zz", skx()) == ErrorKind::unknown_name);  // a tracepoint sys:name
  CHECK(kind_of("nosuchpmu/event=1/", skx()) == ErrorKind::unknown_name);
  CHECK(kind_of("cpu/umsk=1/", skx()) == ErrorKind::unknown_name);
  CHECK(kind_of("no_such_event_name", skx()) == ErrorKind::unknown_name);
  CHECK(kind_of("cpu/event=0x1ff/", skx()) == ErrorKind::bad_value);
  CHECK(kind_of("{cycles:D,instructions:D}", skx()) == ErrorKind::bad_value);
  CHECK(perfspec::error_kind_name(ErrorKind::machine) == "machine description");
}

TEST_CASE("EventSet::append renumbers the appended set's leaders, groups and members") {
  perfspec::EventSet all = perfspec::resolve("cycles,{instructions,branches}", skx());
  all.append(perfspec::resolve("{cache-misses,cache-references},page-faults", skx()));
  REQUIRE(all.events.size() == 6);
  REQUIRE(all.groups.size() == 4);
  CHECK(all.groups[2].members == std::vector<std::size_t>{3, 4});
  CHECK(all.groups[3].members == std::vector<std::size_t>{5});
  CHECK(all.events[4].leader == 3);
  CHECK(all.events[4].group == 2);
  CHECK(all.events[5].leader == 5);
  CHECK(all.events[5].group == 3);
  CHECK(all.events[1].leader == 1);  // the first set's own numbers stay
}

TEST_CASE("an unknown term: the closest terms and event names of the PMU, and generic events are no terms") {
  CHECK(test::error_of("cpu/event=0x3c,umsk=1/", skx()) ==
        "event syntax error: 'cpu/event=0x3c,umsk=1/'\n"
        "                                    \\___ unknown term 'umsk' for pmu 'cpu'\n"
        "help: did you mean 'umask' or 'cmask'?\n"
        "valid terms: "
        "any,cmask,edge,event,frontend,in_tx,in_tx_cp,inv,ldlat,offcore_rsp,pc,umask,config,config1,"
        "config2,config3,name,period,freq,branch_type,time,call-graph,stack-size,max-stack,nr,inherit,no-"
        "inherit,"
        "overwrite,no-overwrite,percore,aux-output,aux-sample-size,metric-id,cpu\n");
  // An event name of the PMU (a sysfs alias) is a candidate too.
  CHECK(test::error_of("cpu/mem-lods/", skx()).find("help: did you mean 'mem-loads'") != std::string::npos);
  // perf 6.12 rejects these too ("Bad event or PMU"); the help says what was meant.
  CHECK(
      test::error_of("software/task-clock/", skx()) ==
      "event syntax error: 'software/task-clock/'\n"
      "                              \\___ unknown term 'task-clock' for pmu 'software'\n"
      "help: 'task-clock' is a generic software event, not an event of pmu 'software': write it on its own, "
      "e.g. 'task-clock'\n");
  CHECK(test::error_of("msr/cycles/", skx())
            .find("'cycles' is a generic hardware event, not an event of pmu "
                  "'msr'") != std::string::npos);
}

namespace perfspec {
TEST_CASE("perf's tool events: duration_time, user_time, system_time resolve to the tool PMU, never opened") {
  spec::Machine m(test::fixture("intel_skx"));
  auto set = resolve("duration_time,user_time,system_time", m);
  REQUIRE(set.events.size() == 3);
  CHECK(set.events[0].tool == ToolEvent::duration_time);
  CHECK(set.events[1].tool == ToolEvent::user_time);
  CHECK(set.events[2].tool == ToolEvent::system_time);
  CHECK(set.events[0].pmu == "tool");
  CHECK(set.events[0].unit == "ns");
  // As perf 6.12 encodes them (perf-attrs --current user_time: type 1, config 9, a software dummy).
  CHECK(set.events[0].attr.type == 1);
  CHECK(set.events[0].attr.config == 9);
  CHECK(resolve("cycles", m).events[0].tool == ToolEvent::none);
  // Counters opens nothing for them: not supported, with why.
  auto counters =
      runtime::Counters::open(resolve("duration_time,task-clock", m), runtime::Target::self_thread());
  CHECK(counters.open_fds() == 1);
  auto counts = counters.read();
  CHECK(counts[0].state == runtime::Count::State::not_supported);
  REQUIRE(counts[0].failure);
  CHECK(counts[0].failure->name == "tool event");
}
}  // namespace perfspec

namespace {
// The groups of a set in order, as perf 6.12's stat -vv shows them by their group_fd: a group of several
// in braces, an event alone by its name.
std::string groups_of(const perfspec::EventSet& set) {
  std::string out;
  for (const auto& g : set.groups) {
    if (!out.empty()) out += ' ';
    if (g.members.size() > 1) out += '{';
    for (std::size_t k = 0; k < g.members.size(); ++k) out += (k ? "," : "") + set.events[g.members[k]].name;
    if (g.members.size() > 1) out += '}';
  }
  return out;
}
// A kernel of `n` online CPUs, for the CPUs an event counts on system-wide.
struct OnlineCpus final : perfspec::runtime::Syscalls {
  int n;
  explicit OnlineCpus(int count) : n(count) {}
  int perf_event_open(const perfspec::Attr&, int, int, int, unsigned long) override { return -ENOSYS; }
  long read(int, void*, std::size_t) override { return -ENOSYS; }
  int ioctl(int, unsigned long, unsigned long) override { return -ENOSYS; }
  int close(int) override { return 0; }
  void* mmap(int, std::size_t, int) override { return nullptr; }
  int munmap(void*, std::size_t) override { return 0; }
  std::vector<int> online_cpus() override {
    std::vector<int> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
    return v;
  }
};
// Resolved, then the CPU check of perf stat for a task (""), -a ("-a") or -C LIST ("-C 0"): the groups,
// then " | " and perf's warning's group descriptions.
std::string stat_groups(std::string_view text, const Machine& m, std::string_view target, int cpus = 56) {
  auto set = perfspec::resolve(text, m);
  namespace rt = perfspec::runtime;
  rt::Target t = target.empty()   ? rt::Target::self_thread()
                 : target == "-a" ? rt::Target::system_wide()
                                  : rt::Target::system_wide(perfspec::spec::parse_cpu_list(target.substr(3)));
  OnlineCpus sys(cpus);
  auto warned = rt::ungroup_by_cpus(set, t, sys);
  std::string out = groups_of(set);
  for (const auto& w : warned)
    if (w.first) out += " | " + perfspec::ungrouped_group_text(w);
  return out;
}
}  // namespace

TEST_CASE("groups as perf 6.12 splits them: which PMUs share a group (perf_pmu__is_software)") {
  // Each expectation is perf 6.12's own (stat -vv's group_fd, on these fixtures).
  // msr runs in the kernel's software context: it joins a group of any PMU, leading or not.
  CHECK(groups_of(perfspec::resolve("{cycles,msr/tsc/,cpu/event=0xc0/}", skx())) ==
        "{cycles,msr/tsc/,cpu/event=0xc0/}");
  CHECK(groups_of(perfspec::resolve("{msr/tsc/,cycles,instructions}", skx())) ==
        "{msr/tsc/,cycles,instructions}");
  CHECK(groups_of(perfspec::resolve("{task-clock,msr/tsc/,cycles}", skx())) ==
        "{task-clock,msr/tsc/,cycles}");
  CHECK(
      groups_of(perfspec::resolve("{cycles,task-clock,sched:sched_switch,msr/tsc/,mem:0x1000:rw}", skx())) ==
      "{cycles,task-clock,sched:sched_switch,msr/tsc/,mem:0x1000:rw}");
  CHECK(groups_of(perfspec::resolve("{sched:sched_switch,cycles,instructions}", skx())) ==
        "{sched:sched_switch,cycles,instructions}");
  CHECK(groups_of(perfspec::resolve("{mem:0x1000:rw,cycles,instructions}", skx())) ==
        "{mem:0x1000:rw,cycles,instructions}");
  // software events with no other PMU keep their own PMUs' names: split by them, in their order
  CHECK(groups_of(perfspec::resolve("{task-clock,page-faults,msr/tsc/,sched:sched_switch}", skx())) ==
        "msr/tsc/ {task-clock,page-faults} sched:sched_switch");
  CHECK(groups_of(perfspec::resolve("{sched:sched_switch,task-clock,page-faults}", skx())) ==
        "{task-clock,page-faults} sched:sched_switch");
  CHECK(groups_of(perfspec::resolve("{mem:0x1000:rw,task-clock}", skx())) == "mem:0x1000:rw task-clock");
  CHECK(groups_of(perfspec::resolve("{sched:sched_switch,msr/tsc/}", skx())) ==
        "msr/tsc/ sched:sched_switch");
  // a software leader: its group's PMU is its first member of another
  CHECK(groups_of(perfspec::resolve("{msr/tsc/,uncore_imc_0/clockticks/}", skx())) ==
        "{msr/tsc/,uncore_imc_0/clockticks/}");
  CHECK(groups_of(perfspec::resolve("{task-clock,uncore_imc_0/clockticks/,cycles}", skx())) ==
        "cycles {task-clock,uncore_imc_0/clockticks/}");
  CHECK(groups_of(perfspec::resolve("{cycles,uncore_imc_0/clockticks/,instructions}", skx())) ==
        "{cycles,instructions} uncore_imc_0/clockticks/");
  CHECK(groups_of(perfspec::resolve("{cycles,task-clock,uncore_imc_0/clockticks/,msr/tsc/}", skx())) ==
        "{cycles,task-clock,msr/tsc/} uncore_imc_0/clockticks/");
  // PMUs of their own in name order; an AUX tracer's group takes every PMU
  CHECK(groups_of(perfspec::resolve("{uncore_imc_0/clockticks/,uncore_cha_0/event=0/}", skx())) ==
        "uncore_cha_0/event=0/ uncore_imc_0/clockticks/");
  CHECK(groups_of(perfspec::resolve("{intel_pt//,cycles}", skx())) == "{intel_pt//,cycles}");
  CHECK(groups_of(perfspec::resolve("{kprobe/config=0/,cycles}", skx())) == "{kprobe/config=0/,cycles}");
  // hybrid: each core PMU its own group, cpu_atom first
  CHECK(groups_of(perfspec::resolve("{cpu_core/cycles/,cpu_atom/cycles/}", adl())) ==
        "cpu_atom/cycles/ cpu_core/cycles/");
  CHECK(groups_of(perfspec::resolve("{task-clock,cpu_core/cycles/,cpu_atom/cycles/}", adl())) ==
        "cpu_atom/cycles/ {task-clock,cpu_core/cycles/}");
  // perf warns "events were regrouped to match PMUs" when a group was split or reordered, not when a PMU
  // name matched several PMUs
  CHECK(perfspec::resolve("{task-clock,page-faults,msr/tsc/}", skx()).regrouped);
  CHECK(!perfspec::resolve("{cycles,msr/tsc/,instructions}", skx()).regrouped);
  CHECK(!perfspec::resolve("{uncore_imc/clockticks/,task-clock}", skx()).regrouped);
  CHECK(perfspec::resolve("{task-clock,clockticks}", skx()).regrouped);  // an alias on several PMUs
}

TEST_CASE("perf stat's CPU check: a member counting on other CPUs than its leader counts alone") {
  // perf 6.12 stat on the same fixtures: per thread, -a, -C 0
  CHECK(stat_groups("{task-clock,uncore_imc_0/clockticks/}", skx(), "") ==
        "task-clock uncore_imc_0/clockticks/ | anon group { task-clock, uncore_imc_0/clockticks/ }");
  CHECK(stat_groups("{task-clock,uncore_imc_0/clockticks/}", skx(), "-a") ==
        "task-clock uncore_imc_0/clockticks/ | anon group { task-clock, uncore_imc_0/clockticks/ }");
  CHECK(stat_groups("{task-clock,uncore_imc_0/clockticks/}", skx(), "-C 0") ==
        "{task-clock,uncore_imc_0/clockticks/}");
  CHECK(stat_groups("{uncore_imc_0/clockticks/,task-clock}", skx(), "") ==
        "uncore_imc_0/clockticks/ task-clock | anon group { uncore_imc_0/clockticks/, task-clock }");
  CHECK(stat_groups("{msr/tsc/,uncore_imc_0/clockticks/}", skx(), "-C 0") ==
        "{msr/tsc/,uncore_imc_0/clockticks/}");
  CHECK(stat_groups("{msr/tsc/,uncore_imc_0/clockticks/}", skx(), "-a") ==
        "msr/tsc/ uncore_imc_0/clockticks/ | anon group { msr/tsc/, uncore_imc_0/clockticks/ }");
  CHECK(stat_groups("{task-clock,power/energy-pkg/}", skx(), "-a") ==
        "task-clock power/energy-pkg/ | anon group { task-clock, power/energy-pkg/ }");
  // the member leaves where it stands; the others stay a group (a named one keeps its name)
  CHECK(stat_groups("mygrp{task-clock,uncore_imc_0/clockticks/,page-faults}", skx(), "") ==
        "{task-clock,page-faults} uncore_imc_0/clockticks/ | mygrp { task-clock, uncore_imc_0/clockticks/, "
        "page-faults }");
  CHECK(stat_groups("{task-clock,uncore_imc_0/clockticks/,cycles}", skx(), "") ==
        "cycles task-clock uncore_imc_0/clockticks/ | anon group { task-clock, uncore_imc_0/clockticks/ }");
  CHECK(stat_groups("{task-clock,uncore_imc_0/clockticks/,cycles}", skx(), "-C 0") ==
        "cycles {task-clock,uncore_imc_0/clockticks/}");
  // an alias of every uncore_cha and uncore_imc PMU: the first PMU's event is in the software
  // leader's group, which the CPU check splits
  CHECK(stat_groups("{task-clock,clockticks}", skx(), "") ==
        "task-clock clockticks clockticks clockticks clockticks clockticks clockticks clockticks clockticks "
        "clockticks clockticks | anon group { task-clock, clockticks }");
  // duration_time counts on CPU 0 system-wide, on any CPU for a task
  CHECK(stat_groups("{cycles,duration_time}", skx(), "") == "{cycles,duration_time}");
  CHECK(stat_groups("{cycles,duration_time}", skx(), "-a") ==
        "cycles duration_time | anon group { cycles, duration_time }");
  // a hybrid core PMU counts on its own CPUs system-wide: a software event beside it does not
  CHECK(stat_groups("{task-clock,cpu_core/cycles/}", adl(), "", 16) == "{task-clock,cpu_core/cycles/}");
  CHECK(stat_groups("{task-clock,cpu_core/cycles/}", adl(), "-a", 16) ==
        "task-clock cpu_core/cycles/ | anon group { task-clock, cpu_core/cycles/ }");
  CHECK(stat_groups("{task-clock,cpu_core/cycles/}", adl(), "-C 0", 16) == "{task-clock,cpu_core/cycles/}");
  CHECK(stat_groups("{cpu_core/cycles/,msr/tsc/}", adl(), "-a", 16) ==
        "cpu_core/cycles/ msr/tsc/ | anon group { cpu_core/cycles/, msr/tsc/ }");
  // nothing to change: nothing said
  CHECK(stat_groups("{cycles,instructions,task-clock}", skx(), "-a") == "{cycles,instructions,task-clock}");
  // perf's words, and with -v each member's CPUs and its leader's (as perf's cpu_map__snprint writes them)
  auto set = perfspec::resolve("{task-clock,clockticks,page-faults}", skx());
  OnlineCpus sys(56);
  auto taken = perfspec::runtime::ungroup_by_cpus(set, perfspec::runtime::Target::system_wide(), sys);
  CHECK(
      perfspec::ungroup_warning(taken) ==
      "WARNING: grouped events cpus do not match.\nEvents with CPUs not matching the leader will be removed "
      "from the group.\n  anon group { task-clock, clockticks, page-faults }\n");
  CHECK(
      perfspec::ungroup_warning(taken, true) ==
      "WARNING: grouped events cpus do not match.\nEvents with CPUs not matching the leader will be removed "
      "from the group.\n  anon group { task-clock, clockticks, page-faults }\n"
      "     task-clock: 0-55\n     clockticks: 0,28\n");
  CHECK(groups_of(set).starts_with("{task-clock,page-faults} clockticks clockticks"));
}

TEST_CASE("topdown events written alone are gathered into one group led by slots, as perf 6.12 does") {
  static Machine spr(test::fixture("intel_spr"), test::no_libpfm4());
  auto set = perfspec::resolve("cpu/topdown-retiring/,cpu/slots/", spr);
  CHECK(groups_of(set) == "{cpu/slots/,cpu/topdown-retiring/}");
  CHECK(set.regrouped);
  CHECK(set.events[1].leader == 0);
  // where the first of them stood, the others as written; a braced group keeps its own
  set = perfspec::resolve(
      "cycles,cpu/topdown-retiring/,{instructions,cycles},cpu/slots/,cpu/topdown-bad-spec/", spr);
  CHECK(groups_of(set) ==
        "cycles {cpu/slots/,cpu/topdown-retiring/,cpu/topdown-bad-spec/} {instructions,cycles}");
  for (std::size_t g = 0; g < set.groups.size(); ++g)
    for (std::size_t m : set.groups[g].members) {
      CHECK(set.events[m].group == g);
      CHECK(set.events[m].leader == set.groups[g].members.front());
    }
  // one alone is left alone
  CHECK(groups_of(perfspec::resolve("cpu/topdown-retiring/,cycles", spr)) == "cpu/topdown-retiring/ cycles");
  CHECK(!perfspec::resolve("cpu/topdown-retiring/,cycles", spr).regrouped);
}
