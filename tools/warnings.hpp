// SPDX-License-Identifier: MIT
#pragma once
// Warnings the tools print once per run, on stderr, about the machine they used.
#include <cstdio>

#include "perfspec/spec.hpp"

namespace perfspec::tools {

/// The compiled table index was not kept because the cache folder is not safe to use: named events
/// still resolve (from the JSON), but the user should know why every run parses the tables again.
inline void warn_about_table_cache(const spec::Machine& machine) {
  if (machine.options().events_dir.empty()) return;
  if (auto problem = machine.table_cache_problem(); !problem.empty())
    std::fprintf(stderr, "perfspec: warning: %s\n", problem.c_str());
}

}  // namespace perfspec::tools
