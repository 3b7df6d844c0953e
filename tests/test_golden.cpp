// SPDX-License-Identifier: MIT
// Golden corpus: tests/golden/*.golden hold event strings with their exact expected encodings or errors.
//
//   @fixture intel_skx            the sysfs tree (tests/fixtures/<name>) for the cases that follow
//   === <event list>
//   type=4 config=0x3c | pmu=cpu leader=0      one line per resolved event: every non-zero attr field
//                                              but size, then the PMU and the leader index
//   ! <message> @<offset>                      or: the error and the byte offset it points at
//
// PERFSPEC_GOLDEN_UPDATE=1 rewrites the expectations from the current output (review the diff!).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

namespace {

struct Case {
  std::string fixture;
  std::string input;
  std::vector<std::string> expected;
  int line = 0;
};

std::vector<std::string> actual_for(const std::string& input, const perfspec::spec::Machine& m) {
  std::vector<std::string> out;
  try {
    auto set = perfspec::resolve(input, m);
    for (const auto& e : set.events)
      out.push_back(fmt::format("{} | pmu={} leader={}", test::attr_summary(e.attr), e.pmu, e.leader));
  } catch (const perfspec::Error& e) {
    out.push_back(fmt::format("! {} @{}", e.message(), e.span().begin));
  }
  return out;
}

}  // namespace

TEST_CASE("golden corpus") {
  namespace fs = std::filesystem;
  const bool update = std::getenv("PERFSPEC_GOLDEN_UPDATE") != nullptr;
  std::map<std::string, std::unique_ptr<perfspec::spec::Machine>> machines;
  std::size_t total = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(test::source_dir() + "/tests/golden"))
    if (entry.path().extension() == ".golden") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line, fixture;
    std::vector<std::string> rewritten;
    Case current;
    bool in_case = false;
    int lineno = 0;
    auto finish = [&] {
      if (!in_case) return;
      auto& m = machines[current.fixture];
      if (!m)
        m = std::make_unique<perfspec::spec::Machine>(test::fixture(current.fixture), test::no_libpfm4());
      auto actual = actual_for(current.input, *m);
      ++total;
      if (update) {
        for (auto& a : actual) rewritten.push_back(a);
      } else {
        CAPTURE(path.filename().string());
        CAPTURE(current.line);
        CAPTURE(current.input);
        CHECK(fmt::format("{}", fmt::join(actual, "\n")) ==
              fmt::format("{}", fmt::join(current.expected, "\n")));
      }
      in_case = false;
    };
    while (std::getline(in, line)) {
      ++lineno;
      if (line.starts_with("=== ")) {
        finish();
        current = Case{fixture, line.substr(4), {}, lineno};
        in_case = true;
        rewritten.push_back(line);
      } else if (line.starts_with("@fixture ")) {
        finish();
        fixture = line.substr(9);
        rewritten.push_back(line);
      } else if (line.empty() || line.starts_with("#")) {
        finish();
        rewritten.push_back(line);
      } else if (in_case) {
        current.expected.push_back(line);
      } else {
        FAIL("stray line " << lineno << " in " << path << ": " << line);
      }
    }
    finish();
    if (update) {
      std::ofstream out(path);
      for (const auto& l : rewritten) out << l << '\n';
    }
  }
  MESSAGE("golden cases: " << total);
  CHECK(total >= 150);
}
