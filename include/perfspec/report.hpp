// SPDX-License-Identifier: MIT
#pragma once
// A recording's profile (record::Profile) as people read it: perf report's --stdio tables, folded
// stacks (the input of flame graph tools) and a pprof profile (what `go tool pprof` and its web UI
// open). The printers behind `perfspec report`.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/perf_data.hpp"
#include "perfspec/profile.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/symbols.hpp"

namespace perfspec {

/// Every member has an initializer, so that `FoldedOptions{.pid = true}` names only what it sets.
struct FoldedOptions {
  bool comm = true;     ///< each stack starts with its thread's name (spaces made `_`)
  bool pid = false;     ///< `comm-PID` (with comm only)
  bool tid = false;     ///< `comm-TID`, `comm-PID/TID` with pid (with comm only)
  bool kernel = false;  ///< kernel functions marked `_[k]`
  bool period = false;  ///< counts are the samples' periods, not the samples
};

/// Every member has an initializer, so that `ReportOptions{.children = false}` names only what it sets.
struct ReportOptions {
  /// perf report's --sort keys, in order: comm, pid, dso, sym (or symbol), cpu. Others throw Error
  /// (usage) when the report is made.
  std::vector<std::string> sort{"comm", "dso", "sym"};
  /// Children and Self columns (perf's --children), each callchain frame credited; unset: when the
  /// event's samples have callchains, as perf's default. Never for a pipe-mode stream, as perf (which
  /// sets itself up before it knows the events): its graphs are drawn in caller order unless
  /// children is false or caller says otherwise.
  std::optional<bool> children{};
  /// Callchain graphs under each row where the samples have callchains (perf's -g graph; false is -g
  /// none).
  bool graph = true;
  /// Each chain of a row on one line under it, `PCT frame;frame;...`, instead of its graph (perf's -g
  /// folded): the chains that end where the samples are, by their period, most first.
  bool folded = false;
  /// Graphs from the outermost caller (caller) or from the sampled function (callee); unset: caller
  /// with children, callee without, as perf.
  std::optional<bool> caller{};
  /// Graph branches under this percentage of the event's period are left out (perf's -g graph,0.5).
  double graph_percent = 0.5;
  /// Rows under this percentage are left out (perf's --percent-limit; it also sets graph_percent).
  double percent_limit = 0;
  bool samples = false;  ///< a Samples column (perf's -n)
  /// sys and usr columns: the shares of the entry's own period sampled in the kernel and in user space
  /// (perf's --show-cpu-utilization; a guest's samples are in neither, as perf's without guests)
  bool cpu_utilization = false;
  bool quiet = false;  ///< rows only (perf's -q)
  /// The sort keys as levels of a tree (perf's --hierarchy): each level's entries under the one above,
  /// the graphs under the last level's; no Children column (perf turns it off), the graphs in the
  /// order children would have given them.
  bool hierarchy = false;
  /// The header block was printed before the report (perf's --header): no line saying how to see it.
  bool header_shown = false;
  /// perf's --pid / --tid: only the rows of these processes' or threads' samples (none given: all); the
  /// header's counts and the percentages stay those of every sample, as perf's.
  std::vector<std::int32_t> pids{}, tids{};
  /// perf report's --time as given: each event's Samples line says "(time slices: ...)".
  std::string time_slices{};
};

/// `perf report --stdio` of Linux 6.12: per event with samples, the header lines, a row per entry of
/// the sort keys with its share of the event's period, sorted as perf sorts them, and the callchain
/// graphs. perf's closing tip (a random line) is left out. Throws Error (usage) for a sort key it
/// does not know.
std::string report_text(const record::Profile& profile, const ReportOptions& options = {});
/// perf report -T's table of the recording's READ records (Profile::reads): `# PID  TID` and each
/// event's name, a row per thread, columns as wide as their widest text.
std::string thread_counts_text(const record::Profile& profile);
/// What report_text throws for options it cannot follow, before a file is read.
void check_report_options(const ReportOptions& options);

/// Folded stacks as perf 6.12's stackcollapse script writes them (`perf script report stackcollapse`):
/// a line per distinct stack, `comm;outermost;...;innermost COUNT`, sorted by the stack's text, the
/// samples of every event counted together; a frame is its function's name (`;` made `:`) or
/// `[unknown]`. A sample without a callchain is its own address's function (perf's script shows only
/// the comm there: docs/perf-compatibility.md).
std::string folded_stacks(const record::Profile& profile, const FoldedOptions& options = {});

/// The profile as pprof's profile.proto (github.com/google/pprof, proto/profile.proto), gzipped as
/// `go tool pprof` reads it: per event two sample values, `EVENT_samples`/count and `EVENT`/its unit
/// (nanoseconds for task-clock and cpu-clock, else count); a sample per distinct stack with labels
/// pid, tid, comm (and cpu when recorded); a location per address, a function per symbol, a mapping
/// per binary (its build id when the file has one).
std::vector<std::byte> pprof_profile(const record::Profile& profile);

/// Every member has an initializer, so that `HeaderTextOptions{.full = true}` names only what it sets.
struct HeaderTextOptions {
  bool full = false;          ///< perf's -I: the CPU and NUMA topology, caches and memory too
  std::int64_t captured = 0;  ///< perf's "captured on": the file's modification time (seconds since 1970)
  /// The machine whose PMUs name an attr's type and config (perf names them as on the machine that
  /// reads the file); nullptr: the PERF_* names only.
  const spec::Machine* machine = nullptr;
};
/// The header block of `perf report --header` and `perf script --header` of perf 6.12: the file's
/// layout, a line or lines per feature section (those perf prints only with -I as `# CPU_TOPOLOGY info
/// available, use -I to display` without `full`), the features missing, between `# ========` rules.
/// For a pipe-mode stream: the layout (all 0), then the features read so far, as perf prints each as
/// its record passes. Throws DecodeError for a feature section that does not follow perf's layout.
std::string header_text(const record::PerfData& file, const HeaderTextOptions& options = {});

/// Every member has an initializer, so that `RawDumpOptions{.ordered = false}` names only what it sets.
struct RawDumpOptions {
  bool ordered = true;              ///< false: every record as read (perf report's --disable-order)
  record::SymbolOptions symbols{};  ///< where TEXT_POKE records' kernel functions are found
};
/// perf report -D (--dump-raw-trace) of perf 6.12, without what perf prints before (its warning for a
/// file delivered_unordered(), then its two lines of preamble): every record as
/// perf's session delivers it (record::for_each_as_delivered), where it is, its bytes and what perf's
/// handlers print of it, each sample's thread and binary; then perf's "Aggregated stats" (records by
/// type, each event's samples). Written in pieces to `write`. Throws DecodeError where perf fails (what
/// was delivered before is written first; no statistics).
///
/// Example: `perfspec::dump_raw_trace(file, {}, [](std::string_view t) { std::fwrite(t.data(), 1,
/// t.size(), stdout); });`
void dump_raw_trace(record::PerfData& file, const RawDumpOptions& options,
                    const std::function<void(std::string_view)>& write);
}  // namespace perfspec
