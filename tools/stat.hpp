// SPDX-License-Identifier: MIT
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "perfspec/spec.hpp"
#include "perfspec/stat.hpp"

namespace perfspec::tools {

struct StatOptions {
  std::vector<std::string> events;   ///< -e lists; empty: the default set (unless -M)
  std::vector<std::string> metrics;  ///< -M: metric names, groups, or `NAME = EXPR`
  int detailed = 0;                  ///< -d (given up to three times): perf's detailed events
  bool metric_no_group = false, metric_no_merge = false, metric_no_threshold = false;  ///< perf's options
  std::optional<int> pid;                                                              ///< -p
  std::string tids;          ///< -t: thread ids, comma-separated
  bool all_cpus = false;     ///< -a
  std::string cpus;          ///< -C
  unsigned interval_ms = 0;  ///< -I
  std::string format = "text";
  bool big_num = true;  ///< -B (perf's default): counts in perf's text layout grouped as the locale says
  std::optional<std::string> field_separator;  ///< -x SEP: perf stat's CSV form instead of `format`
  std::string sysfs = "/sys";
  std::string output;  ///< -o FILE (default: stderr, as perf does)
  bool inherit = true;
  int repeat = 1;                                 ///< -r
  Aggregation aggregation = Aggregation::global;  ///< -A, --per-*
  std::string cache_level;                        ///< --per-cache=LEVEL as given (`L2`); empty: the highest
  bool all_user = false, all_kernel = false;      ///< --all-user, --all-kernel
  int delay_ms = 0;                               ///< -D: start counting this late; -1: on --control
  std::string control;                            ///< --control fifo:CTL[,ACK] | fd:CTL[,ACK]
  unsigned interval_count = 0;                    ///< --interval-count
  unsigned timeout_ms = 0;                        ///< --timeout: stop after this long (0: no limit)
  bool null_run = false;                          ///< --null
  bool perf_json = false;                         ///< -j
  bool metric_only = false;                       ///< --metric-only
  bool topdown = false;                           ///< --topdown: -M TopdownL<td_level>, metric-only
  std::string cputype;                            ///< --cputype: the PMU cross-PMU lookups pick (perf's)
  bool transaction = false;                       ///< -T: -M transaction (and neither --topdown nor defaults)
  unsigned td_level = 0;                          ///< --td-level (0: 1)
  std::string color = "auto";                     ///< --color: auto (a terminal), always, never
  int verbose = 0;                                ///< -v
  std::vector<std::string> cgroups;               ///< -G (comma lists, in order)
  /// --filter: (the -e list it follows, by index; the filter), for that list's tracepoints
  std::vector<std::pair<std::size_t, std::string>> filters;
  std::string for_each_cgroup;  ///< --for-each-cgroup
  bool sync = false;            ///< -S/--sync: sync(2) before each run
  std::string pre, post;        ///< --pre, --post: a shell command before and after each run
  bool append = false;          ///< --append: to the -o file
  bool quiet = false;           ///< --quiet: print no counts (the exit status says)
  bool table = false;           ///< --table: with -r, each run's time
  bool interval_clear = false;  ///< --interval-clear: with -I, clear the terminal before each
  bool summary = false;         ///< --summary: with -I, the whole run's counts after the intervals
  bool no_csv_summary = false;  ///< --no-csv-summary: -x's summary lines without "summary"
  std::vector<std::string> command;
  spec::MachineOptions machine;  ///< event tables
};

/// `perfspec stat`: returns the process exit status (the command's, when one was run).
int run_stat(const StatOptions& options);

/// perf stat's default events: software ones always count; hardware ones where a PMU exists.
inline constexpr const char* default_stat_events =
    "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses";
/// What perf stat -d, -dd and -ddd add, each level to those before it (perf's detailed_attrs,
/// very_detailed_attrs, very_very_detailed_attrs).
inline constexpr const char* detailed_stat_events[3] = {
    "L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses",
    "L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,iTLB-load-misses",
    "L1-dcache-prefetches,L1-dcache-prefetch-misses"};

}  // namespace perfspec::tools
