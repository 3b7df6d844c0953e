// SPDX-License-Identifier: MIT
// `perfspec list` and `perfspec snapshot`.
#include "tools/list.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "perfspec/event_source.hpp"
#include "perfspec/metric.hpp"
#include "perfspec/print.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/symbols.hpp"
#include "perfspec/tables.hpp"
#include "resolver/suggest.hpp"
#include "spec/ascii.hpp"
#include "spec/printable.hpp"
#include "tools/warnings.hpp"

namespace perfspec::tools {

namespace {

// What the sources left out: sysfs event files (a folder, a symlink to nothing, ...) each with its
// reason under -v, else how many; table entries and files under -v.
void report_skipped(const spec::Machine& machine, bool verbose) {
  std::size_t files = 0;
  for (bool sysfs : {true, false})
    for (const spec::EventSource* source : machine.sources()) {
      if ((source->kind() == spec::Source::sysfs) != sysfs) continue;
      for (const auto& d : source->diagnostics()) {
        if (verbose)
          std::fprintf(stderr, "perfspec list: skipped %s\n", spec::printable(d.text).c_str());
        else if (sysfs)
          ++files;
      }
    }
  if (files)
    std::fprintf(
        stderr,
        "perfspec list: %zu event file(s) could not be read and are not listed (list -v says which)\n",
        files);
}

// `--pmu P` that names no PMU of the machine is an error, not an empty list: a typo would look like a
// PMU without events.
void check_pmu_filter(const spec::Machine& machine, const spec::ListFilter& filter) {
  if (filter.pmu.empty()) return;
  std::vector<std::string> names;
  for (const auto& name : machine.pmu_names()) {
    if (filter.passes_pmu(name)) return;
    names.push_back(name);
  }
  std::string help = resolver::suggest(filter.pmu, names);
  if (help.empty()) help = fmt::format("PMUs of this machine: {}", fmt::join(names, ", "));
  throw Error(ErrorKind::unknown_name,
              fmt::format("--pmu '{}': no PMU of this machine has that name", filter.pmu), help);
}

// `list --metrics [PATTERN]`: the metrics of a group named PATTERN (case-insensitive), else those
// whose name PATTERN matches (a glob or a substring).
int list_metrics(const spec::Machine& machine, const ListOptions& o) {
  std::vector<metric::Definition> shown;
  auto all = metric::machine_metrics(machine);
  auto in_group = [&](const metric::Definition& d) {
    for (const auto& g : metric::groups_of(d))
      if (spec::ascii_iequal(g, o.filter.pattern)) return true;
    return false;
  };
  bool group = std::any_of(all.begin(), all.end(), in_group);
  for (const auto& d : all)
    if (o.filter.pattern.empty() || (group ? in_group(d) : o.filter.passes_name(d.name))) shown.push_back(d);
  if (o.format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& d : shown)
      list.push_back({{"name", d.name},
                      {"expr", d.expr},
                      {"groups", metric::groups_of(d)},
                      {"scale_unit", d.scale_unit},
                      {"threshold", d.threshold},
                      {"constraint", d.constraint},
                      {"description", d.description},
                      {"default_group", d.default_group},
                      {"pmu", d.pmu},
                      {"file", d.origin.file}});
    nlohmann::ordered_json doc{{"schema", "perfspec-metrics/1"}, {"metrics", list}};
    std::fputs((doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
    return 0;
  }
  if (all.empty()) {
    std::fputs("no metrics: this machine has no event tables with metrics (see --events-dir)\n", stdout);
    return 0;
  }
  if (shown.empty()) {
    std::fputs("no metrics match\n", stdout);
    return 0;
  }
  std::string text;
  for (const auto& d : shown) {
    auto groups = metric::groups_of(d);
    text += fmt::format(
        "  {:<40} {}\n", spec::printable(d.name),
        groups.empty() ? std::string{}
                       : fmt::format("[{}]", spec::printable(fmt::format("{}", fmt::join(groups, ", ")))));
    if (o.descriptions && !d.description.empty())
      text += fmt::format("      {}\n", spec::printable(d.description));
    text += fmt::format(
        "      = {}{}\n", spec::printable(d.expr),
        d.scale_unit.empty() ? std::string{} : fmt::format("  ({})", spec::printable(d.scale_unit)));
    if (o.details && !d.threshold.empty())
      text += fmt::format("      threshold: {}\n", spec::printable(d.threshold));
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

// perf list's keywords (its cmd_list): each a kind of event, the built-in ones as perf prints them
// for it (sw: the software events and the tool events)
bool of_kind(const spec::ListedEvent& e, std::string_view keyword) {
  const bool builtin = e.source == spec::Source::builtin && e.pmu != "tracepoint";
  if (keyword == "hw") return builtin && e.topic == "hardware";
  if (keyword == "sw") return builtin && (e.topic == "software" || e.topic == "tool");
  if (keyword == "cache") return builtin && e.topic == "cache";
  if (keyword == "tracepoint") return e.pmu == "tracepoint";
  if (keyword == "pmu") return e.source == spec::Source::sysfs || e.source == spec::Source::json;
  if (keyword == "pfm") return e.source == spec::Source::libpfm4;
  if (keyword == "sdt") return false;  // perf's probe cache: sdt_text
  return true;
}

// The SDT events of perf's probe cache (what `perf buildid-cache --add` found in binaries), a section
// of their own after the others: listed with no keyword or `sdt`, by a name pattern, not by PMU or source.
std::string sdt_text(const ListOptions& o) {
  if ((!o.keyword.empty() && o.keyword != "sdt") || !o.filter.pmu.empty() || !o.filter.source.empty() ||
      !o.filter.topic.empty() || o.pmus)
    return {};
  std::string text;
  for (const std::string& name : record::cached_probe_events())
    if (o.filter.passes_name(name)) text += fmt::format("  {}\n", spec::printable(name));
  return text.empty() ? text : "SDT events (perf's probe cache):\n" + text;
}

// `list metricgroup`: perf's "Metric Groups:" and the groups' names, sorted
int list_metric_groups(const spec::Machine& machine) {
  std::vector<std::string> groups;
  for (const auto& d : metric::machine_metrics(machine))
    for (auto& g : metric::groups_of(d)) groups.push_back(std::move(g));
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  if (groups.empty()) {
    std::fputs("no metric groups: this machine has no event tables with metrics (see --events-dir)\n",
               stdout);
    return 0;
  }
  std::string text = "\nMetric Groups:\n\n";
  for (const auto& g : groups) text += spec::printable(g) + "\n";
  std::fputs(text.c_str(), stdout);
  return 0;
}

// Tracepoints that cannot be listed would otherwise look like tracepoints that are not there.
void warn_without_tracepoints(const spec::Machine& machine) {
  auto problem = machine.tracefs_problem();
  if (problem.kind == spec::Machine::TracefsProblem::Kind::none) return;
  std::fprintf(stderr, "perfspec list: no tracepoints: %s\n",
               (problem.reason.empty() ? problem.remedy : problem.reason).c_str());
  if (!problem.reason.empty()) std::fprintf(stderr, "help: %s\n", problem.remedy.c_str());
}

// `list -j`: perf's document of the kinds perf's keyword (or pattern, which JSON does not filter by)
// selects, generic events listed when they open here, as perf lists them.
int list_perf_json(const spec::Machine& machine, const ListOptions& o) {
  static constexpr std::pair<std::string_view, unsigned> keywords[] = {
      {"hw", spec::perf_list_hardware},
      {"sw", spec::perf_list_software},
      {"cache", spec::perf_list_cache},
      {"pmu", spec::perf_list_pmu},
      {"tracepoint", spec::perf_list_tracepoint},
      {"metric", spec::perf_list_metric},
      {"metricgroup", spec::perf_list_metric},
      {"sdt", spec::perf_list_sdt},
      {"pfm", 0}};
  unsigned kinds = spec::perf_list_all;
  for (auto [word, k] : keywords)
    if (o.keyword == word) kinds = k;
  if (o.keyword.empty() && !o.filter.pattern.empty())
    kinds = o.filter.pattern.find(':') != std::string::npos
                ? spec::perf_list_tracepoint | spec::perf_list_sdt | spec::perf_list_metric
                : spec::perf_list_all & ~(spec::perf_list_raw | spec::perf_list_breakpoint);
  auto opens = [](std::uint32_t type, std::uint64_t config) { return runtime::event_opens(type, config); };
  std::string doc = perf_list_json(spec::perf_list(
      machine, kinds, opens,
      (kinds & spec::perf_list_sdt) ? record::cached_probe_events() : std::vector<std::string>{}));
  warn_about_table_cache(machine);
  if (kinds & spec::perf_list_tracepoint) warn_without_tracepoints(machine);
  std::fputs(doc.c_str(), stdout);
  return 0;
}

}  // namespace

int run_list(const ListOptions& o) {
  spec::Machine machine(o.sysfs, o.machine);
  if (o.perf_json) return list_perf_json(machine, o);
  if (o.keyword == "metricgroup") return list_metric_groups(machine);
  if (o.metrics) return list_metrics(machine, o);
  check_pmu_filter(machine, o.filter);
  auto events = spec::list_events(machine, o.filter);
  if (!o.keyword.empty())
    std::erase_if(events, [&](const spec::ListedEvent& e) { return !of_kind(e, o.keyword); });
  warn_about_table_cache(machine);
  if (o.filter.tracepoints) warn_without_tracepoints(machine);
  auto pmus = o.pmus ? spec::list_pmus(machine, o.filter) : std::vector<spec::ListedPmu>{};
  report_skipped(machine, o.verbose);
  if (o.format == "json") {
    std::fputs(list_json(pmus, events).c_str(), stdout);
    return 0;
  }
  bool tty = ::isatty(STDOUT_FILENO);
  std::size_t width = 100;
  if (winsize ws{}; tty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) width = ws.ws_col;
  const std::string sdt = o.format == "text" ? sdt_text(o) : std::string();
  std::string text = list_text(pmus, events, width, o.descriptions);
  if (events.empty() && pmus.empty()) text.clear();
  text += sdt;
  if (text.empty()) text = "no events match\n";
  // On a terminal, a long listing goes through the pager, as git and perf do.
  if (tty) {
    const char* pager = std::getenv("PAGER");
    std::string cmd = pager && *pager ? pager : "less -FRX";
    if (cmd != "cat") {
      if (std::FILE* p = ::popen(cmd.c_str(), "w")) {
        std::fputs(text.c_str(), p);
        ::pclose(p);
        return 0;
      }
    }
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

int run_snapshot(const SnapshotCliOptions& o) {
  spec::Machine machine(o.sysfs, o.machine);
  auto report = spec::snapshot(machine, o.out, spec::SnapshotOptions{o.tracepoints});
  std::fprintf(
      stderr, "perfspec snapshot: %zu PMUs, %zu files%s into '%s'%s\n", report.pmus, report.files,
      o.tracepoints ? fmt::format(", {} tracepoints", report.tracepoints).c_str() : "", o.out.c_str(),
      report.cpuid.empty() ? " (no CPU id recorded: this host's is not the tree's; give --cpuid for tables)"
                           : fmt::format(" (cpuid {})", report.cpuid).c_str());
  for (const auto& s : report.skipped) std::fprintf(stderr, "  skipped: %s\n", spec::printable(s).c_str());
  return 0;
}

}  // namespace perfspec::tools
