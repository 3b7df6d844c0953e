// SPDX-License-Identifier: MIT
#pragma once
// Built-in event tables: the kernel's generic hardware and software events with every spelling perf
// accepts, and the generic cache events (PERF_TYPE_HW_CACHE).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "spec/abi.hpp"

namespace perfspec::spec {

struct Symbol {
  std::string_view name;
  std::uint32_t type;
  std::uint64_t config;
};

/// Every hardware and software symbol spelling, in perf's order.
std::span<const Symbol> symbols();
/// perf's name of a hardware or software event (evsel__hw_names, evsel__sw_names): the first spelling
/// of its config, `cycles` rather than `cpu-cycles`, `branches` rather than `branch-instructions`,
/// never `idle-*`; empty for a config perf does not name.
std::string_view symbol_name(std::uint32_t type, std::uint64_t config);
/// Hardware or software symbol by exact name (perf's lexer is case-sensitive here), or nullptr.
const Symbol* find_symbol(std::string_view name);

struct CacheEvent {
  unsigned cache = 0;   ///< PERF_COUNT_HW_CACHE_L1D ... NODE
  unsigned op = 0;      ///< READ, WRITE, PREFETCH
  unsigned result = 0;  ///< ACCESS, MISS
  std::uint64_t config() const { return cache | (std::uint64_t{op} << 8) | (std::uint64_t{result} << 16); }
};

/// Outcome of reading a name as a cache event.
struct CacheName {
  CacheEvent event;
  std::string invalid;  ///< non-empty: the name is a cache name but the combination is not valid
};

/// `L1-dcache-load-misses` and every other spelling: longest case-insensitive prefix for the cache,
/// then an op and/or a result in either order. nullopt when the name is not a cache name at all.
std::optional<CacheName> parse_cache_name(std::string_view name);
/// The dotted generic form `L1D.READ.MISS` (kernel enum names, case-insensitive).
std::optional<CacheName> parse_dotted_cache(std::string_view name);
/// Whether the kernel's generic tables define `op` for `cache` (L1I: read, prefetch; ITLB, BPU: read).
bool cache_op_valid(unsigned cache, unsigned op);
/// perf's name for a cache event: `L1-dcache-loads` (access), `L1-dcache-load-misses` (miss).
std::string cache_event_name(const CacheEvent& event);
/// Canonical names for printing: `L1-dcache`, `load`, `refs`, ...
std::string_view cache_type_name(unsigned cache);
std::string_view cache_op_name(unsigned op);
std::string_view cache_result_name(unsigned result);

}  // namespace perfspec::spec
