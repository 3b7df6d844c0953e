// SPDX-License-Identifier: MIT
#pragma once
// Small facts about event and PMU names: ASCII case, which perf compares case-insensitively in ASCII
// only (no locale), and glob patterns. Internal to the library.
#include <string>
#include <string_view>

namespace perfspec::spec {

constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// Whether a name is written as an fnmatch(3) pattern (`uncore_imc_*`, `sched:sched_sw*`).
inline bool has_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

/// Equal but for ASCII case (perf's strcasecmp on names and metric groups).
constexpr bool ascii_iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

inline std::string ascii_lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

}  // namespace perfspec::spec
