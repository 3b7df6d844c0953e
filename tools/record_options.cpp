// SPDX-License-Identifier: MIT
// perf record's option values read as perf reads them: -j's branch filter, --call-graph dwarf's size,
// --max-size, -D, -k and --switch-output.
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <ctime>
#include <optional>
#include <span>
#include <string>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "tools/record.hpp"

namespace perfspec::tools {

std::uint64_t branch_filter(std::string_view text) {
  static constexpr std::pair<std::string_view, std::uint64_t> names[] = {
      {"u", 1u << 0},          {"k", 1u << 1},         {"hv", 1u << 2},        {"any", 1u << 3},
      {"any_call", 1u << 4},   {"any_ret", 1u << 5},   {"ind_call", 1u << 6},  {"abort_tx", 1u << 7},
      {"in_tx", 1u << 8},      {"no_tx", 1u << 9},     {"cond", 1u << 10},     {"stack", 1u << 11},
      {"ind_jmp", 1u << 12},   {"call", 1u << 13},     {"no_flags", 1u << 14}, {"no_cycles", 1u << 15},
      {"save_type", 1u << 16}, {"hw_index", 1u << 17}, {"priv", 1u << 18},     {"counter", 1u << 19}};
  std::uint64_t mode = 0;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = text.find(',', at);
    const std::string_view word =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    auto same = [&](std::string_view name) {
      return name.size() == word.size() &&
             std::equal(name.begin(), name.end(), word.begin(),
                        [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
    };
    const auto* hit =
        std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return same(n.first); });
    if (hit == std::end(names))
      throw Error(ErrorKind::usage, fmt::format("-j {}: unknown branch filter '{}'", text, word),
                  "u, k, hv, any, any_call, any_ret, ind_call, ind_jmp, call, cond, abort_tx, in_tx, no_tx, "
                  "no_flags, no_cycles, save_type, stack, hw_index, priv, counter");
    mode |= hit->second;
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  // perf's default, any branch, where only privilege levels are named (which perf then drops: kept
  // here, docs/perf-compatibility.md)
  constexpr std::uint64_t levels = 0x7;
  if ((mode & ~levels) == 0) mode |= 1u << 3;
  return mode;
}

std::optional<std::uint32_t> dwarf_stack_size(std::string_view mode) {
  if (mode.empty() || mode == "fp") return std::nullopt;
  if (mode != "dwarf" && !mode.starts_with("dwarf,"))
    throw Error(ErrorKind::usage, fmt::format("--call-graph {}: perfspec records fp or dwarf[,SIZE]", mode));
  if (user_regs_mask == 0)
    throw Error(ErrorKind::usage, "--call-graph dwarf: this arch's user registers are not known to perfspec");
  if (mode == "dwarf") return 8192;
  std::string_view text = mode.substr(6);
  std::uint64_t size = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (ec == std::errc{} && end == text.data() + text.size()) size = (size + 7) / 8 * 8;
  if (ec != std::errc{} || end != text.data() + text.size() || size == 0 || size > 65528)
    throw Error(ErrorKind::usage,
                fmt::format("--call-graph {}: the stack dump size is 8 to 65528 bytes", mode));
  return static_cast<std::uint32_t>(size);
}

namespace {

// perf's parse_tag_value: a number and one unit of `tags` (the unit's multiplier), nothing after it
// (perf takes what follows as well: a deliberate difference); nullopt otherwise or on overflow.
struct Tag {
  char unit;
  std::uint64_t multiplier;
};
constexpr Tag size_tags[] = {{'B', 1}, {'K', 1ULL << 10}, {'M', 1ULL << 20}, {'G', 1ULL << 30}};
constexpr Tag time_tags[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
std::optional<std::uint64_t> tag_value(std::string_view text, std::span<const Tag> tags) {
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  const std::size_t at = static_cast<std::size_t>(end - text.data());
  if (ec != std::errc{} || at == 0 || at + 1 != text.size()) return std::nullopt;
  for (const Tag& t : tags)
    if (text[at] == t.unit && n <= ~std::uint64_t{0} / t.multiplier) return n * t.multiplier;
  return std::nullopt;
}

}  // namespace

std::uint64_t record_max_size(std::string_view text) {
  if (auto size = tag_value(text, size_tags)) return *size;
  throw Error(
      ErrorKind::usage,
      fmt::format("--max-size '{}': not a size: a number and its unit, B, K, M or G (e.g. 200M)", text));
}

RecordDelay record_delay(std::string_view text) {
  auto refuse = [&] {
    return Error(ErrorKind::usage,
                 fmt::format("-D/--delay '{}': not a delay: milliseconds after the start (-1: start "
                             "disabled), or ranges of them to sample in, e.g. '-D 10-20,30-40'",
                             text));
  };
  RecordDelay d;
  long whole = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
  if (ec == std::errc{} && end == text.data() + text.size() && whole >= -1 && whole <= INT_MAX &&
      whole != 0) {
    d.initial = static_cast<int>(whole);
    return d;
  }
  // START-END, then ,START-END ...: whitespace around the numbers, as perf's sscanf takes it
  std::size_t at = 0;
  auto spaces = [&] {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  };
  auto number = [&] {
    spaces();
    int n = 0;
    auto [e, err] = std::from_chars(text.data() + at, text.data() + text.size(), n);
    if (err != std::errc{} || n < 0 || text[at] == '-') throw refuse();
    at = static_cast<std::size_t>(e - text.data());
    spaces();
    return n;
  };
  while (at < text.size() || d.ranges.empty()) {
    if (!d.ranges.empty()) {
      if (text[at] != ',') throw refuse();
      ++at;
    }
    const int start = number();
    if (at >= text.size() || text[at] != '-') throw refuse();
    ++at;
    const int stop = number();
    if (stop <= start || (!d.ranges.empty() && start <= d.ranges.back().second)) throw refuse();
    d.ranges.emplace_back(start, stop);
  }
  d.initial = d.ranges.front().first;
  return d;
}

std::optional<std::int32_t> clock_id(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string name;
  for (char c : text) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.starts_with("clock_")) name = name.substr(6);
  static const std::pair<const char*, std::int32_t> clocks[] = {{"monotonic", CLOCK_MONOTONIC},
                                                                {"monotonic_raw", CLOCK_MONOTONIC_RAW},
                                                                {"realtime", CLOCK_REALTIME},
                                                                {"boottime", CLOCK_BOOTTIME},
                                                                {"tai", CLOCK_TAI},
                                                                {"mono", CLOCK_MONOTONIC},
                                                                {"raw", CLOCK_MONOTONIC_RAW},
                                                                {"real", CLOCK_REALTIME},
                                                                {"boot", CLOCK_BOOTTIME}};
  for (auto [n, id] : clocks)
    if (name == n) return id;
  std::int32_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec == std::errc{} && end == text.data() + text.size() && id >= 0) return id;
  throw Error(ErrorKind::usage,
              fmt::format("-k {}: not a clock (monotonic, monotonic_raw, realtime, boottime, "
                          "tai, or a number)",
                          text));
}

SwitchOutput switch_output(std::string_view what) {
  SwitchOutput s;
  if (what == "signal") {
    s.signal = true;
    return s;
  }
  // sizes' units in capitals, times' in small letters; zero is no threshold
  if (auto size = tag_value(what, size_tags); size && *size) {
    s.size = *size;
    return s;
  }
  if (auto seconds = tag_value(what, time_tags); seconds && *seconds && *seconds <= 0xffffffffu) {
    s.seconds = static_cast<unsigned>(*seconds);
    return s;
  }
  throw Error(
      ErrorKind::usage,
      fmt::format("--switch-output '{}': 'signal' (SIGUSR2), a size (a number and B, K, M or G: 100M) "
                  "or a time (a number and s, m, h or d: 30s)",
                  what));
}

std::string timestamped(const std::string& path) {
  ::timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm tm{};
  ::localtime_r(&tv.tv_sec, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
  return fmt::format("{}.{}{:02}", path, stamp, tv.tv_usec / 10000);
}

}  // namespace perfspec::tools
