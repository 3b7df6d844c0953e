// SPDX-License-Identifier: MIT
#pragma once
// `perfspec script`: the records of a perf.data file, as perf script prints them or as JSON lines.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace perfspec::tools {

struct ScriptOptions {
  std::string input = "perf.data";  ///< `-` reads a pipe-mode stream on stdin
  std::string format = "text";      ///< text | json
  std::vector<std::string> fields;  ///< -F lists, in order, as perf script reads them (text)
  bool samples_only = false;        ///< text: samples only, as perf script prints by default
  std::uint64_t also_shown = 0;     ///< --show-*-events: record types shown beside the samples
  bool summary = false;             ///< counts by record type, and what was lost
  bool ns = false;                  ///< times in nanoseconds
  std::string symfs;                ///< binaries looked up under this folder (perf's --symfs)
  std::string kallsyms;             ///< the kernel's symbols (perf's --kallsyms)
  std::string debuginfod;           ///< SymbolOptions::debuginfod
  bool header = false, header_only = false, show_info = false;  ///< --header, --header-only, -I
  bool inline_frames = true;                                    ///< --inline (default), --no-inline
  std::string time;                                             ///< --time
  std::string pids, tids, cpus;      ///< --pid, --tid (comma-separated), -C/--cpu (perf's CPU list)
  std::vector<std::string> comms;    ///< --comm
  std::vector<std::string> symbols;  ///< -S/--symbols
  std::uint64_t addr_range = 0;      ///< --addr-range
  bool reltime = false;              ///< --reltime
  std::size_t max_stack = 127;       ///< --max-stack
  bool hide_call_graph = false;      ///< -G/--hide-call-graph
  bool per_event_dump = false;       ///< --per-event-dump: each event's samples into INPUT.EVENT.dump
  bool dump_raw = false;             ///< -D/--dump-raw-trace: the records as perf script -D dumps them
  bool dump_unsorted = false;        ///< --dump-unsorted-raw-trace: -D in file order
  /// -v: on stderr, the recorded build ids first (as perf says them), the binaries whose symbols
  /// could not be read last
  int verbose = 0;
};

/// Runs `perfspec script`. Returns the exit status; throws perfspec::Error for a file that cannot be
/// read or does not follow the format.
int run_script(const ScriptOptions& options);

}  // namespace perfspec::tools
