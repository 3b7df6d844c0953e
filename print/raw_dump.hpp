// SPDX-License-Identifier: MIT
#pragma once
// perf's -D (--dump-raw-trace) of perf script and perf report: for each record as perf's session
// delivers it, where it is, its bytes, and what perf's handlers print of it (util/session.c's
// dump_event, dump_sample and the perf_event__fprintf of each type); perf report's statistics after.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perfspec/perf_data.hpp"
#include "perfspec/symbols.hpp"

namespace perfspec::raw_dump {

/// Whose handlers finish the lines: they differ on the records each tool leaves unhandled.
enum class Tool { script, report };

class Dumper {
 public:
  /// `ordered`: records are delivered by time (perf's default; not --disable-order). `symbols` names
  /// the kernel functions of TEXT_POKE records.
  Dumper(record::PerfData& file, Tool tool, bool ordered, record::Symbolizer& symbols)
      : file_(file), tool_(tool), ordered_(ordered), symbols_(symbols) {}

  /// What perf prints as it delivers `r`, found `at`: the location line, the bytes, the line that
  /// starts with its time and names it, and its handler's text. A sample's ends after its fields: the
  /// tool's part follows (resolved(), and perf script's own line). Throws DecodeError where perf fails:
  /// a sample of an id no event of the file has, a record type perf does not know.
  void record(fmt::memory_buffer& out, const record::Record& r, const record::PerfData::Place& at);

  /// machine__resolve's lines as a tool takes a sample of thread `tid` named `comm`: the thread, and
  /// the binary mapped at its address (`dso`; empty: none).
  static void resolved(fmt::memory_buffer& out, std::string_view comm, std::int32_t tid, std::uint16_t misc,
                       std::string_view dso);

  /// perf report -D's statistics: the records of each type read, then each event's samples (`samples`
  /// by event index: those the tool took). Call after every record was delivered.
  void statistics(fmt::memory_buffer& out, const std::vector<std::uint64_t>& samples) const;

 private:
  record::PerfData& file_;
  Tool tool_;
  bool ordered_;
  record::Symbolizer& symbols_;
  std::vector<std::uint64_t> counts_ = std::vector<std::uint64_t>(83);  // by type, as perf's stats
  std::string arch_;
  std::optional<std::pair<unsigned, unsigned>> branch_caps_;  // branch counters: nr, width

  std::pair<unsigned, unsigned> branch_counter_caps();

  void prefix(fmt::memory_buffer& out, const record::Record& r);
  void sample(fmt::memory_buffer& out, const record::Record& r, const record::Sample& s);
  void kernel_text(fmt::memory_buffer& out, const record::Record& r);
  void user_text(fmt::memory_buffer& out, const record::Record& r);
  void text_poke(fmt::memory_buffer& out, const record::Record& r);
  void regs(fmt::memory_buffer& out, std::string_view kind, const record::Registers& regs);
};

}  // namespace perfspec::raw_dump
