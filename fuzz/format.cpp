// SPDX-License-Identifier: MIT
// Fuzz target: the text of a sysfs `format/<term>` file (perfspec::spec::parse_format).
//
// A format that parses must be self-consistent: its ranges lie in 0..63 and do not overlap, width()
// is the popcount of mask(), every value up to max_value() survives scatter then gather, and scatter
// stays inside mask(). A violation aborts (a logic bug); perfspec::Error is the expected rejection.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "perfspec/perfspec.hpp"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "format invariant violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  perfspec::spec::Format f;
  try {
    f = perfspec::spec::parse_format("fuzz", text);
  } catch (const perfspec::Error& e) {
    (void)e.message();
    return 0;
  }
  check(f.word <= 3, "word in 0..3");
  check(!f.ranges.empty(), "at least one range");
  std::uint64_t seen = 0;
  for (const auto& r : f.ranges) {
    check(r.lo <= r.hi && r.hi <= 63, "range within 0..63 and ordered");
    perfspec::spec::Format one{{}, 0, {r}};
    check((seen & one.mask()) == 0, "ranges do not overlap");
    seen |= one.mask();
  }
  std::uint64_t mask = f.mask();
  check(mask == seen, "mask is the union of the ranges");
  check(f.width() == static_cast<unsigned>(std::popcount(mask)), "width is popcount(mask)");
  std::uint64_t max = f.max_value();
  check(f.width() >= 64 ? max == ~std::uint64_t{0} : max == (std::uint64_t{1} << f.width()) - 1, "max_value");
  for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1}, max, max / 3, max >> 1,
                          std::uint64_t{0x5a5a5a5a5a5a5a5a} & max}) {
    std::uint64_t s = f.scatter(v);
    check((s & ~mask) == 0, "scatter stays inside the mask");
    check(f.gather(s) == v, "gather(scatter(v)) == v");
  }
  check(f.scatter(max) == mask, "scatter(max_value) == mask");
  check(f.gather(~std::uint64_t{0}) == max, "gather(~0) == max_value");
  return 0;
}
