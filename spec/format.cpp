// SPDX-License-Identifier: MIT
#include <bit>
#include <charconv>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::spec {

unsigned Format::width() const { return static_cast<unsigned>(std::popcount(mask())); }

std::uint64_t Format::mask() const {
  std::uint64_t m = 0;
  for (auto r : ranges) {
    std::uint64_t span =
        r.hi - r.lo == 63 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (r.hi - r.lo + 1)) - 1);
    m |= span << r.lo;
  }
  return m;
}

std::uint64_t Format::max_value() const {
  unsigned w = width();
  return w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << w) - 1;
}

// The kernel and perf walk the format's mask from bit 0 upwards (for_each_set_bit), so the k-th lowest
// bit of the mask takes value bit k whatever order the ranges were written in.
std::uint64_t Format::scatter(std::uint64_t value) const {
  std::uint64_t m = mask();
  if (ranges.size() == 1) return (value << ranges.front().lo) & m;  // contiguous: a shift
  std::uint64_t out = 0;
  for (unsigned k = 0; m != 0 && k < 64; ++k) {
    std::uint64_t bit = m & (~m + 1);  // lowest set bit
    if ((value >> k) & 1) out |= bit;
    m &= m - 1;
  }
  return out;
}

std::uint64_t Format::gather(std::uint64_t value_word) const {
  std::uint64_t out = 0;
  std::uint64_t m = mask();
  for (unsigned k = 0; m != 0 && k < 64; ++k) {
    std::uint64_t bit = m & (~m + 1);
    if (value_word & bit) out |= std::uint64_t{1} << k;
    m &= m - 1;
  }
  return out;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

unsigned parse_bit(std::string_view& s, std::string_view whole) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p == s.data())
    throw Error(ErrorKind::machine,
                fmt::format("invalid format '{}': expected a bit number at '{}'", whole, s));
  if (v > 63)
    throw Error(ErrorKind::machine, fmt::format("invalid format '{}': bit {} is beyond 63", whole, v));
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  return v;
}

}  // namespace

Format parse_format(std::string_view name, std::string_view text) {
  std::string_view whole = trim(text);
  if (whole.empty()) throw Error(ErrorKind::machine, "empty format (expected e.g. 'config:0-7')");
  if (whole.size() > 256)
    throw Error(ErrorKind::machine, fmt::format("format is {} bytes long; not a format file", whole.size()));
  Format f;
  f.name = std::string(name);
  auto colon = whole.find(':');
  if (colon == std::string_view::npos)
    throw Error(
        ErrorKind::machine,
        fmt::format("invalid format '{}': expected 'config', 'config1', 'config2' or 'config3' and ':'",
                    whole));
  std::string_view config_word = whole.substr(0, colon);
  if (config_word == "config")
    f.word = 0;
  else if (config_word == "config1")
    f.word = 1;
  else if (config_word == "config2")
    f.word = 2;
  else if (config_word == "config3")
    f.word = 3;
  else
    throw Error(ErrorKind::machine,
                fmt::format("invalid format '{}': unknown config word '{}'", whole, config_word));
  std::string_view rest = whole.substr(colon + 1);
  std::uint64_t seen = 0;
  while (true) {
    BitRange r;
    r.lo = parse_bit(rest, whole);
    r.hi = r.lo;
    if (!rest.empty() && rest.front() == '-') {
      rest.remove_prefix(1);
      r.hi = parse_bit(rest, whole);
      if (r.hi < r.lo)
        throw Error(ErrorKind::machine,
                    fmt::format("invalid format '{}': range {}-{} is reversed", whole, r.lo, r.hi));
    }
    Format one{{}, 0, {r}};
    if (seen & one.mask())
      throw Error(ErrorKind::machine,
                  fmt::format("invalid format '{}': bits {}-{} overlap an earlier range", whole, r.lo, r.hi));
    seen |= one.mask();
    f.ranges.push_back(r);
    if (rest.empty()) break;
    if (rest.front() != ',')
      throw Error(ErrorKind::machine, fmt::format("invalid format '{}': unexpected '{}'", whole, rest));
    rest.remove_prefix(1);
  }
  return f;
}

}  // namespace perfspec::spec
