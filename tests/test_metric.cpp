// SPDX-License-Identifier: MIT
// Metrics against a machine: literals from sysfs, identifiers to events, other metrics inlined,
// constants folded before events are chosen, groups, and evaluation by hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "perfspec/metric.hpp"
#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using metric::Definition;

namespace {

const spec::Machine& two_socket() {
  static spec::Machine m(test::fixture("two_socket"), test::no_libpfm4());
  return m;
}

const spec::Machine& skx() {
  static spec::Machine m(test::fixture("intel_skx"), test::no_libpfm4());
  return m;
}

Definition def(std::string name, std::string expr, std::string groups = "") {
  Definition d;
  d.name = std::move(name);
  d.expr = std::move(expr);
  d.groups = std::move(groups);
  return d;
}

std::vector<std::string> names(const EventSet& set) {
  std::vector<std::string> out;
  for (const auto& e : set.events) out.push_back(e.name);
  return out;
}

// The rendered MetricError of planning `request`, or "" when it resolves.
std::string plan_error(std::string_view request, const spec::Machine& m, const metric::Options& o = {}) {
  try {
    metric::plan(request, m, o);
  } catch (const metric::MetricError& e) {
    return e.rendered();
  } catch (const Error& e) {
    return render(e, request);
  }
  return "";
}

double eval(std::string_view text, const std::map<std::string, double, std::less<>>& values = {}) {
  return metric::evaluate(metric::parse(text), values);
}

}  // namespace

TEST_CASE("literals: the machine's topology, SMT and caps, as perf computes them") {
  const auto& m = two_socket();  // 2 sockets x 4 cores x 2 threads, CPUs numbered round-robin
  CHECK(m.metric_literal("num_cpus") == 16);
  CHECK(m.metric_literal("num_cpus_online") == 16);
  CHECK(m.metric_literal("num_cores") == 8);
  CHECK(m.metric_literal("num_dies") == 2);
  CHECK(m.metric_literal("num_packages") == 2);
  CHECK(m.metric_literal("smt_on") == 1);
  CHECK(m.metric_literal("SMT_on") == 1);  // the tables write it so: perf ignores case
  CHECK(m.metric_literal("#has_pmem") == 0);
  // core_wide: every SMT sibling of what is counted is counted.
  CHECK(m.metric_literal("core_wide", {}) == 0);  // a command: not system-wide
  CHECK(m.metric_literal("core_wide", {true, {}}) == 1);
  CHECK(m.metric_literal("core_wide", {true, {0, 8}}) == 1);  // cpu8 is cpu0's sibling
  CHECK(m.metric_literal("core_wide", {true, {0}}) == 0);
  CHECK(m.metric_literal("core_wide", {true, {0, 1}}) == 0);
  CHECK_THROWS_WITH_AS(m.metric_literal("slots"), "#slots: no core PMU of this machine has caps/slots",
                       Error);
  CHECK_THROWS_WITH_AS(m.metric_literal("num_things"), "unknown literal '#num_things'", Error);
  CHECK_THROWS_WITH_AS(m.metric_literal("system_tsc_freq"),
                       doctest::Contains("the TSC frequency of the machine under"), Error);
  spec::Machine v2(test::fixture("arm_neoverse_v2"), test::no_libpfm4());
  CHECK(v2.metric_literal("slots") == 8);  // caps/slots holds 0x00000008
  spec::Machine n1(test::fixture("arm_n1"), test::no_libpfm4());
  CHECK_THROWS_WITH_AS(n1.metric_literal("slots"), doctest::Contains("caps/slots is 0"), Error);
}

TEST_CASE("evaluation: perf's operators and precedence; NaN from an input not counted or a division by 0") {
  CHECK(eval("1 + 2 * 3") == 7);
  CHECK(eval("10 - 4 - 3") == 3);
  CHECK(eval("-2 * 3") == -6);
  CHECK(eval("7 % 4") == 3);
  CHECK(eval("1 | 0 & 0") == 1);  // & binds tighter than |
  CHECK(eval("1 ^ 1") == 0);
  CHECK(eval("2 < 3") == 1);
  CHECK(eval("3 > 3") == 0);
  CHECK(eval("1 if 0 else 2 if 1 else 3") == 2);
  CHECK(eval("min(3, 2) + max(3, 2)") == 5);
  CHECK(eval("d_ratio(1, 0)") == 0);
  CHECK(eval("d_ratio(6, 3)") == 2);
  CHECK(std::isnan(eval("1 / 0")));
  CHECK(std::isnan(eval("1 % 0")));
  CHECK(std::isnan(eval("NaN + 1")));
  CHECK(eval("a / b", {{"a", 6}, {"b", 4}}) == 1.5);
  // An input not counted is NaN, and so is everything computed from it, logical operators included.
  CHECK(std::isnan(eval("a | 1", {{"a", NAN}})));
  CHECK(std::isnan(eval("a > 0", {{"a", NAN}})));
  CHECK(eval("a if 0 else 4", {{"a", NAN}}) == 4);  // the branch not taken does not matter
}

TEST_CASE("an ad hoc metric: events grouped, evaluated from counts, scale unit") {
  auto plan = metric::plan("faults_per_msec = page\\-faults / task\\-clock * 1e6", two_socket());
  REQUIRE(plan.metrics.size() == 1);
  CHECK(names(plan.events) == std::vector<std::string>{"page-faults", "task-clock"});
  REQUIRE(plan.events.groups.size() == 1);
  CHECK(plan.events.groups[0].weak);
  CHECK(plan.events.groups[0].members == std::vector<std::size_t>{0, 1});
  CHECK(plan.metrics[0].inputs.at("page-faults") == std::vector<std::size_t>{0});
  std::vector<double> counts{50, 2e6};  // 50 faults in 2 ms
  auto values = metric::evaluate(plan, counts);
  REQUIRE(values.size() == 1);
  CHECK(values[0].value == doctest::Approx(25));
  CHECK(values[0].why.empty());
  // An input that was not counted: NaN, and why.
  std::vector<double> lost{50, NAN};
  std::vector<std::string> why{"", "ENOENT: no such event"};
  values = metric::evaluate(plan, lost, why);
  CHECK(std::isnan(values[0].value));
  CHECK(values[0].why == "'task-clock' was not counted: ENOENT: no such event");
  // A division by zero at run time.
  std::vector<double> zero{50, 0};
  values = metric::evaluate(plan, zero);
  CHECK(std::isnan(values[0].value));
  CHECK(values[0].why == "no number: the expression divides by zero or is NaN");
}

TEST_CASE("folding: literals and if pick the events to open; the branch not taken is never resolved") {
  auto plan = metric::plan("m = task\\-clock if #smt_on else no_such_event", two_socket());
  CHECK(names(plan.events) == std::vector<std::string>{"task-clock"});
  CHECK(plan.metrics[0].folded == std::vector<std::string>{"#smt_on = 1"});
  plan = metric::plan("m = d_ratio(no_such_event, #num_packages - 2) + 1", two_socket());
  // No event left: perf's placeholder, duration_time, is opened to show the metric beside.
  CHECK(names(plan.events) == std::vector<std::string>{"duration_time"});
  CHECK(plan.metrics[0].expr.kind == metric::Expr::Kind::number);
  CHECK(plan.metrics[0].expr.number == 1);
  plan = metric::plan("m = cs * has_event(no_such_event) + source_count(cs)", two_socket());
  CHECK(plan.metrics[0].folded ==
        std::vector<std::string>{"has_event(no_such_event) = 0", "source_count(cs) = 1"});
  CHECK(metric::evaluate(plan, std::vector<double>{7})[0].value == 1);
}

TEST_CASE(
    "references: other metrics are inlined; a cycle and an unknown event are errors in the metric's text") {
  metric::Options o;
  o.extra = {def("ipc", "instructions / cycles", "Summary"),
             def("cpi", "1 / ipc", "Summary"),
             def("a", "b + 1"),
             def("b", "c"),
             def("c", "a * 2"),
             def("bad", "cs + no_such_event")};
  auto plan = metric::plan("cpi", skx(), o);
  CHECK(plan.metrics[0].uses == std::vector<std::string>{"ipc"});
  CHECK(names(plan.events) == std::vector<std::string>{"instructions", "cycles"});
  CHECK(metric::evaluate(plan, std::vector<double>{3000, 1500})[0].value == doctest::Approx(0.5));
  // A group of metrics: both, their events opened once (the second reuses the first's group).
  plan = metric::plan("Summary", skx(), o);
  CHECK(plan.metrics.size() == 2);
  CHECK(plan.events.events.size() == 2);
  CHECK(plan.metrics[1].inputs.at("cycles") == plan.metrics[0].inputs.at("cycles"));
  CHECK(plan_error("a", skx(), o) ==
        "metric 'c': 'a * 2'\n"
        "             \\___ metric 'a' refers to itself: a -> b -> c -> a\n");
  CHECK(plan_error("bad", skx(), o) ==
        "metric 'bad': 'cs + no_such_event'\n"
        "                    \\___ unknown event 'no_such_event'\n");
  CHECK(plan_error("ipc,nosuch", skx(), o) ==
        "metrics: 'ipc,nosuch'\n"
        "              \\___ unknown metric or metric group 'nosuch'\n"
        "help: see perfspec list --metrics\n");
}

// Every metric of perf's tables, on a fixture machine of its model: it resolves, or the reason is an
// event or a literal this machine lacks (never a parse error, a crash or a silent success). The
// counts are pinned, so a change in what resolves shows here.
TEST_CASE("every metric of perf's tables against a fixture of its model") {
  const std::string shared = test::source_dir() + "/../shared/pmu-events";
  if (!std::filesystem::exists(shared)) {
    MESSAGE("no ../shared/pmu-events: skipped");
    return;
  }
  struct Case {
    const char* fixture;
    const char* arch;
    const char* cpuid;
    std::size_t metrics, resolved;
  };
  const Case cases[] = {
      {"intel_skx", "x86", "GenuineIntel-6-55-4", 263, 247},
      {"intel_spr", "x86", "GenuineIntel-6-8F-8", 297, 258},
      {"intel_bdx", "x86", "GenuineIntel-6-4F-1", 182, 161},
      {"intel_knl", "x86", "GenuineIntel-6-57-1", 0, 0},
      {"intel_tgl", "x86", "GenuineIntel-6-8C-1", 222, 222},
      {"intel_gnr", "x86", "GenuineIntel-6-AD-1", 0, 0},
      {"amd_zen3", "x86", "AuthenticAMD-25-1-1", 13, 13},
      {"amd_zen4", "x86", "AuthenticAMD-25-11-1", 75, 75},
      {"arm_n1", "arm64", "0x00000000410fd0c0", 31, 31},
      {"arm_neoverse_v2", "arm64", "0x00000000410fd4f0", 53, 53},
      {"arm_imx8mp", "arm64", "0x00000000410fd030", 58, 58},
      {"power10", "powerpc", "0x00800200", 238, 168},
      {"s390_z16", "s390", "IBM,3931,A01,3.7A,0002", 14, 14},
  };
  for (const auto& c : cases) {
    std::string fixture = c.fixture;
    CAPTURE(fixture);
    spec::MachineOptions o = test::no_libpfm4();
    o.events_dir = shared + "/" + c.arch;
    o.cpuid = c.cpuid;
    spec::Machine m(test::fixture(c.fixture), o);
    auto defs = metric::machine_metrics(m);
    std::size_t resolved = 0;
    std::map<std::string, std::size_t> why;
    for (const auto& d : defs) {
      try {
        metric::Options opts;
        opts.extra = {d};  // this definition (hybrid tables hold a name once per core PMU)
        metric::plan(d.name, m, opts);
        ++resolved;
      } catch (const metric::MetricError& e) {
        // What is missing, without the name: "unknown event", "#slots: ...".
        std::string kind = e.message().substr(0, e.message().find('\''));
        ++why[kind];
        // Only what this machine lacks: an event, a PMU, a term of its PMU, a fact of its sysfs.
        CHECK_MESSAGE((e.kind() == ErrorKind::unknown_name || e.kind() == ErrorKind::machine), e.rendered());
      }
    }
    std::string summary;
    for (const auto& [k, n] : why) summary += fmt::format("  {} x {}\n", n, k);
    MESSAGE(fmt::format("{}: {} metrics, {} resolved\n{}", c.fixture, defs.size(), resolved, summary));
    CHECK(defs.size() == c.metrics);
    CHECK(resolved == c.resolved);
  }
}

// Top-down level 1 on Skylake-X: the four shares are defined so that they sum to 100 % whatever the
// counts; computed from injected counts, each by hand too.
TEST_CASE("TopdownL1 of perf's skylakex tables: each share by hand, and they sum to 100 %") {
  const std::string tables = test::source_dir() + "/../shared/pmu-events/x86";
  if (!std::filesystem::exists(tables)) return;
  spec::MachineOptions o = test::no_libpfm4();
  o.events_dir = tables;
  o.cpuid = "GenuineIntel-6-55-4";
  spec::Machine m(test::fixture("intel_skx"), o);
  auto plan = metric::plan("TopdownL1", m);
  std::vector<std::string> got;
  for (const auto& x : plan.metrics) got.push_back(x.definition.name);
  CHECK(got == std::vector<std::string>{"tma_backend_bound", "tma_bad_speculation", "tma_frontend_bound",
                                        "tma_retiring"});
  // Counts per identifier; not system-wide, so #core_wide is 0 and the per-thread formulas apply.
  const std::map<std::string, double> counts{
      {"IDQ_UOPS_NOT_DELIVERED.CORE", 3000}, {"UOPS_ISSUED.ANY", 9000},
      {"UOPS_RETIRED.RETIRE_SLOTS", 7000},   {"INT_MISC.RECOVERY_CYCLES_ANY", 200},
      {"CPU_CLK_UNHALTED.THREAD", 5000},     {"CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE", 1000},
      {"CPU_CLK_UNHALTED.REF_XCLK", 2000}};
  // The thresholds' inputs (other metrics' events) get a count too; they do not change the values.
  std::vector<double> values(plan.events.events.size(), NAN);
  for (const auto& x : plan.metrics)
    for (const auto& [id, events] : x.inputs)
      for (std::size_t i : events)
        values[i] = (counts.count(id) ? counts.at(id) : 500.0) / static_cast<double>(events.size());
  auto v = metric::evaluate(plan, values);
  REQUIRE(v.size() == 4);
  // slots = 4 * core clocks; core clocks = THREAD / 2 * (1 + ONE_THREAD_ACTIVE / REF_XCLK) = 3750.
  const double slots = 4 * (5000.0 / 2 * (1 + 1000.0 / 2000));
  const double recovery = 200.0 / 2;                         // #SMT_on: INT_MISC.RECOVERY_CYCLES_ANY / 2
  CHECK(v[2].value == doctest::Approx(100 * 3000 / slots));  // frontend
  CHECK(v[2].over_threshold == std::optional<bool>(true));   // 20 %: `tma_frontend_bound > 0.15`
  CHECK(v[1].value == doctest::Approx(100 * (9000 - 7000 + 4 * recovery) / slots));  // bad speculation
  CHECK(v[3].value == doctest::Approx(100 * 7000 / slots));                          // retiring
  CHECK(v[0].value + v[1].value + v[2].value + v[3].value == doctest::Approx(100));
  for (const auto& x : plan.metrics) CHECK(x.scale.unit == "%");
}

TEST_CASE("a table metric's expression located in its JSON file, a column per byte across escapes") {
  const std::string file = test::source_dir() + "/../shared/pmu-events/x86/broadwellx/bdx-metrics.json";
  if (!std::filesystem::exists(file)) return;
  // Line 39: `        "MetricExpr": "cstate_core@c7\\-residency@ / TSC",`
  auto o = spec::table_metric_origin(file, "C7_Core_Residency", "cstate_core@c7\\-residency@ / TSC");
  REQUIRE(o);
  CHECK(o->line == 39);
  CHECK(o->column == 24);
  CHECK(o->column_of(13) == 37);  // '7'
  CHECK(o->column_of(14) == 38);  // the metric's '\', written `\\` in JSON
  CHECK(o->column_of(15) == 40);  // '-'
  CHECK_FALSE(spec::table_metric_origin(file, "C7_Core_Residency", "another expression"));
  CHECK_FALSE(spec::table_metric_origin(file + ".none", "C7_Core_Residency", "x"));
}

TEST_CASE("strcmp_cpuid_str: 1 when the CPU id matches, by the MIDR rule on arm64") {
  spec::MachineOptions o = test::no_libpfm4();
  o.cpuid = "0x00000000410fd4f0";  // Neoverse-V2
  spec::Machine v2(test::fixture("arm_neoverse_v2"), o);
  auto plan = metric::plan("m = cs if strcmp_cpuid_str(0x410fd4f0) else page\\-faults", v2);
  CHECK(names(plan.events) == std::vector<std::string>{"cs"});
  CHECK(plan.metrics[0].folded == std::vector<std::string>{"strcmp_cpuid_str(0x410fd4f0) = 1"});
  plan = metric::plan("m = cs if strcmp_cpuid_str(0x410fd493) else page\\-faults", v2);  // Neoverse-N2 r0p3
  CHECK(names(plan.events) == std::vector<std::string>{"page-faults"});
}

namespace {

spec::Machine with_tables(const char* fixture, const char* cpuid) {
  spec::MachineOptions o = test::no_libpfm4();
  o.events_dir = test::source_dir() + "/../shared/pmu-events/x86";
  o.cpuid = cpuid;
  return spec::Machine(test::fixture(fixture), o);
}

std::vector<std::string> leaders_and_members(const EventSet& set) {
  std::vector<std::string> out;
  for (const auto& g : set.groups) {
    std::string line;
    for (std::size_t i : g.members) line += (line.empty() ? "" : " ") + set.events[i].name;
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("hybrid: a metric of no PMU is one metric per core PMU, each of its own PMU's events") {
  spec::Machine adl(test::fixture("hybrid_adl"), test::no_libpfm4());
  auto plan = metric::plan("ipc = instructions / cycles", adl);
  REQUIRE(plan.metrics.size() == 2);
  // In the machine's order of core PMUs (perf's: by name), each with the events of its PMU only.
  CHECK(plan.metrics[0].definition.pmu == "cpu_atom");
  CHECK(plan.metrics[1].definition.pmu == "cpu_core");
  CHECK(plan.events.events.size() == 4);
  for (const auto& m : plan.metrics)
    for (const auto& [id, events] : m.inputs) {
      REQUIRE(events.size() == 1);
      CHECK(plan.events.events[events[0]].pmu == m.definition.pmu);
    }
  // instructions, cycles of cpu_core then of cpu_atom: IPC 2 on the P-cores, 0.5 on the E-cores (not
  // (4000 + 500) / (2000 + 1000) = 1.5).
  std::vector<double> values(4);
  for (const auto& m : plan.metrics) {
    const bool core = m.definition.pmu == "cpu_core";
    values[m.inputs.at("instructions")[0]] = core ? 4000 : 500;
    values[m.inputs.at("cycles")[0]] = core ? 2000 : 1000;
  }
  auto v = metric::evaluate(plan, values);
  CHECK(v[0].value == 0.5);
  CHECK(v[1].value == 2);
  // An identifier on one core PMU only: one metric, for that PMU.
  plan = metric::plan("x = cycles / cpu_core@instructions@", adl);
  REQUIRE(plan.metrics.size() == 1);
  CHECK(plan.metrics[0].definition.pmu == "cpu_core");
  CHECK(plan.events.events.size() == 2);
  // Software events alone: one metric, as on any machine.
  plan = metric::plan("y = page\\-faults / task\\-clock", adl);
  REQUIRE(plan.metrics.size() == 1);
  CHECK(plan.metrics[0].definition.pmu.empty());
}

TEST_CASE("hybrid: a table metric refers to the metric of its own core PMU") {
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/x86")) return;
  auto adl = with_tables("hybrid_adl", "GenuineIntel-6-97-2");
  auto plan = metric::plan("tma_frontend_bound", adl);
  REQUIRE(plan.metrics.size() == 2);
  for (const auto& m : plan.metrics) {
    INFO(m.definition.pmu);
    // Its threshold names itself: the reference is the metric of the same PMU.
    const std::string ref = metric::to_string(m.refs.at("tma_frontend_bound"));
    CHECK(ref.find(m.definition.pmu + "@") != std::string::npos);
    for (const auto& [id, events] : m.inputs)
      for (std::size_t i : events) CHECK(plan.events.events[i].pmu == m.definition.pmu);
  }
}

TEST_CASE("--cputype: only the metrics of that PMU's table section are looked up, as perf's") {
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/x86")) return;
  auto adl = with_tables("hybrid_adl", "GenuineIntel-6-97-2");
  metric::Options o;
  o.pmu = "cpu_core";
  auto plan = metric::plan("tma_frontend_bound", adl, o);
  REQUIRE(plan.metrics.size() == 1);  // cpu_core's, where without the filter there are two
  CHECK(plan.metrics[0].definition.pmu == "cpu_core");
  for (const auto& e : plan.events.events) CHECK(e.pmu == "cpu_core");
  // tma_branch_detect is cpu_atom's only
  CHECK_THROWS_WITH(metric::plan("tma_branch_detect", adl, o),
                    "unknown metric or metric group 'tma_branch_detect'");
  try {
    (void)metric::plan("tma_branch_detect", adl, o);
  } catch (const Error& e) {
    CHECK(e.help() == "only the metrics of PMU 'cpu_core' are looked up (--cputype)");
  }
  o.pmu = "cpu_atom";
  CHECK(metric::plan("tma_branch_detect", adl, o).metrics.size() == 1);
  // A machine that is not hybrid: its core metrics belong to no PMU by name (perf's default_core), so
  // --cputype cpu finds none of them.
  auto tgl = with_tables("intel_tgl", "GenuineIntel-6-8C-1");
  o.pmu = "cpu";
  CHECK_THROWS_WITH(metric::plan("tma_frontend_bound", tgl, o),
                    "unknown metric or metric group 'tma_frontend_bound'");
  CHECK(metric::plan("tma_frontend_bound", tgl).metrics.size() == 1);
}

TEST_CASE("topdown: slots leads its group and the metric events follow, as the kernel requires") {
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/x86")) return;
  auto tgl = with_tables("intel_tgl", "GenuineIntel-6-8C-1");
  auto plan = metric::plan("tma_frontend_bound", tgl);
  CHECK(leaders_and_members(plan.events) ==
        std::vector<std::string>{"TOPDOWN.SLOTS topdown-fe-bound topdown-bad-spec topdown-retiring "
                                 "topdown-be-bound INT_MISC.UOP_DROPPING"});
  // The event language too: a written group is reordered so (perf's arch_evlist__cmp).
  auto set = resolve("{instructions,topdown-fe-bound,cycles,slots,topdown-retiring}", tgl);
  CHECK(leaders_and_members(set) ==
        std::vector<std::string>{"slots topdown-fe-bound topdown-retiring instructions cycles"});
  // A PMU without the perf-metrics feature (no `slots` event) is left as written: Skylake-X.
  set = resolve("{instructions,cpu/event=0x00,umask=0x82/}", skx());
  CHECK(leaders_and_members(set) == std::vector<std::string>{"instructions cpu/event=0x00,umask=0x82/"});
}

TEST_CASE("MetricConstraint: NO_GROUP_EVENTS always, _NMI while the watchdog is on, _SMT with SMT on") {
  auto grouping = [](const test::TempTree& t, const char* constraint) {
    spec::Machine m(t.root(), test::no_libpfm4());
    metric::Options o;
    o.extra = {def("f", "page\\-faults + context\\-switches")};
    o.extra[0].constraint = constraint;
    auto plan = metric::plan("f", m, o);
    return leaders_and_members(plan.events);
  };
  const std::vector<std::string> one{"page-faults context-switches"}, two{"page-faults", "context-switches"};
  test::TempTree t;
  t.pmu("software", 1);
  t.write("devices/system/cpu/online", "0-1\n");
  t.write("devices/system/cpu/cpu0/topology/core_id", "0\n");
  t.write("devices/system/cpu/cpu1/topology/core_id", "1\n");
  t.write("devices/system/cpu/smt/active", "0\n");
  CHECK(grouping(t, "") == one);
  CHECK(grouping(t, "NO_GROUP_EVENTS") == two);
  CHECK(grouping(t, "NO_GROUP_EVENTS_NMI") == one);  // no watchdog recorded: off
  CHECK(grouping(t, "NO_GROUP_EVENTS_SMT") == one);
  t.write("perfspec-snapshot/nmi_watchdog", "1\n");
  t.write("devices/system/cpu/smt/active", "1\n");
  CHECK(grouping(t, "NO_GROUP_EVENTS_NMI") == two);
  CHECK(grouping(t, "NO_GROUP_EVENTS_SMT") == two);
  CHECK(grouping(t, "NO_GROUP_EVENTS_SOMETHING_NEW") == one);
}

TEST_CASE("options: --metric-no-group, --metric-no-merge, --metric-no-threshold") {
  metric::Options o;
  o.extra = {def("ipc", "instructions / cycles"), def("cpi", "cycles / instructions")};
  o.extra[0].threshold = "ipc < branches";
  auto plan = metric::plan("ipc,cpi", skx(), o);
  // cpi reuses ipc's group; the threshold's event is opened in it.
  CHECK(leaders_and_members(plan.events) == std::vector<std::string>{"instructions cycles branches"});
  o.merge = false;
  plan = metric::plan("ipc,cpi", skx(), o);
  CHECK(leaders_and_members(plan.events) ==
        std::vector<std::string>{"instructions cycles branches", "cycles instructions"});
  o.merge = true;
  o.group = false;
  plan = metric::plan("ipc,cpi", skx(), o);
  CHECK(leaders_and_members(plan.events) == std::vector<std::string>{"instructions", "cycles", "branches"});
  o.thresholds = false;
  plan = metric::plan("ipc,cpi", skx(), o);
  CHECK(leaders_and_members(plan.events) == std::vector<std::string>{"instructions", "cycles"});
  CHECK_FALSE(plan.metrics[0].threshold);
}

TEST_CASE("groups fit the PMU's counters as counter.json and the events' Counter fields describe them") {
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/x86")) return;
  auto m = with_tables("intel_skx", "GenuineIntel-6-55-4");
  // Skylake-X: 4 generic counters, 3 fixed (counter.json, Unit core).
  const auto* pc = m.pmu_counters("cpu");
  REQUIRE(pc);
  CHECK(pc->generic == 4);
  CHECK(pc->fixed == 3);
  // CPU_CLK_UNHALTED.THREAD (fixed counter 1) and THREAD_P (generic) are both event 0x3c.
  CHECK(pc->counter_of.at({0x3c, 0}) == "0,1,2,3;Fixed counter 1");
  CHECK(pc->counter_of.at({0x0, 0x3}) == "Fixed counter 2");  // REF_TSC: fixed only
  CHECK(m.pmu_counters("uncore_cha_0")->generic == 4);
  CHECK(m.pmu_counters("software") == nullptr);
  // tma_retiring's group: 4 generic events and CPU_CLK_UNHALTED.THREAD on fixed counter 1 fit; the
  // fifth generic one (REF_XCLK) opens a group of its own. perf would open all six as one weak group,
  // which the kernel refuses, and then none grouped.
  auto plan = metric::plan("tma_bad_speculation", m);
  CHECK(leaders_and_members(plan.events) ==
        std::vector<std::string>{"UOPS_ISSUED.ANY UOPS_RETIRED.RETIRE_SLOTS INT_MISC.RECOVERY_CYCLES_ANY "
                                 "CPU_CLK_UNHALTED.THREAD CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE",
                                 "CPU_CLK_UNHALTED.REF_XCLK"});
  CHECK(std::find(plan.metrics[0].folded.begin(), plan.metrics[0].folded.end(),
                  "6 events on cpu in 2 groups: the PMU has 4 generic and 3 fixed counters (counter.json)") !=
        plan.metrics[0].folded.end());
  // INST_RETIRED.ANY takes fixed counter 0 beside 4 generic ones and THREAD: one group of 6.
  plan = metric::plan("tma_retiring", m);
  CHECK(leaders_and_members(plan.events) ==
        std::vector<std::string>{"UOPS_RETIRED.RETIRE_SLOTS CPU_CLK_UNHALTED.THREAD "
                                 "CPU_CLK_UNHALTED.ONE_THREAD_ACTIVE CPU_CLK_UNHALTED.REF_XCLK "
                                 "UOPS_RETIRED.MACRO_FUSED INST_RETIRED.ANY"});
  // Events the tables say nothing of take a generic counter each: 5 raw events are 4 + 1.
  plan = metric::plan(
      "raw = cpu@event\\=0x11@ + cpu@event\\=0x12@ + cpu@event\\=0x13@ + cpu@event\\=0x14@ + "
      "cpu@event\\=0x15@",
      m);
  REQUIRE(plan.events.groups.size() == 2);
  CHECK(plan.events.groups[0].members.size() == 4);
  CHECK(plan.events.groups[1].members.size() == 1);
}

TEST_CASE("evaluation by slots (what plan() indexes) gives what evaluation by names gives") {
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/x86")) return;
  auto m = with_tables("intel_skx", "GenuineIntel-6-55-4");
  auto plan = metric::plan("TopdownL3", m);
  auto by_names = plan;
  auto unslot = [](metric::Expr& e, auto&& self) -> void {
    e.slot = 0;
    for (auto& a : e.args) self(a, self);
  };
  std::size_t slotted = 0;
  auto count = [&](const metric::Expr& e, auto&& self) -> void {
    slotted += e.slot != 0;
    for (const auto& a : e.args) self(a, self);
  };
  for (auto& x : by_names.metrics) {
    count(x.expr, count);
    unslot(x.expr, unslot);
    if (x.threshold) unslot(*x.threshold, unslot);
    for (auto& [name, e] : x.refs) unslot(e, unslot);
  }
  CHECK(slotted > 0);
  std::vector<double> values(plan.events.events.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1e6 + 7919.0 * static_cast<double>(i);
  values[3] = NAN;  // one input not counted: the same metrics lose their value both ways
  auto a = metric::evaluate(plan, values), b = metric::evaluate(by_names, values);
  REQUIRE(a.size() == b.size());
  std::size_t computed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(plan.metrics[i].definition.name);
    CHECK(std::isnan(a[i].value) == std::isnan(b[i].value));
    if (!std::isnan(a[i].value)) {
      CHECK(a[i].value == b[i].value);
      ++computed;
    }
    CHECK(a[i].why == b[i].why);
    CHECK(a[i].over_threshold == b[i].over_threshold);
  }
  CHECK(computed > 10);
}

TEST_CASE(
    "MetricgroupNoGroup: asked for by that group, a metric's events are not grouped; topdown ones stay "
    "one group behind slots") {
  if (!std::filesystem::exists(test::source_dir() + "/../shared/pmu-events/x86")) return;
  auto spr = with_tables("intel_spr", "GenuineIntel-6-8F-8");
  // perf 6.12 (`perf stat -vv -M TopdownL1` on this fixture) opens these 7 events ungrouped and
  // regroups the topdown ones behind slots.
  auto plan = metric::plan("TopdownL1", spr);
  CHECK(leaders_and_members(plan.events) ==
        std::vector<std::string>{"TOPDOWN.SLOTS topdown-fe-bound topdown-bad-spec topdown-retiring "
                                 "topdown-be-bound topdown-heavy-ops",
                                 "INT_MISC.UOP_DROPPING"});
  // Default (levels 1 and 2): the 10 events perf opens, the topdown ones in one group.
  metric::Options no_thresholds;
  no_thresholds.thresholds = false;
  plan = metric::plan("Default", spr, no_thresholds);
  CHECK(plan.events.events.size() == 10);
  CHECK(plan.events.groups.size() == 2);
  CHECK(plan.events.events[0].name == "TOPDOWN.SLOTS");
  // The same metric by its own name (not listed in its MetricgroupNoGroup) is grouped.
  plan = metric::plan("tma_retiring", spr);
  CHECK(plan.events.groups.size() == 1);
  CHECK(plan.events.groups[0].weak);
}

TEST_CASE("runtime parameter: a metric with '?' once per chip of hv_24x7 (PerChip), as perf on powerpc") {
  // The hv_24x7 PMU's formats and interface files as arch/powerpc/perf/hv-24x7.c describes them.
  auto hv_24x7 = [](const test::TempTree& tree) {
    tree.pmu("hv_24x7", 10);
    tree.write("bus/event_source/devices/hv_24x7/format/domain", "config:0-3\n");
    tree.write("bus/event_source/devices/hv_24x7/format/chip", "config:16-31\n");
    tree.write("bus/event_source/devices/hv_24x7/format/offset", "config:32-63\n");
  };
  test::TempTree t;
  hv_24x7(t);
  t.write("bus/event_source/devices/hv_24x7/interface/sockets", "2\n");
  t.write("bus/event_source/devices/hv_24x7/interface/coresperchip", "3\n");
  spec::Machine m(t.root(), test::no_libpfm4());
  metric::Options o;
  o.extra = {def("pumps", "hv_24x7@domain\\=2\\,offset\\=0x10\\,chip\\=?@ * 2")};
  o.extra[0].aggregation = "PerChip";
  auto plan = metric::plan("pumps", m, o);
  REQUIRE(plan.metrics.size() == 2);
  REQUIRE(plan.events.events.size() == 2);
  for (int chip = 0; chip < 2; ++chip) {
    const auto& x = plan.metrics[static_cast<std::size_t>(chip)];
    CHECK(x.parameter == chip);
    const std::string id = fmt::format("hv_24x7/domain=2,offset=0x10,chip={}/", chip);
    REQUIRE(x.inputs.count(id) == 1);
    CHECK(plan.events.events[x.inputs.at(id)[0]].attr.config ==
          (0x10ULL << 32 | static_cast<std::uint64_t>(chip) << 16 | 2));
  }
  CHECK(metric::evaluate(plan, std::vector<double>{5, 7})[1].value == 14);
  // Per core (any other AggregationMode): coresperchip instances.
  o.extra[0].aggregation = "PerCore";
  CHECK(metric::plan("pumps", m, o).metrics.size() == 3);
  // A machine that does not say: once, with Options::parameter.
  test::TempTree bare;
  hv_24x7(bare);
  spec::Machine b(bare.root(), test::no_libpfm4());
  o.parameter = 5;
  plan = metric::plan("pumps", b, o);
  REQUIRE(plan.metrics.size() == 1);
  CHECK(plan.metrics[0].parameter == 5);
  CHECK(plan.events.events[0].attr.config == (0x10ULL << 32 | 5ULL << 16 | 2));
  // A count that is no number: once, as when the file is missing.
  t.write("bus/event_source/devices/hv_24x7/interface/sockets", "two\n");
  o.extra[0].aggregation = "PerChip";
  CHECK(metric::plan("pumps", spec::Machine(t.root(), test::no_libpfm4()), o).metrics.size() == 1);
  // No '?': no parameter.
  CHECK(metric::plan("x = page\\-faults", two_socket()).metrics[0].parameter == -1);
}

namespace {

// m0 = cs, m1 = m0 + 1, ..., each one level of fold() deeper: m_k reaches depth 2k + 1.
metric::Options chain_of(int n) {
  metric::Options o;
  o.extra.push_back(def("m0", "cs"));
  for (int i = 1; i < n; ++i) o.extra.push_back(def(fmt::format("m{}", i), fmt::format("m{} + 1", i - 1)));
  return o;
}

}  // namespace

TEST_CASE(
    "a metric nesting deeper than 1000 levels with the metrics it refers to is an error at the reference") {
  const metric::Options o = chain_of(20000);
  // m499 reaches depth 999, m500 1001: the error is in the innermost metric, at what would go deeper.
  CHECK(plan_error("m499", skx(), o).empty());
  CHECK(plan_error("m500", skx(), o) ==
        "metric 'm0': 'cs'\n"
        "              \\___ the expression nests too deeply with the metrics it refers to (more than 1000 "
        "levels)\n");
  // 20,000 of them: the same error, not the stack's end.
  CHECK(plan_error("m19999", skx(), o).find("nests too deeply") != std::string::npos);
  // A Planner folds each metric once for all its plans: one folded before is as deep as it was, in
  // whatever order the plans come.
  metric::Planner planner(skx(), o);
  CHECK(planner.plan("m498").metrics.size() == 1);
  CHECK(planner.plan("m499").metrics.size() == 1);
  try {
    planner.plan("m500");
    FAIL("m500 planned");
  } catch (const metric::MetricError& e) {
    CHECK(e.metric() == "m499");  // m498 was folded already: the reference to it is too deep
    CHECK(e.span().begin == 0);
    CHECK(e.message() ==
          "the expression nests too deeply with the metrics it refers to (more than 1000 levels)");
  }
}

TEST_CASE(
    "a Planner's plans are plan()'s, however many share it; an ad hoc metric shadows a name for its own plan "
    "only") {
  metric::Options o = chain_of(300);
  o.extra.push_back(def("cpi", "cycles / instructions", "Ratios"));
  o.extra.push_back(def("ipc", "instructions / cycles", "Ratios"));
  metric::Planner planner(skx(), o);
  for (int i : {0, 1, 150, 299}) {
    const std::string name = fmt::format("m{}", i);
    auto shared = planner.plan(name), alone = metric::plan(name, skx(), o);
    CHECK(names(shared.events) == names(alone.events));
    CHECK(shared.metrics[0].uses == alone.metrics[0].uses);
    CHECK(metric::evaluate(shared, std::vector<double>{5})[0].value == 5 + i);
    CHECK(metric::evaluate(alone, std::vector<double>{5})[0].value == 5 + i);
  }
  auto ratios = planner.plan("RATIOS");
  REQUIRE(ratios.metrics.size() == 2);
  CHECK(ratios.metrics[0].definition.name == "cpi");
  // `m1 = cs * 10` is m1 for its own plan; m2, planned after with the same Planner, still uses the
  // file's m1.
  CHECK(metric::evaluate(planner.plan("m1 = cs * 10"), std::vector<double>{5})[0].value == 50);
  CHECK(metric::evaluate(planner.plan("m2"), std::vector<double>{5})[0].value == 7);
}

TEST_CASE("evaluate: a cycle among references is NaN; a tree deeper than 1000 levels is an error") {
  std::map<std::string, metric::Expr, std::less<>> refs;
  refs.emplace("a", metric::parse("b + 1"));
  refs.emplace("b", metric::parse("a * 2"));
  metric::Expr a;
  a.kind = metric::Expr::Kind::ref;
  a.name = "a";
  refs.at("a").args[0].kind = metric::Expr::Kind::ref;
  refs.at("b").args[0].kind = metric::Expr::Kind::ref;
  CHECK(std::isnan(metric::evaluate(a, {}, refs)));
  metric::Expr deep = metric::parse("x");
  for (int i = 0; i < 1500; ++i) {
    metric::Expr n;
    n.kind = metric::Expr::Kind::negate;
    n.args.push_back(std::move(deep));
    deep = std::move(n);
  }
  CHECK_THROWS_WITH(metric::evaluate(deep, {{"x", 1.0}}),
                    "the expression nests too deeply with the metrics it refers to (more than 1000 levels)");
}
