// SPDX-License-Identifier: MIT
#include "print/report_header_parts.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "perfspec/decode.hpp"
#include "perfspec/error.hpp"
#include "spec/abi.hpp"
#include "spec/perf_enum_names.hpp"

namespace perfspec::header {

namespace {

struct Bit {
  std::string_view name;
  unsigned bit;
};
// perf 6.12's __p_sample_type list, in its order (not the bits'): TRANSACTION is not in it.
constexpr Bit sample_bits[] = {{"IP", 0},
                               {"TID", 1},
                               {"TIME", 2},
                               {"ADDR", 3},
                               {"READ", 4},
                               {"CALLCHAIN", 5},
                               {"ID", 6},
                               {"CPU", 7},
                               {"PERIOD", 8},
                               {"STREAM_ID", 9},
                               {"RAW", 10},
                               {"BRANCH_STACK", 11},
                               {"REGS_USER", 12},
                               {"STACK_USER", 13},
                               {"IDENTIFIER", 16},
                               {"REGS_INTR", 18},
                               {"DATA_SRC", 15},
                               {"WEIGHT", 14},
                               {"PHYS_ADDR", 19},
                               {"AUX", 20},
                               {"CGROUP", 21},
                               {"DATA_PAGE_SIZE", 22},
                               {"CODE_PAGE_SIZE", 23},
                               {"WEIGHT_STRUCT", 24}};

// perf's __p_bits: the named bits set in `value`, joined by `|`; bits it has no name for are left out.
template <typename Names> std::string bit_names(std::uint64_t value, const Names& names) {
  std::string out;
  for (const auto& [name, bit] : names)
    if (value >> bit & 1) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}
std::string bit_list(std::uint64_t value, std::string_view field) {
  if (field == "sample_type") return bit_names(value, sample_bits);
  std::vector<Bit> names;  // read_format and branch_sample_type: perf lists them in bit order
  auto all = attr_bit_names(field);
  for (unsigned bit = 0; bit < all.size(); ++bit) names.push_back({all[bit], bit});
  return bit_names(value, names);
}

// C's %#x: no 0x for 0
std::string c_hex(std::uint64_t v) { return v ? fmt::format("{:#x}", v) : "0"; }
std::string with_name(std::string number, std::string_view name) {
  return name.empty() ? number : fmt::format("{} ({})", number, name);
}

std::string type_text(const Attr& a, const spec::Pmu* pmu, const spec::Machine* machine) {
  if (pmu) return fmt::format("{} ({})", a.type, pmu->name());
  // perf's placeholder core PMU where sysfs has none (a guest without a PMU): `cpu`, of type RAW
  if (machine && a.type == spec::type_raw && machine->core_pmus().empty())
    return fmt::format("{} (cpu)", a.type);
  return with_name(fmt::format("{}", a.type), spec::perf_name(spec::perf_type_names, a.type));
}

// perf's __p_config_id: an alias of the type's PMU with this config, else by the type.
std::string config_text(const Attr& a, const spec::Pmu* pmu, const spec::Machine* machine) {
  const std::string hex = c_hex(a.config);
  if (machine && pmu)
    if (auto name = config_name(*machine, *pmu, a.config)) return with_name(hex, *name);
  switch (a.type) {
    case spec::type_hardware: return with_name(hex, spec::perf_name(spec::perf_hw_names, a.config));
    case spec::type_software: return with_name(hex, spec::perf_name(spec::perf_sw_names, a.config));
    case spec::type_hw_cache: {
      auto cache = spec::perf_name(spec::perf_cache_names, a.config & 0xff),
           op = spec::perf_name(spec::perf_cache_op_names, a.config >> 8 & 0xff),
           result = spec::perf_name(spec::perf_cache_result_names, a.config >> 16 & 0xff);
      if (cache.empty() || op.empty() || result.empty()) return hex;
      return fmt::format("{} ({} | {} | {})", hex, result, op, cache);
    }
    case spec::type_tracepoint: {
      auto name = machine ? tracepoint_name(*machine, a.config) : std::nullopt;
      return with_name(hex, name ? std::string_view(*name) : std::string_view{});
    }
    default: return hex;
  }
}

std::string label(std::string_view field) {
  if (field == "sample_period") return "{ sample_period, sample_freq }";
  if (field == "wakeup_events") return "{ wakeup_events, wakeup_watermark }";
  if (field == "config1") return "{ bp_addr, config1 }";
  if (field == "config2") return "{ bp_len, config2 }";
  return std::string(field);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> attr_fields(const Attr& attr, const spec::Machine* machine) {
  const spec::Pmu* pmu = machine ? machine->pmu_of_type(attr.type) : nullptr;
  std::vector<std::pair<std::string, std::string>> out;
  for (const AttrField& f : perfspec::attr_fields()) {
    const std::string_view n = f.name;
    const std::uint64_t v = f.get(attr);
    if (n == "type") {
      out.emplace_back("type", type_text(attr, pmu, machine));
    } else if (n == "config") {
      out.emplace_back("config", config_text(attr, pmu, machine));
    } else if (v == 0 || n == "config3") {  // perf 6.12 does not print config3
      continue;
    } else if (n == "sample_type" || n == "read_format" || n == "branch_sample_type") {
      out.emplace_back(label(n), bit_list(v, n));
    } else if (n == "config1" || n == "config2" || n.starts_with("sample_regs")) {
      out.emplace_back(label(n), c_hex(v));
    } else if (f.is_signed) {
      out.emplace_back(label(n), fmt::format("{}", static_cast<std::int64_t>(v)));
    } else {
      out.emplace_back(label(n), fmt::format("{}", v));
    }
  }
  return out;
}

std::string unit_number(std::uint64_t n) {
  constexpr char units[] = "BKMG";
  int i = 0;
  while (n / 1024 > 1 && i < 3) {
    n /= 1024;
    ++i;
  }
  return fmt::format("{}{}", n, units[i]);
}

std::string bitmap_list(const std::vector<std::uint64_t>& words, std::uint64_t bits) {
  auto set = [&](std::uint64_t b) { return b / 64 < words.size() && (words[b / 64] >> (b % 64) & 1); };
  std::string out;
  for (std::uint64_t b = 0; b < bits; ++b) {
    if (!set(b)) continue;
    std::uint64_t top = b;
    while (top + 1 < bits && set(top + 1)) ++top;
    out += fmt::format("{}{}", out.empty() ? "" : ",", b);
    if (top > b) out += fmt::format("-{}", top);
    b = top;
    if (out.size() >= 99) break;
  }
  return out.substr(0, 99);  // perf's buffer of 100
}

std::string_view clockid_name(std::uint32_t clockid) {
  switch (clockid) {
    case 1: return "monotonic";
    case 4: return "monotonic_raw";
    case 0: return "realtime";
    case 7: return "boottime";
    case 11: return "tai";
    default: return "(not found)";
  }
}

std::string caps_line(std::string_view pmu, const std::vector<std::string>& caps) {
  if (caps.empty()) return fmt::format("# {} pmu capabilities: not available\n", pmu);
  return fmt::format("# {} pmu capabilities: {}\n", pmu, fmt::join(caps, ", "));
}

std::string cmdline_line(const std::vector<std::string>& words) {
  std::string out = "# cmdline : ";
  for (const auto& w : words) {
    for (char c : w) out += c == '\'' ? std::string("\\'") : std::string(1, c);
    out += ' ';
  }
  return out + '\n';
}

std::string cpu_list(std::string_view list) {
  std::set<long> cpus;
  std::size_t at = 0;
  auto number = [&](long& v) {
    auto [end, ec] = std::from_chars(list.data() + at, list.data() + list.size(), v);
    if (ec != std::errc{} || v < 0) return false;
    at = static_cast<std::size_t>(end - list.data());
    return true;
  };
  while (at < list.size()) {
    long lo = 0, hi = 0;
    bool ok = number(lo);
    hi = lo;
    if (ok && at < list.size() && list[at] == '-') {
      ++at;
      ok = number(hi) && hi >= lo && hi - lo < 65536;
    }
    if (!ok || (at < list.size() && list[at] != ',' && list[at] != '\n'))
      throw Error(ErrorKind::io, fmt::format("'{}' is not a CPU list", list));
    for (long c = lo; c <= hi; ++c) cpus.insert(c);
    ++at;
  }
  if (cpus.empty()) return "-1";  // perf's map of "any CPU"
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    long lo = *it, hi = lo;
    while (++it != cpus.end() && *it == hi + 1) ++hi;
    out += fmt::format("{}{}", out.empty() ? "" : ",", lo);
    if (hi > lo) out += fmt::format("-{}", hi);
  }
  return out;
}

std::string pmu_mappings_line(const std::vector<std::pair<std::uint32_t, std::string>>& pmus) {
  if (pmus.empty()) return "# pmu mappings: not available\n";
  std::string out = "# pmu mappings: ";
  for (std::size_t i = 0; i < pmus.size(); ++i)
    out += fmt::format("{}{} = {}", i ? ", " : "", pmus[i].second, pmus[i].first);
  return out + '\n';
}

std::string sample_time_lines(std::pair<std::uint64_t, std::uint64_t> first_last) {
  auto usec = [](std::uint64_t t) {
    return fmt::format("{}.{:06}", t / 1'000'000'000, t % 1'000'000'000 / 1000);
  };
  const double ms = static_cast<double>(first_last.second - first_last.first) / 1e6;
  return fmt::format(
      "# time of first sample : {}\n# time of last sample : {}\n# sample duration : {:10.3f} ms\n",
      usec(first_last.first), usec(first_last.second), ms);
}

}  // namespace perfspec::header
