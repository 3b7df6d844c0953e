// SPDX-License-Identifier: MIT
#pragma once
// Tracepoint payloads: the PERF_SAMPLE_RAW bytes of a tracepoint sample, laid out as the tracepoint's
// tracefs format file says, decoded into named fields and printed as perf script prints them.
//
// The format files come from perf's tracing data (HEADER_TRACING_DATA in a perf.data file, or the
// bytes after a TRACING_DATA record in pipe mode), or from the live tracefs for the events of an
// event set. libtraceevent (Debian's libtraceevent-dev) parses them and prints the events' print
// formats; perfspec reads the tracing data around them and the fields out of the payload itself, with
// every length checked. libtraceevent's parser is not safe on every text (1.7.1 reads freed memory,
// dereferences null pointers, divides by zero on some): the format files given to a Tracepoints are
// parsed first in a child process made with fork(2), once per from_tracing_data, from_tracefs or
// add_format, and a file that ends that child is refused with an Error saying how.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "perfspec/attr.hpp"
#include "perfspec/error.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/record.hpp"

namespace perfspec::spec {
class Machine;
}

namespace perfspec::record {

/// perf's tracing data split into its parts (the layout perf's trace-event-info.c writes), as views
/// into the bytes it was read from.
struct TracingFiles {
  std::string version;  ///< "0.6"
  bool big_endian = false;
  std::uint8_t long_size = 0;  ///< of the kernel that was traced: 8 or 4
  std::uint32_t page_size = 0;
  std::span<const std::byte> header_page, header_event;
  std::vector<std::span<const std::byte>> ftrace_formats;  ///< the ftrace system's format files
  struct System {
    std::string name;                                 ///< "sched"
    std::vector<std::span<const std::byte>> formats;  ///< one format file per event
  };
  std::vector<System> systems;
  std::span<const std::byte> kallsyms;        ///< /proc/kallsyms (empty: recent perf writes none)
  std::span<const std::byte> printk_formats;  ///< "addr : \"fmt\"" lines
  std::span<const std::byte> saved_cmdlines;  ///< "pid comm" lines (version 0.6 and later)
  std::size_t size = 0;                       ///< bytes the tracing data took
};

/// Split perf's tracing data. `offset` is where the bytes sit in their file, for errors. Throws
/// DecodeError (at the offset of the part at fault) for tracing data that does not follow the layout:
/// a wrong magic, a length that runs past the bytes, a string without its terminator.
///
/// Example: `auto files = record::read_tracing_data(file.tracing_data());`
TracingFiles read_tracing_data(std::span<const std::byte> bytes, std::uint64_t offset = 0);

/// The bytes of `files` as perf lays out tracing data (read_tracing_data reads them back), numbers in
/// the byte order `files.big_endian` gives. `size` is not read. Throws Error (usage) for a version that
/// is empty or holds a NUL, or kallsyms or printk formats of 4 GiB and more (their sizes are u32).
///
/// Example: `auto bytes = record::write_tracing_data(record::read_tracing_data(data));  // == data`
std::vector<std::byte> write_tracing_data(const TracingFiles& files);

/// perf's tracing data for the tracepoint events of `set` (ResolvedEvent::tracepoint), from the live
/// tracefs of `machine`, as perf record writes it (version "0.6"): this host's byte order, long and
/// page size; the header_page and header_event files; the format file of each tracepoint of the set
/// (`ftrace:*` among the ftrace formats, the others by system, in the set's order); no kallsyms (as
/// perf 6.12 writes none: readers resolve kernel addresses from their own symbols); the printk formats
/// and saved_cmdlines, empty where tracefs has none. Throws Error naming a file that is missing
/// (header_page, header_event, a format file) or cannot be read.
///
/// Example: `writer.set_tracing_data(record::tracing_data_of(machine, set));`
std::vector<std::byte> tracing_data_of(const spec::Machine& machine, const EventSet& set);

/// One field of a decoded payload. Integers are `std::int64_t` (signed types) or `std::uint64_t`
/// (unsigned types and pointers); `char` arrays and `__data_loc char[]` are strings (up to their first
/// NUL); other arrays are lists of integers.
using FieldValue = std::variant<std::int64_t, std::uint64_t, std::string, std::vector<std::int64_t>,
                                std::vector<std::uint64_t>>;

struct TracepointField {
  std::string_view name;  ///< "prev_comm"; valid as long as the Tracepoints
  std::string_view type;  ///< as the format file writes it: "char[16]", "pid_t", "__data_loc char[]"
  FieldValue value;
};

/// One tracepoint of a Tracepoints: a view, valid as long as it.
class Tracepoint {
 public:
  std::uint64_t id() const;
  std::string_view system() const;  ///< "sched"
  std::string_view name() const;    ///< "sched_switch"
  /// `system:name`, as perf names the event.
  std::string full_name() const;
  /// The names of the payload's fields, in format order (`common` adds common_type, common_flags,
  /// common_preempt_count and common_pid before them).
  std::vector<std::string_view> field_names(bool common = false) const;
  /// Their types, in the same order, as the format file writes them ("const char *", "char[16]").
  std::vector<std::string_view> field_types(bool common = false) const;
  /// The fields of a payload (Sample::raw). Throws DecodeError at `offset` (the record's, for the
  /// message) when the payload is shorter than a field, or a __data_loc field points outside it.
  ///
  /// Example: `for (auto& f : tp->decode(sample.raw)) std::printf("%s\n", std::string(f.name).c_str());`
  std::vector<TracepointField> decode(std::span<const std::byte> raw, bool common = false,
                                      std::uint64_t offset = 0) const;
  /// What perf script prints for a sample of this tracepoint after the event name (its `trace`
  /// field): the format's print fmt applied to the payload, by libtraceevent (TEP_PRINT_INFO), as perf
  /// does. `cpu` is the sample's. Checks the payload as decode() does first.
  ///
  /// Example: `tp->print(raw) == "prev_comm=sleep prev_pid=12 prev_prio=120 prev_state=S ==> ..."`
  std::string print(std::span<const std::byte> raw, int cpu = 0, std::uint64_t offset = 0) const;

 private:
  friend class Tracepoints;
  explicit Tracepoint(void* event) : event_(event) {}
  void* event_;  // libtraceevent's struct tep_event, which knows its tep_handle
};

/// The tracepoints whose format files were given: looked up by id (an attr's config). No libtraceevent
/// plugin is loaded: every event prints by its format's print fmt. One libtraceevent handle serves all
/// of them, and it keeps caches as it prints: use a Tracepoints from one thread at a time.
///
/// Example:
/// ```
/// auto tps = record::Tracepoints::from_tracing_data(file.tracing_data());
/// if (const record::Tracepoint* tp = tps.find(file.events()[i].attr))
///   std::printf("%s: %s\n", tp->full_name().c_str(), tp->print(sample.raw, sample.cpu).c_str());
/// ```
class Tracepoints {
 public:
  Tracepoints();
  Tracepoints(Tracepoints&&) noexcept;
  Tracepoints& operator=(Tracepoints&&) noexcept;
  ~Tracepoints();

  /// From perf's tracing data: its format files, printk formats and saved comms. `offset` is where
  /// the bytes sit in their file, for errors. Throws DecodeError (see read_tracing_data), and for a
  /// format file libtraceevent cannot parse.
  static Tracepoints from_tracing_data(std::span<const std::byte> bytes, std::uint64_t offset = 0);
  /// From the live tracefs of `machine`: the format files of the tracepoint events of `set`
  /// (ResolvedEvent::tracepoint), as a Sampler of that set needs to decode its samples. Throws Error
  /// naming a format file that cannot be read or parsed.
  static Tracepoints from_tracefs(const spec::Machine& machine, const EventSet& set);

  /// Add one event format file (tracefs `events/SYS/NAME/format`) of `system`. Throws Error when
  /// libtraceevent cannot parse it. A second file with the same id replaces nothing: the first stays.
  const Tracepoint& add_format(std::string_view system, std::string_view format);
  /// Add many format files of `system` with one child process for all (see add_format): per file, its
  /// Tracepoint, or nullptr for one libtraceevent cannot parse (the others are added all the same).
  std::vector<const Tracepoint*> add_formats(std::string_view system, std::span<const std::string> formats);

  /// The tracepoint with this id, nullptr when none of the format files has it.
  const Tracepoint* find(std::uint64_t id) const;
  /// The tracepoint of a tracepoint attr (type 2): find(attr.config); nullptr for other attrs.
  const Tracepoint* find(const Attr& attr) const;
  std::size_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec::record
