// SPDX-License-Identifier: MIT
// `perfspec stat`: count a command, a process or CPUs, and print what was counted and what was not.
#include "tools/stat.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "perfspec/metric.hpp"
#include "perfspec/perfspec.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/cpulist.hpp"
#include "runtime/process.hpp"
#include "spec/printable.hpp"
#include "tools/exit_status.hpp"
#include "tools/report.hpp"
#include "tools/signals.hpp"

namespace perfspec::tools {

using runtime::alive;
using runtime::all_threads;
using runtime::cgroup_root;
using runtime::comm_of;
using runtime::Process;
using runtime::process_state;
using runtime::threads_of;

namespace {

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// An open cgroup directory (the fd perf_event_open takes with PERF_FLAG_PID_CGROUP).
struct CgroupFd {
  int fd = -1;
  CgroupFd() = default;
  explicit CgroupFd(int f) : fd(f) {}
  CgroupFd(CgroupFd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  CgroupFd& operator=(CgroupFd&&) = delete;
  ~CgroupFd() {
    if (fd >= 0) ::close(fd);
  }
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    auto comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// perf's --control: commands arrive on a file descriptor or a FIFO, one per line; an ack FIFO or fd
// gets "ack\n" after each.
class Control {
 public:
  void open(const std::string& spec) {
    if (spec.empty()) return;
    auto parts = split_commas(spec.substr(spec.find(':') + 1));
    if (spec.starts_with("fifo:")) {
      ctl_ = owned_ctl_ = ::open(parts[0].c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
      if (ctl_ < 0)
        throw Error(ErrorKind::usage,
                    fmt::format("--control: cannot open FIFO '{}': {}", parts[0], std::strerror(errno)));
      if (parts.size() > 1) {
        ack_ = owned_ack_ = ::open(parts[1].c_str(), O_RDWR | O_CLOEXEC);
        if (ack_ < 0)
          throw Error(ErrorKind::usage,
                      fmt::format("--control: cannot open FIFO '{}': {}", parts[1], std::strerror(errno)));
      }
    } else if (spec.starts_with("fd:")) {
      ctl_ = number(parts[0]);
      ack_ = parts.size() > 1 ? number(parts[1]) : -1;
      ::fcntl(ctl_, F_SETFL, ::fcntl(ctl_, F_GETFL) | O_NONBLOCK);
    } else {
      throw Error(ErrorKind::usage,
                  fmt::format("--control '{}': expected fifo:CTL[,ACK] or fd:CTL[,ACK]", spec));
    }
  }
  ~Control() {
    if (owned_ctl_ >= 0) ::close(owned_ctl_);
    if (owned_ack_ >= 0) ::close(owned_ack_);
  }
  bool active() const { return ctl_ >= 0; }
  // The commands that arrived since the last call.
  std::vector<std::string> poll() {
    std::vector<std::string> out;
    if (ctl_ < 0) return out;
    char buf[256];
    for (;;) {
      ssize_t n = ::read(ctl_, buf, sizeof buf);
      if (n <= 0) break;
      pending_.append(buf, static_cast<std::size_t>(n));
    }
    for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == '\0')) line.pop_back();
      if (!line.empty()) out.push_back(line);
    }
    return out;
  }
  void ack() {
    if (ack_ >= 0) (void)!::write(ack_, "ack\n", 4);
  }

 private:
  int ctl_ = -1, ack_ = -1, owned_ctl_ = -1, owned_ack_ = -1;
  std::string pending_;
  static int number(const std::string& s) {
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end || v < 0 || v > 65535)
      throw Error(ErrorKind::usage, fmt::format("--control: '{}' is not a file descriptor", s));
    return static_cast<int>(v);
  }
};

// One `perfspec stat` invocation: its output, its events, its target, the counting loop of each run
// and what it prints.
class StatSession {
 public:
  explicit StatSession(const StatOptions& o) : o_(o), machine_(o.sysfs, o.machine) {}

  int run() {
    open_output();
    check_options();
    if (int status = resolve_events()) return status;
    open_cgroups();
    control_.open(o_.control);
    catch_stop_signals();
    std::vector<StatReport> reports;
    std::vector<double> elapsed;
    int status = 0;
    for (int r = 0; r < std::max(1, o_.repeat); ++r) {
      auto one = run_once();
      if (!one) return status_;
      status = status_;
      reports.push_back(std::move(*one));
      elapsed.push_back(run_.elapsed_seconds);
      if (signals_received) break;
    }
    if (o_.interval_ms) return status;
    StatReport report = average(reports);
    StatRun r = run_;
    if (reports.size() > 1) {
      auto [mean, sd] = mean_and_stddev(elapsed);
      r.elapsed_seconds = mean;
      r.elapsed_stddev = sd;
      r.user_seconds.reset();
      r.system_seconds.reset();
    }
    emit(report, r);
    return status;
  }

 private:
  void open_output() {
    if (o_.output.empty()) return;
    file_.reset(std::fopen(o_.output.c_str(), "w"));
    if (!file_)
      throw Error(ErrorKind::io, fmt::format("cannot write '{}': {}", o_.output, std::strerror(errno)));
    out_ = file_.get();
  }

  bool system_wide() const { return o_.all_cpus || !o_.cpus.empty(); }

  void check_options() const {
    if (!o_.tids.empty() && (o_.pid || o_.all_cpus || !o_.cpus.empty()))
      throw Error(ErrorKind::usage, "-t cannot be combined with -p, -a or -C");
    if (!o_.tids.empty() && !o_.command.empty())
      throw Error(ErrorKind::usage, "-t counts existing threads: give no command");
    if (o_.pid && (o_.all_cpus || !o_.cpus.empty()))
      throw Error(ErrorKind::usage, "-p cannot be combined with -a or -C");
    if (o_.pid && !o_.command.empty())
      throw Error(ErrorKind::usage, "-p counts an existing process: give no command");
    if (!o_.pid && o_.tids.empty() && !o_.all_cpus && o_.cpus.empty() && o_.command.empty())
      throw Error(ErrorKind::usage, "nothing to count: give a command, -p PID, -t TID, -a or -C CPUS");
    if (o_.repeat < 1)
      throw Error(ErrorKind::usage, fmt::format("-r {}: the number of runs must be 1 or more", o_.repeat));
    if (o_.repeat > 1 && o_.command.empty())
      throw Error(ErrorKind::usage, "-r repeats a command: give one (a process or CPUs cannot be run again)");
    if (o_.repeat > 1 && o_.interval_ms) throw Error(ErrorKind::usage, "-r cannot be combined with -I");
    if (o_.interval_count && !o_.interval_ms)
      throw Error(ErrorKind::usage, "--interval-count counts intervals: give -I MSEC too");
    if (o_.all_user && o_.all_kernel)
      throw Error(ErrorKind::usage, "--all-user and --all-kernel exclude each other");
    if (o_.delay_ms < -1)
      throw Error(ErrorKind::usage, fmt::format("-D {}: give milliseconds, or -1", o_.delay_ms));
    if (o_.delay_ms == -1 && o_.control.empty())
      throw Error(ErrorKind::usage, "-D -1 starts with counting disabled: give --control to enable it");
    const bool per_cpu = o_.aggregation != Aggregation::global && o_.aggregation != Aggregation::thread;
    if (per_cpu && !system_wide())
      throw Error(ErrorKind::usage,
                  fmt::format("{} groups counts by CPU: it needs -a or -C (system-wide counting)",
                              aggregation_option(o_.aggregation)));
    if (o_.aggregation == Aggregation::thread && !o_.cpus.empty())
      throw Error(ErrorKind::usage, "--per-thread counts threads wherever they run: give -a, not -C");
    if (o_.aggregation == Aggregation::thread && !o_.pid && o_.tids.empty() && !o_.all_cpus)
      throw Error(ErrorKind::usage,
                  "--per-thread counts each thread of a process (-p PID), of a list (-t TIDS) or of the "
                  "whole system (-a)");
    if (o_.aggregation == Aggregation::thread && (!o_.cgroups.empty() || !o_.for_each_cgroup.empty()))
      throw Error(ErrorKind::usage, "--per-thread cannot be combined with -G or --for-each-cgroup");
    if ((!o_.cgroups.empty() || !o_.for_each_cgroup.empty()) && !system_wide())
      throw Error(ErrorKind::usage, "-G and --for-each-cgroup count cgroups on CPUs: give -a or -C");
    if (!o_.metrics.empty() && !o_.for_each_cgroup.empty())
      throw Error(ErrorKind::usage, "-M and --for-each-cgroup cannot be combined yet");
    if (!o_.cgroups.empty() && !o_.for_each_cgroup.empty())
      throw Error(ErrorKind::usage, "-G and --for-each-cgroup exclude each other");
    // perf's own refusals, in its words.
    if (o_.metric_only && o_.aggregation == Aggregation::thread)
      throw Error(ErrorKind::usage, "--metric-only is not supported with --per-thread");
    if (o_.metric_only && o_.repeat > 1)
      throw Error(ErrorKind::usage, "--metric-only is not supported with -r");
    if (o_.metric_only && (!o_.cgroups.empty() || !o_.for_each_cgroup.empty()))
      throw Error(ErrorKind::usage, "--metric-only cannot be combined with -G or --for-each-cgroup yet");
    if (o_.metric_only && !o_.field_separator && !o_.perf_json && o_.format != "text")
      throw Error(ErrorKind::usage,
                  fmt::format("--metric-only shapes perf's layouts (the table, -x, -j); --format {} always "
                              "gives every count with its metrics",
                              o_.format));
    if (o_.null_run && (!o_.events.empty() || o_.interval_ms))
      throw Error(ErrorKind::usage, "--null counts nothing: give no -e and no -I");
    if (!o_.cpus.empty()) check_cpus();
  }

  // -C: every CPU must exist (online), or the error would be the kernel's EINVAL or ENODEV.
  void check_cpus() const {
    auto wanted = runtime::parse_cpu_list(o_.cpus);
    auto online = runtime::system_calls().online_cpus();
    for (int cpu : wanted)
      if (std::find(online.begin(), online.end(), cpu) == online.end()) {
        std::string list;
        for (std::size_t i = 0; i < online.size(); ++i) {
          std::size_t j = i;
          while (j + 1 < online.size() && online[j + 1] == online[j] + 1) ++j;
          list +=
              fmt::format("{}{}", list.empty() ? "" : ",",
                          j == i ? fmt::format("{}", online[i]) : fmt::format("{}-{}", online[i], online[j]));
          i = j;
        }
        throw Error(
            ErrorKind::usage,
            fmt::format("-C {}: CPU {} does not exist or is offline (online CPUs: {})", o_.cpus, cpu, list));
      }
  }

  // Every -e list into one set; a list that does not resolve is shown with its caret. 0, or the status.
  int resolve_events() {
    if (o_.null_run) return 0;
    std::vector<std::string> lists = o_.events;
    std::vector<std::string> metrics = o_.metrics;
    if (o_.topdown)
      if (int status = topdown_request(metrics)) return status;
    const bool default_metrics =
        lists.empty() && o_.metrics.empty() && !o_.topdown && default_request(lists, metrics);
    EventSet once;
    for (const auto& text : lists) {
      try {
        EventSet one = resolve(text, machine_);
        // perf's words when a written group was split or reordered by PMU (its parse_events)
        if (one.regrouped) std::fputs("WARNING: events were regrouped to match PMUs\n", stderr);
        once.append(std::move(one));
      } catch (const Error& e) {
        return report_error(e, text, error_format(o_.format));
      }
    }
    if (int status = plan_metrics(metrics, default_metrics, once)) return status;
    for (auto& e : once.events) {
      if (o_.all_user) e.attr.exclude_kernel = 1;
      if (o_.all_kernel) e.attr.exclude_user = 1;
    }
    if (o_.for_each_cgroup.empty()) {
      set_ = std::move(once);
      return 0;
    }
    // --for-each-cgroup: the whole list once per cgroup, in the cgroups' order (as perf expands it).
    for (const auto& name : split_commas(o_.for_each_cgroup)) {
      set_.append(EventSet(once));
      run_.cgroups.resize(set_.events.size(), name);
    }
    return 0;
  }

  // perf's --topdown: the tables' TopdownL<level> group (level 1 unless --td-level), without
  // thresholds, after -M's metrics. 0, or the status of the error said.
  int topdown_request(std::vector<std::string>& metrics) const {
    unsigned max_level = 0;
    for (const auto& d : metric::machine_metrics(machine_))
      for (const auto& g : metric::groups_of(d)) {
        unsigned n = 0;
        const char* end = g.data() + g.size();
        if (g.size() > 8 && g.compare(0, 8, "TopdownL") == 0 &&
            std::from_chars(g.data() + 8, end, n) == std::from_chars_result{end, std::errc{}})
          max_level = std::max(max_level, n);
      }
    if (max_level == 0)
      return report_error(
          Error(ErrorKind::machine,
                "--topdown: this machine's tables have no Top-down metric groups (TopdownL1, ...)",
                "see perfspec list --metrics"),
          error_format(o_.format));
    const unsigned level = o_.td_level == 0 ? 1 : o_.td_level;
    if (level > max_level)
      return report_error(Error(ErrorKind::usage, fmt::format("--td-level {}: the highest Top-down level "
                                                              "of this machine's tables is {}",
                                                              level, max_level)),
                          error_format(o_.format));
    metrics.push_back(fmt::format("TopdownL{}", level));
    return 0;
  }

  // No -e, -M nor --topdown: perf's default events, and perf 6.12 adds its tables' Default metric group
  // (Top-down level 1 on recent Intel parts) to them, without thresholds. Whether it did.
  bool default_request(std::vector<std::string>& lists, std::vector<std::string>& metrics) const {
    lists.push_back(default_stat_events);
    const auto defs = metric::machine_metrics(machine_);
    if (std::none_of(defs.begin(), defs.end(), [](const auto& d) { return metric::in_group(d, "Default"); }))
      return false;
    metrics.push_back("Default");
    return true;
  }

  // -M: each request's metrics, their events after those of -e (perf's --metric-no-merge: each request
  // opens its own); --topdown's group (the last) without thresholds, as perf plans it. 0, or the status
  // of the error said.
  int plan_metrics(const std::vector<std::string>& metrics, bool default_metrics, EventSet& once) {
    metric::Options mo;
    mo.group = !o_.metric_no_group;
    mo.merge = !o_.metric_no_merge;
    mo.thresholds = !o_.metric_no_threshold && !default_metrics;
    mo.target.system_wide = system_wide();
    if (!o_.cpus.empty()) mo.target.cpus = runtime::parse_cpu_list(o_.cpus);
    for (std::size_t t = 0; t < metrics.size(); ++t) {
      const std::string& text = metrics[t];
      metric::Options td = mo;
      if (o_.topdown && t + 1 == metrics.size()) td.thresholds = false;
      try {
        metric::Plan plan;
        try {
          plan = metric::plan(text, machine_, td);
        } catch (const Error&) {
          if (default_metrics) continue;  // not asked for: the default events are counted without them
          throw;
        }
        std::size_t offset = once.events.size();
        once.append(EventSet(plan.events));
        plans_.push_back({std::move(plan), offset});
      } catch (const metric::MetricError& e) {
        if (error_format(o_.format) == ErrorFormat::json) return report_error(e, e.expr(), ErrorFormat::json);
        std::fputs(e.rendered().c_str(), stderr);
        return exit_status(e.kind());
      } catch (const Error& e) {
        return report_error(e, text, error_format(o_.format));
      }
    }
    return 0;
  }

  // -G: the n-th name counts the n-th event (an empty name: every process); one name counts all.
  void open_cgroups() {
    std::vector<std::string> names;
    for (const auto& list : o_.cgroups)
      for (auto& n : split_commas(list)) names.push_back(std::move(n));
    if (!names.empty()) {
      if (names.size() > set_.events.size())
        throw Error(ErrorKind::usage,
                    fmt::format("-G names {} cgroups for {} events", names.size(), set_.events.size()));
      run_.cgroups.assign(set_.events.size(), names.size() == 1 ? names[0] : std::string{});
      if (names.size() > 1)
        for (std::size_t i = 0; i < names.size(); ++i) run_.cgroups[i] = names[i];
    }
    if (run_.cgroups.empty()) return;
    std::string root = cgroup_root();
    std::map<std::string, int> fds;
    for (const auto& name : run_.cgroups) {
      if (name.empty() || fds.count(name)) continue;
      if (root.empty())
        throw Error(ErrorKind::machine, "no cgroup file system is mounted (see /proc/mounts)");
      std::string path = root + "/" + (name.starts_with('/') ? name.substr(1) : name);
      int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0)
        throw Error(ErrorKind::usage,
                    fmt::format("cannot open cgroup '{}' ({}): {}", name, path, std::strerror(errno)));
      cgroup_fds_.emplace_back(fd);
      fds[name] = fd;
    }
    for (const auto& name : run_.cgroups) cgroup_of_event_.push_back(name.empty() ? -1 : fds[name]);
  }

  runtime::Target make_target() {
    runtime::Target t;
    child_.reset();
    if (o_.pid) {
      switch (process_state(*o_.pid)) {
        case Process::gone: throw Error(ErrorKind::usage, fmt::format("no process with pid {}", *o_.pid));
        case Process::zombie:
          throw Error(
              ErrorKind::usage,
              fmt::format("process {} has exited (a zombie its parent has not reaped): nothing to count",
                          *o_.pid));
        case Process::running: break;
      }
      t = runtime::Target::process(*o_.pid, o_.inherit);
      t.threads = threads_of(*o_.pid);
      run_.target = fmt::format("process id '{}'", *o_.pid);
    } else if (!o_.tids.empty()) {
      t = runtime::Target::process(0, o_.inherit);
      for (const auto& word : split_commas(o_.tids)) {
        int tid = 0;
        auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), tid);
        if (ec != std::errc{} || end != word.data() + word.size() || tid <= 0)
          throw Error(ErrorKind::usage, fmt::format("-t {}: '{}' is not a thread id", o_.tids, word));
        if (process_state(tid) == Process::gone)
          throw Error(ErrorKind::usage, fmt::format("no thread with id {}", tid));
        t.threads.push_back(tid);
      }
      tids_ = t.threads;
      t.pid = t.threads.front();
      run_.target = fmt::format("thread id '{}'", o_.tids);
    } else if (o_.aggregation == Aggregation::thread) {
      // -a --per-thread: every thread there is now, the command's (held before exec) among them,
      // each counted wherever it runs. A thread that exits before it is opened is skipped by the
      // runtime; one created later counts in its creator's line (inherit) as perf's does.
      if (!o_.command.empty()) child_ = std::make_unique<runtime::Command>(o_.command);
      auto threads = all_threads();
      if (threads.empty()) throw Error(ErrorKind::machine, "no thread is listed in /proc");
      t = runtime::Target::process(threads.front(), o_.inherit);
      t.threads = std::move(threads);
      run_.target = "'system wide'";
      if (child_) return t;  // enabled when counting starts, not at the command's exec
    } else if (system_wide()) {
      t = runtime::Target::system_wide(o_.cpus.empty() ? std::vector<int>{}
                                                       : runtime::parse_cpu_list(o_.cpus));
      t.cgroups = cgroup_of_event_;
      run_.target = o_.cpus.empty() ? "'system wide'" : fmt::format("'CPU(s) {}'", o_.cpus);
    }
    if (!o_.command.empty()) {
      child_ = std::make_unique<runtime::Command>(o_.command);
      // perf names CPUs in the header when it counts them, the command otherwise.
      if (!system_wide()) {
        t = runtime::Target::command(*child_, o_.inherit);
        run_.target = fmt::format("'{}'", shell_words(o_.command));
      }
    }
    // Counting starts later (-D) or on command (-D -1): not at exec.
    if (o_.delay_ms != 0) t.enable_on_exec = false;
    return t;
  }

  // A thread's name as last seen: a thread that has exited (the command, read after it ended) keeps
  // the name it had.
  std::string comm(int tid) {
    if (auto now = comm_of(tid)) return comms_[tid] = *now;
    auto it = comms_.find(tid);
    return it != comms_.end() ? it->second : "?";
  }

  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void emit(const StatReport& counted, const StatRun& r) {
    // -M: the metrics of what is shown (an interval's counts, the mean of runs), not of the totals.
    StatReport report = counted;
    if (!plans_.empty()) attach_metrics(report, plans_);
    const auto& events = counters_ ? counters_->events() : set_;
    StatRun shown = r;
    shown.metric_only = o_.metric_only;
    // perf colours on a terminal (util/color.c); here, when what is written is one.
    shown.color = o_.color == "always" || (o_.color == "auto" && ::isatty(::fileno(out_)));
    std::string text = o_.field_separator    ? stat_perf_csv(events, report, shown, *o_.field_separator)
                       : o_.perf_json        ? stat_perf_json(events, report, shown)
                       : o_.format == "json" ? stat_json(events, report, shown)
                       : o_.format == "csv"  ? stat_csv(events, report, shown, !csv_header_done_)
                                             : stat_text(events, report, shown);
    csv_header_done_ = true;
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }

  StatReport read_report() {
    if (!counters_) return StatReport{};
    StatReport r;
    if (o_.aggregation == Aggregation::global) {
      r = global_report(counters_->read());
    } else {
      counters_->read_places(places_);
      r = aggregate(places_, o_.aggregation, machine_.cpu_topology(), [this](int tid) { return comm(tid); });
      // Every thread of the system: perf shows only what a thread counted, not hundreds of zeros
      // (nor of <not counted> for threads that never ran). An event that could not be opened is
      // shown once, in the first line, not once per thread.
      if (o_.aggregation == Aggregation::thread && o_.all_cpus)
        for (std::size_t k = 0; k < r.units.size(); ++k)
          for (auto& c : r.units[k].cells)
            if (c.count.raw == 0 && (k > 0 || c.count.state != runtime::Count::State::not_supported))
              c.here = false;
    }
    fill_tool_events(r);
    return r;
  }

  // User and system CPU time so far, ns, of what is counted: the threads of -t, the process (and its
  // waited-for children), or every CPU. nullopt when what is counted has exited (its times can no
  // longer be read).
  std::optional<std::pair<std::uint64_t, std::uint64_t>> cpu_times() const {
    std::optional<runtime::CpuTimes> t;
    if (!tids_.empty()) {  // -t: each thread's own times
      t = runtime::CpuTimes{};
      for (int tid : tids_) {
        auto one = runtime::thread_cpu_times(tid);
        if (!one) return std::nullopt;
        t->user_ns += one->user_ns, t->system_ns += one->system_ns;
      }
    } else if (int pid = o_.pid ? *o_.pid : child_ && !system_wide() ? child_->pid() : 0) {
      t = runtime::process_cpu_times(pid);
    } else {
      t = runtime::system_cpu_times();
    }
    if (!t) return std::nullopt;
    return std::pair{t->user_ns, t->system_ns};
  }

  // perf's tool events: duration_time is the wall time since counting started, user_time and
  // system_time the CPU time of what is counted (a command's own rusage once it has ended). Shown in
  // the first aggregate only, as perf shows them.
  void fill_tool_events(StatReport& r) const {
    const auto& events = counters_->events().events;
    for (std::size_t e = 0; e < events.size(); ++e) {
      if (events[e].tool == ToolEvent::none) continue;
      std::uint64_t value = 0;
      bool gone = false;
      if (events[e].tool == ToolEvent::duration_time) {
        value = static_cast<std::uint64_t>(seconds_since_start() * 1e9);
      } else if (child_ && child_->exited() && !system_wide()) {
        double s = events[e].tool == ToolEvent::user_time ? child_->user_seconds() : child_->system_seconds();
        value = static_cast<std::uint64_t>(s * 1e9);
      } else if (auto now = cpu_times()) {
        auto [user, sys] = *now;
        auto [user0, sys0] = cpu_times_at_start_;
        value =
            events[e].tool == ToolEvent::user_time ? user - std::min(user, user0) : sys - std::min(sys, sys0);
      } else {
        gone = true;
      }
      for (std::size_t u = 0; u < r.units.size(); ++u) {
        StatCell& cell = r.units[u].cells[e];
        cell.here = u == 0;
        cell.members = 1;
        runtime::Count& c = cell.count;
        c = runtime::Count{};
        c.state = runtime::Count::State::counted;
        c.raw = value;
        if (gone) {
          // Another process's times are in /proc only while it lives: after it, no value is honest.
          c.state = runtime::Count::State::not_counted;
          c.raw = 0;
          c.failure = runtime::Failure{
              0,  "exited", "", "the process or thread exited before its CPU times could be read from /proc",
              -1, ""};
        }
        c.time_enabled = c.time_running = static_cast<std::uint64_t>(seconds_since_start() * 1e9);
      }
    }
  }

  // The counts of the interval that ends now (since the last one printed, or since the start).
  void print_interval(StatReport now) {
    StatRun r = run_;
    r.interval_end = seconds_since_start();
    r.elapsed_seconds = *r.interval_end;
    // perf's print_header counts 0..25 before it prints the header again: every 26 intervals.
    r.print_interval_header = intervals_printed_ % 26 == 0;
    emit(previous_.units.empty() ? now : interval_delta(now, previous_), r);
    ++intervals_printed_;
    previous_ = std::move(now);
  }

  void set_enabled(bool on) {
    if (!counters_ || on == enabled_) return;
    if (on) {
      counters_->enable();
    } else {
      counters_->disable();
    }
    enabled_ = on;
    std::fputs(on ? "Events enabled\n" : "Events disabled\n", stderr);
  }

  void handle_control() {
    for (const auto& cmd : control_.poll()) {
      if (cmd == "enable" || cmd == "e") {
        set_enabled(true);
      } else if (cmd == "disable" || cmd == "d") {
        set_enabled(false);
      } else if (cmd == "stop") {
        stop_ = true;
      } else if (cmd != "ping") {
        std::fprintf(stderr, "perfspec stat: --control: unknown command '%s' (enable, disable, ping, stop)\n",
                     cmd.c_str());
      }
      control_.ack();
    }
  }

  // One run: open, count until done, read. nullopt: stop with status_ (nothing counted).
  std::optional<StatReport> run_once() {
    runtime::Target target = make_target();
    // A group whose members count on other CPUs than its leader: each such member alone, said as perf
    // stat says it (once, before the first run).
    if (!groups_checked_) {
      groups_checked_ = true;
      std::fputs(runtime::ungroup_warning(runtime::ungroup_by_cpus(set_, target), o_.verbose > 0).c_str(),
                 stderr);
    }
    // -vv: the attrs about to be opened, as perf stat -vv shows them.
    if (o_.verbose >= 2 && !o_.null_run) std::fputs(to_text(set_).c_str(), stderr);
    if (!o_.null_run) counters_.emplace(runtime::Counters::open(set_, target, runtime::OpenOptions{}));
    enabled_ = false;
    previous_ = StatReport{};
    intervals_printed_ = 0;
    stop_ = false;
    if (o_.delay_ms > 0 || o_.delay_ms == -1) std::fputs("Events disabled\n", stderr);
    start_ = std::chrono::steady_clock::now();
    cpu_times_at_start_ = child_ && !system_wide()
                              ? std::pair<std::uint64_t, std::uint64_t>{}
                              : cpu_times().value_or(std::pair<std::uint64_t, std::uint64_t>{});
    if (counters_ && o_.delay_ms == 0 && !target.enable_on_exec) counters_->enable();
    enabled_ = o_.delay_ms == 0;  // now, or at exec
    if (child_)
      if (int e = child_->start()) {
        std::fprintf(stderr, "perfspec stat: cannot run '%s': %s\n", o_.command[0].c_str(), std::strerror(e));
        child_->wait();
        status_ = child_->exit_status();
        return std::nullopt;
      }
    // --per-thread: each thread's name now, for lines read after it has gone; the command's once it
    // has exec'd.
    if (o_.aggregation == Aggregation::thread && counters_)
      for (const auto& p : counters_->places()) comm(p.thread);
    const bool only_tool_events =
        std::all_of(set_.events.begin(), set_.events.end(),
                    [](const ResolvedEvent& e) { return e.tool != ToolEvent::none; });
    if (!child_ && counters_ && counters_->open_fds() == 0 && !only_tool_events) {
      // Counting an existing process or CPUs with nothing open would wait for nothing (a zombie's pid
      // gives ESRCH for every event): the reasons, and a failure at once, as perf stops there too.
      run_.elapsed_seconds = seconds_since_start();
      emit(read_report(), run_);
      std::fprintf(stderr, "perfspec stat: no event could be opened for %s: nothing to count\n",
                   run_.target.c_str());
      status_ = 1;
      return std::nullopt;
    }
    count_until_done();
    return finish();
  }

  // Until the command ends, the process is gone, a signal or --control says stop, or the intervals
  // asked for were printed; with -I, an interval each step.
  void count_until_done() {
    const int step = o_.interval_ms ? static_cast<int>(o_.interval_ms) : 100;
    const int tick = control_.active() || o_.delay_ms > 0 ? std::min(step, 10) : step;
    // The signals this run has dealt with. run() stops after a run that got one, so each one counted
    // now came in this run, some perhaps while the command was being started: those are passed on too.
    int signals_seen = 0;
    auto next_interval = start_ + std::chrono::milliseconds(step);
    const auto enable_at = start_ + std::chrono::milliseconds(std::max(0, o_.delay_ms));
    for (;;) {
      if (o_.delay_ms > 0 && !enabled_ && std::chrono::steady_clock::now() >= enable_at) {
        set_enabled(true);
        start_ = std::chrono::steady_clock::now();  // perf's time elapsed counts from here
        next_interval = start_ + std::chrono::milliseconds(step);
      }
      handle_control();
      if (stop_) break;
      auto now = std::chrono::steady_clock::now();
      int wait_ms = static_cast<int>(std::clamp<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next_interval - now).count(), 0, tick));
      if (!o_.interval_ms) wait_ms = tick;
      if (child_) {
        if (child_->wait(wait_ms)) break;
        if (const int received = signals_received; received != signals_seen) {
          // The first signal is the command's to act on: it gets the same one (SIGTERM stays SIGTERM).
          // A second one means stop now: the command is killed, and the counts so far are printed. The
          // second may have come before this loop saw the first (both handlers ran while it waited).
          const bool again = signals_seen > 0 || received - signals_seen >= 2;
          signals_seen = received;
          if (again) {
            child_->signal(SIGKILL);
            child_->wait();
            break;
          }
          child_->signal(last_signal);
        }
      } else {
        ::usleep(static_cast<useconds_t>(std::max(1, wait_ms)) * 1000);
        if (signals_received) break;
        if (o_.pid && !alive(*o_.pid)) break;
        if (!tids_.empty() && std::none_of(tids_.begin(), tids_.end(), alive)) break;
      }
      if (o_.interval_ms && std::chrono::steady_clock::now() >= next_interval) {
        print_interval(read_report());
        next_interval += std::chrono::milliseconds(step);
        if (o_.interval_count && intervals_printed_ >= static_cast<int>(o_.interval_count)) {
          interval_count_reached_ = true;
          break;
        }
      }
    }
  }

  StatReport finish() {
    if (counters_) counters_->disable();
    StatReport report = read_report();
    run_.elapsed_seconds = seconds_since_start();
    run_.null_run = o_.null_run;
    if (interval_count_reached_ && child_) {
      // --interval-count ends the count, and the command with it (as perf stops it).
      child_->signal(SIGTERM);
      child_->wait();
    }
    if (child_) {
      if (!system_wide()) {  // perf shows the command's times only when it counts the command
        run_.user_seconds = child_->user_seconds();
        run_.system_seconds = child_->system_seconds();
      }
      status_ = child_->exit_status();
      run_.exit_status = status_;
    }
    if (o_.verbose)
      for (std::size_t e = 0; e < set_.events.size() && !report.units.empty(); ++e)
        for (const auto& u : report.units) {
          const auto& c = u.cells[e].count;
          std::fprintf(stderr, "%s%s%s: %llu %llu %llu\n",
                       spec::printable(counters_->events().events[e].name).c_str(),
                       u.label.empty() ? "" : " ", u.label.c_str(), static_cast<unsigned long long>(c.raw),
                       static_cast<unsigned long long>(c.time_enabled),
                       static_cast<unsigned long long>(c.time_running));
        }
    if (o_.interval_ms && !interval_count_reached_) {
      // The last, partial interval, as perf prints it; the only one when the run was shorter than -I.
      StatRun r = run_;
      r.interval_end = run_.elapsed_seconds;
      r.print_interval_header = intervals_printed_ % 26 == 0;
      emit(previous_.units.empty() ? report : interval_delta(report, previous_), r);
    }
    return report;
  }

  const StatOptions& o_;
  spec::Machine machine_;
  std::FILE* out_ = stderr;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  EventSet set_;
  std::vector<StatPlan> plans_;  // -M, each with where its events start in set_
  StatRun run_;
  std::vector<CgroupFd> cgroup_fds_;
  std::vector<int> cgroup_of_event_;
  Control control_;
  std::unique_ptr<runtime::Command> child_;
  std::optional<runtime::Counters> counters_;
  std::vector<runtime::PlaceCounts> places_;
  std::vector<int> tids_;             // -t: the threads counted
  std::map<int, std::string> comms_;  // --per-thread: each thread's name as last seen
  std::chrono::steady_clock::time_point start_;
  std::pair<std::uint64_t, std::uint64_t> cpu_times_at_start_{};
  StatReport previous_;
  int intervals_printed_ = 0;
  bool interval_count_reached_ = false;
  bool enabled_ = false, stop_ = false, csv_header_done_ = false;
  bool groups_checked_ = false;  // ungroup_by_cpus done
  int status_ = 0;
};

}  // namespace

int run_stat(const StatOptions& o) { return StatSession(o).run(); }

}  // namespace perfspec::tools
