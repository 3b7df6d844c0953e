// SPDX-License-Identifier: MIT
// `perfspec resolve`: event lists to their perf_event_attr encodings, and metric requests to their
// plans, as text or JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "perfspec/metric.hpp"
#include "perfspec/perfspec.hpp"
#include "tools/commands.hpp"
#include "tools/exit_status.hpp"
#include "tools/report.hpp"
#include "tools/warnings.hpp"

namespace perfspec::tools::cli {

namespace {

// `resolve -M`: what a metric request opens and how each metric is computed.
std::string plan_text(const perfspec::metric::Plan& plan) {
  std::string out;
  for (const auto& m : plan.metrics) {
    const auto& d = m.definition;
    out += fmt::format("metric {}{}{} = {}{}\n", d.name, d.pmu.empty() ? "" : fmt::format(" [{}]", d.pmu),
                       m.parameter < 0 ? "" : fmt::format(" [? = {}]", m.parameter),
                       perfspec::metric::to_string(m.expr),
                       d.scale_unit.empty() ? "" : fmt::format("  ({})", d.scale_unit));
    if (perfspec::metric::to_string(m.expr) != d.expr) out += fmt::format("  as written: {}\n", d.expr);
    for (const auto& [name, expr] : m.refs)
      out += fmt::format("  {} = {}\n", name, perfspec::metric::to_string(expr));
    if (m.threshold) out += fmt::format("  threshold: {}\n", perfspec::metric::to_string(*m.threshold));
    for (const auto& f : m.folded) out += fmt::format("  folded: {}\n", f);
    for (const auto& [id, events] : m.inputs)
      out +=
          fmt::format("  input {}: event{} {}\n", id, events.size() > 1 ? "s" : "", fmt::join(events, ", "));
  }
  return out + perfspec::to_text(plan.events);
}

std::string plan_json(const perfspec::metric::Plan& plan) {
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (const auto& m : plan.metrics) {
    nlohmann::ordered_json refs = nlohmann::ordered_json::object(), inputs = nlohmann::ordered_json::object();
    for (const auto& [name, expr] : m.refs) refs[name] = perfspec::metric::to_string(expr);
    for (const auto& [id, events] : m.inputs) inputs[id] = events;
    metrics.push_back(
        {{"name", m.definition.name},
         {"pmu", m.definition.pmu},
         {"parameter", m.parameter < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(m.parameter)},
         {"expr", m.definition.expr},
         {"folded_expr", perfspec::metric::to_string(m.expr)},
         {"scale_unit", m.definition.scale_unit},
         {"threshold", m.threshold ? perfspec::metric::to_string(*m.threshold) : ""},
         {"refs", refs},
         {"folded", m.folded},
         {"inputs", inputs}});
  }
  nlohmann::ordered_json doc{{"schema", "perfspec-metric-plan/1"},
                             {"metrics", metrics},
                             {"events", nlohmann::ordered_json::parse(perfspec::to_json(plan.events))}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

int run_resolve(const std::string& sysfs, const perfspec::spec::MachineOptions& options,
                const std::string& format, const std::vector<std::string>& lists, bool keep_going,
                const std::vector<std::string>& metrics = {}, const perfspec::metric::Options& mo = {}) {
  perfspec::spec::Machine machine(sysfs, options);
  if (!metrics.empty()) {
    int status = 0;
    for (const auto& text : metrics) {
      try {
        auto plan = perfspec::metric::plan(text, machine, mo);
        std::cout << (format == "json" ? plan_json(plan) + "\n" : plan_text(plan));
      } catch (const perfspec::metric::MetricError& e) {
        int failed = perfspec::tools::exit_status(e.kind());
        if (format == "json")
          failed = perfspec::tools::report_error(e, e.expr(), perfspec::tools::ErrorFormat::json);
        else
          std::fputs(e.rendered().c_str(), stderr);
        if (!keep_going) return failed;
        status = std::max(status, failed);
      } catch (const perfspec::Error& e) {
        int failed = perfspec::tools::report_error(e, text, perfspec::tools::error_format(format));
        if (!keep_going) return failed;
        status = std::max(status, failed);
      }
    }
    return status;
  }
  perfspec::EventSet all;
  int status = 0;
  for (const auto& text : lists) {
    try {
      all.append(perfspec::resolve(text, machine));
    } catch (const perfspec::Error& e) {
      int failed = perfspec::tools::report_error(e, text, perfspec::tools::error_format(format));
      if (!keep_going) return failed;
      status = std::max(status, failed);
    }
  }
  if (format == "json")
    std::cout << perfspec::to_json(all) << '\n';
  else
    std::cout << perfspec::to_text(all);
  perfspec::tools::warn_about_table_cache(machine);
  return status;
}

// `resolve --stdin`: each line of standard input a list of its own, resolved against one Machine (its
// tables and PMUs read once), each answered in input order: one JSON document per line (an error as
// its perfspec-error/1 document, on standard output too, so that answer N is line N), or the text
// of each list with its errors on standard error. The status is the highest of theirs.
int run_each_line(const std::string& sysfs, const perfspec::spec::MachineOptions& options,
                  const std::string& format) {
  perfspec::spec::Machine machine(sysfs, options);
  int status = 0;
  std::string text;
  while (std::getline(std::cin, text)) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    try {
      auto set = perfspec::resolve(text, machine);
      std::cout << (format == "json" ? perfspec::to_json(set) + "\n" : perfspec::to_text(set));
    } catch (const perfspec::Error& e) {
      if (format == "json") {
        std::string doc = perfspec::error_json(e, text);
        while (!doc.empty() && doc.back() == '\n') doc.pop_back();
        std::cout << doc << '\n';
        status = std::max(status, perfspec::tools::exit_status(e.kind()));
      } else {
        status = std::max(status, perfspec::tools::report_error(e, text, perfspec::tools::ErrorFormat::text));
      }
    }
    std::cout.flush();
  }
  perfspec::tools::warn_about_table_cache(machine);
  return status;
}

}  // namespace

void ResolveCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("-M,--metrics", metrics,
                  "print the plan of metrics instead (repeatable): names, groups or 'NAME = EXPR'; "
                  "the metric trees, constants folded, inputs, and the events in their groups")
      ->type_name("METRICS");
  add_metric_flags(*app, no_group, no_merge, no_threshold);
  app->add_option("--sysfs", sysfs, "sysfs root to read PMUs from (a fixture or snapshot tree)")
      ->check(sysfs_tree);
  app->add_option("--format", format, "output format")->check(CLI::IsMember({"text", "json"}));
  add_table_options(app, machine);
  app->add_flag("-k,--keep-going", keep_going,
                "resolve every list even when some fail (each failure is reported; the status is the highest "
                "of theirs)");
  app->add_flag(
      "--stdin", from_stdin,
      "read event lists from standard input, one a line, and answer each in turn (with --format json, "
      "one document a line, errors too)");
  app->add_option("events", lists, "event lists, e.g. 'cycles,{cpu/event=0x3c/u,instructions}:k'");
}

int ResolveCommand::run(const perfspec::spec::MachineOptions& machine) const {
  if (from_stdin) {
    if (!lists.empty() || !metrics.empty())
      throw perfspec::Error(perfspec::ErrorKind::usage, "--stdin reads the event lists: give none, nor -M");
    return run_each_line(sysfs, machine, format);
  }
  if (lists.empty() && metrics.empty())
    throw perfspec::Error(perfspec::ErrorKind::usage, "give event lists, or metrics with -M");
  if (!lists.empty() && !metrics.empty())
    throw perfspec::Error(perfspec::ErrorKind::usage, "give event lists or metrics with -M, not both");
  perfspec::metric::Options mo;
  mo.group = !no_group;
  mo.merge = !no_merge;
  mo.thresholds = !no_threshold;
  return run_resolve(sysfs, machine, format, lists, keep_going, metrics, mo);
}

}  // namespace perfspec::tools::cli
