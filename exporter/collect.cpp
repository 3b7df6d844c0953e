// SPDX-License-Identifier: MIT
// A scrape's read: every set's counters read (each CPU's on that CPU), summed into the units of the
// set's aggregation, and given as series: the counts in Prometheus's base units, the times enabled and
// running, what could not be opened, the metrics over their window, each target's health.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "exporter/set.hpp"
#include "perfspec/errno_facts.hpp"

namespace perfspec::exporter {
namespace {

using prometheus::MetricType;

// The families one scrape fills.
struct Series {
  std::map<std::string, prometheus::MetricFamily> counts;  // by base-unit suffix
  prometheus::MetricFamily enabled =
      family("perfspec_event_enabled_seconds_total",
             "Time the event was enabled (time_enabled); with _running_, how much it was multiplexed",
             MetricType::Counter);
  prometheus::MetricFamily running =
      family("perfspec_event_running_seconds_total",
             "Time the event was on a counter (time_running); count * enabled / running estimates the whole",
             MetricType::Counter);
  prometheus::MetricFamily failed = family(
      "perfspec_event_failed_info",
      "An event of the configuration that could not be opened, with the errno and reason", MetricType::Gauge);
  prometheus::MetricFamily metric_values =
      family("perfspec_metric", "Metric values over the last window", MetricType::Gauge);
  prometheus::MetricFamily thresholds =
      family("perfspec_metric_over_threshold",
             "1 when the metric's threshold holds (perf shows the value in red)", MetricType::Gauge);
  prometheus::MetricFamily unavailable =
      family("perfspec_metric_unavailable_info",
             "A metric that could not be computed over the last window, and why", MetricType::Gauge);
  prometheus::MetricFamily up =
      family("perfspec_target_up", "1 when the set's target (process, cgroup) is there and counted",
             MetricType::Gauge);

  prometheus::MetricFamily& counts_of(const std::string& suffix) {
    auto it = counts.find(suffix);
    if (it != counts.end()) return it->second;
    std::string help =
        suffix == "total" ? "Events counted, not scaled for multiplexing (see _enabled_ and _running_)"
        : suffix == "seconds_total" ? "Time events (task-clock, cpu-clock, duration_time), in seconds"
        : suffix == "joules_total"  ? "Energy events, in joules (the event's scale applied)"
        : suffix == "bytes_total"
            ? "Events counting bytes (the event's scale applied)"
            : "Events with a scale and unit of their own (the unit label), scale applied";
    return counts.emplace(suffix, family("perfspec_event_" + suffix, help, MetricType::Counter))
        .first->second;
  }

  // The counts first (by suffix), then the others that have series; up always.
  std::vector<prometheus::MetricFamily> take() {
    std::vector<prometheus::MetricFamily> out;
    for (auto& [suffix, f] : counts) out.push_back(std::move(f));
    for (auto* f : {&enabled, &running, &failed, &metric_values, &thresholds, &unavailable, &up})
      if (!f->metric.empty() || f == &up) out.push_back(std::move(*f));
    return out;
  }
};

// What a set's places summed into its units, and per event whether it counted anywhere and the first
// failure seen.
struct Sums {
  Units units;
  std::vector<char> here_anywhere;
  std::vector<const runtime::Count*> failure;
};

Labels joined(Labels l, const Labels& more) {
  l.insert(l.end(), more.begin(), more.end());
  return l;
}

// The labels of every series of a set: its name, its target, the file's labels.
Labels set_labels_of(const SetConfig& c) {
  Labels l{{"set", c.name}};
  switch (c.target) {
    case SetConfig::Target::system: break;
    case SetConfig::Target::cgroup: l.push_back({"cgroup", c.cgroup.text}); break;
    case SetConfig::Target::pid: l.push_back({"pid", std::to_string(c.pid)}); break;
    case SetConfig::Target::command: l.push_back({"command", c.command.text}); break;
  }
  for (const auto& [k, v] : c.labels) l.push_back({k, v});
  return l;
}

// Each place of the set's last read summed into its unit; read failures counted.
Sums sum_places(SetState& s, const std::vector<spec::CpuTopology>& topology) {
  const std::size_t n = s.set.events.size();
  Sums sums{{}, std::vector<char>(n, 0), std::vector<const runtime::Count*>(n, nullptr)};
  for (const auto& read : s.places)
    for (const auto& pc : read) {
      auto [key, labels] = unit_of(pc.place, s.config.grouping, topology);
      auto& u = sums.units[key];
      if (u.events.empty()) {
        u.labels = std::move(labels);
        u.events.resize(n);
      }
      for (std::size_t e = 0; e < n && e < pc.counts.size(); ++e) {
        const auto& c = pc.counts[e];
        for (const auto& note : c.notes)
          if (note.kind == runtime::Note::Kind::read_failed || note.kind == runtime::Note::Kind::short_read)
            ++s.read_errors;
        if (c.failure && !sums.failure[e]) sums.failure[e] = &c;
        if (!pc.here[e]) continue;
        sums.here_anywhere[e] = 1;
        Acc& a = u.events[e];
        a.here = true;
        a.raw += c.raw;
        a.enabled += c.time_enabled;
        a.running += c.time_running;
      }
    }
  return sums;
}

// The file's events of a set: counts, times, and the events that could not be opened.
void event_series(const SetState& s, const Sums& sums, const Labels& set_labels, double since_open,
                  Series& out) {
  for (std::size_t e = 0; e < s.user_events; ++e) {
    const ResolvedEvent& ev = s.set.events[e];
    const Labels ev_labels{{"event", ev.name}, {"pmu", ev.pmu}};
    if (ev.tool == ToolEvent::duration_time) {
      for (const auto& [key, u] : sums.units)
        add(out.counts_of("seconds_total"), joined(joined(set_labels, u.labels), ev_labels), since_open);
      continue;
    }
    const runtime::Count* failed = sums.failure[e];
    if (!sums.here_anywhere[e] || (failed && failed->state == runtime::Count::State::not_supported)) {
      Labels l = joined(set_labels, ev_labels);
      const runtime::Failure* f = failed && failed->failure                ? &*failed->failure
                                  : e < s.failures.size() && s.failures[e] ? &*s.failures[e]
                                                                           : nullptr;
      l.push_back({"errno", f ? spec::errno_name(f->error) : std::string()});
      l.push_back({"reason", f ? failure_reason(*f) : "not opened on any CPU"});
      add(out.failed, std::move(l), 1);
      if (!sums.here_anywhere[e]) continue;
    }
    const BaseUnit bu = base_unit(ev);
    for (const auto& [key, u] : sums.units) {
      const Acc& a = u.events[e];
      if (!a.here) continue;
      Labels l = joined(joined(set_labels, u.labels), ev_labels);
      add(out.enabled, l, static_cast<double>(a.enabled) / 1e9);
      add(out.running, l, static_cast<double>(a.running) / 1e9);
      if (!bu.unit.empty()) l.push_back({"unit", bu.unit});
      add(out.counts_of(bu.family), std::move(l), static_cast<double>(a.raw) * bu.factor / bu.divisor);
    }
  }
}

// The inputs of one metric plan over the window: each event's count since the window's start, scaled
// for multiplexing, or why there is none.
void window_inputs(const SetState& s, const SetState::PlanAt& pa, const Unit& u, const Unit* base,
                   const Sums& sums, double window, std::vector<double>& values,
                   std::vector<std::string>& why) {
  values.assign(pa.plan.events.events.size(), std::numeric_limits<double>::quiet_NaN());
  why.assign(values.size(), {});
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t e = pa.offset + i;
    const ResolvedEvent& ev = s.set.events[e];
    if (ev.tool == ToolEvent::duration_time) {
      values[i] = window * 1e9;
      continue;
    }
    const Acc& a = u.events[e];
    const Acc b = base ? base->events[e] : Acc{};
    const double raw = static_cast<double>(a.raw - std::min(a.raw, b.raw));
    const double en = static_cast<double>(a.enabled - std::min(a.enabled, b.enabled));
    const double ru = static_cast<double>(a.running - std::min(a.running, b.running));
    const runtime::Count* failed = sums.failure[e];
    if (!a.here)
      why[i] = failed && failed->failure ? failed->failure->meaning
                                         : fmt::format("'{}' is not counted here", ev.name);
    else if (ru == 0)
      why[i] = fmt::format("'{}' did not run in the window", ev.name);
    else
      values[i] = ru == en ? raw : raw * en / ru;
  }
}

// The metrics computed again when the window since the last computation is long enough.
void compute_metrics(SetState& s, const Sums& sums, Clock::time_point now, double window_min) {
  const double window = std::chrono::duration<double>(now - s.base_time).count();
  if (s.computed && window < window_min) return;
  s.values.clear();
  std::vector<double> values;
  std::vector<std::string> why;
  for (const auto& [key, u] : sums.units) {
    auto base = s.base.find(key);
    auto& out = s.values[key];
    for (const auto& pa : s.plans) {
      window_inputs(s, pa, u, base == s.base.end() ? nullptr : &base->second, sums, window, values, why);
      auto v = metric::evaluate(pa.plan, values, why);
      out.insert(out.end(), v.begin(), v.end());
    }
  }
  s.base = sums.units;
  s.base_time = now;
  s.computed = true;
}

// The metrics' last values, and why those without one have none (once per metric).
void metric_series(const SetState& s, const Sums& sums, const Labels& set_labels, Series& out) {
  std::map<std::string, bool> seen;  // a metric asked for twice is given once
  for (const auto& [key, u] : sums.units) {
    auto vit = s.values.find(key);
    if (vit == s.values.end()) continue;
    std::size_t k = 0;
    std::map<std::string, bool> here;
    for (const auto& pa : s.plans)
      for (const auto& m : pa.plan.metrics) {
        const metric::Value& v = vit->second[k++];
        if (!here.emplace(m.definition.name, true).second) continue;
        Labels l = joined(set_labels, u.labels);
        l.push_back({"metric", m.definition.name});
        if (!m.scale.unit.empty()) l.push_back({"unit", m.scale.unit});
        add(out.metric_values, l, v.value);
        if (v.over_threshold) add(out.thresholds, l, *v.over_threshold ? 1 : 0);
        if (!v.why.empty() && seen.emplace(m.definition.name, true).second) {
          Labels w = set_labels;
          w.push_back({"metric", m.definition.name});
          w.push_back({"reason", v.why});
          add(out.unavailable, std::move(w), 1);
        }
      }
  }
}

}  // namespace

void State::read_all(CpuReaders* readers) {
  for (auto& sp : sets_) check_target(*sp, log_);
  if (readers)
    readers->run([&](int cpu) {
      for (auto& sp : sets_)
        for (std::size_t k = 0; k < sp->counters.size(); ++k)
          if (sp->counter_cpu[k] == cpu) sp->counters[k].read_places(sp->places[k]);
    });
  for (auto& sp : sets_)
    for (std::size_t k = 0; k < sp->counters.size(); ++k)
      if (!readers || !readers->serves(sp->counter_cpu[k])) sp->counters[k].read_places(sp->places[k]);
}

std::vector<prometheus::MetricFamily> State::collect(CpuReaders* readers) {
  Series out;
  const auto& topology = machine_->cpu_topology();
  // Every set's counters read first, each CPU's on that CPU (in parallel), a process's here.
  read_all(readers);
  const auto now = Clock::now();
  for (auto& sp : sets_) {
    SetState& s = *sp;
    const Labels set_labels = set_labels_of(s.config);
    Labels up = set_labels;
    up.push_back({"target", target_text(s.config)});
    if (!s.up) up.push_back({"reason", s.down});
    add(out.up, std::move(up), s.up ? 1 : 0);
    if (!s.is_open()) continue;
    const Sums sums = sum_places(s, topology);
    event_series(s, sums, set_labels, std::chrono::duration<double>(now - s.opened).count(), out);
    if (s.plans.empty()) continue;
    compute_metrics(s, sums, now, config_.metric_window);
    metric_series(s, sums, set_labels, out);
  }
  return out.take();
}

}  // namespace perfspec::exporter
