// SPDX-License-Identifier: MIT
#pragma once
// What the trace printer keeps per thread (perf's struct thread_trace) and per system call of a thread
// for -s (its struct syscall_stats: Welford's running mean and variance, as perf's util/stat.c).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace perfspec::trace_detail {

struct SyscallStats {
  std::uint64_t n = 0, failures = 0;
  double mean = 0, m2 = 0;
  std::uint64_t min = UINT64_MAX, max = 0;
  std::map<int, std::uint64_t> errnos;

  void add(std::uint64_t duration) {
    ++n;
    double delta = static_cast<double>(duration) - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (static_cast<double>(duration) - mean);
    min = std::min(min, duration);
    max = std::max(max, duration);
  }
  // The standard deviation of the mean, as perf's stddev_stats.
  double stddev_of_mean() const {
    if (n < 2) return 0;
    return std::sqrt(m2 / static_cast<double>(n - 1) / static_cast<double>(n));
  }
};

struct ThreadTrace {
  std::uint64_t events = 0;  // samples of this thread perf's handlers took (enter, exit, faults)
  bool entry_pending = false;
  std::uint64_t entry_time = 0;
  std::string entry;  // "name(args"
  std::uint64_t major_faults = 0, minor_faults = 0;
  std::map<long, SyscallStats> stats;  // by system call number
};

/// perf trace -s's table: per thread (fewest events first), its share of every record read and its
/// system calls by total time.
std::string summary_text(const std::map<int, ThreadTrace>& threads, std::uint64_t all_events,
                         const std::function<std::string(int tid)>& comm,
                         const std::function<std::string(long number)>& syscall_name, bool errno_summary);

}  // namespace perfspec::trace_detail
