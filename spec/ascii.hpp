#pragma once
// ASCII case for event and PMU names, which perf compares case-insensitively in ASCII only (no locale).
// Internal to the library.
#include <string>
#include <string_view>

namespace perfspec::spec {

constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string ascii_lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

}  // namespace perfspec::spec
