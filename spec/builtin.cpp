// SPDX-License-Identifier: MIT
#include <strings.h>

#include <array>

#include <fmt/format.h>

#include "spec/ascii.hpp"
#include "spec/builtin.hpp"

namespace perfspec::spec {
namespace {

constexpr Symbol symbol_table[] = {
    {"cpu-cycles", type_hardware, 0},
    {"cycles", type_hardware, 0},
    {"instructions", type_hardware, 1},
    {"cache-references", type_hardware, 2},
    {"cache-misses", type_hardware, 3},
    {"branch-instructions", type_hardware, 4},
    {"branches", type_hardware, 4},
    {"branch-misses", type_hardware, 5},
    {"bus-cycles", type_hardware, 6},
    {"stalled-cycles-frontend", type_hardware, 7},
    {"idle-cycles-frontend", type_hardware, 7},
    {"stalled-cycles-backend", type_hardware, 8},
    {"idle-cycles-backend", type_hardware, 8},
    {"ref-cycles", type_hardware, 9},
    {"cpu-clock", type_software, 0},
    {"task-clock", type_software, 1},
    {"page-faults", type_software, 2},
    {"faults", type_software, 2},
    {"context-switches", type_software, 3},
    {"cs", type_software, 3},
    {"cpu-migrations", type_software, 4},
    {"migrations", type_software, 4},
    {"minor-faults", type_software, 5},
    {"major-faults", type_software, 6},
    {"alignment-faults", type_software, 7},
    {"emulation-faults", type_software, 8},
    {"dummy", type_software, 9},
    {"bpf-output", type_software, 10},
    {"cgroup-switches", type_software, 11},
};

struct Spelling {
  std::string_view text;
  unsigned value;
};

// perf's legacy cache spellings (tools/perf/util/parse-events.c evsel__hw_cache*).
constexpr Spelling cache_types[] = {
    {"L1-dcache", 0}, {"l1-d", 0},     {"l1d", 0},   {"L1-data", 0},
    {"L1-icache", 1}, {"l1-i", 1},     {"l1i", 1},   {"L1-instruction", 1},
    {"LLC", 2},       {"L2", 2},       {"dTLB", 3},  {"d-tlb", 3},
    {"Data-TLB", 3},  {"iTLB", 4},     {"i-tlb", 4}, {"Instruction-TLB", 4},
    {"branch", 5},    {"branches", 5}, {"bpu", 5},   {"btb", 5},
    {"bpc", 5},       {"node", 6},
};
enum : unsigned { is_op = 0, is_result = 1 };
struct OpResult {
  std::string_view text;
  unsigned kind;
  unsigned value;
};
constexpr OpResult op_results[] = {
    {"load", is_op, 0},
    {"loads", is_op, 0},
    {"read", is_op, 0},
    {"store", is_op, 1},
    {"stores", is_op, 1},
    {"write", is_op, 1},
    {"prefetch", is_op, 2},
    {"prefetches", is_op, 2},
    {"speculative-read", is_op, 2},
    {"speculative-load", is_op, 2},
    {"refs", is_result, 0},
    {"Reference", is_result, 0},
    {"ops", is_result, 0},
    {"access", is_result, 0},
    {"misses", is_result, 1},
    {"miss", is_result, 1},
};

constexpr std::string_view type_names[] = {"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node"};
constexpr std::string_view op_names[] = {"load", "store", "prefetch"};
constexpr std::string_view result_names[] = {"refs", "misses"};
constexpr std::string_view kernel_type_names[] = {"L1D", "L1I", "LL", "DTLB", "ITLB", "BPU", "NODE"};
constexpr std::string_view kernel_op_names[] = {"READ", "WRITE", "PREFETCH"};
constexpr std::string_view kernel_result_names[] = {"ACCESS", "MISS"};

// Longest spelling that is a case-insensitive prefix of `s` and ends at '-' or at the end.
template <typename Table> const auto* longest_token(std::string_view s, const Table& table) {
  decltype(&table[0]) best = nullptr;
  for (const auto& t : table) {
    // The boundary first: it rejects most names without comparing letters.
    if (t.text.size() > s.size() || (t.text.size() < s.size() && s[t.text.size()] != '-')) continue;
    if (!ascii_iequal(s.substr(0, t.text.size()), t.text)) continue;
    if (!best || t.text.size() > best->text.size()) best = &t;
  }
  return best;
}

std::string validity(const CacheEvent& e) {
  if (cache_op_valid(e.cache, e.op)) return {};
  return fmt::format("the {} cache has no {} events (the kernel's generic cache table has none)",
                     type_names[e.cache], op_names[e.op]);
}

}  // namespace

std::string_view symbol_name(std::uint32_t type, std::uint64_t config) {
  for (const auto& s : symbol_table) {
    if (s.type != type || s.config != config) continue;
    if (s.name == "cpu-cycles" || s.name == "branch-instructions" || s.name.starts_with("idle-")) continue;
    return s.name;
  }
  return {};
}

std::span<const Symbol> symbols() { return symbol_table; }

// Lengths of the symbol names: most names that are not symbols (PMU names, table events) are
// rejected by their length alone.
constexpr std::uint64_t symbol_lengths = [] {
  std::uint64_t m = 0;
  for (const auto& s : symbol_table) m |= std::uint64_t{1} << s.name.size();
  return m;
}();

const Symbol* find_symbol(std::string_view name) {
  if (name.size() >= 64 || !(symbol_lengths >> name.size() & 1)) return nullptr;
  for (const auto& s : symbol_table)
    if (s.name == name) return &s;
  return nullptr;
}

bool cache_op_valid(unsigned cache, unsigned op) {
  switch (cache) {
    case 1: return op == 0 || op == 2;  // L1I: read, prefetch
    case 4:                             // ITLB
    case 5: return op == 0;             // BPU
    default: return op <= 2;
  }
}

std::optional<CacheName> parse_cache_name(std::string_view name) {
  // Every spelling is letters, digits and '-': names with other characters (the '_' and '.' of table
  // events) are not cache names, and most lookups of a bare name end here.
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'))
      return std::nullopt;
  const auto* type = longest_token(name, cache_types);
  if (!type) return std::nullopt;
  CacheName out;
  out.event.cache = type->value;
  std::string_view rest = name.substr(type->text.size());
  std::string_view op_text, result_text;
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '-'
    const auto* tok = longest_token(rest, op_results);
    if (!tok) return std::nullopt;
    std::string_view written = rest.substr(0, tok->text.size());
    // perf 6.1 silently ignores a second op or result (`l1-d-stores-write` counts stores); naming
    // two is a mistake worth reporting.
    if (tok->kind == is_op) {
      if (!op_text.empty() && out.invalid.empty())
        out.invalid = fmt::format("it names two operations, '{}' and '{}'", op_text, written);
      op_text = written;
      if (out.invalid.empty()) out.event.op = tok->value;
    } else {
      if (!result_text.empty() && out.invalid.empty())
        out.invalid = fmt::format("it names two results, '{}' and '{}'", result_text, written);
      result_text = written;
      if (out.invalid.empty()) out.event.result = tok->value;
    }
    rest.remove_prefix(tok->text.size());
  }
  if (out.invalid.empty()) out.invalid = validity(out.event);
  return out;
}

std::optional<CacheName> parse_dotted_cache(std::string_view name) {
  // The cache type comes first and has at most 4 letters, so the first dot is among the first 5
  // characters: most names (table events like `MEM_LOAD_RETIRED.L1_MISS`) end here without a search.
  std::size_t d1 = 0;
  while (d1 < name.size() && d1 < 5 && name[d1] != '.') ++d1;
  if (d1 == name.size() || name[d1] != '.') return std::nullopt;
  auto d2 = name.find('.', d1 + 1);
  if (d2 == std::string_view::npos || name.find('.', d2 + 1) != std::string_view::npos) return std::nullopt;
  auto find = [](std::string_view s, std::span<const std::string_view> names) -> int {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (ascii_iequal(s, names[i])) return static_cast<int>(i);
    return -1;
  };
  int c = find(name.substr(0, d1), kernel_type_names);
  int o = find(name.substr(d1 + 1, d2 - d1 - 1), kernel_op_names);
  int r = find(name.substr(d2 + 1), kernel_result_names);
  if (c < 0 || o < 0 || r < 0) return std::nullopt;
  CacheName out;
  out.event = {static_cast<unsigned>(c), static_cast<unsigned>(o), static_cast<unsigned>(r)};
  out.invalid = validity(out.event);
  return out;
}

std::string cache_event_name(const CacheEvent& e) {
  static constexpr std::string_view plural[] = {"loads", "stores", "prefetches"};
  if (e.result) return fmt::format("{}-{}-misses", cache_type_name(e.cache), cache_op_name(e.op));
  return fmt::format("{}-{}", cache_type_name(e.cache), e.op < 3 ? plural[e.op] : "?");
}

std::string_view cache_type_name(unsigned cache) { return cache < 7 ? type_names[cache] : "?"; }
std::string_view cache_op_name(unsigned op) { return op < 3 ? op_names[op] : "?"; }
std::string_view cache_result_name(unsigned result) { return result < 2 ? result_names[result] : "?"; }

}  // namespace perfspec::spec
