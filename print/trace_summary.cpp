// SPDX-License-Identifier: MIT
// perf trace -s: the summary of each thread's system calls, laid out as perf 6.12's
// trace__fprintf_thread_summary prints it.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "print/trace_args.hpp"
#include "print/trace_state.hpp"

namespace perfspec::trace_detail {

namespace {

void thread_table(std::string& out, const ThreadTrace& t,
                  const std::function<std::string(long)>& syscall_name, bool errno_summary) {
  out += "\n";
  out += "   syscall            calls  errors  total       min       avg       max       stddev\n";
  out += "                                     (msec)    (msec)    (msec)    (msec)        (%)\n";
  out += "   --------------- --------  ------ -------- --------- --------- ---------     ------\n";
  // By total time, most first; equal totals in system call number order (perf's resort of its list).
  std::vector<std::pair<double, const std::pair<const long, SyscallStats>*>> rows;
  for (const auto& entry : t.stats)
    rows.emplace_back(static_cast<double>(entry.second.n) * (entry.second.mean / 1e6), &entry);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [msecs, entry] : rows) {
    const SyscallStats& s = entry->second;
    double pct = s.mean != 0 ? 100.0 * s.stddev_of_mean() / s.mean : 0.0;
    out += fmt::format("   {:<15} {:>8} {:>6} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.2f}%\n",
                       syscall_name(entry->first), s.n, s.failures, msecs, static_cast<double>(s.min) / 1e6,
                       s.mean / 1e6, static_cast<double>(s.max) / 1e6, pct);
    if (errno_summary)
      for (const auto& [error, count] : s.errnos)
        out += fmt::format("\t\t\t\t{}: {}\n", errno_name(error), count);
  }
  out += "\n\n";
}

}  // namespace

std::string summary_text(const std::map<int, ThreadTrace>& threads, std::uint64_t all_events,
                         const std::function<std::string(int tid)>& comm,
                         const std::function<std::string(long number)>& syscall_name, bool errno_summary) {
  std::string out = "\n Summary of events:\n\n";
  std::vector<std::pair<int, const ThreadTrace*>> order;
  for (const auto& [tid, t] : threads) order.emplace_back(tid, &t);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->events < b.second->events; });
  for (const auto& [tid, t] : order) {
    double ratio =
        all_events ? static_cast<double>(t->events) / static_cast<double>(all_events) * 100.0 : 0.0;
    out += fmt::format(" {} ({}), {} events, {:.1f}%", comm(tid), tid, t->events, ratio);
    if (t->major_faults) out += fmt::format(", {} majfaults", t->major_faults);
    if (t->minor_faults) out += fmt::format(", {} minfaults", t->minor_faults);
    out += "\n";
    thread_table(out, *t, syscall_name, errno_summary);
  }
  return out;
}

}  // namespace perfspec::trace_detail
