// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include "spec/builtin.hpp"

using namespace perfspec::spec;

namespace {
std::uint64_t cache_config(std::string_view name) {
  auto c = parse_cache_name(name);
  REQUIRE(c);
  REQUIRE(c->invalid.empty());
  return c->event.config();
}
}  // namespace

TEST_CASE("hardware and software symbols with all their spellings") {
  const std::pair<const char*, std::pair<unsigned, unsigned>> cases[] = {{"cpu-cycles", {0, 0}},
                                                                         {"cycles", {0, 0}},
                                                                         {"instructions", {0, 1}},
                                                                         {"cache-references", {0, 2}},
                                                                         {"cache-misses", {0, 3}},
                                                                         {"branch-instructions", {0, 4}},
                                                                         {"branches", {0, 4}},
                                                                         {"branch-misses", {0, 5}},
                                                                         {"bus-cycles", {0, 6}},
                                                                         {"stalled-cycles-frontend", {0, 7}},
                                                                         {"idle-cycles-frontend", {0, 7}},
                                                                         {"stalled-cycles-backend", {0, 8}},
                                                                         {"idle-cycles-backend", {0, 8}},
                                                                         {"ref-cycles", {0, 9}},
                                                                         {"cpu-clock", {1, 0}},
                                                                         {"task-clock", {1, 1}},
                                                                         {"page-faults", {1, 2}},
                                                                         {"faults", {1, 2}},
                                                                         {"context-switches", {1, 3}},
                                                                         {"cs", {1, 3}},
                                                                         {"cpu-migrations", {1, 4}},
                                                                         {"migrations", {1, 4}},
                                                                         {"minor-faults", {1, 5}},
                                                                         {"major-faults", {1, 6}},
                                                                         {"alignment-faults", {1, 7}},
                                                                         {"emulation-faults", {1, 8}},
                                                                         {"dummy", {1, 9}},
                                                                         {"bpf-output", {1, 10}},
                                                                         {"cgroup-switches", {1, 11}}};
  for (const auto& [name, tc] : cases) {
    CAPTURE(name);
    const auto* s = find_symbol(name);
    REQUIRE(s);
    CHECK(s->type == tc.first);
    CHECK(s->config == tc.second);
  }
  CHECK(symbols().size() == std::size(cases));
  CHECK(find_symbol("CYCLES") == nullptr);
}

TEST_CASE("every cache spelling") {
  // cache | op << 8 | result << 16
  const std::pair<const char*, unsigned> types[] = {
      {"L1-dcache", 0}, {"l1-d", 0},     {"l1d", 0},   {"L1-data", 0},
      {"L1-icache", 1}, {"l1-i", 1},     {"l1i", 1},   {"L1-instruction", 1},
      {"LLC", 2},       {"L2", 2},       {"dTLB", 3},  {"d-tlb", 3},
      {"Data-TLB", 3},  {"iTLB", 4},     {"i-tlb", 4}, {"Instruction-TLB", 4},
      {"branch", 5},    {"branches", 5}, {"bpu", 5},   {"btb", 5},
      {"bpc", 5},       {"node", 6}};
  for (const auto& [t, v] : types) {
    CAPTURE(t);
    CHECK(cache_config(t) == v);  // default: read, access
    CHECK(cache_config(std::string(t) + "-loads") == v);
    CHECK(cache_config(std::string(t) + "-load-misses") == (v | 0x10000));
    CHECK(cache_config(std::string(t) + "-misses-load") == (v | 0x10000));  // either order
  }
  const std::pair<const char*, unsigned> ops[] = {{"load", 0},
                                                  {"loads", 0},
                                                  {"read", 0},
                                                  {"store", 1},
                                                  {"stores", 1},
                                                  {"write", 1},
                                                  {"prefetch", 2},
                                                  {"prefetches", 2},
                                                  {"speculative-read", 2},
                                                  {"speculative-load", 2}};
  for (const auto& [o, v] : ops) {
    CAPTURE(o);
    CHECK(cache_config(std::string("LLC-") + o) == (2 | v << 8));
  }
  const std::pair<const char*, unsigned> results[] = {{"refs", 0},   {"Reference", 0}, {"ops", 0},
                                                      {"access", 0}, {"misses", 1},    {"miss", 1}};
  for (const auto& [r, v] : results) {
    CAPTURE(r);
    CHECK(cache_config(std::string("dTLB-stores-") + r) == (3 | 1 << 8 | v << 16));
  }
  CHECK(cache_config("LLC-SPECULATIVE-READ-MISS") == 0x10202);  // case-insensitive
  CHECK(cache_config("NODE-prefetch-misses") == 0x10206);
}

TEST_CASE("cache validity: L1I read and prefetch; ITLB and BPU read only") {
  CHECK(parse_cache_name("L1-icache-stores")->invalid ==
        "the L1-icache cache has no store events (the kernel's generic cache table has none)");
  CHECK(parse_cache_name("L1-icache-prefetches")->invalid.empty());
  CHECK_FALSE(parse_cache_name("iTLB-prefetches")->invalid.empty());
  CHECK_FALSE(parse_cache_name("branch-stores")->invalid.empty());
  CHECK(parse_cache_name("branch-load-misses")->invalid.empty());
  CHECK(parse_cache_name("node-stores")->invalid.empty());
}

TEST_CASE("two ops or two results are an error, not silently the first") {
  CHECK(parse_cache_name("L1-dcache-loads-stores")->invalid ==
        "it names two operations, 'loads' and 'stores'");
  CHECK(parse_cache_name("l1-d-stores-write")->invalid == "it names two operations, 'stores' and 'write'");
  CHECK(parse_cache_name("LLC-misses-refs")->invalid == "it names two results, 'misses' and 'refs'");
  CHECK(parse_cache_name("LLC-load-miss-miss")->invalid == "it names two results, 'miss' and 'miss'");
}

TEST_CASE("names that are not cache names") {
  CHECK_FALSE(parse_cache_name("l1d_cache"));
  CHECK_FALSE(parse_cache_name("LLC-foo"));
  CHECK_FALSE(parse_cache_name("nodes"));
  CHECK_FALSE(parse_cache_name("LLC-"));
}

TEST_CASE("the dotted generic form uses the kernel's enum names") {
  CHECK(parse_dotted_cache("L1D.READ.MISS")->event.config() == 0x10000);
  CHECK(parse_dotted_cache("ll.write.access")->event.config() == 0x102);
  CHECK(parse_dotted_cache("NODE.PREFETCH.MISS")->event.config() == 0x10206);
  CHECK_FALSE(parse_dotted_cache("ITLB.WRITE.MISS")->invalid.empty());
  CHECK_FALSE(parse_dotted_cache("L1D.READ"));
  CHECK_FALSE(parse_dotted_cache("L1D.READ.MISS.X"));
  CHECK_FALSE(parse_dotted_cache("L1D.REPLACEMENT.ANY"));
  CHECK(parse_dotted_cache("dtlb.read.miss")->event.config() == 0x10003);  // a 4-letter type: its dot is 5th
  CHECK(parse_dotted_cache("BPU.READ.ACCESS")->event.config() == 0x5);
  CHECK_FALSE(parse_dotted_cache("NODES.READ.MISS"));
  CHECK_FALSE(parse_dotted_cache(".READ.MISS"));
  CHECK_FALSE(parse_dotted_cache("L1D..MISS"));
  CHECK_FALSE(parse_dotted_cache("L1D.READ."));
  CHECK_FALSE(parse_dotted_cache("MEM_LOAD_RETIRED.L1_MISS"));
  CHECK_FALSE(parse_dotted_cache("L1D"));
  CHECK_FALSE(parse_dotted_cache(""));
}

TEST_CASE("perf's names for cache events, used by list and decode") {
  CHECK(cache_event_name({0, 0, 0}) == "L1-dcache-loads");
  CHECK(cache_event_name({0, 0, 1}) == "L1-dcache-load-misses");
  CHECK(cache_event_name({2, 2, 0}) == "LLC-prefetches");
  CHECK(cache_event_name({6, 1, 1}) == "node-store-misses");
  // every name parses back to its event
  for (unsigned c = 0; c < 7; ++c)
    for (unsigned o = 0; o < 3; ++o)
      for (unsigned r = 0; r < 2; ++r) {
        auto parsed = parse_cache_name(cache_event_name({c, o, r}));
        REQUIRE(parsed);
        CHECK(parsed->event.config() == CacheEvent{c, o, r}.config());
      }
}
