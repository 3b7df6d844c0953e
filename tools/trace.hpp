// SPDX-License-Identifier: MIT
#pragma once
// `perfspec trace`: perf trace's live system call tracer (raw_syscalls:sys_enter/sys_exit through a
// runtime::Sampler, printed by print::SyscallTrace), with the -e tracepoints and page faults beside.
#include <cstdint>
#include <string>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::tools {

struct TraceCliOptions {
  std::vector<std::string> events;   ///< -e lists: system call names and globs, and events
  std::string output;                ///< -o: the file the lines go to (default standard error)
  std::string pids, tids, cpus;      ///< -p, -t (comma-separated), -C
  bool all_cpus = false;             ///< -a
  bool summary_only = false;         ///< -s
  bool with_summary = false;         ///< -S
  bool errno_summary = false;        ///< --errno-summary
  bool failure_only = false;         ///< --failure
  bool syscalls = true;              ///< --no-syscalls clears it
  bool syscalls_given = false;       ///< --syscalls/--no-syscalls said
  bool comm = true;                  ///< --no-comm clears it
  bool inherit = true;               ///< --no-inherit clears it
  double duration_ms = 0;            ///< --duration
  std::uint64_t max_events = 0;      ///< --max-events (0: no limit)
  std::string pagefaults;            ///< -F/--pf: maj, min or all ("" none)
  std::vector<std::string> cgroups;  ///< -G: with -a/-C
  std::string call_graph;            ///< --call-graph fp|dwarf[,SIZE]
  std::size_t max_stack = 0;         ///< --max-stack (0: not given; then dwarf callchains, as perf)
  std::size_t pages = 0;             ///< -m
  std::string sysfs = "/sys";
  spec::MachineOptions machine;
  std::vector<std::string> command;
};

/// Runs `perfspec trace`; returns the exit status (0 once traced, as perf trace, whatever the
/// command's own status).
int run_trace(const TraceCliOptions& options);

}  // namespace perfspec::tools
