// SPDX-License-Identifier: MIT
// Hostile inputs (issue 7): each family grows by 10x per step, and Google Benchmark fits the time to
// O(N) (`_BigO` and `_RMS` rows). A super-linear step shows as a large RMS of the linear fit and as a
// per-unit time (`per_unit`) that grows with N. The same inputs are bounded in tests/test_resolve.cpp.
//
// Families (N is the size parameter):
//   unknown_name   N-byte name that names nothing: an error, with no suggestion search for it
//   terms          one event with N terms: cpu/event=1,umask=2,event=3,.../
//   braces         N unbalanced '{': an error at the second brace (nested groups)
//   group          one {...}:W group of N events
//   list           N lone events (the same as BM_Scaling_raw, kept here for comparison)
//   pmu_glob       '*?' repeated N times as a PMU name: matched against every PMU folder
//   tp_glob        'sched:' and '*?' repeated N times: matched against every tracepoint of a system
//   config_events  N event strings resolved and appended to one set, one at a time
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/corpus.hpp"
#include "perfspec/perfspec.hpp"

namespace {

using perfspec::bench::fixture_root;

std::string unknown_name(std::size_t n) { return std::string(n, 'a'); }

std::string terms(std::size_t n) {
  std::string s = "cpu/";
  for (std::size_t i = 0; i < n; ++i)
    s += fmt::format("{}{}={}", i ? "," : "", i % 2 ? "umask" : "event", i % 256);
  return s + "/";
}

std::string braces(std::size_t n) { return std::string(n, '{'); }

std::string group(std::size_t n) {
  std::string s = "{";
  for (std::size_t i = 0; i < n; ++i) s += fmt::format("{}cpu/event={}/", i ? "," : "", i % 256);
  return s + "}:W";
}

std::string list(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += fmt::format("{}cpu/event={}/", i ? "," : "", i % 256);
  return s;
}

std::string pmu_glob(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += "*?";
  return s + "/event=1/";
}

std::string tp_glob(std::size_t n) {
  std::string s = "sched:";
  for (std::size_t i = 0; i < n; ++i) s += "*?";
  return s;
}

// Resolves or fails (both are outcomes here); what is measured is that either comes in linear time.
template <std::string (*Make)(std::size_t)> void BM_Hostile(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::string text = Make(n);
  perfspec::spec::Machine machine{fixture_root()};
  auto run = [&] {
    try {
      return perfspec::resolve(text, machine).events.size();
    } catch (const perfspec::Error&) {
      return std::size_t{0};
    }
  };
  state.counters["attrs"] = static_cast<double>(run());  // also warms the Machine
  for (auto _ : state) benchmark::DoNotOptimize(run());
  state.SetComplexityN(static_cast<std::int64_t>(n));
  state.counters["per_unit"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

// A set built from N event strings one at a time (the exporter's `events = [...]`, issue 34): each
// resolved and appended to the set. Quadratic when appending copied the set each time.
void BM_Hostile_config_events(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  perfspec::spec::Machine machine{fixture_root()};
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < n; ++i) texts.push_back(fmt::format("cpu/event={},name=e{}/", i % 256, i));
  for (auto _ : state) {
    perfspec::EventSet set;
    for (const auto& t : texts) set.append(perfspec::resolve(t, machine));
    benchmark::DoNotOptimize(set.events.data());
  }
  state.SetComplexityN(static_cast<std::int64_t>(n));
  state.counters["per_unit"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Hostile_config_events)->RangeMultiplier(10)->Range(10, 10000)->Complexity(benchmark::oN);

#define PERFSPEC_HOSTILE(family, lo, hi) \
  BENCHMARK_TEMPLATE(BM_Hostile, family) \
      ->Name("BM_Hostile_" #family)      \
      ->RangeMultiplier(10)              \
      ->Range(lo, hi)                    \
      ->Complexity(benchmark::oN)

PERFSPEC_HOSTILE(unknown_name, 1000, 100000);
PERFSPEC_HOSTILE(terms, 10, 10000);
PERFSPEC_HOSTILE(braces, 100, 100000);
PERFSPEC_HOSTILE(group, 10, 1000);
PERFSPEC_HOSTILE(list, 10, 10000);
PERFSPEC_HOSTILE(pmu_glob, 10, 1000);
PERFSPEC_HOSTILE(tp_glob, 10, 1000);

}  // namespace
