// SPDX-License-Identifier: MIT
#pragma once
// One counting run as perf stat runs it, as a library: an event set opened on what is counted (a
// command, a process, threads, CPUs, cgroups), enabled, waited on, and read as StatReports grouped
// as asked, with perf's tool events (duration_time, user_time, system_time) filled in. What to print
// and when (intervals, -D, --control, signals) is the caller's.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "perfspec/event_set.hpp"
#include "perfspec/print.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/stat.hpp"

namespace perfspec {

/// One run: constructed, it has opened the set (nothing when the set is empty: perf's --null) and, for
/// a command, forked it held before exec. Events that cannot be opened are reported in their counts,
/// never thrown.
///
/// Example:
///   StatCounting run(set, target, machine);
///   if (int e = run.start()) return e;  // the command could not be run
///   while (!run.wait(100)) print(run.read());
///   StatRun shown;
///   StatReport last = run.finish(shown, false);
class StatCounting {
 public:
  /// Throws perfspec::Error: (usage) a target whose parts do not go together (a pid with threads,
  /// a process with system_wide or a command, cpus or cgroups without system_wide, nothing at all), a
  /// process or thread that does not exist or has exited, a cgroup that cannot be opened; (machine)
  /// no cgroup file system, no thread in /proc.
  StatCounting(EventSet set, const StatTarget& target, const spec::Machine& machine);
  ~StatCounting();
  StatCounting(const StatCounting&) = delete;
  StatCounting& operator=(const StatCounting&) = delete;

  /// The members taken out of their groups to count alone (runtime::ungroup_by_cpus), before opening.
  const std::vector<runtime::Ungrouped>& ungrouped() const;
  /// The set as opened (after ungrouping).
  const EventSet& events() const;
  /// How many file descriptors are open (0: no event could be opened, or an empty set).
  std::size_t open_fds() const;
  /// A command is run.
  bool has_command() const;

  /// Starts counting (unless `enable_later`) and the command. 0, or the errno of a command that could
  /// not be run (it has then been reaped: exit_status() says 127 as a shell does).
  int start();
  /// Counting on / off (perf's -D and --control); no effect on an empty set.
  void enable();
  void disable();
  bool enabled() const;
  /// Seconds since start(), or since restart_clock() (perf's time elapsed counts from -D's enabling).
  double seconds() const;
  void restart_clock();

  /// Waits up to `ms` milliseconds (for no command: at least 1). True when what is counted has ended: the
  /// command exited, the process or every thread is gone. Always false system-wide without a command.
  bool wait(int ms);
  /// To the command, if any (and, for SIGKILL, waits for it).
  void signal(int sig);

  /// The counts so far, grouped as the target asks, with the tool events.
  StatReport read();
  /// Stops counting and reads the counts a last time; then, with `stop_command`, ends the command
  /// (SIGTERM, and waits for it: perf's --interval-count). Fills `run`'s elapsed time, and for a
  /// counted command its CPU times and exit status.
  StatReport finish(StatRun& run, bool stop_command);
  /// The command's exit status (0 without a command).
  int exit_status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfspec
