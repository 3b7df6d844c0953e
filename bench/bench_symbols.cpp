// SPDX-License-Identifier: MIT
// The symbolizer's cost per address (issue 31): this process's own mappings given to a Symbolizer as
// the MMAP2 records a recording would hold, then addresses of libc's exported functions located.
//   BM_Symbolize_cold      a new Symbolizer per round: libc's symbol table read (and fixed up, its
//                          PLT made) for the first address, the rest from it
//   BM_Symbolize_distinct  one Symbolizer, more distinct addresses than its cache holds: a mapping
//                          and a symbol looked up for each
//   BM_Symbolize_cached    one Symbolizer, the same addresses again (as a profile's return addresses
//                          come again): each from the cache of locations
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "perfspec/symbols.hpp"

namespace {

using perfspec::record::Mmap2;
using perfspec::record::Record;
using perfspec::record::Symbolizer;

struct Mapping {
  std::uint64_t start, end, pgoff;
  std::string path;
};

// The executable mappings of this process, as /proc/self/maps lists them.
const std::vector<Mapping>& own_mappings() {
  static const std::vector<Mapping> maps = [] {
    std::vector<Mapping> out;
    std::ifstream in("/proc/self/maps");
    for (std::string line; std::getline(in, line);) {
      Mapping m{};
      char perms[8] = {};
      char path[4096] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %4095s", &m.start, &m.end, perms, &m.pgoff,
                      path) == 5 &&
          perms[2] == 'x' && path[0] == '/') {
        m.path = path;
        out.push_back(m);
      }
    }
    return out;
  }();
  return maps;
}

// Addresses inside libc's functions: each symbol of its table longer than 8 bytes, 7 bytes in, at
// the address where this process maps it.
const std::vector<std::uint64_t>& libc_addresses() {
  static const std::vector<std::uint64_t> addresses = [] {
    std::vector<std::uint64_t> out;
    for (const auto& m : own_mappings()) {
      if (m.path.find("/libc.so") == std::string::npos) continue;
      auto table = perfspec::record::SymbolTable::from_elf(m.path);
      for (const auto& sym : table.symbols())
        if (sym.end - sym.start > 8 && sym.start >= m.pgoff && sym.start + 7 < m.pgoff + (m.end - m.start))
          out.push_back(m.start + (sym.start - m.pgoff) + 7);
    }
    return out;
  }();
  return addresses;
}

Record mmap2(const Mapping& m) {
  Record r;
  r.type = static_cast<std::uint32_t>(perfspec::record::Type::mmap2);
  r.misc = perfspec::record::misc_user;
  Mmap2 b;
  b.pid = b.tid = static_cast<std::uint32_t>(::getpid());
  b.addr = m.start, b.len = m.end - m.start, b.pgoff = m.pgoff;
  b.prot = 5, b.flags = 2;
  b.filename = m.path;
  r.body = b;
  return r;
}

void feed(Symbolizer& s) {
  for (const auto& m : own_mappings()) s.apply(mmap2(m));
}

void check(benchmark::State& state, std::size_t named, std::size_t asked) {
  state.counters["addresses"] = static_cast<double>(asked);
  state.counters["named"] = static_cast<double>(named);
  if (asked == 0) state.SkipWithError("no libc functions found");
  if (named * 10 < asked * 9) state.SkipWithError("fewer than 90 % of libc's functions named");
}

void BM_Symbolize_cold(benchmark::State& state) {
  const auto& a = libc_addresses();
  const auto pid = static_cast<std::uint32_t>(::getpid());
  std::size_t named = 0;
  for (auto _ : state) {
    Symbolizer s;
    feed(s);
    named = 0;
    for (std::uint64_t x : a) named += s.locate(pid, x, perfspec::record::misc_user).symbol != nullptr;
  }
  check(state, named, a.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(a.size()));
}
BENCHMARK(BM_Symbolize_cold)->Unit(benchmark::kMillisecond);

void BM_Symbolize_distinct(benchmark::State& state) {
  const auto& a = libc_addresses();
  const auto pid = static_cast<std::uint32_t>(::getpid());
  Symbolizer s;
  feed(s);
  std::size_t named = 0;
  // Each address and 7 neighbours: more distinct addresses than the cache of locations holds.
  for (auto _ : state) {
    named = 0;
    for (std::uint64_t x : a)
      for (std::uint64_t k = 0; k < 8; ++k)
        named += s.locate(pid, x - k, perfspec::record::misc_user).symbol != nullptr;
  }
  check(state, named / 8, a.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(a.size() * 8));
}
BENCHMARK(BM_Symbolize_distinct);

void BM_Symbolize_cached(benchmark::State& state) {
  const auto& a = libc_addresses();
  const auto pid = static_cast<std::uint32_t>(::getpid());
  Symbolizer s;
  feed(s);
  const std::size_t n = std::min<std::size_t>(a.size(), 512);  // within the cache's 4,096 entries
  std::size_t named = 0;
  for (auto _ : state) {
    named = 0;
    for (std::size_t i = 0; i < n; ++i)
      named += s.locate(pid, a[i], perfspec::record::misc_user).symbol != nullptr;
  }
  check(state, named, n);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}
BENCHMARK(BM_Symbolize_cached);

}  // namespace
