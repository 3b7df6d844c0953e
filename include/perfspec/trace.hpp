// SPDX-License-Identifier: MIT
#pragma once
// perf trace: the system calls of this machine by number (spec/, from Debian's libaudit), and the
// printer that turns raw_syscalls:sys_enter/sys_exit samples, tracepoint samples and page faults into
// perf trace's lines and its -s summary (print/).
//
// A live trace opens raw_syscalls:sys_enter and sys_exit (and the -e tracepoints) on its target with a
// runtime::Sampler and hands every record it reads to a SyscallTrace; `perfspec trace` does so.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfspec/record.hpp"
#include "perfspec/symbols.hpp"
#include "perfspec/tracepoint.hpp"

namespace perfspec::spec {

/// The name of system call `number` on the architecture this process runs on (libaudit's table),
/// nullopt for a number it does not know.
///
/// Example: `spec::syscall_name(0) == "read"` on x86_64.
std::optional<std::string> syscall_name(long number);
/// The number of system call `name` on this architecture, nullopt for a name it does not know.
///
/// Example: `*spec::syscall_number("openat") == 257` on x86_64.
std::optional<long> syscall_number(std::string_view name);
/// Every system call this architecture has (number, name), in number order.
std::vector<std::pair<long, std::string>> syscalls();

}  // namespace perfspec::spec

namespace perfspec {

/// What each event of the traced set is to the printer, by its index in the set (Record::attr).
struct TraceEvent {
  enum class Kind : std::uint8_t {
    sys_enter,    ///< raw_syscalls:sys_enter (fields id, args)
    sys_exit,     ///< raw_syscalls:sys_exit (fields id, ret)
    tracepoint,   ///< any other tracepoint: printed as `sys:name(field: value, ...)`
    major_fault,  ///< page-faults events (perf trace -F): `majfault [ip] => addr`
    minor_fault,
  };
  Kind kind = Kind::tracepoint;
  std::string name;                            ///< "sched:sched_switch", as printed
  const record::Tracepoint* format = nullptr;  ///< its format (tracepoints), owned by the caller
  std::uint64_t max_events = 0;                ///< the event's `nr=` term: print this many (0: all)
};

/// perf trace's options that change what is printed.
struct TraceOptions {
  bool summary = false;             ///< -S / -s: a per-thread table of the system calls at the end
  bool summary_only = false;        ///< -s: no lines, only the table
  bool errno_summary = false;       ///< --errno-summary: each error's count under its system call
  bool failure_only = false;        ///< --failure: only system calls that failed
  double min_duration_ms = 0;       ///< --duration: only system calls that took longer (0: all)
  std::uint64_t max_events = 0;     ///< --max-events: stop after this many lines (0: no limit)
  bool show_comm = true;            ///< --no-comm: only the tid
  bool multiple_threads = true;     ///< comm/tid on each line (perf: unless one thread, uninherited)
  bool fd_paths = true;             ///< fds shown with their paths (perf: only when close is traced)
  std::size_t args_alignment = 70;  ///< the column of " = ret"
  std::size_t max_stack = 127;      ///< --max-stack: the most frames of a callchain printed
};

/// What the printer asks of the machine being traced; each may be empty (a recorded trace).
struct TraceHost {
  /// The name of a thread the records have not named (COMM): /proc/TID/comm.
  std::function<std::optional<std::string>(int tid)> comm;
  /// What fd `fd` of process `pid` is: readlink(/proc/PID/fd/FD).
  std::function<std::optional<std::string>(int pid, int fd)> fd_path;
  /// The format of syscalls:sys_enter_NAME, for the names of NAME's arguments; nullptr when there is
  /// none (the arguments are then printed as arg0..arg5).
  std::function<const record::Tracepoint*(std::string_view syscall)> enter_format;
  /// The name of system call `number`; empty: spec::syscall_name.
  std::function<std::optional<std::string>(long number)> syscall_name;
  /// Where an address of process `pid` lies (its binary and symbol), for callchains and page faults; the
  /// caller keeps a record::Symbolizer fed with the records. Empty: addresses as numbers.
  std::function<record::Location(std::uint32_t pid, std::uint64_t address, std::uint16_t misc)> locate;
  /// The user frames of a sample recorded with its registers and stack (--call-graph dwarf), unwound
  /// by the caller (record::Unwinder): appended after the kernel's frames of its callchain.
  std::function<void(const record::Sample& sample, std::vector<std::uint64_t>& frames)> user_frames;
};

/// perf trace's printer: pairs each thread's sys_enter with its sys_exit into one line
/// (`  1.125 ( 0.013 ms): sleep/14843 brk()     = 0x5594428f2000`), prints the lines of other events
/// between them, and keeps per thread the counts and times perf trace -s sums up.
///
/// Example:
/// ```
/// perfspec::SyscallTrace trace(events, options, host, [](std::string_view s) { std::fwrite(s.data(), 1,
/// s.size(), stderr); }); sampler.read([&](std::span<const std::byte> r) { trace.add(formats.decode(r, 0));
/// }); trace.finish();
/// ```
class SyscallTrace {
 public:
  SyscallTrace(std::vector<TraceEvent> events, TraceOptions options, TraceHost host,
               std::function<void(std::string_view)> out);
  SyscallTrace(SyscallTrace&&) noexcept;
  SyscallTrace& operator=(SyscallTrace&&) noexcept;
  ~SyscallTrace();

  /// One record as read (any type: every record counts toward a thread's share in the summary, as
  /// perf counts them; COMM names threads; samples print).
  void add(const record::Record& record);
  /// The summary, when asked for (call once, after the last record).
  void finish();
  /// Whether --max-events (or every event's nr=) has been reached: the caller stops.
  bool done() const;
  /// Lines printed so far (a system call counts once, enter and exit together).
  std::uint64_t printed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec
