// SPDX-License-Identifier: MIT
#include "bench/corpus.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "perfspec/parse.hpp"

namespace perfspec::bench {

std::string fixture_root() { return PERFSPEC_SOURCE_DIR "/tests/fixtures/intel_skx"; }

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> out;
    std::ifstream in(PERFSPEC_SOURCE_DIR "/bench/corpus.txt");
    if (!in) throw std::runtime_error("cannot read " PERFSPEC_SOURCE_DIR "/bench/corpus.txt");
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line.front() != '#') out.push_back(line);
    return out;
  }();
  return lines;
}

std::size_t written_events(const std::string& text) {
  std::size_t n = 0;
  for (const auto& item : perfspec::parse(text).items) n += item.events.size();
  return n;
}

std::string raw_list(std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += fmt::format("cpu/event={:#x},umask={:#x}/u", i % 256, (i / 256) % 256);
  }
  return out;
}

std::string mixed_list(std::size_t n) {
  std::vector<const std::string*> singles;
  for (const auto& line : corpus())
    if (written_events(line) == 1 && line.find('{') == std::string::npos) singles.push_back(&line);
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += *singles[i % singles.size()];
  }
  return out;
}

}  // namespace perfspec::bench
