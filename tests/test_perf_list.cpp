// SPDX-License-Identifier: MIT
// `perf list -j`'s entries (spec::perf_list) and document (perf_list_json): the objects below are perf
// 6.12's own, from `PERF_CPUID=GenuineIntel-6-55-4 perf --sysfs tests/fixtures/intel_skx list -j`;
// tests/cli/perf_list_side_by_side.py compares whole documents with perf 6.12 where it can run.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "perfspec/catalog.hpp"
#include "perfspec/print.hpp"
#include "spec/perf_metric_expr.hpp"
#include "support.hpp"

using namespace perfspec;

namespace {

std::string skx_events() { return test::source_dir() + "/../shared/pmu-events/x86"; }

// One entry of perf's document, as the lines perf writes for it (no separators around it).
std::string object(const spec::PerfListEntry& e) {
  std::string doc = perf_list_json({e});
  return doc.substr(2, doc.size() - 5);  // without "[\n" and "\n]\n"
}

const spec::PerfListEntry* named(const std::vector<spec::PerfListEntry>& all, std::string_view name) {
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& e) { return !e.metric && e.name == name; });
  return it == all.end() ? nullptr : &*it;
}

auto none = [](std::uint32_t, std::uint64_t) { return false; };

}  // namespace

TEST_CASE("perf list -j: a Skylake-X machine's PMU events, raw descriptors and metrics as perf 6.12's") {
  if (!std::filesystem::exists(skx_events() + "/mapfile.csv")) return;
  spec::MachineOptions o = test::no_libpfm4();
  o.events_dir = skx_events();
  o.cpuid = "GenuineIntel-6-55-4";
  o.cache_dir = "none";
  spec::Machine m(test::fixture("intel_skx"), o);
  // the software events open (as on the host perf ran on)
  auto all =
      spec::perf_list(m, spec::perf_list_all, [](std::uint32_t type, std::uint64_t) { return type == 1; });
  // perf's count but for the tracepoints (which perf read from its host's tracefs)
  CHECK(std::count_if(all.begin(), all.end(), [](const auto& e) { return e.type != "Tracepoint event"; }) ==
        2985);
  REQUIRE(named(all, "ref-cycles"));
  CHECK(object(*named(all, "ref-cycles")) ==
        "{\n\t\"Unit\": \"cpu\",\n\t\"EventName\": \"ref-cycles\",\n\t\"EventAlias\": \"cpu/ref-cycles/\",\n"
        "\t\"EventType\": \"Kernel PMU event\",\n\t\"Encoding\": \"cpu/event=0,umask=0x3/\"\n}");
  REQUIRE(named(all, "uncore_imc_0/cas_count_read/"));
  CHECK(object(*named(all, "uncore_imc_0/cas_count_read/")) ==
        "{\n\t\"Unit\": \"uncore_imc_0\",\n\t\"EventName\": \"uncore_imc_0/cas_count_read/\",\n"
        "\t\"EventType\": \"Kernel PMU event\",\n\t\"Encoding\": \"uncore_imc_0/event=0x4,umask=0x3/\"\n}");
  REQUIRE(named(all, "l2_lines_out.useless_pref"));
  CHECK(
      object(*named(all, "l2_lines_out.useless_pref")) ==
      "{\n\t\"Unit\": \"cpu\",\n\t\"Topic\": \"cache\",\n\t\"EventName\": \"l2_lines_out.useless_pref\",\n"
      "\t\"EventType\": \"Kernel PMU event\",\n\t\"Deprecated\": \"1\",\n"
      "\t\"BriefDescription\": \"This event is deprecated. Refer to new event L2_LINES_OUT.USELESS_HWPF\",\n"
      "\t\"PublicDescription\": \"This event is deprecated. Refer to new event L2_LINES_OUT.USELESS_HWPF\",\n"
      "\t\"Encoding\": \"cpu/event=0xf2,period=0x30d43,umask=0x4/\"\n}");
  // A table's uncore event: once, under its unit's name, for the six uncore_imc_N PMUs.
  CHECK(std::count_if(all.begin(), all.end(),
                      [](const auto& e) { return e.name == "llc_misses.mem_read"; }) == 1);
  REQUIRE(named(all, "llc_misses.mem_read"));
  const auto& llc = *named(all, "llc_misses.mem_read");
  CHECK(llc.pmu_name == "uncore_imc");
  CHECK(llc.scale_unit == "64Bytes");
  CHECK(llc.encoding == "uncore_imc/event=0x4,umask=0x3/");
  // Raw descriptors: a core PMU's formats (in the folder's order) and perf's terms; one per instance.
  const auto cpu = std::find_if(all.begin(), all.end(), [](const auto& e) {
    return e.type == "Raw event descriptor" && e.name.starts_with("cpu/");
  });
  REQUIRE(cpu != all.end());
  CHECK(cpu->desc == "(see 'man perf-list' or 'man perf-record' on how to encode it)");
  // the formats in the folder's readdir order (the filesystem's, so not checked here: the side by
  // side reads the same folder with perf), then perf's terms for a core PMU, in its order
  const std::string builtin =
      ",config=0..0xffffffffffffffff,config1=0..0xffffffffffffffff,config2=0..0xffffffffffffffff,"
      "config3=0..0xffffffffffffffff,name=string,period=number,freq=number,branch_type=(u|k|hv|any|...),time,"
      "call-graph=(fp|dwarf|lbr),stack-size=number,max-stack=number,nr=number,inherit,no-inherit,overwrite,"
      "no-overwrite,percore,aux-output,aux-sample-size=number/modifier";
  REQUIRE(cpu->encoding->ends_with(builtin));
  const std::string formats = cpu->encoding->substr(4, cpu->encoding->size() - builtin.size() - 4);
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= formats.size();) {
    const std::size_t comma = std::min(formats.find(',', at), formats.size());
    parts.push_back(formats.substr(at, comma - at));
    at = comma + 1;
  }
  CHECK(cpu->name == "cpu/" + parts[0] + "," + parts[1] + "," + parts[2] + ",.../modifier");
  std::sort(parts.begin(), parts.end());
  CHECK(parts == std::vector<std::string>{"any", "cmask=0..255", "edge", "event=0..255",
                                          "frontend=0..0xffffff", "in_tx", "in_tx_cp", "inv",
                                          "ldlat=0..0xffff", "offcore_rsp=0..0xffffffffffffffff", "pc",
                                          "umask=0..255"});
  CHECK(std::count_if(all.begin(), all.end(), [](const auto& e) {
          return e.type == "Raw event descriptor" && e.name.starts_with("uncore_imc/");
        }) == 6);
  // Metrics: one per (group, metric), sorted by group then name.
  const auto first = std::find_if(all.begin(), all.end(), [](const auto& e) { return e.metric; });
  REQUIRE(first != all.end());
  CHECK(std::count_if(all.begin(), all.end(), [](const auto& e) { return e.metric; }) == 820);
  CHECK(
      object(*first).starts_with("{\n\t\"MetricGroup\": \"Backend\",\n\t\"MetricName\": \"tma_core_bound\",\n"
                                 "\t\"MetricExpr\": \"tma_backend_bound - tma_memory_bound\",\n"
                                 "\t\"MetricThreshold\": \"tma_core_bound > 0.1 & tma_backend_bound > "
                                 "0.2\",\n\t\"ScaleUnit\": \"100%\",\n"
                                 "\t\"BriefDescription\": \"This metric represents fraction of slots where "
                                 "Core non-memory issues were of a "
                                 "bottleneck\",\n\t\"PublicDescription\": \"This metric represents fraction "
                                 "of slots where Core non-memory "
                                 "issues were of a bottleneck.  Shortage in hardware compute resources"));
}

TEST_CASE("perf list -j: generic events are those that open, sorted as perf sorts them") {
  spec::Machine m(test::fixture("intel_skx"), test::no_libpfm4());
  std::vector<std::pair<std::uint32_t, std::uint64_t>> asked;
  auto opens = [&](std::uint32_t type, std::uint64_t config) {
    asked.emplace_back(type, config);
    return type != 1 || config != 11;  // cgroup-switches does not open (a kernel before 5.13)
  };
  auto all =
      spec::perf_list(m, spec::perf_list_hardware | spec::perf_list_software | spec::perf_list_cache, opens);
  std::vector<std::string> names;
  for (const auto& e : all) names.push_back(e.alias ? e.name + " OR " + *e.alias : e.name);
  REQUIRE(names.size() == 10 + 11 + 3 + 32);
  CHECK(std::vector(names.begin(), names.begin() + 10) ==
        std::vector<std::string>{"branch-instructions OR branches", "branch-misses", "bus-cycles",
                                 "cache-misses", "cache-references", "cpu-cycles OR cycles", "instructions",
                                 "ref-cycles", "stalled-cycles-backend OR idle-cycles-backend",
                                 "stalled-cycles-frontend OR idle-cycles-frontend"});
  CHECK(std::vector(names.begin() + 10, names.begin() + 24) ==
        std::vector<std::string>{"alignment-faults", "bpf-output", "context-switches OR cs", "cpu-clock",
                                 "cpu-migrations OR migrations", "dummy", "emulation-faults", "major-faults",
                                 "minor-faults", "page-faults OR faults", "task-clock", "duration_time",
                                 "user_time", "system_time"});
  CHECK(all[21].topic == "tool");
  CHECK(all[24].name == "L1-dcache-loads");
  CHECK(all[24].alias == "cpu/L1-dcache-loads/");
  CHECK(all[25].name == "L1-dcache-load-misses");
  CHECK(all.back().name == "node-prefetch-misses");
  // perf's probe of each: the ten hardware events, the twelve software ones, the 32 cache configs
  // (L1-dcache-loads is 0; node-prefetch-misses is 0x10206)
  REQUIRE(asked.size() == 10 + 12 + 32);
  CHECK(asked[22] == std::pair<std::uint32_t, std::uint64_t>{3, 0});
  CHECK(asked.back() == std::pair<std::uint32_t, std::uint64_t>{3, 0x10206});
}

TEST_CASE("perf list -j: the document's bytes; control characters escaped where perf writes them raw") {
  CHECK(perf_list_json({}) == "[\n]\n");
  spec::PerfListEntry e;
  e.name = "a\"b\\c";
  e.type = "Tool event";
  e.topic = "tool";
  e.desc = "one\ttwo\nthree\r";
  e.alias = "";  // an empty alias is not written, as perf does not write it
  CHECK(
      perf_list_json({e, e}) ==
      "[\n{\n\t\"Topic\": \"tool\",\n\t\"EventName\": \"a\\\"b\\\\c\",\n\t\"EventType\": \"Tool event\",\n"
      "\t\"BriefDescription\": \"one\\u0009two\\nthree\\r\"\n},\n{\n\t\"Topic\": \"tool\",\n\t\"EventName\": "
      "\"a\\\"b\\\\c\",\n\t\"EventType\": \"Tool event\",\n\t\"BriefDescription\": "
      "\"one\\u0009two\\nthree\\r\"\n}\n]\n");
  spec::PerfListEntry m;
  m.metric = true;
  m.group = "g";
  m.name = "n";
  m.expr = "a / b";
  m.unit = "100%";
  m.long_desc = "long";
  CHECK(perf_list_json({m}) ==
        "[\n{\n\t\"MetricGroup\": \"g\",\n\t\"MetricName\": \"n\",\n\t\"MetricExpr\": \"a / b\",\n"
        "\t\"ScaleUnit\": \"100%\",\n\t\"PublicDescription\": \"long\"\n}\n]\n");
}

TEST_CASE("perf list -j: PMUs in perf's order, instance suffixes, terms printed again, metric groups") {
  test::TempTree tree;
  for (auto [name, type] :
       {std::pair{"uncore_imc_10", 20u}, {"uncore_imc_2", 21u}, {"cpum_cf", 22u}, {"msr", 9u}})
    tree.pmu(name, type);
  tree.write("bus/event_source/devices/uncore_imc_10/cpumask", "0\n");
  tree.write("bus/event_source/devices/uncore_imc_2/cpumask", "0\n");
  tree.write("bus/event_source/devices/msr/format/event", "config:0-63\n");
  tree.write("bus/event_source/devices/msr/events/smi", "event=0x04\n");
  tree.write("bus/event_source/devices/msr/events/odd", "event=0x00,flag,mode=fast\n");
  tree.write("bus/event_source/devices/uncore_imc_2/format/umask", "config:8-15\n");
  tree.write("bus/event_source/devices/uncore_imc_10/format/umask", "config:8-15\n");
  spec::Machine m(tree.root(), test::no_libpfm4());
  auto all = spec::perf_list(m, spec::perf_list_pmu | spec::perf_list_raw, none);
  std::vector<std::string> names;
  for (const auto& e : all) names.push_back(e.name + " | " + e.encoding.value_or("-"));
  // cpum_cf is a core PMU (s390's; no cpus file needed) and keeps its `_cf`: two hex digits are no
  // instance; uncore_imc_2 before uncore_imc_10 (instances compare as numbers), both shown as
  // uncore_imc in the descriptors
  CHECK(names ==
        std::vector<std::string>{
            "msr/odd,mode=fast/ | msr/event=0,flag,mode=fast/", "msr/smi/ | msr/event=0x4/", "rNNN | -",
            "cpum_cf/config=0..0xffffffffffffffff,config1=0..0xffffffffffffffff,config2=0..0xffffffffffffffff"
            ",.../modifier | cpum_cf/config=0..0xffffffffffffffff,config1=0..0xffffffffffffffff,"
            "config2=0..0xffffffffffffffff,config3=0..0xffffffffffffffff,name=string,period=number,"
            "freq=number,branch_type=(u|k|hv|any|...),time,call-graph=(fp|dwarf|lbr),stack-size=number,"
            "max-stack=number,nr=number,inherit,no-inherit,overwrite,no-overwrite,percore,aux-output,"
            "aux-sample-size=number/modifier",
            "msr/event=0..0xffffffffffffffff/modifier | msr/event=0..0xffffffffffffffff/modifier",
            "uncore_imc/umask=0..255/modifier | uncore_imc/umask=0..255/modifier",
            "uncore_imc/umask=0..255/modifier | uncore_imc/umask=0..255/modifier"});
  CHECK(all[0].pmu_name == "msr");
  CHECK(!all[0].alias);
}

TEST_CASE("perf_metric_expr: a MetricExpr as perf 6.12's build prints it again (pmu-events/metric.py)") {
  using spec::perf_metric_expr;
  CHECK(perf_metric_expr("(UNC_M_POWER_CHANNEL_PPD / UNC_M_CLOCKTICKS) * 100") ==
        "UNC_M_POWER_CHANNEL_PPD / UNC_M_CLOCKTICKS * 100");
  CHECK(perf_metric_expr("d_ratio(umc_act_cmd.all * 1000, umc_mem_clk)") ==
        "d_ratio(umc_act_cmd.all * 1e3, umc_mem_clk)");
  CHECK(perf_metric_expr("(l3_xi_sampled_latency.all * 10) / l3_xi_sampled_latency_requests.all") ==
        "l3_xi_sampled_latency.all * 10 / l3_xi_sampled_latency_requests.all");
  CHECK(perf_metric_expr("d_ratio((6 * cpu@de_no_dispatch_per_slot.no_ops_from_frontend\\,cmask\\=0x6@), "
                         "total_dispatch_slots)") ==
        "d_ratio(6 * cpu@de_no_dispatch_per_slot.no_ops_from_frontend\\,cmask\\=0x6@, total_dispatch_slots)");
  CHECK(perf_metric_expr("max(cycles\\-t - cycles\\-ct, 0) / cycles if has_event(cycles\\-t) else 0") ==
        "(max(cycles\\-t - cycles\\-ct, 0) / cycles if has_event(cycles\\-t) else 0)");
  // Python's arithmetic on numbers, Simplify's rules, numbers as Decimal writes them
  CHECK(perf_metric_expr("a * (2 * 500)") == "a * 1e3");
  CHECK(perf_metric_expr("a * 1 + 0") == "a");
  CHECK(perf_metric_expr("0 * slots + b") == "0 * slots + b");
  CHECK(perf_metric_expr("a / (b * c)") == "a / (b * c)");
  CHECK(perf_metric_expr("a - (b - c)") == "a - (b - c)");
  CHECK(perf_metric_expr("(a - b) - c") == "a - b - c");
  CHECK(perf_metric_expr("a * 0.0000001 + b * 100 + c * 0.5 + d * 2000003 + e * 1e9") ==
        "a * 100e-9 + b * 100 + c * 0.5 + d * 2000003 + e * 1e9");
  CHECK_FALSE(perf_metric_expr("a * 1e-7"));  // metric.py's substitutions take only `e` and digits back
  CHECK(perf_metric_expr("(a if #smt_on else b) * 2") == "(a if #smt_on else b) * 2");
  CHECK(perf_metric_expr("a if 1 else b") == "a");
  CHECK(perf_metric_expr("cpu@INST_RETIRED.ANY@ / 0x1F") == "cpu@INST_RETIRED.ANY@ / 0x1F");
  CHECK_FALSE(perf_metric_expr("-a"));         // no Expression has __neg__: perf's build fails
  CHECK_FALSE(perf_metric_expr("min(1, 2)"));  // Simplify hands it to ast.literal_eval, which refuses it
}

TEST_CASE("perf_metric_expr: long and deep input ends, as perf's build would, without taking the stack") {
  using spec::perf_metric_expr;
  const std::string name(1 << 20, 'a');
  CHECK(perf_metric_expr(name + " / b") == name + " / b");
  CHECK_FALSE(perf_metric_expr(std::string(100000, '(') + "a" + std::string(100000, ')')));
  CHECK(perf_metric_expr(std::string(150, '(') + "a" + std::string(150, ')')) == "a");
  CHECK_FALSE(perf_metric_expr(std::string(100000, '-') + "1"));
  CHECK(perf_metric_expr("a\\,b=c / d") == "a\\,b\\=c / d");  // _FixEscapes: `=` gets its backslash
  CHECK(perf_metric_expr("#smt_on * 2 + 0x10") == "#smt_on * 2 + 0x10");
  CHECK_FALSE(perf_metric_expr(""));
  CHECK_FALSE(perf_metric_expr("a +"));
  CHECK_FALSE(perf_metric_expr("a < b < c"));
}
