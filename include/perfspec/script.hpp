// SPDX-License-Identifier: MIT
#pragma once
// The records of a perf.data file printed as `perf script` prints them (perf 6.12's text layout,
// with its -F field lists), or as JSON lines with every decoded field: the printer behind `perfspec
// script`, for a program that prints records of its own files.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/perf_data.hpp"

namespace perfspec {

/// The `"schema"` of --format json's first line, and of its --summary (docs/output-formats.md).
inline constexpr std::string_view script_schema = "perfspec-script/1";
inline constexpr std::string_view script_summary_schema = "perfspec-script-summary/1";

// Every member has an initializer, so that `ScriptOptions{.fields = ...}` names only what it sets.
struct ScriptOptions {
  enum class Format {
    text,  ///< perf script's layout, records in time order as perf sorts them
    json,  ///< a line of the file's events, then one JSON object per record, in file order
  };
  Format format = Format::text;
  /// -F lists, in order, as perf script reads them: `[TYPE:][+-]FIELD,...` (text; a list perf refuses
  /// is refused for JSON too).
  std::vector<std::string> fields{};
  bool samples_only = false;  ///< text: samples only, as perf script prints by default
  /// text, with samples_only: the kernel's records of these types too (bit N: record type N), as perf's
  /// --show-task-events, --show-mmap-events and the like add them.
  std::uint64_t also_shown = 0;
  bool summary = false;  ///< instead of the records: their counts by type, and what was lost
  bool ns = false;       ///< text: times in nanoseconds
  /// text: where sym, symoff and dso find the binaries and the kernel's symbols (perf's --symfs and
  /// --kallsyms; SymbolOptions).
  std::string symfs{};
  std::string kallsyms{};
  std::string debuginfod{};  ///< SymbolOptions::debuginfod
  /// text: the functions inlined at each user frame unwound from DWARF, each a frame of its own
  /// (`name+off (inlined)`, Symbolizer::inlined): perf's --inline, its default; false: --no-inline.
  bool inline_frames = true;
  /// perf's --time (record::TimeRanges, its percents of the file's HEADER_SAMPLE_TIME): the samples
  /// outside are left out, in text and JSON (the other records are not); not with `summary`.
  std::string time{};
  /// perf's --pid and --tid: only the samples of these processes and of these threads (empty: all).
  std::vector<std::int32_t> pids{}, tids{};
  /// perf's --cpu: only the records on these CPUs (as spec::parse_cpu_list reads perf's `0-3,7`): the
  /// samples, and other records whose sample_id has their CPU. Every event must sample its CPU
  /// (perf's "File does not contain CPU events").
  std::vector<int> cpus{};
  /// text: perf's --comm: only the samples of threads of these names (named as when sampled).
  std::vector<std::string> comms{};
  /// text: perf's -S/--symbols: only the samples in these functions, or at these addresses (the
  /// words that read as hexadecimal numbers; perf reads them as addresses only), or up to addr_range
  /// bytes after one (--addr-range).
  std::vector<std::string> symbols{};
  std::uint64_t addr_range = 0;
  bool reltime = false;  ///< text: times since the first record printed (perf's --reltime)
  /// text: at most this many frames of a callchain, and of a stack unwound from DWARF (perf's
  /// --max-stack).
  std::size_t max_stack = 127;
  bool hide_call_graph = false;  ///< text: no callchains (perf's -G)
  /// text: told, once the records are printed, each binary whose symbols could not be read, with why
  /// (Symbolizer::problems: what perf -v says as "continuing without symbols").
  std::function<void(std::string_view)> problems{};
  std::string name = "perf.data";  ///< the file, as errors name it
  /// text: perf's -D (--dump-raw-trace): every record as perf's session delivers it (perf's own
  /// too), where it is, its bytes and its fields as perf dumps them, each sample followed by its line
  /// (and, as perf, only the other records also_shown asks for). `dump_ordered` false: all in file
  /// order (perf's --dump-unsorted-raw-trace).
  bool dump_raw = false;
  bool dump_ordered = true;
};

namespace script {
class Session;
class Buffer;
}  // namespace script

/// Prints the records of perf.data files.
///
/// Example:
/// ```
/// perfspec::ScriptPrinter printer({.fields = {"comm,tid,time,event,ip"}});
/// auto file = perfspec::record::PerfData::open("perf.data");
/// printer.print(file, stdout);
/// ```
class ScriptPrinter {
 public:
  /// Reads the -F lists as perf reads them: `warn` gets each of perf's warnings (text only, without
  /// a newline). Throws Error (usage) with perf's message for a list perf refuses, and for a field
  /// perfspec cannot print yet (source lines, branch stacks, ...).
  explicit ScriptPrinter(ScriptOptions options, const std::function<void(std::string_view)>& warn = {});
  ScriptPrinter(ScriptPrinter&&) noexcept;
  ScriptPrinter& operator=(ScriptPrinter&&) noexcept;
  ~ScriptPrinter();

  /// Prints every record of `file`, handing the text to `write` in pieces (of about 64 KiB). Throws
  /// Error (usage) as perf does when a field asked for is missing from an event's samples, before
  /// anything is written; DecodeError for a record that does not follow the format, after writing
  /// what came before it.
  void print(record::PerfData& file, const std::function<void(std::string_view)>& write) const;
  /// The same, written to `out` with fwrite. Throws Error (io) when a write fails.
  void print(record::PerfData& file, std::FILE* out) const;
  /// perf's --per-event-dump (text only): the same, each sample's text handed to `write_event` with
  /// its event's index (record::PerfData::events()), the other records' text to `write`. Returns how
  /// many samples of each event were printed, by index (a vector as long as the file's events).
  std::vector<std::uint64_t> print_per_event(
      record::PerfData& file, const std::function<void(std::string_view)>& write,
      const std::function<void(std::size_t, std::string_view)>& write_event) const;

 private:
  struct Fields;
  void print_into(script::Session& session, script::Buffer& out) const;
  ScriptOptions options_;
  std::unique_ptr<Fields> fields_;
};

}  // namespace perfspec
