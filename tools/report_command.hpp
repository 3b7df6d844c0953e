// SPDX-License-Identifier: MIT
#pragma once
// `perfspec report`: a perf.data file's samples as perf report --stdio tables, folded stacks or a
// pprof profile.
#include <optional>
#include <string>
#include <vector>

#include "perfspec/perf_data.hpp"

namespace perfspec::tools {

struct ReportCliOptions {
  std::string input = "perf.data";  ///< `-` reads a pipe-mode stream on stdin
  std::string format = "text";      ///< text (perf report --stdio) | folded | pprof
  std::string output;               ///< pprof: the file to write (default: standard output)
  std::string sort = "comm,dso,sym";
  std::optional<bool> children;  ///< --children / --no-children; unset: perf's default
  std::string call_graph;        ///< -g: graph|none|caller|callee[,PERCENT][,caller|callee]
  bool inverted = false;         ///< -G: graphs from the caller, without asking for graphs as -g does
  double percent_limit = 0;
  bool samples = false;        ///< -n
  bool quiet = false;          ///< -q
  bool dump_raw = false;       ///< -D: the records as perf report -D dumps them, then its statistics
  bool disable_order = false;  ///< --disable-order: -D in file order
  bool stdio = false;          ///< --stdio: accepted (the only interface)
  bool no_comm = false, include_pid = false, include_tid = false, kernel = false;  ///< folded
  std::string symfs, kallsyms;
  std::string debuginfod;  ///< SymbolOptions::debuginfod
  unsigned max_stack = 127;
  bool inline_frames = true;                                    ///< --inline (default), --no-inline
  std::string time;                                             ///< --time
  std::string pids, tids;                                       ///< --pid, --tid: comma-separated
  bool header = false, header_only = false, show_info = false;  ///< --header, --header-only, -I
  bool threads = false;          ///< -T: the READ records' counts per thread after the report
  bool cpu_utilization = false;  ///< --show-cpu-utilization
  bool hierarchy = false;        ///< --hierarchy
  /// perf's views of data perfspec cannot show yet, followed where the file has no such data (they
  /// change nothing there, or perf refuses them there): --group, --show-ref-call-graph,
  /// --total-cycles, --stitch-lbr, --mem-mode, -b
  bool group = false, ref_call_graph = false, total_cycles = false, stitch_lbr = false, mem_mode = false,
       branch_stack = false;
};

/// Runs `perfspec report`. Returns the exit status; throws perfspec::Error for a file that cannot be
/// read or does not follow the format, and for options that do not go together.
int run_report(const ReportCliOptions& options);

/// perf's header block of `file` read from `input` (`-`: standard input): captured on its
/// modification time, attr types and configs named as on this machine. `full`: perf's -I.
std::string header_block(const record::PerfData& file, const std::string& input, bool full);

}  // namespace perfspec::tools
