// SPDX-License-Identifier: MIT
// `stat` in perfspec's own formats (docs/output-formats.md): CSV (perfspec-stat-csv/1) and JSON
// (perfspec-stat/1), and the paragraphs saying why events were not counted.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/fmt.hpp"
#include "perfspec/print.hpp"
#include "print/stat_shadow.hpp"
#include "spec/printable.hpp"

namespace perfspec {

using runtime::Count;
using stat_shadow::figures;
using stat_shadow::Metric;

namespace {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A cell's value as perfspec's own formats give it: whole numbers exact, others with six decimals.
std::string own_value(const ResolvedEvent& e, const Count& c, bool mean) {
  auto d = display_value(e, c);
  if (d.integral && !mean) return std::to_string(static_cast<std::uint64_t>(std::llround(d.value)));
  return fmt::format("{:.6f}", d.value);
}

// Every event of every unit where it counted, in perfspec's order: per event, then per unit.
template <typename Fn> void for_each_cell(const EventSet& set, const StatReport& report, Fn&& fn) {
  for (std::size_t e = 0; e < set.events.size(); ++e)
    for (const auto& u : report.units)
      if (e < u.cells.size() && u.cells[e].here) fn(u, e);
}

}  // namespace

std::string stat_csv(const EventSet& set, const StatReport& report, const StatRun& run, bool header) {
  std::string out;
  if (header)
    out +=
        "time,aggregate,members,value,unit,event,time_enabled,time_running,running_percent,noise_percent,"
        "state,errno,metric_value,metric_unit\n";
  const bool mean = report.runs > 1;
  for_each_cell(set, report, [&](const StatUnit& u, std::size_t e) {
    const auto& cell = u.cells[e];
    const auto& c = cell.count;
    const auto& ev = set.events[e];
    std::string value =
        c.state == Count::State::counted ? own_value(ev, c, mean) : fmt::format("{:v}", c.state);
    std::string unit = c.state == Count::State::counted ? display_value(ev, c).unit : "";
    const Metric m = figures(set, u, e, mean, run).first;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{:.2f},{},{},{},{},{}\n",
        run.interval_end ? fmt::format("{:.9f}", *run.interval_end) : "", csv_field(u.label),
        report.aggregation == Aggregation::global ? "" : std::to_string(cell.members), csv_field(value),
        csv_field(unit), csv_field(spec::printable(ev.name)), c.time_enabled, c.time_running,
        100.0 * c.running_fraction(), mean ? fmt::format("{:.2f}", cell.noise) : "", c.state,
        c.failure ? c.failure->name : "", m ? fmt::format("{:.6f}", m.value) : "", csv_field(m.unit));
    // The -M metrics computed in this aggregate whose first event this is: a line each, state `metric`.
    for (const auto& sm : cell.metrics)
      out += fmt::format("{},{},{},{:.6f},{},{},,,,,metric,,,\n",
                         run.interval_end ? fmt::format("{:.9f}", *run.interval_end) : "", csv_field(u.label),
                         report.aggregation == Aggregation::global ? "" : std::to_string(cell.members),
                         sm.value, csv_field(sm.unit), csv_field(spec::printable(sm.name)));
  });
  return out;
}

std::string stat_csv(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  return stat_csv(set, global_report(counts), run, true);
}

std::string stat_json(const EventSet& set, const StatReport& report, const StatRun& run) {
  nlohmann::ordered_json j;
  j["schema"] = "perfspec-stat/1";
  j["target"] = run.target;
  if (run.interval_end) j["interval"] = *run.interval_end;
  j["elapsed_seconds"] = run.elapsed_seconds;
  if (report.runs > 1) {
    j["runs"] = report.runs;
    j["elapsed_stddev"] = run.elapsed_stddev;
  }
  if (run.user_seconds) j["user_seconds"] = *run.user_seconds;
  if (run.system_seconds) j["system_seconds"] = *run.system_seconds;
  if (run.exit_status) j["exit_status"] = *run.exit_status;
  j["aggregation"] = aggregation_name(report.aggregation);
  const bool mean = report.runs > 1;
  auto arr = nlohmann::ordered_json::array();
  for_each_cell(set, report, [&](const StatUnit& u, std::size_t i) {
    const auto& cell = u.cells[i];
    const auto& c = cell.count;
    const auto& e = set.events[i];
    nlohmann::ordered_json x;
    if (report.aggregation != Aggregation::global) {
      x["aggregate"] = u.label;
      x["members"] = cell.members;
    }
    x["event"] = e.name;
    x["pmu"] = e.pmu;
    x["span"] = {e.span.begin, e.span.end};  // where the event stands in its -e list
    if (i < run.cgroups.size()) x["cgroup"] = run.cgroups[i];
    x["state"] = fmt::to_string(c.state);
    if (c.state == Count::State::counted) {
      auto d = display_value(e, c);
      x["value"] = d.value;
      x["unit"] = d.unit;
    } else {
      x["value"] = nullptr;
      x["unit"] = "";
    }
    x["raw"] = c.raw;
    x["time_enabled"] = c.time_enabled;
    x["time_running"] = c.time_running;
    x["running_fraction"] = c.running_fraction();
    if (mean) x["noise_percent"] = cell.noise;
    const auto m = figures(set, u, i, mean, run);
    if (m.first) x["metric"] = {{"value", m.first.value}, {"unit", m.first.unit}};
    if (m.second) x["metric2"] = {{"value", m.second.value}, {"unit", m.second.unit}};
    auto metrics = nlohmann::json::array();
    for (const auto& sm : cell.metrics)
      if (!std::isnan(sm.value))  // one without a value is not shown
        metrics.push_back({{"name", sm.name},
                           {"value", sm.value},
                           {"unit", sm.unit},
                           {"over_threshold", sm.over_threshold}});
    if (!metrics.empty()) x["metrics"] = std::move(metrics);
    if (c.failure) {
      x["error"] = {{"errno", c.failure->error}, {"name", c.failure->name}, {"meaning", c.failure->meaning},
                    {"hint", c.failure->hint},   {"cpu", c.failure->cpu},   {"detail", c.failure->detail}};
    }
    if (!c.notes.empty()) x["note"] = describe(c.notes);
    arr.push_back(std::move(x));
  });
  j["counts"] = std::move(arr);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string stat_json(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  return stat_json(set, global_report(counts), run);
}

std::string stat_problems(const EventSet& set, const StatReport& report,
                          const std::vector<std::string>& cgroups) {
  // One paragraph per distinct reason, naming every event it stopped: perf repeats nothing either.
  struct Reason {
    std::string text;
    std::vector<std::string> events;
  };
  std::vector<Reason> reasons;
  auto add = [&](std::string text, const std::string& event) {
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& r) { return r.text == text; });
    if (it == reasons.end()) it = reasons.insert(reasons.end(), Reason{std::move(text), {}});
    if (std::find(it->events.begin(), it->events.end(), event) == it->events.end())
      it->events.push_back(event);
  };
  for (const auto& u : report.units)
    for (std::size_t e = 0; e < u.cells.size() && e < set.events.size(); ++e) {
      const auto& c = u.cells[e].count;
      if (!u.cells[e].here) continue;
      const std::string name = spec::printable(set.events[e].name);
      if (c.failure && c.state != Count::State::counted) {
        std::string text = fmt::format("{}: {}", c.failure->name, spec::printable(c.failure->hint));
        if (!c.failure->detail.empty()) text += fmt::format(" ({})", spec::printable(c.failure->detail));
        add(std::move(text), name);
      } else if (c.state == Count::State::not_counted && e < cgroups.size() && !cgroups[e].empty()) {
        add(fmt::format("no task of cgroup '{}' ran while it was enabled (time_running is 0): an event of a "
                        "cgroup counts only while the cgroup's tasks run",
                        spec::printable(cgroups[e])),
            name);
      } else if (c.state == Count::State::not_counted) {
        add("never scheduled on a counter (time_running is 0): the event was enabled but did not run", name);
      }
      if (!c.notes.empty()) add(fmt::format("note: {}", spec::printable(describe(c.notes))), name);
    }
  std::string out;
  for (const auto& r : reasons) {
    std::string names;
    for (const auto& n : r.events) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("{}:\n    {}\n", names, r.text);
  }
  if (!out.empty()) out += "\n";
  return out;
}

}  // namespace perfspec
