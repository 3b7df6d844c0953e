// SPDX-License-Identifier: MIT
#pragma once
#include <string>

#include "perfspec/catalog.hpp"

namespace perfspec::tools {

struct ListOptions {
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
  spec::ListFilter filter;
  bool pmus = false;     ///< list PMUs too
  bool verbose = false;  ///< also say on stderr what the event tables skipped, and why
  bool metrics = false;  ///< list the tables' metrics instead (filter.pattern: a group or a name)
  /// perf list's keyword given as the pattern: hw (hardware), sw (software), cache (hwcache),
  /// tracepoint, pmu, metric, metricgroup, pfm; empty: none (the pattern is one)
  std::string keyword;
  std::string format = "text";
  bool descriptions = true;  ///< false: perf's --no-desc
  bool details = false;      ///< perf's --details: the metrics' thresholds too (encodings are always shown)
  bool perf_json = false;    ///< -j: perf's JSON document (every event of the keyword's kinds, unfiltered)
};

/// `perfspec list`: text through a pager when stdout is a terminal.
int run_list(const ListOptions& options);

struct SnapshotCliOptions {
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
  std::string out;
  bool tracepoints = false;
};
int run_snapshot(const SnapshotCliOptions& options);

}  // namespace perfspec::tools
