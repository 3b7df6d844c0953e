// SPDX-License-Identifier: MIT
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::tools {

struct StatOptions {
  std::vector<std::string> events;  ///< -e lists; empty: the default set
  std::optional<int> pid;           ///< -p
  bool all_cpus = false;            ///< -a
  std::string cpus;                 ///< -C
  unsigned interval_ms = 0;         ///< -I
  std::string format = "text";
  std::optional<std::string> field_separator;  ///< -x SEP: perf stat's CSV form instead of `format`
  std::string sysfs = "/sys";
  std::string output;  ///< -o FILE (default: stderr, as perf does)
  bool inherit = true;
  std::vector<std::string> command;
  spec::MachineOptions machine;  ///< event tables
};

/// `perfspec stat`: returns the process exit status (the command's, when one was run).
int run_stat(const StatOptions& options);

/// perf stat's default events: software ones always count; hardware ones where a PMU exists.
inline constexpr const char* default_stat_events =
    "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses";

}  // namespace perfspec::tools
