// SPDX-License-Identifier: MIT
#include "runtime/cpulist.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "perfspec/error.hpp"

namespace perfspec::runtime {

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> out;
  std::string_view s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  if (s.empty()) return out;
  auto number = [&](std::string_view& rest) {
    int v = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec != std::errc{} || p == rest.data() || v < 0 || v > 65535)
      throw Error(ErrorKind::bad_value, fmt::format("invalid CPU list '{}'", text));
    rest.remove_prefix(static_cast<std::size_t>(p - rest.data()));
    return v;
  };
  while (!s.empty()) {
    int lo = number(s), hi = lo;
    if (!s.empty() && s.front() == '-') {
      s.remove_prefix(1);
      hi = number(s);
      if (hi < lo)
        throw Error(ErrorKind::bad_value,
                    fmt::format("invalid CPU list '{}': range {}-{} is reversed", text, lo, hi));
    }
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    if (s.empty()) break;
    if (s.front() != ',') throw Error(ErrorKind::bad_value, fmt::format("invalid CPU list '{}'", text));
    s.remove_prefix(1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string line;
  if (std::getline(in, line)) {
    try {
      return parse_cpu_list(line);
    } catch (const Error&) {
    }
  }
  std::vector<int> out;
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < std::max(1L, n); ++c) out.push_back(static_cast<int>(c));
  return out;
}

}  // namespace perfspec::runtime
