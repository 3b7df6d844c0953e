// SPDX-License-Identifier: MIT
// Parse + resolve: the mixed corpus, the single raw string, the libpfm4 peer, and list scaling.
//
// Warm: one spec::Machine reused across iterations (its PMUs, formats, aliases and tracepoint ids are
// read from sysfs once and cached), as in a long-lived embedder. The targets apply to warm.
// Cold: a new spec::Machine per iteration, so every iteration includes the sysfs reads.
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <perfmon/pfmlib_perf_event.h>

#include "bench/corpus.hpp"
#include "perfspec/perfspec.hpp"
#include "perfspec/tables.hpp"

namespace {

using perfspec::bench::corpus;
using perfspec::bench::fixture_root;
using perfspec::bench::written_events;

constexpr const char* single_event = "cpu/event=0x2,inv,ldlat=3/u";
// libpfm4 has no raw `event=` syntax for a core PMU (its perf_raw PMU is not active); this is its
// spelling of the same encoding work: event+umask from its table, inv, ldlat (config1), user only.
constexpr const char* libpfm4_event = "icx::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3:i=1:u";
// libpfm4 is forced to Ice Lake server (one model per process), the model of the named-event table.
constexpr const char* libpfm4_model = "icx";

double g_libpfm4_ns = 0;  // ns per call of the peer, measured earlier in this run

double elapsed_ns(std::chrono::steady_clock::time_point t0, benchmark::State& state) {
  auto d = std::chrono::steady_clock::now() - t0;
  return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(state.iterations());
}

// User vs system CPU time of the timed loop (getrusage), per event: the system part is sysfs access
// (open/read/close/access/getdents) that a warm Machine still does.
struct CpuSplit {
  rusage before{};
  CpuSplit() { ::getrusage(RUSAGE_THREAD, &before); }
  static double us(const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  }
  void report(benchmark::State& state, std::size_t events) const {
    rusage after{};
    ::getrusage(RUSAGE_THREAD, &after);
    double n = static_cast<double>(state.iterations()) * static_cast<double>(events);
    state.counters["user_ns"] = (us(after.ru_utime) - us(before.ru_utime)) * 1e3 / n;
    state.counters["sys_ns"] = (us(after.ru_stime) - us(before.ru_stime)) * 1e3 / n;
  }
};

void per_event(benchmark::State& state, std::size_t events) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
  state.counters["per_event"] =
      benchmark::Counter(static_cast<double>(events),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

std::size_t corpus_events() {
  std::size_t n = 0;
  for (const auto& s : corpus()) n += written_events(s);
  return n;
}

// ---- the peer ---------------------------------------------------------------------------------

void BM_Peer_libpfm4_single(benchmark::State& state) {
  ::setenv("LIBPFM_FORCE_PMU", libpfm4_model, 1);
  if (pfm_initialize() != PFM_SUCCESS) {
    state.SkipWithError("pfm_initialize failed");
    return;
  }
  perf_event_attr attr;
  pfm_perf_encode_arg_t arg;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::memset(&attr, 0, sizeof attr);
    std::memset(&arg, 0, sizeof arg);
    arg.attr = &attr;
    arg.size = sizeof arg;
    int r = pfm_get_os_event_encoding(libpfm4_event, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
    if (r != PFM_SUCCESS) {
      state.SkipWithError(pfm_strerror(r));
      break;
    }
    benchmark::DoNotOptimize(attr);
  }
  g_libpfm4_ns = elapsed_ns(t0, state);
  if (attr.config != 0x8001cd || attr.config1 != 3 || !attr.exclude_kernel)
    state.SkipWithError("libpfm4 encoding is not the expected 0x8001cd/3/u");
  per_event(state, 1);
}
BENCHMARK(BM_Peer_libpfm4_single);

// ---- the single raw string ---------------------------------------------------------------------

void BM_Single_warm(benchmark::State& state) {
  perfspec::spec::Machine machine{fixture_root()};
  auto check = perfspec::resolve(single_event, machine);  // warm the PMU cache
  if (check.events.size() != 1 || check.events[0].attr.config != 0x800002 ||
      check.events[0].attr.config1 != 3)
    state.SkipWithError("unexpected encoding");
  CpuSplit split;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(perfspec::resolve(single_event, machine));
  double ns = elapsed_ns(t0, state);
  split.report(state, 1);
  per_event(state, 1);
  if (g_libpfm4_ns > 0) state.counters["libpfm4/perfspec"] = g_libpfm4_ns / ns;
}
BENCHMARK(BM_Single_warm);

// The storage-reusing form, `resolve(text, machine, set)`: what a program resolving many strings
// uses, and the form comparable to libpfm4's caller-provided attr.
void BM_Single_warm_reuse(benchmark::State& state) {
  perfspec::spec::Machine machine{fixture_root()};
  perfspec::EventSet set;
  perfspec::resolve(single_event, machine, set);
  if (set.events.size() != 1 || set.events[0].attr.config != 0x800002 || set.events[0].attr.config1 != 3)
    state.SkipWithError("unexpected encoding");
  for (auto _ : state) {
    perfspec::resolve(single_event, machine, set);
    benchmark::DoNotOptimize(set);
  }
  per_event(state, 1);
}
BENCHMARK(BM_Single_warm_reuse);

void BM_Single_parse_only(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(perfspec::parse(single_event));
  per_event(state, 1);
}
BENCHMARK(BM_Single_parse_only);

void BM_Single_resolve_only_warm(benchmark::State& state) {
  perfspec::spec::Machine machine{fixture_root()};
  auto ast = perfspec::parse(single_event);
  benchmark::DoNotOptimize(perfspec::resolve(ast, machine));
  CpuSplit split;
  for (auto _ : state) benchmark::DoNotOptimize(perfspec::resolve(ast, machine));
  split.report(state, 1);
  per_event(state, 1);
}
BENCHMARK(BM_Single_resolve_only_warm);

void BM_Single_cold(benchmark::State& state) {
  for (auto _ : state) {
    perfspec::spec::Machine machine{fixture_root()};
    benchmark::DoNotOptimize(perfspec::resolve(single_event, machine));
  }
  per_event(state, 1);
}
BENCHMARK(BM_Single_cold);

// ---- the mixed corpus --------------------------------------------------------------------------

void BM_Corpus_warm(benchmark::State& state) {
  perfspec::spec::Machine machine{fixture_root()};
  std::size_t attrs = 0;
  for (const auto& s : corpus()) attrs += perfspec::resolve(s, machine).events.size();
  CpuSplit split;
  for (auto _ : state)
    for (const auto& s : corpus()) benchmark::DoNotOptimize(perfspec::resolve(s, machine));
  split.report(state, corpus_events());
  per_event(state, corpus_events());
  state.counters["strings"] = static_cast<double>(corpus().size());
  state.counters["events"] = static_cast<double>(corpus_events());
  state.counters["attrs"] = static_cast<double>(attrs);
}
BENCHMARK(BM_Corpus_warm);

void BM_Corpus_warm_reuse(benchmark::State& state) {
  perfspec::spec::Machine machine{fixture_root()};
  perfspec::EventSet set;
  for (const auto& s : corpus()) perfspec::resolve(s, machine, set);
  for (auto _ : state)
    for (const auto& s : corpus()) {
      perfspec::resolve(s, machine, set);
      benchmark::DoNotOptimize(set);
    }
  per_event(state, corpus_events());
}
BENCHMARK(BM_Corpus_warm_reuse);

void BM_Corpus_cold(benchmark::State& state) {
  CpuSplit split;
  for (auto _ : state) {
    perfspec::spec::Machine machine{fixture_root()};
    for (const auto& s : corpus()) benchmark::DoNotOptimize(perfspec::resolve(s, machine));
  }
  split.report(state, corpus_events());
  per_event(state, corpus_events());
}
BENCHMARK(BM_Corpus_cold);

// ---- scaling -----------------------------------------------------------------------------------

template <std::string (*Make)(std::size_t)> void BM_Scaling(benchmark::State& state) {
  auto n = static_cast<std::size_t>(state.range(0));
  std::string text = Make(n);
  perfspec::spec::Machine machine{fixture_root()};
  auto set = perfspec::resolve(text, machine);
  CpuSplit split;
  for (auto _ : state) benchmark::DoNotOptimize(perfspec::resolve(text, machine));
  split.report(state, n);
  per_event(state, n);
  state.counters["attrs"] = static_cast<double>(set.events.size());
}
BENCHMARK_TEMPLATE(BM_Scaling, perfspec::bench::raw_list)
    ->Name("BM_Scaling_raw")
    ->RangeMultiplier(10)
    ->Range(1, 1000);
BENCHMARK_TEMPLATE(BM_Scaling, perfspec::bench::mixed_list)
    ->Name("BM_Scaling_mixed")
    ->RangeMultiplier(10)
    ->Range(1, 1000);

// ---- named events: the icelakex JSON table vs libpfm4 forced to icx --------------------------------

std::string events_dir() { return std::string(PERFSPEC_SOURCE_DIR) + "/../shared/pmu-events/x86"; }

perfspec::spec::MachineOptions icelakex_options() {
  perfspec::spec::MachineOptions o;
  o.events_dir = events_dir();
  o.cpuid = "GenuineIntel-6-6A-6";
  o.cache_dir = "/tmp/perfspec-bench-cache";
  o.libpfm4 = false;  // the table alone, so the peer is not measuring itself
  return o;
}

// What a libpfm4 user does per name: a zeroed attr and argument, then the encoding.
bool pfm_encodes(const std::string& name) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.attr = &attr;
  arg.size = sizeof arg;
  return pfm_get_os_event_encoding(name.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) ==
         PFM_SUCCESS;
}

// Core events of the icelakex table that libpfm4's icx tables also know: the same names for both.
const std::vector<std::string>& named_events() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    ::setenv("LIBPFM_FORCE_PMU", libpfm4_model, 1);
    if (pfm_initialize() != PFM_SUCCESS) return out;
    auto tables = perfspec::spec::EventTables::load_full(events_dir(), "icelakex");
    for (const auto& e : tables->events()) {
      if (!e.pmu.empty() || e.deprecated) continue;
      if (pfm_encodes(e.alias.name)) out.push_back(e.alias.name);
    }
    return out;
  }();
  return names;
}

double g_libpfm4_named_ns = 0;

void BM_Peer_libpfm4_named(benchmark::State& state) {
  const auto& names = named_events();
  if (names.empty()) {
    state.SkipWithError("no icelakex names known to libpfm4 (tables or libpfm4 missing)");
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const auto& n : names) benchmark::DoNotOptimize(pfm_encodes(n));
  g_libpfm4_named_ns = elapsed_ns(t0, state) / static_cast<double>(names.size());
  per_event(state, names.size());
  state.counters["names"] = static_cast<double>(names.size());
}
BENCHMARK(BM_Peer_libpfm4_named);

void BM_Named_warm(benchmark::State& state) {
  const auto& names = named_events();
  if (names.empty()) {
    state.SkipWithError("no icelakex names known to libpfm4 (tables or libpfm4 missing)");
    return;
  }
  perfspec::spec::Machine machine{fixture_root(), icelakex_options()};
  for (const auto& n : names) benchmark::DoNotOptimize(perfspec::resolve(n, machine));  // warm
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const auto& n : names) benchmark::DoNotOptimize(perfspec::resolve(n, machine));
  double ns = elapsed_ns(t0, state) / static_cast<double>(names.size());
  per_event(state, names.size());
  if (g_libpfm4_named_ns > 0) state.counters["libpfm4_over_perfspec"] = g_libpfm4_named_ns / ns;
}
BENCHMARK(BM_Named_warm);

void BM_Named_warm_reuse(benchmark::State& state) {
  const auto& names = named_events();
  if (names.empty()) {
    state.SkipWithError("no icelakex names known to libpfm4 (tables or libpfm4 missing)");
    return;
  }
  perfspec::spec::Machine machine{fixture_root(), icelakex_options()};
  perfspec::EventSet set;
  for (const auto& n : names) perfspec::resolve(n, machine, set);  // warm
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const auto& n : names) {
      perfspec::resolve(n, machine, set);
      benchmark::DoNotOptimize(set);
    }
  double ns = elapsed_ns(t0, state) / static_cast<double>(names.size());
  per_event(state, names.size());
  if (g_libpfm4_named_ns > 0) state.counters["libpfm4_over_perfspec"] = g_libpfm4_named_ns / ns;
}
BENCHMARK(BM_Named_warm_reuse);

// Unknown names: 16 of the names above with their last letter doubled (`INST_RETIRED.ANYY`), the
// error path a typo takes. perfspec also searches every name it knows for suggestions; libpfm4 only
// reports that the name is unknown.
const std::vector<std::string>& unknown_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& n : named_events()) {
      if (out.size() == 16) break;
      out.push_back(n + n.back());
    }
    return out;
  }();
  return names;
}

double g_libpfm4_unknown_ns = 0;

void BM_Peer_libpfm4_unknown(benchmark::State& state) {
  const auto& names = unknown_names();
  if (names.empty()) {
    state.SkipWithError("no icelakex names known to libpfm4 (tables or libpfm4 missing)");
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const auto& n : names)
      if (pfm_encodes(n)) state.SkipWithError(("libpfm4 knows " + n).c_str());
  g_libpfm4_unknown_ns = elapsed_ns(t0, state) / static_cast<double>(names.size());
  per_event(state, names.size());
}
BENCHMARK(BM_Peer_libpfm4_unknown);

void BM_Named_unknown_warm(benchmark::State& state) {
  const auto& names = unknown_names();
  if (names.empty()) {
    state.SkipWithError("no icelakex names known to libpfm4 (tables or libpfm4 missing)");
    return;
  }
  perfspec::spec::Machine machine{fixture_root(), icelakex_options()};
  perfspec::EventSet set;
  auto attempt = [&](const std::string& n) {
    try {
      perfspec::resolve(n, machine, set);
      return false;
    } catch (const perfspec::Error& e) {
      benchmark::DoNotOptimize(e.help().data());
      return true;
    }
  };
  for (const auto& n : names)
    if (!attempt(n)) state.SkipWithError(("perfspec knows " + n).c_str());  // and warm
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const auto& n : names) attempt(n);
  double ns = elapsed_ns(t0, state) / static_cast<double>(names.size());
  per_event(state, names.size());
  if (g_libpfm4_unknown_ns > 0) state.counters["libpfm4_over_perfspec"] = g_libpfm4_unknown_ns / ns;
}
BENCHMARK(BM_Named_unknown_warm);

// A new Machine per name: the index is opened and searched each time (what a cold process does,
// without the process start).
void BM_Named_cold(benchmark::State& state) {
  const auto& names = named_events();
  if (names.empty()) {
    state.SkipWithError("no icelakex names known to libpfm4 (tables or libpfm4 missing)");
    return;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    perfspec::spec::Machine machine{fixture_root(), icelakex_options()};
    benchmark::DoNotOptimize(perfspec::resolve(names[i++ % names.size()], machine));
  }
  per_event(state, 1);
}
BENCHMARK(BM_Named_cold);

}  // namespace
