// SPDX-License-Identifier: MIT
// perfspec_index_tables DIR...: compile the bundled index (EventTables::write_bundled_index) of each
// architecture folder of DIR (DIR itself when it holds mapfile.csv, else its subfolders that do). The
// build runs it on the event tables it installs, so that no user's first run has to; not installed.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: perfspec_index_tables DIR...\n", stderr);
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> arch_dirs;
    std::error_code ec;
    if (fs::exists(fs::path(argv[i]) / "mapfile.csv", ec)) {
      arch_dirs.emplace_back(argv[i]);
    } else {
      for (const auto& e : fs::directory_iterator(argv[i], ec))
        if (e.is_directory(ec) && fs::exists(e.path() / "mapfile.csv", ec)) arch_dirs.push_back(e.path());
      std::sort(arch_dirs.begin(), arch_dirs.end());
    }
    if (arch_dirs.empty()) {
      std::fprintf(stderr, "perfspec_index_tables: '%s' holds no mapfile.csv\n", argv[i]);
      return 1;
    }
    for (const auto& dir : arch_dirs) {
      try {
        std::size_t n = perfspec::spec::EventTables::write_bundled_index(dir.string());
        std::printf("perfspec_index_tables: %zu indexes in %s/perfspec-index\n", n, dir.c_str());
      } catch (const perfspec::Error& e) {
        std::fprintf(stderr, "perfspec_index_tables: %s: %s\n", dir.c_str(), e.message().c_str());
        return 1;
      }
    }
  }
  return 0;
}
