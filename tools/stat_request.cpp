// SPDX-License-Identifier: MIT
// `perfspec stat`'s options read into what to count: perf's refusals of options that do not go
// together, the -e lists and -M requests resolved (perf's --topdown and default metrics among them), the
// cgroup of each event, and the target.
#include "tools/stat_request.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "perfspec/metric.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/cpulist.hpp"
#include "tools/control.hpp"
#include "tools/exit_status.hpp"
#include "tools/live.hpp"
#include "tools/report.hpp"

namespace perfspec::tools {

namespace {

// perf's parse_cache_level: --per-cache=L1 to L4 (or l1 to l4); no level: each CPU's highest (0)
int cache_level(const std::string& text) {
  if (text.empty()) return 0;
  if (text.size() != 2 || (text[0] != 'L' && text[0] != 'l') || text[1] < '1' || text[1] > '9')
    throw Error(ErrorKind::usage,
                fmt::format("--per-cache={}: a cache level is L1 to L4 (or l1 to l4)", text));
  if (text[1] > '4')
    throw Error(ErrorKind::usage, fmt::format("--per-cache={}: perf knows cache levels up to L4", text));
  return text[1] - '0';
}

bool system_wide(const StatOptions& o) { return o.all_cpus || !o.cpus.empty(); }

// -C: every CPU must exist (online), or the error would be the kernel's EINVAL or ENODEV.
void check_cpus(const StatOptions& o) {
  auto wanted = runtime::parse_cpu_list(o.cpus);
  auto online = runtime::system_calls().online_cpus();
  for (int cpu : wanted)
    if (std::find(online.begin(), online.end(), cpu) == online.end()) {
      const std::string list = spec::cpu_list_text(online);
      throw Error(
          ErrorKind::usage,
          fmt::format("-C {}: CPU {} does not exist or is offline (online CPUs: {})", o.cpus, cpu, list));
    }
}

class Resolver {
 public:
  Resolver(const StatOptions& o, const spec::Machine& machine, StatRequest& out)
      : o_(o), machine_(machine), out_(out) {}

  int run() {
    if (int status = resolve_events()) return status;
    cgroups();
    return 0;
  }

 private:
  const StatOptions& o_;
  const spec::Machine& machine_;
  StatRequest& out_;

  // Every -e list into one set; a list that does not resolve is shown with its caret. 0, or the status.
  int resolve_events() {
    if (o_.null_run) return 0;
    std::vector<std::string> lists = o_.events;
    std::vector<std::string> metrics = o_.metrics;
    // perf's -T is -M transaction after -M's metrics, and it takes the place of --topdown and of the
    // default events (its add_default_attributes returns with it)
    if (o_.transaction) {
      if (int status = transaction_request(metrics)) return status;
    } else if (o_.topdown) {
      if (int status = topdown_request(metrics)) return status;
    }
    const bool default_metrics = lists.empty() && o_.metrics.empty() && !o_.topdown && !o_.transaction &&
                                 default_request(lists, metrics);
    ResolveOptions resolve_options;
    if (!o_.cputype.empty()) resolve_options.pmu_filter = cputype_pmu();
    EventSet once;
    std::vector<std::pair<std::size_t, std::size_t>> ranges;  // each -e list's events
    for (const auto& text : lists) {
      try {
        EventSet one = resolve(text, machine_, resolve_options);
        // perf's words when a written group was split or reordered by PMU (its parse_events)
        if (one.regrouped) std::fputs("WARNING: events were regrouped to match PMUs\n", stderr);
        const std::size_t first = once.events.size();
        once.append(std::move(one));
        ranges.emplace_back(first, once.events.size());
      } catch (const Error& e) {
        return report_error(e, text, error_format(o_.format));
      }
    }
    if (int status = plan_metrics(metrics, default_metrics, once)) return status;
    // -d, -dd, -ddd: perf's detailed cache and TLB events after everything else
    for (int level = 0; level < std::min(o_.detailed, 3); ++level)
      once.append(resolve(detailed_stat_events[level], machine_));
    restrict_privilege(once, o_.all_user, o_.all_kernel);  // over :k and :u, as perf's
    std::vector<std::string> filters = tracepoint_filters(once, ranges, o_.filters);
    if (o_.for_each_cgroup.empty()) {
      out_.set = std::move(once);
      out_.filters = std::move(filters);
      return 0;
    }
    // --for-each-cgroup: the whole list once per cgroup, in the cgroups' order (as perf expands it).
    for (const auto& name : split_commas(o_.for_each_cgroup)) {
      out_.set.append(EventSet(once));
      out_.cgroups.resize(out_.set.events.size(), name);
      out_.filters.insert(out_.filters.end(), filters.begin(), filters.end());
    }
    return 0;
  }

  // perf's --cputype: a PMU named so, or uncore_ or cpu_ and so (perf_pmus__pmu_for_pmu_filter), in
  // the order the machine lists them; a usage error when there is none, as perf's "is not supported".
  std::string cputype_pmu() const {
    const std::string& t = o_.cputype;
    for (const std::string& n : machine_.pmu_names())
      if (n == t || n == "uncore_" + t || n == "cpu_" + t) return n;
    throw Error(
        ErrorKind::usage,
        fmt::format("--cputype {}: this machine has no PMU named '{}', 'cpu_{}' or 'uncore_{}'", t, t, t, t),
        fmt::format("its PMUs: {}", fmt::join(machine_.pmu_names(), ", ")));
  }

  // perf's -T: the tables' transaction metrics (a group, or a metric of that name), or an error as perf's
  // "Missing transaction metrics". 0, or the status of the error said.
  int transaction_request(std::vector<std::string>& metrics) const {
    const auto defs = metric::machine_metrics(machine_);
    if (std::none_of(defs.begin(), defs.end(), [](const auto& d) {
          return d.name == "transaction" || metric::in_group(d, "transaction");
        }))
      return report_error(
          Error(ErrorKind::machine, "-T/--transaction: this machine's tables have no transaction metrics",
                "see perfspec list --metrics"),
          error_format(o_.format));
    metrics.push_back("transaction");
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
    if (!o_.cputype.empty()) mo.pmu = cputype_pmu();
    mo.target.system_wide = system_wide(o_);
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
        out_.plans.push_back({std::move(plan), offset});
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
  void cgroups() {
    std::vector<std::string> names;
    for (const auto& list : o_.cgroups)
      for (auto& n : split_commas(list)) names.push_back(std::move(n));
    if (!names.empty()) {
      if (names.size() > out_.set.events.size())
        throw Error(ErrorKind::usage,
                    fmt::format("-G names {} cgroups for {} events", names.size(), out_.set.events.size()));
      out_.cgroups.assign(out_.set.events.size(), names.size() == 1 ? names[0] : std::string{});
      if (names.size() > 1)
        for (std::size_t i = 0; i < names.size(); ++i) out_.cgroups[i] = names[i];
    }
  }
};

}  // namespace

void check_stat_options(const StatOptions& o) {
  (void)cache_level(o.cache_level);  // a level perf refuses, before anything is resolved
  if (!o.tids.empty() && (o.pid || o.all_cpus || !o.cpus.empty()))
    throw Error(ErrorKind::usage, "-t cannot be combined with -p, -a or -C");
  if (o.pid && (o.all_cpus || !o.cpus.empty()))
    throw Error(ErrorKind::usage, "-p cannot be combined with -a or -C");
  if (o.repeat < 1)
    throw Error(ErrorKind::usage, fmt::format("-r {}: the number of runs must be 1 or more", o.repeat));
  if (o.repeat > 1 && o.command.empty())
    throw Error(ErrorKind::usage, "-r repeats a command: give one (a process or CPUs cannot be run again)");
  if (o.repeat > 1 && o.interval_ms) throw Error(ErrorKind::usage, "-r cannot be combined with -I");
  // perf's words
  if (o.table && o.repeat <= 1) throw Error(ErrorKind::usage, "--table is only supported with -r");
  if (o.append && o.output.empty()) throw Error(ErrorKind::usage, "--append adds to the -o file: give one");
  // perf's words
  if (o.timeout_ms && o.timeout_ms < 10) throw Error(ErrorKind::usage, "timeout must be >= 10ms.");
  if (o.timeout_ms && o.interval_ms)
    throw Error(ErrorKind::usage, "timeout option is not supported with interval-print.");
  if (o.interval_count && !o.interval_ms)
    throw Error(ErrorKind::usage, "--interval-count counts intervals: give -I MSEC too");
  if (o.all_user && o.all_kernel)
    throw Error(ErrorKind::usage, "--all-user and --all-kernel exclude each other");
  if (o.delay_ms < -1)
    throw Error(ErrorKind::usage, fmt::format("-D {}: give milliseconds, or -1", o.delay_ms));
  if (o.delay_ms == -1 && o.control.empty())
    throw Error(ErrorKind::usage, "-D -1 starts with counting disabled: give --control to enable it");
  const bool per_cpu = o.aggregation != Aggregation::global && o.aggregation != Aggregation::thread;
  if (per_cpu && !system_wide(o))
    throw Error(ErrorKind::usage,
                fmt::format("{} groups counts by CPU: it needs -a or -C (system-wide counting)",
                            aggregation_option(o.aggregation)));
  if (o.aggregation == Aggregation::thread && !o.cpus.empty())
    throw Error(ErrorKind::usage, "--per-thread counts threads wherever they run: give -a, not -C");
  if (o.aggregation == Aggregation::thread && !o.pid && o.tids.empty() && !o.all_cpus)
    throw Error(ErrorKind::usage,
                "--per-thread counts each thread of a process (-p PID), of a list (-t TIDS) or of the "
                "whole system (-a)");
  if (o.aggregation == Aggregation::thread && (!o.cgroups.empty() || !o.for_each_cgroup.empty()))
    throw Error(ErrorKind::usage, "--per-thread cannot be combined with -G or --for-each-cgroup");
  if ((!o.cgroups.empty() || !o.for_each_cgroup.empty()) && !system_wide(o))
    throw Error(ErrorKind::usage, "-G and --for-each-cgroup count cgroups on CPUs: give -a or -C");
  if (!o.metrics.empty() && !o.for_each_cgroup.empty())
    throw Error(ErrorKind::usage, "-M and --for-each-cgroup cannot be combined yet");
  if (!o.cgroups.empty() && !o.for_each_cgroup.empty())
    throw Error(ErrorKind::usage, "-G and --for-each-cgroup exclude each other");
  // perf's own refusals, in its words.
  if (o.metric_only && o.aggregation == Aggregation::thread)
    throw Error(ErrorKind::usage, "--metric-only is not supported with --per-thread");
  if (o.metric_only && o.repeat > 1) throw Error(ErrorKind::usage, "--metric-only is not supported with -r");
  if (o.metric_only && (!o.cgroups.empty() || !o.for_each_cgroup.empty()))
    throw Error(ErrorKind::usage, "--metric-only cannot be combined with -G or --for-each-cgroup yet");
  if (o.metric_only && !o.field_separator && !o.perf_json && o.format != "text")
    throw Error(ErrorKind::usage,
                fmt::format("--metric-only shapes perf's layouts (the table, -x, -j); --format {} always "
                            "gives every count with its metrics",
                            o.format));
  if (o.null_run && (!o.events.empty() || o.interval_ms))
    throw Error(ErrorKind::usage, "--null counts nothing: give no -e and no -I");
  if (!o.cpus.empty()) check_cpus(o);
}

int resolve_stat_request(const StatOptions& o, const spec::Machine& machine, StatRequest& out) {
  return Resolver(o, machine, out).run();
}

StatTarget stat_target(const StatOptions& o, const StatRequest& request) {
  StatTarget t;
  t.pid = o.pid;
  for (const auto& word : o.tids.empty() ? std::vector<std::string>{} : split_commas(o.tids)) {
    int tid = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), tid);
    if (ec != std::errc{} || end != word.data() + word.size() || tid <= 0)
      throw Error(ErrorKind::usage, fmt::format("-t {}: '{}' is not a thread id", o.tids, word));
    t.threads.push_back(tid);
  }
  t.system_wide = system_wide(o);
  if (!o.cpus.empty()) t.cpus = runtime::parse_cpu_list(o.cpus);
  t.as_written = !o.tids.empty() ? o.tids : o.cpus;
  t.command = o.command;
  t.inherit = o.inherit;
  t.aggregation = o.aggregation;
  t.cache_level = cache_level(o.cache_level);
  t.cgroups = request.cgroups;
  t.filters = request.filters;
  t.enable_later = o.delay_ms != 0;  // later (-D), or on command (-D -1): not at exec
  return t;
}

}  // namespace perfspec::tools
