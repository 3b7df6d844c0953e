// SPDX-License-Identifier: MIT
#pragma once
// perf trace's arguments: how each system call argument and each tracepoint field is printed, by the
// rules perf 6.12 applies (from the field's type and name in the format file, then a table of the
// system calls whose arguments it names: flags, modes, commands, descriptors), and how each system
// call's return value is printed.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "perfspec/trace.hpp"

namespace perfspec::trace_detail {

/// What the argument printers ask about the traced threads: a thread's name, and the path of a
/// process's fd (kept until the fd is closed, as perf keeps it).
class ArgContext {
 public:
  ArgContext(const TraceHost& host, bool fd_paths) : host_(host), fd_paths_(fd_paths) {}
  /// The name of thread `tid` (the records', else the host's), empty when unknown.
  std::function<std::string(int tid, bool ask_host)> comm;
  std::optional<std::string> fd_path(int pid, int fd);
  void forget_fd(int pid, int fd) { paths_.erase({pid, fd}); }
  bool fd_paths() const { return fd_paths_; }

 private:
  const TraceHost& host_;
  bool fd_paths_;
  std::map<std::pair<int, int>, std::string> paths_;
};

/// The arguments of system call `name` as perf trace prints them between its parentheses: each
/// non-zero one as `name: value` (field names from `format`, syscalls:sys_enter_NAME; without it
/// `arg0: ..`), from the six raw words of raw_syscalls:sys_enter.
std::string syscall_args(std::string_view name, const record::Tracepoint* format,
                         std::span<const std::uint64_t> args, int pid, ArgContext& context);

/// How system call `name`'s return value is printed when it is not an error.
enum class ReturnStyle : std::uint8_t { decimal, hex, pid, timeout };
ReturnStyle return_style(std::string_view name);

/// A tracepoint sample's fields as perf trace prints them between the event's parentheses.
std::string tracepoint_fields(const record::Tracepoint& format, std::span<const std::byte> raw, int pid,
                              ArgContext& context);

/// `ENOENT`, as perf names errno values (glibc's names; "(unknown)" for a number without one).
std::string errno_name(int error);

}  // namespace perfspec::trace_detail
