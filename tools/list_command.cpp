// SPDX-License-Identifier: MIT
// The options of list and snapshot.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "tools/commands.hpp"

namespace perfspec::tools::cli {

void ListCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("pattern", lo.filter.pattern, "glob (*?[) or case-insensitive substring of the event name");
  app->add_option("--pmu,--unit", lo.filter.pmu, "only events of this PMU (name, wildcard or glob)");
  app->add_option("--topic", lo.filter.topic,
                  "only this topic (hardware, software, cache, sysfs, or a table topic)");
  app->add_option("--source", lo.filter.source, "only this source")
      ->check(CLI::IsMember({"builtin", "sysfs", "json", "tracepoint"}));
  app->add_flag("--tracepoints", lo.filter.tracepoints,
                "include tracepoints (implied by a PATTERN with ':')");
  app->add_flag("--deprecated", lo.filter.deprecated, "include deprecated table events");
  app->add_flag("--pmus", lo.pmus, "list the PMUs and their formats too");
  app->add_flag("--metrics", lo.metrics,
                "list the tables' metrics instead: PATTERN is a metric group, else a name pattern");
  app->add_flag("-v,--verbose", lo.verbose,
                "also report, on stderr, table entries and files that were skipped and why");
  app->add_option("--format", lo.format, "output format")->check(CLI::IsMember({"text", "json"}));
  app->add_flag("-d,--desc,!--no-desc", lo.descriptions,
                "with the events' and metrics' descriptions (the default), or without");
  app->add_flag("--details", lo.details,
                "the metrics' thresholds too (each event's encoding and each metric's expression are always "
                "shown)");
  app->add_option("-o,--output", output, "write the list to FILE")->type_name("FILE");
  app->add_flag("-j,--json", lo.perf_json,
                "perf's JSON: every event and metric of the keyword's kinds as perf list -j prints them "
                "(a pattern and the filters are ignored, as perf ignores them)");
  app->add_option("--sysfs", lo.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
  add_table_options(app, machine);
}

int ListCommand::run(const perfspec::spec::MachineOptions& machine) {
  lo.machine = machine;
  if (!output.empty() && !std::freopen(output.c_str(), "w", stdout))
    throw perfspec::Error(perfspec::ErrorKind::io,
                          fmt::format("cannot write '{}': {}", output, std::strerror(errno)));
  // perf list's keywords name kinds of events, not patterns (perf's cmd_list); each with its aliases
  static constexpr std::pair<std::string_view, std::string_view> keywords[] = {
      {"hw", "hw"},
      {"hardware", "hw"},
      {"sw", "sw"},
      {"software", "sw"},
      {"cache", "cache"},
      {"hwcache", "cache"},
      {"pmu", "pmu"},
      {"tracepoint", "tracepoint"},
      {"metric", "metric"},
      {"metrics", "metric"},
      {"metricgroup", "metricgroup"},
      {"metricgroups", "metricgroup"},
      {"sdt", "sdt"},
      {"pfm", "pfm"}};
  for (auto [word, keyword] : keywords)
    if (lo.filter.pattern == word) {
      lo.keyword = keyword;
      lo.filter.pattern.clear();
      if (keyword == "tracepoint") lo.filter.tracepoints = true;
      if (keyword == "metric") lo.metrics = true;
      break;
    }
  // `sys:name` is the form of a tracepoint: `perfspec list 'sched:sched_sw*'` asks for them.
  if (lo.filter.source == "tracepoint" || lo.filter.pattern.find(':') != std::string::npos)
    lo.filter.tracepoints = true;
  return perfspec::tools::run_list(lo);
}

void SnapshotCommand::add(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  app = sub;
  app->add_option("out", so.out, "the folder to create")->required();
  app->add_option("--sysfs", so.sysfs, "sysfs root to copy from")->check(sysfs_tree);
  app->add_flag("--tracepoints", so.tracepoints, "copy tracepoint ids too");
  add_table_options(app, machine);
}

int SnapshotCommand::run(const perfspec::spec::MachineOptions& machine) {
  so.machine = machine;
  return perfspec::tools::run_snapshot(so);
}

}  // namespace perfspec::tools::cli
