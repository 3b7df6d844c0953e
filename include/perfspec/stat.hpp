// SPDX-License-Identifier: MIT
#pragma once
// What `stat` shows, before it is printed: counts grouped as perf stat groups them (per CPU, core,
// die, socket, node or thread, or all together), averaged over repeated runs with their variation.
// print.hpp prints a StatReport in perf's layouts and in perfspec's own CSV and JSON.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/metric.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/spec.hpp"

namespace perfspec {

/// perf stat's aggregation modes: the default (everything summed), `-A` (per CPU), `--per-core`,
/// `--per-die`, `--per-socket`, `--per-node`, `--per-thread`, `--per-cache` (an instance of a cache
/// level: StatTarget::cache_level), `--per-cluster`.
enum class Aggregation { global, cpu, core, die, socket, node, thread, cache, cluster };

/// The option that asks for `a` (`--per-core`, `-A` for cpu, "" for global).
std::string_view aggregation_option(Aggregation a);
/// Its name in outputs: `global`, `cpu`, `core`, `die`, `socket`, `node`, `thread`, `cache`, `cluster`.
std::string_view aggregation_name(Aggregation a);

/// What a stat run counts: perf stat's target options (StatCounting, stat_counting.hpp, counts it;
/// stat_target_words, print.hpp, names it as perf stat's header does).
struct StatTarget {
  std::optional<int> pid{};    ///< -p: a running process, its threads as they are now
  std::vector<int> threads{};  ///< -t: these threads (without pid)
  bool system_wide = false;    ///< -a, or -C with `cpus`
  std::vector<int> cpus{};     ///< system-wide on these CPUs only (empty: every CPU)
  /// Run this: counted, unless a process, threads or CPUs are (then it runs alongside them, and its
  /// end ends the count, as perf stat -p PID sleep 10 counts PID for ten seconds).
  std::vector<std::string> command{};
  bool inherit = true;                            ///< count the children a counted task creates
  Aggregation aggregation = Aggregation::global;  ///< how read() groups the counts
  /// Aggregation::cache: the cache level (perf's --per-cache=L2 is 2); 0: each CPU's highest.
  int cache_level = 0;
  /// -G: per event, the cgroup it counts in ("" every process; a path under the cgroup mount); empty:
  /// no cgroups. System-wide only.
  std::vector<std::string> cgroups{};
  /// Per event (by index; empty: none): a tracepoint filter (perf's --filter), set before counting
  /// starts; an event whose filter the kernel refuses is not counted, with the reason
  /// (runtime::OpenOptions::filters).
  std::vector<std::string> filters{};
  /// Counting starts at enable() (perf's -D), not at once or at the command's exec.
  bool enable_later = false;
  /// The CPUs or threads as the user wrote them (`-C 0,1`), which perf's header quotes; empty: the
  /// lists, CPUs as perf prints a CPU map ("0-3"), threads comma-separated.
  std::string as_written{};
};

/// A metric's value shown beside an event (perf stat -M): on the line of the metric's first event.
struct StatMetric {
  std::string name;             ///< the metric's name
  std::string unit;             ///< its ScaleUnit's unit ("%"), or ""
  double value = 0;             ///< scaled by the ScaleUnit; NaN when it could not be computed
  bool over_threshold = false;  ///< its MetricThreshold holds (perf colours the value red)
  /// It has a MetricThreshold and that computed: `over_threshold` is its verdict (perf colours the
  /// value green when it does not hold). False: no colour.
  bool thresholded = false;
};

/// One event within one aggregate.
struct StatCell {
  runtime::Count count;  ///< summed over the aggregate's CPUs or threads (over runs: the mean)
  bool here = true;      ///< counted in this aggregate at all (an uncore event: only on its cpumask)
  int members = 0;       ///< how many CPUs (or threads) were summed into it: perf's `cpus` column
  double noise = 0;      ///< repeated runs: the standard deviation of the mean, in percent of it
  /// -M: the metrics whose first event this is, computed here (in the order asked for; one that could
  /// not be computed has a NaN value, which the layouts show as none)
  std::vector<StatMetric> metrics{};
};

/// One aggregate: a CPU, a core, a die, a socket, a node, a thread, or (global) everything.
struct StatUnit {
  /// perf's: "" (global), "CPU0", "S0-D0-C1", "S0-D0", "S0", "N0", "bash-1234", "S0-D0-L3-ID0" (a
  /// cache: its level and the first CPU sharing it), "S0-D0-CLS1"
  std::string label;
  int cpu = -1;                 ///< Aggregation::cpu: the CPU
  int thread = -1;              ///< Aggregation::thread: the thread id
  std::vector<StatCell> cells;  ///< one per event of the set, in order
};

/// Counts grouped for printing.
struct StatReport {
  Aggregation aggregation = Aggregation::global;
  std::vector<StatUnit> units;
  int runs = 1;  ///< how many runs were averaged
};

/// One unit holding `counts` as they are (the default aggregation of one run).
StatReport global_report(const std::vector<runtime::Count>& counts);

/// Groups the per-place counts of one read (runtime::Counters::read_places) by `by`: CPUs by their
/// place in `topology` (spec::Machine::cpu_topology), threads by id, labelled `thread_name(tid)-tid`.
/// Units are ordered by their id (socket, die, core, cache, cluster; node; CPU; thread); a CPU missing
/// from the topology is its own socket, die and core -1. Aggregation::cache groups by the cache of
/// `cache_level` (0: each CPU's highest level; a CPU without that level is in instance -1). Throws
/// perfspec::Error (usage) for Aggregation::thread over counts that were not taken per thread.
StatReport aggregate(const std::vector<runtime::PlaceCounts>& places, Aggregation by,
                     const std::vector<spec::CpuTopology>& topology,
                     const std::function<std::string(int tid)>& thread_name = {}, int cache_level = 0);

/// The mean of several runs' reports (same events, same units), each cell's `noise` the standard
/// deviation of its mean in percent, as `perf stat -r` shows it. Units are matched by label; a unit
/// present in some runs only is averaged over the runs that had it.
StatReport average(const std::vector<StatReport>& runs);

/// The counts of an interval: `now` less `before`, cell by cell (the same units and events, as two
/// reads of the same counters give them); a counted cell that did not run in between is not counted.
///
/// Example: `emit(interval_delta(read_now, read_before));` as `perf stat -I` prints each interval.
StatReport interval_delta(const StatReport& now, const StatReport& before);

/// A metric plan whose events are in a report's cells from `offset` on (its events appended to the
/// counted set at that index).
struct StatPlan {
  metric::Plan plan;
  std::size_t offset = 0;
};
/// `perf stat -M`: each metric computed in each unit from its events' counts there (scaled for
/// multiplexing; NaN, with the reason, for an event not counted), put on the cell of its first event
/// (StatCell::metrics, replacing what was there). A metric without a value stays, for --metric-only's
/// column.
void attach_metrics(StatReport& report, const std::vector<StatPlan>& plans);

/// Mean and standard deviation of the mean of `values` (perf's avg_stats and stddev_stats): the
/// second is 0 for fewer than two values.
std::pair<double, double> mean_and_stddev(const std::vector<double>& values);

}  // namespace perfspec
