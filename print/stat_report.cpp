// SPDX-License-Identifier: MIT
// Grouping counts as perf stat does (per CPU, core, die, socket, node, thread) and averaging runs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/stat.hpp"

namespace perfspec {

using runtime::Count;

std::string_view aggregation_option(Aggregation a) {
  switch (a) {
    case Aggregation::global: return "";
    case Aggregation::cpu: return "-A";
    case Aggregation::core: return "--per-core";
    case Aggregation::die: return "--per-die";
    case Aggregation::socket: return "--per-socket";
    case Aggregation::node: return "--per-node";
    case Aggregation::thread: return "--per-thread";
    case Aggregation::cache: return "--per-cache";
    case Aggregation::cluster: return "--per-cluster";
  }
  return "";
}

std::string_view aggregation_name(Aggregation a) {
  switch (a) {
    case Aggregation::global: return "global";
    case Aggregation::cpu: return "cpu";
    case Aggregation::core: return "core";
    case Aggregation::die: return "die";
    case Aggregation::socket: return "socket";
    case Aggregation::node: return "node";
    case Aggregation::thread: return "thread";
    case Aggregation::cache: return "cache";
    case Aggregation::cluster: return "cluster";
  }
  return "global";
}

StatReport global_report(const std::vector<Count>& counts) {
  StatReport r;
  StatUnit& u = r.units.emplace_back();
  u.cells.reserve(counts.size());
  for (const auto& c : counts) u.cells.push_back(StatCell{c, true, 1, 0});
  return r;
}

namespace {

// The key a place sorts and groups by, and its label.
struct UnitKey {
  std::tuple<int, int, int, int> id;
  std::string label;
};

// perf's cpu__get_cache_details: the cache of `level` (0: the CPU's highest; the last index of the
// level, as perf's loop leaves it), its level and instance
std::pair<int, int> cache_of(const spec::CpuTopology& t, int level) {
  const spec::CpuTopology::Cache* found = nullptr;
  for (const auto& c : t.caches)
    if (level ? c.level == level : (!found || c.level > found->level)) found = &c;
  if (!found) return {level, -1};
  return {found->level, found->first_cpu};
}

const spec::CpuTopology* find_cpu(const std::vector<spec::CpuTopology>& topology, int cpu) {
  auto it = std::lower_bound(topology.begin(), topology.end(), cpu,
                             [](const spec::CpuTopology& t, int c) { return t.cpu < c; });
  return it != topology.end() && it->cpu == cpu ? &*it : nullptr;
}

UnitKey key_of(const runtime::Place& p, Aggregation by, const std::vector<spec::CpuTopology>& topology,
               const std::function<std::string(int)>& thread_name, int cache_level) {
  spec::CpuTopology t;
  if (const auto* found = find_cpu(topology, p.cpu)) t = *found;
  switch (by) {
    case Aggregation::global: return {{0, 0, 0, 0}, ""};
    case Aggregation::cpu: return {{p.cpu, 0, 0, 0}, fmt::format("CPU{}", p.cpu)};
    case Aggregation::core:
      return {{t.socket, t.die, t.core, 0}, fmt::format("S{}-D{}-C{}", t.socket, t.die, t.core)};
    case Aggregation::die: return {{t.socket, t.die, 0, 0}, fmt::format("S{}-D{}", t.socket, t.die)};
    case Aggregation::socket: return {{t.socket, 0, 0, 0}, fmt::format("S{}", t.socket)};
    case Aggregation::node: return {{t.node, 0, 0, 0}, fmt::format("N{}", t.node)};
    case Aggregation::thread: {
      std::string name = thread_name ? thread_name(p.thread) : std::string{};
      return {{p.thread, 0, 0, 0}, fmt::format("{}-{}", name, p.thread)};
    }
    case Aggregation::cache: {
      auto [level, id] = cache_of(t, cache_level);
      return {{t.socket, t.die, level, id}, fmt::format("S{}-D{}-L{}-ID{}", t.socket, t.die, level, id)};
    }
    case Aggregation::cluster: {
      const int cluster = t.cluster < 0 ? 0 : t.cluster;  // perf: no cluster_id on older kernels is 0
      return {{t.socket, t.die, cluster, 0}, fmt::format("S{}-D{}-CLS{}", t.socket, t.die, cluster)};
    }
  }
  return {{0, 0, 0, 0}, ""};
}

// Adds one place's count into a unit's: values and times summed, as perf sums an aggregate's CPUs
// before scaling it.
void add_into(StatCell& cell, const Count& c, bool here) {
  if (!here) return;
  Count& sum = cell.count;
  if (!cell.here) {
    sum = c;
    cell.here = true;
    cell.members = 1;
    return;
  }
  ++cell.members;
  sum.raw += c.raw;
  sum.time_enabled += c.time_enabled;
  sum.time_running += c.time_running;
  if (c.state == Count::State::counted) sum.state = Count::State::counted;
  if (!sum.failure && c.failure) sum.failure = c.failure;
  for (const auto& n : c.notes)
    if (std::find(sum.notes.begin(), sum.notes.end(), n) == sum.notes.end()) sum.notes.push_back(n);
}

}  // namespace

StatReport aggregate(const std::vector<runtime::PlaceCounts>& places, Aggregation by,
                     const std::vector<spec::CpuTopology>& topology,
                     const std::function<std::string(int)>& thread_name, int cache_level) {
  if (by == Aggregation::thread)
    for (const auto& p : places)
      if (p.place.thread < 0)
        throw Error(ErrorKind::usage, "--per-thread needs counts taken per thread (a process's threads)");
  // Keyed by id, so the units come out ordered as perf's aggregation map is sorted.
  std::map<std::tuple<int, int, int, int>, StatUnit> units;
  for (const auto& p : places) {
    UnitKey k = key_of(p.place, by, topology, thread_name, cache_level);
    auto [it, added] = units.try_emplace(k.id);
    StatUnit& u = it->second;
    if (added) {
      u.label = std::move(k.label);
      u.cpu = by == Aggregation::cpu ? p.place.cpu : -1;
      u.thread = by == Aggregation::thread ? p.place.thread : -1;
      u.cells.resize(p.counts.size(), StatCell{Count{}, false, 0, 0});
    }
    for (std::size_t e = 0; e < p.counts.size() && e < u.cells.size(); ++e)
      add_into(u.cells[e], p.counts[e], p.here[e] != 0);
  }
  StatReport sorted;
  sorted.aggregation = by;
  for (auto& [id, u] : units) sorted.units.push_back(std::move(u));
  // An event opened nowhere is shown in every unit as perf shows it: not supported, with its failure.
  for (std::size_t e = 0; !places.empty() && e < places.front().counts.size(); ++e) {
    bool anywhere = std::any_of(sorted.units.begin(), sorted.units.end(),
                                [&](const StatUnit& u) { return u.cells[e].here; });
    if (!anywhere)
      for (auto& u : sorted.units) u.cells[e] = StatCell{places.front().counts[e], true, 0, 0};
  }
  for (auto& u : sorted.units)
    for (auto& cell : u.cells)
      if (cell.here && cell.count.state == Count::State::counted && cell.count.time_running == 0)
        cell.count.state = Count::State::not_counted;
  return sorted;
}

std::pair<double, double> mean_and_stddev(const std::vector<double>& values) {
  if (values.empty()) return {0.0, 0.0};
  // Welford's update, as perf's update_stats: the mean and the sum of squared differences.
  double mean = 0, m2 = 0;
  std::size_t n = 0;
  for (double v : values) {
    ++n;
    double delta = v - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (v - mean);
  }
  if (n < 2) return {mean, 0.0};
  double variance = m2 / static_cast<double>(n - 1);
  return {mean, std::sqrt(variance / static_cast<double>(n))};
}

StatReport average(const std::vector<StatReport>& runs) {
  if (runs.empty()) return {};
  if (runs.size() == 1) return runs.front();
  StatReport out;
  out.aggregation = runs.front().aggregation;
  out.runs = static_cast<int>(runs.size());
  std::map<std::string, std::size_t> index;
  for (const auto& run : runs)
    for (const auto& u : run.units)
      if (index.emplace(u.label, out.units.size()).second) {
        StatUnit& copy = out.units.emplace_back(u);
        for (auto& c : copy.cells) c = StatCell{c.count, false, 0, 0};
      }
  for (std::size_t ui = 0; ui < out.units.size(); ++ui) {
    StatUnit& unit = out.units[ui];
    for (std::size_t e = 0; e < unit.cells.size(); ++e) {
      std::vector<double> values;
      std::uint64_t enabled = 0, running = 0;
      int members = 0, seen = 0;
      bool counted = false;
      StatCell& cell = unit.cells[e];
      for (const auto& run : runs) {
        auto it = std::find_if(run.units.begin(), run.units.end(),
                               [&](const StatUnit& u) { return u.label == unit.label; });
        if (it == run.units.end() || e >= it->cells.size() || !it->cells[e].here) continue;
        const StatCell& c = it->cells[e];
        ++seen;
        cell.here = true;
        members = std::max(members, c.members);
        if (c.count.state == Count::State::counted) counted = true;
        // perf averages each run's scaled count, and its times.
        values.push_back(c.count.state == Count::State::counted ? c.count.scaled() : 0.0);
        enabled += c.count.time_enabled;
        running += c.count.time_running;
        if (!cell.count.failure && c.count.failure) cell.count.failure = c.count.failure;
      }
      if (!seen) continue;
      auto [mean, stddev] = mean_and_stddev(values);
      Count& avg = cell.count;
      const auto n = static_cast<std::uint64_t>(seen);
      // The mean as a count that ran all of its (mean) enabled time: scaled() gives the mean back.
      avg.raw = static_cast<std::uint64_t>(std::llround(mean));
      avg.time_enabled = enabled / n;
      avg.time_running = running / n;
      if (avg.time_running && avg.time_running != avg.time_enabled) {
        // Keep the multiplexing ratio visible while scaled() still yields the mean.
        avg.raw = static_cast<std::uint64_t>(std::llround(mean * static_cast<double>(avg.time_running) /
                                                          static_cast<double>(avg.time_enabled)));
      }
      avg.state = counted ? Count::State::counted
                          : (avg.failure ? Count::State::not_supported : Count::State::not_counted);
      cell.members = members;
      cell.noise = mean != 0 ? 100.0 * stddev / mean : 0.0;
    }
  }
  return out;
}

StatReport interval_delta(const StatReport& now, const StatReport& before) {
  StatReport out = now;
  for (std::size_t u = 0; u < out.units.size() && u < before.units.size(); ++u)
    for (std::size_t e = 0; e < out.units[u].cells.size() && e < before.units[u].cells.size(); ++e) {
      auto& c = out.units[u].cells[e].count;
      const auto& b = before.units[u].cells[e].count;
      c.raw -= std::min(c.raw, b.raw);
      c.time_enabled -= std::min(c.time_enabled, b.time_enabled);
      c.time_running -= std::min(c.time_running, b.time_running);
      if (c.state == runtime::Count::State::counted && c.time_running == 0)
        c.state = runtime::Count::State::not_counted;
    }
  return out;
}

void attach_metrics(StatReport& r, const std::vector<StatPlan>& plans) {
  for (auto& u : r.units)
    for (auto& c : u.cells) c.metrics.clear();
  for (const auto& [plan, offset] : plans)
    for (auto& u : r.units) {
      std::vector<double> values;
      std::vector<std::string> why;
      for (std::size_t i = 0; i < plan.events.events.size(); ++i) {
        const StatCell& cell = u.cells[offset + i];
        const runtime::Count& c = cell.count;
        const bool ok = cell.here && c.state == runtime::Count::State::counted;
        values.push_back(ok ? c.scaled() : std::numeric_limits<double>::quiet_NaN());
        why.push_back(ok || !c.failure ? "" : c.failure->name + ": " + c.failure->hint);
      }
      auto results = metric::evaluate(plan, values, why);
      for (std::size_t k = 0; k < plan.metrics.size(); ++k) {
        const auto& m = plan.metrics[k];
        // One without a value (NaN) stays, for --metric-only's column: never a figure from what was
        // not counted, but its place.
        std::size_t first = plan.events.events.size();
        for (const auto& [id, events] : m.inputs)
          for (std::size_t i : events) first = std::min(first, i);
        if (first == plan.events.events.size()) first = 0;
        if (offset + first >= u.cells.size()) continue;
        u.cells[offset + first].metrics.push_back(
            StatMetric{m.definition.name, m.scale.unit, results[k].value,
                       results[k].over_threshold.value_or(false), results[k].over_threshold.has_value()});
      }
    }
}

}  // namespace perfspec
