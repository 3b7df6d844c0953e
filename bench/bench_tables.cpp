// SPDX-License-Identifier: MIT
// The compiled table index over perf's whole x86 tree (the 42 model folders of Linux 6.12), the work
// of the whole-tree test (tests/tables/walk.py) without its processes: building every index from the
// JSON, and opening every index and finding every name in it. Per event, so that models of different
// sizes add up. Resolution through a Machine is measured by BM_Named_* (bench_resolve.cpp).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/tables.hpp"

namespace {

namespace fs = std::filesystem;

std::string x86_dir() { return std::string(PERFSPEC_SOURCE_DIR) + "/../shared/pmu-events/x86"; }

// The model folders mapfile.csv names, each once.
const std::vector<std::string>& models() {
  static const std::vector<std::string> out = [] {
    std::vector<std::string> v;
    std::ifstream in(x86_dir() + "/mapfile.csv");
    std::string line;
    std::set<std::string> seen;
    for (bool first = true; std::getline(in, line); first = false) {
      if (first || line.empty() || line[0] == '#') continue;
      auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      std::string folder = line.substr(b + 1, c - b - 1);
      if (seen.insert(folder).second) v.push_back(folder);
    }
    return v;
  }();
  return out;
}

// Every name of every model, from the JSON (descriptions and all), and the core ones.
struct Names {
  std::vector<std::vector<std::string>> all, core;
  std::size_t total = 0, total_core = 0;
};
const Names& names() {
  static const Names n = [] {
    Names out;
    for (const auto& m : models()) {
      auto t = perfspec::spec::EventTables::load_full(x86_dir(), m);
      out.all.emplace_back();
      out.core.emplace_back();
      for (const auto& e : t->events()) {
        out.all.back().push_back(e.alias.name);
        if (e.pmu.empty()) out.core.back().push_back(e.alias.name);
      }
      out.total += out.all.back().size();
      out.total_core += out.core.back().size();
    }
    return out;
  }();
  return n;
}

bool have_tree() { return fs::exists(x86_dir() + "/mapfile.csv"); }

void per_event(benchmark::State& state, std::size_t events) {
  state.counters["per_event"] =
      benchmark::Counter(static_cast<double>(events),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["events"] = static_cast<double>(events);
}

// Parse every model's JSON and write its index, into a new folder each time.
void BM_TableIndex_build(benchmark::State& state) {
  if (!have_tree()) return state.SkipWithError("no ../shared/pmu-events/x86");
  names();
  std::string cache = fmt::format("/tmp/perfspec-bench-index-{}", ::getpid());
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(cache);
    state.ResumeTiming();
    for (const auto& m : models())
      benchmark::DoNotOptimize(perfspec::spec::EventTables::load(x86_dir(), m, {cache}));
  }
  fs::remove_all(cache);
  per_event(state, names().total);
}
BENCHMARK(BM_TableIndex_build)->Unit(benchmark::kMillisecond);

// Open every index (mapping it, checking its header and order) and find every name in it: what a
// process that needs each name once pays.
void BM_TableIndex_open_and_find(benchmark::State& state) {
  if (!have_tree()) return state.SkipWithError("no ../shared/pmu-events/x86");
  const auto& n = names();
  std::string cache = fmt::format("/tmp/perfspec-bench-index-{}", ::getpid());
  for (const auto& m : models()) perfspec::spec::EventTables::load(x86_dir(), m, {cache});
  for (auto _ : state)
    for (std::size_t i = 0; i < models().size(); ++i) {
      auto t = perfspec::spec::EventTables::load(x86_dir(), models()[i], {cache});
      if (!t->from_index()) state.SkipWithError("the index was not used");
      for (const auto& name : n.all[i]) benchmark::DoNotOptimize(t->find(name));
    }
  fs::remove_all(cache);
  per_event(state, n.total);
}
BENCHMARK(BM_TableIndex_open_and_find)->Unit(benchmark::kMillisecond);

}  // namespace
