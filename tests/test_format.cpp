// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using perfspec::spec::parse_format;

namespace {
std::string format_error(std::string_view text) {
  try {
    parse_format("f", text);
  } catch (const perfspec::Error& e) {
    return e.message();
  }
  return "no error";
}
}  // namespace

TEST_CASE("format files: every config word, any number of ranges, newline optional") {
  auto f = parse_format("event", "config:0-7\n");
  CHECK(f.word == 0);
  CHECK(f.ranges.size() == 1);
  CHECK(f.width() == 8);
  CHECK(f.max_value() == 255);
  CHECK(f.mask() == 0xff);
  auto amd = parse_format("event", "config:0-7,32-35");
  CHECK(amd.width() == 12);
  CHECK(amd.mask() == 0xf000000ffULL);
  CHECK(amd.scatter(0xABC) == 0xA000000BCULL);
  CHECK(amd.gather(0xA000000BCULL) == 0xABC);
  CHECK(parse_format("x", "config1:0,2,4,6,8,20-28").word == 1);
  CHECK(parse_format("x", "config2:63").mask() == 0x8000000000000000ULL);
  CHECK(parse_format("x", "config3:0-63").max_value() == ~0ULL);
  CHECK(parse_format("x", "config3:0-63").scatter(~0ULL) == ~0ULL);
}

TEST_CASE("scatter takes the format's bits from the lowest up, whatever order they are written in") {
  auto f = parse_format("x", "config:32-35,0-7");
  CHECK(f.scatter(0xABC) == 0xA000000BCULL);
}

TEST_CASE("the krava vectors of REFERENCE.md section 4") {
  struct V {
    const char* name;
    const char* format;
    std::uint64_t value;
  };
  const V vectors[] = {{"krava01", "config:0-1,62-63", 15},
                       {"krava02", "config:10-17", 170},
                       {"krava03", "config:5", 1},
                       {"krava11", "config1:0,2,4,6,8,20-28", 27},
                       {"krava12", "config1:63", 1},
                       {"krava13", "config1:45-47", 2},
                       {"krava21", "config2:0-3,10-13,20-23,30-33,40-43,50-53,60-63", 119},
                       {"krava22", "config2:8,18,48,58", 11},
                       {"krava23", "config2:28-29,38", 2}};
  std::uint64_t words[3] = {};
  test::TempTree tree;
  tree.pmu("krava", 11);
  for (const auto& v : vectors) {
    auto f = parse_format(v.name, v.format);
    words[f.word] |= f.scatter(v.value);
    CHECK(f.gather(f.scatter(v.value)) == v.value);
    tree.write(fmt::format("bus/event_source/devices/krava/format/{}", v.name), v.format);
  }
  CHECK(words[0] == 0xc00000000002a823ULL);
  CHECK(words[1] == 0x8000400000000145ULL);
  CHECK(words[2] == 0x0400000020041d07ULL);

  // The same through the whole pipeline.
  perfspec::spec::Machine machine(tree.root());
  auto set = perfspec::resolve(
      "krava/"
      "krava01=15,krava02=170,krava03=1,krava11=27,krava12=1,krava13=2,krava21=119,krava22=11,krava23=2/",
      machine);
  REQUIRE(set.events.size() == 1);
  CHECK(set.events[0].attr.type == 11);
  CHECK(set.events[0].attr.config == 0xc00000000002a823ULL);
  CHECK(set.events[0].attr.config1 == 0x8000400000000145ULL);
  CHECK(set.events[0].attr.config2 == 0x0400000020041d07ULL);
}

TEST_CASE("malformed format files are errors that say what is wrong") {
  CHECK(format_error("config:7-0") == "invalid format 'config:7-0': range 7-0 is reversed");
  CHECK(format_error("config:0-64") == "invalid format 'config:0-64': bit 64 is beyond 63");
  CHECK(format_error("config4:1") == "invalid format 'config4:1': unknown config word 'config4'");
  CHECK(format_error("garbage") ==
        "invalid format 'garbage': expected 'config', 'config1', 'config2' or 'config3' and ':'");
  CHECK(format_error("") == "empty format (expected e.g. 'config:0-7')");
  CHECK(format_error("config:") == "invalid format 'config:': expected a bit number at ''");
  CHECK(format_error("config:1,") == "invalid format 'config:1,': expected a bit number at ''");
  CHECK(format_error("config:0-7,4") == "invalid format 'config:0-7,4': bits 4-4 overlap an earlier range");
  CHECK(format_error("config:1x") == "invalid format 'config:1x': unexpected 'x'");
  CHECK(format_error("config:-1") == "invalid format 'config:-1': expected a bit number at '-1'");
}

TEST_CASE("a malformed format file names the PMU and the file, positioned on the event") {
  test::TempTree tree;
  tree.pmu("bad", 42);
  tree.write("bus/event_source/devices/bad/format/event", "config:7-0\n");
  perfspec::spec::Machine machine(tree.root());
  std::string err = test::error_of("bad/event=1/", machine);
  CHECK(
      err ==
      fmt::format(
          "event syntax error: 'bad/event=1/'\n"
          "                     \\___ pmu 'bad': format file '{}/bus/event_source/devices/bad/format/event': "
          "invalid format 'config:7-0': range 7-0 is reversed\n",
          tree.root()));
}
