// SPDX-License-Identifier: MIT
// Record decoding (issue 17): records per second through record::PerfData::next over a perf.data file,
// the JSON-free path of `perfspec script`. The file is PERFSPEC_BENCH_PERF_DATA when set (bench/record.sh
// records a large one with perf 6.12), else tests/fixtures/perf_data/callchain.data (a smoke run: 81
// records, so the figures say little).
//
//   BM_PerfData_next          next() over every record, nothing read but the record's type
//   BM_PerfData_next_fields   the same, reading what the text path prints of a sample (tid, time, ip, the
//                             callchain) and the name of its event
//   BM_PerfData_decode_at     decode_at over every offset next() returned (the time-sorted pass of script)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "perfspec/perf_data.hpp"

namespace {

using namespace perfspec::record;

std::string path() {
  if (const char* p = std::getenv("PERFSPEC_BENCH_PERF_DATA"); p && *p) return p;
  return std::string(PERFSPEC_SOURCE_DIR) + "/tests/fixtures/perf_data/callchain.data";
}

PerfData& file() {
  static PerfData f = PerfData::open(path());
  return f;
}

void counters(benchmark::State& state, std::uint64_t records, std::uint64_t samples) {
  state.SetItemsProcessed(static_cast<std::int64_t>(records * state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(file().data_size() * state.iterations()));
  state.counters["records"] = static_cast<double>(records);
  state.counters["samples"] = static_cast<double>(samples);
  state.counters["ns_per_record"] =
      benchmark::Counter(static_cast<double>(records * state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_PerfData_next(benchmark::State& state) {
  PerfData& f = file();
  Record r;
  std::uint64_t records = 0, samples = 0;
  for (auto _ : state) {
    f.rewind();
    records = samples = 0;
    while (f.next(r)) {
      ++records;
      samples += r.type == static_cast<std::uint32_t>(Type::sample);
    }
    benchmark::DoNotOptimize(samples);
  }
  counters(state, records, samples);
}
BENCHMARK(BM_PerfData_next)->Unit(benchmark::kMillisecond);

void BM_PerfData_next_fields(benchmark::State& state) {
  PerfData& f = file();
  Record r;
  std::uint64_t records = 0, samples = 0;
  for (auto _ : state) {
    f.rewind();
    records = samples = 0;
    std::uint64_t h = 0;
    while (f.next(r)) {
      ++records;
      if (const auto* s = r.get<Sample>()) {
        ++samples;
        h += s->tid + s->time + s->ip + f.event_name(r.attr).size();
        for (std::uint64_t ip : s->callchain) h ^= ip;
      }
    }
    benchmark::DoNotOptimize(h);
  }
  counters(state, records, samples);
}
BENCHMARK(BM_PerfData_next_fields)->Unit(benchmark::kMillisecond);

void BM_PerfData_decode_at(benchmark::State& state) {
  PerfData& f = file();
  Record r;
  std::vector<std::uint64_t> offsets;
  std::uint64_t samples = 0;
  f.rewind();
  while (f.next(r)) {
    offsets.push_back(r.offset);
    samples += r.type == static_cast<std::uint32_t>(Type::sample);
  }
  for (auto _ : state) {
    std::uint64_t h = 0;
    for (std::uint64_t o : offsets) {
      f.decode_at(o, r);
      h += r.size;
    }
    benchmark::DoNotOptimize(h);
  }
  counters(state, offsets.size(), samples);
}
BENCHMARK(BM_PerfData_decode_at)->Unit(benchmark::kMillisecond);

}  // namespace
