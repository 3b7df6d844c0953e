// SPDX-License-Identifier: MIT
// Metrics (issue 16): parsing every MetricExpr of a model, planning all of a model's metrics against
// its fixture (cold: a new Machine, so the tables' JSON is read; warm: the Machine's tables loaded),
// and evaluating Top-down levels 1 to 3 and the Default metrics from counts, which `stat -M -I 10`
// does each interval in each aggregate. perf computes metrics only inside perf stat, so there is no
// in-process peer: the figures are held against the targets (evaluation far below a
// millisecond per interval; all Default metrics under 10 µs), and BENCHMARKS.md records them.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "perfspec/metric.hpp"
#include "perfspec/perfspec.hpp"

namespace {

using namespace perfspec;

std::string tables_dir() { return std::string(PERFSPEC_SOURCE_DIR) + "/../shared/pmu-events/x86"; }

struct Model {
  const char* fixture;
  const char* cpuid;
};
// Skylake-X (no Default group, Top-down without the perf-metrics feature), Sapphire Rapids (the
// biggest table, Default metrics, topdown events).
constexpr Model skx{"intel_skx", "GenuineIntel-6-55-4"};
constexpr Model spr{"intel_spr", "GenuineIntel-6-8F-8"};

spec::Machine machine_of(const Model& m) {
  spec::MachineOptions o;
  o.events_dir = tables_dir();
  o.cpuid = m.cpuid;
  o.libpfm4 = false;
  return spec::Machine(std::string(PERFSPEC_SOURCE_DIR) + "/tests/fixtures/" + m.fixture, o);
}

bool have_tables() { return std::filesystem::exists(tables_dir()); }

// Every metric of the model that resolves on its fixture, comma-joined for one plan (a metric that
// needs what the fixture lacks, an uncore PMU or a literal, is left out once here).
std::string resolvable(const spec::Machine& m) {
  std::string out;
  for (const auto& d : metric::machine_metrics(m)) {
    try {
      (void)metric::plan(d.name, m);
      out += (out.empty() ? "" : ",") + d.name;
    } catch (const Error&) {
    }
  }
  return out;
}

void BM_Metric_parse_all(benchmark::State& state, Model model) {
  if (!have_tables()) return state.SkipWithError("no ../shared/pmu-events/x86");
  auto m = machine_of(model);
  auto defs = metric::machine_metrics(m);
  for (auto _ : state)
    for (const auto& d : defs) benchmark::DoNotOptimize(metric::parse(d.expr));
  state.counters["metrics"] = static_cast<double>(defs.size());
  state.counters["per_metric"] =
      benchmark::Counter(static_cast<double>(defs.size()),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_Metric_parse_all, skx, skx)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Metric_parse_all, spr, spr)->Unit(benchmark::kMicrosecond);

// Cold: a new Machine each time, so the plan reads the model's JSON (metrics, counter.json) and
// resolves every event afresh.
void BM_Metric_plan_all_cold(benchmark::State& state, Model model) {
  if (!have_tables()) return state.SkipWithError("no ../shared/pmu-events/x86");
  const std::string request = resolvable(machine_of(model));
  std::size_t metrics = 0;
  for (auto _ : state) {
    auto m = machine_of(model);
    auto plan = metric::plan(request, m);
    metrics = plan.metrics.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["metrics"] = static_cast<double>(metrics);
}
BENCHMARK_CAPTURE(BM_Metric_plan_all_cold, skx, skx)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Metric_plan_all_cold, spr, spr)->Unit(benchmark::kMillisecond);

// Warm: the Machine's tables and metric definitions already loaded.
void BM_Metric_plan_all_warm(benchmark::State& state, Model model) {
  if (!have_tables()) return state.SkipWithError("no ../shared/pmu-events/x86");
  auto m = machine_of(model);
  const std::string request = resolvable(m);
  std::size_t metrics = 0, events = 0;
  for (auto _ : state) {
    auto plan = metric::plan(request, m);
    metrics = plan.metrics.size();
    events = plan.events.events.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["metrics"] = static_cast<double>(metrics);
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK_CAPTURE(BM_Metric_plan_all_warm, skx, skx)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Metric_plan_all_warm, spr, spr)->Unit(benchmark::kMillisecond);

// One interval's evaluation: every metric of `request` from one count per event (distinct, non-zero
// values, so no division by zero short-cuts the work).
void evaluate(benchmark::State& state, Model model, const char* request) {
  if (!have_tables()) return state.SkipWithError("no ../shared/pmu-events/x86");
  auto m = machine_of(model);
  auto plan = metric::plan(request, m);
  std::vector<double> values(plan.events.events.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1e6 + 7919.0 * static_cast<double>(i);
  std::size_t computed = 0;
  for (auto _ : state) {
    auto v = metric::evaluate(plan, values);
    benchmark::DoNotOptimize(v);
    computed = v.size();
  }
  state.counters["metrics"] = static_cast<double>(computed);
  state.counters["events"] = static_cast<double>(values.size());
}
BENCHMARK_CAPTURE(evaluate, skx_TopdownL1, skx, "TopdownL1")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(evaluate, skx_TopdownL2, skx, "TopdownL2")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(evaluate, skx_TopdownL3, skx, "TopdownL3")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(evaluate, spr_TopdownL1, spr, "TopdownL1")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(evaluate, spr_Default, spr, "Default")->Unit(benchmark::kMicrosecond);

}  // namespace
