// SPDX-License-Identifier: MIT
// The perfspec command line: thin, over the library's public API.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "perfspec/metric.hpp"
#include "perfspec/perfspec.hpp"
#include "resolver/suggest.hpp"
#include "spec/printable.hpp"
#include "tools/decode.hpp"
#include "tools/exit_status.hpp"
#include "tools/exporter.hpp"
#include "tools/list.hpp"
#include "tools/record.hpp"
#include "tools/report.hpp"
#include "tools/script.hpp"
#include "tools/stat.hpp"
#include "tools/warnings.hpp"

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

// perf's flags for how metrics are set up, shared by stat and resolve.
void add_metric_flags(CLI::App& app, bool& no_group, bool& no_merge, bool& no_threshold) {
  app.add_flag("--metric-no-group", no_group, "open each metric's events alone, not as a group");
  app.add_flag("--metric-no-merge", no_merge, "do not share a group of events between metrics");
  app.add_flag("--metric-no-threshold", no_threshold,
               "do not compute MetricThreshold (nor open the events only it needs)");
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

/// Where the counted command starts in the words after `stat`, found as perf's parse_options does
/// with PARSE_OPT_STOP_AT_NON_OPTION: options end at the first word that is neither an option nor
/// an option's value, so `stat -e task-clock ls -l /` counts `ls -l /` and an option after the
/// command's first word is the command's. Which options take a value comes from CLI11's own
/// definitions of them, which then parse the option words; this only finds where they end.
/// `--` ends the options too and is dropped. Returns {the option words, the command}.
std::pair<std::vector<std::string>, std::vector<std::string>> split_stat_command(
    const CLI::App& stat, const std::vector<std::string>& words) {
  auto takes_value = [&](const std::string& name) {
    const CLI::Option* opt = stat.get_option_no_throw(name);
    return opt != nullptr &&
           opt->get_items_expected_max() != 0;  // an unknown option is CLI11's error to report
  };
  std::vector<std::string> options;
  std::size_t i = 0;
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") return {options, {words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end()}};
    if (w.size() < 2 || w[0] != '-') break;  // the command's first word (`-` alone is a word, as with getopt)
    options.push_back(w);
    if (w[1] == '-') {  // --name, --name=value, --name value
      auto eq = w.find('=');
      if (eq == std::string::npos) {
        if (takes_value(w) && i + 1 < words.size()) options.push_back(words[++i]);
      } else if (eq + 1 == w.size() && takes_value(w.substr(0, eq))) {
        // `--name=` gives an empty value; CLI11 would take the next word instead, so give it apart.
        options.back().pop_back();
        options.emplace_back();
      }
      continue;
    }
    // -abc: flags up to the first short option that takes a value, whose value is the rest of the
    // word (-eX, -I1000, -x,) or else the next word.
    for (std::size_t j = 1; j < w.size(); ++j) {
      if (!takes_value(std::string{'-', w[j]})) continue;
      if (j + 1 == w.size() && i + 1 < words.size()) options.push_back(words[++i]);
      break;
    }
  }
  return {options, {words.begin() + static_cast<std::ptrdiff_t>(i), words.end()}};
}

// Each subcommand: its options, added to the app, and how it runs once they are parsed.

// `--sysfs DIR`: a folder with the PMU folders where sysfs has them, so that a wrong folder is an
// error rather than a machine without PMUs.
const CLI::Validator sysfs_tree(
    [](std::string& dir) -> std::string {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) return fmt::format("'{}' is not a folder", dir);
      if (!std::filesystem::is_directory(dir + "/bus/event_source/devices", ec))
        return fmt::format("'{}' is not a sysfs tree: it has no bus/event_source/devices", dir);
      return {};
    },
    "SYSFS");

// Named-event tables, for every subcommand that reads a machine: options win over
// $PERFSPEC_EVENTS_DIR / $PERFSPEC_CPUID, which win over the tables installed with perfspec (main()).
void add_table_options(CLI::App* sub, perfspec::spec::MachineOptions& machine) {
  auto* dir = sub->add_option("--events-dir", machine.events_dir,
                              "perf-format JSON event tables (mapfile.csv + model folders); default "
                              "$PERFSPEC_EVENTS_DIR, else the tables installed with perfspec")
                  ->check(CLI::ExistingDirectory);
  sub->add_flag_callback(
         "--no-tables", [&machine] { machine.events_dir.clear(); },
         "use no event tables (not $PERFSPEC_EVENTS_DIR's, nor the installed ones)")
      ->excludes(dir);
  sub->add_option("--cpuid", machine.cpuid,
                  "CPU id picking the table model, as perf's PERF_CPUID (e.g. GenuineIntel-6-55-4); default "
                  "$PERFSPEC_CPUID, else this machine's");
  sub->add_flag("--no-libpfm4{false}", machine.libpfm4,
                "do not ask libpfm4 for names sysfs and the tables lack");
}

struct ResolveCommand {
  CLI::App* app = nullptr;
  std::string sysfs = "/sys", format = "text";
  std::vector<std::string> lists, metrics;
  bool keep_going = false;
  bool no_group = false, no_merge = false, no_threshold = false;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("resolve", "print the perf_event_attr encoding of event lists");
    app->add_option("-M,--metrics", metrics,
                    "print the plan of metrics instead (repeatable): names, groups or 'NAME = EXPR'; "
                    "the metric trees, constants folded, inputs, and the events in their groups")
        ->type_name("METRICS");
    add_metric_flags(*app, no_group, no_merge, no_threshold);
    app->add_option("--sysfs", sysfs, "sysfs root to read PMUs from (a fixture or snapshot tree)")
        ->check(sysfs_tree);
    app->add_option("--format", format, "output format")->check(CLI::IsMember({"text", "json"}));
    add_table_options(app, machine);
    app->add_flag(
        "-k,--keep-going", keep_going,
        "resolve every list even when some fail (each failure is reported; the status is the highest "
        "of theirs)");
    app->add_option("events", lists, "event lists, e.g. 'cycles,{cpu/event=0x3c/u,instructions}:k'");
  }
  int run(const perfspec::spec::MachineOptions& machine) const {
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
};

struct StatCommand {
  CLI::App* app = nullptr;
  perfspec::tools::StatOptions st;
  int pid = 0;
  std::string separator;
  bool no_inherit = false;
  CLI::Option *pid_opt = nullptr, *format_opt = nullptr, *separator_opt = nullptr, *metric_only_opt = nullptr;
  std::vector<std::pair<CLI::Option*, perfspec::Aggregation>> aggregation_flags;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("stat", "count events for a command, a process or CPUs");
    app->add_option("-e,--event", st.events,
                    "event list (repeatable); default: " + std::string(perfspec::tools::default_stat_events));
    app->add_option("-M,--metrics", st.metrics,
                    "metrics to compute (repeatable): names or groups of the tables, comma-separated, or "
                    "one 'NAME = EXPR' of perf's metric language")
        ->type_name("METRICS");
    add_metric_flags(*app, st.metric_no_group, st.metric_no_merge, st.metric_no_threshold);
    pid_opt = app->add_option("-p,--pid", pid, "count an existing process (all its threads)");
    app->add_option("-t,--tid", st.tids, "count existing threads (a comma-separated list of thread ids)")
        ->type_name("TID[,TID...]");
    app->add_flag("-a,--all-cpus", st.all_cpus, "count every process on every CPU");
    app->add_option("-C,--cpu", st.cpus, "count every process on these CPUs (e.g. 0-3,8)");
    app->add_option("-I,--interval", st.interval_ms, "print counts every N milliseconds")
        ->check(CLI::Range(10u, 3600000u));
    format_opt = app->add_option("--format", st.format, "output format")
                     ->check(CLI::IsMember({"text", "csv", "json"}));
    separator_opt =
        app->add_option("-x,--field-separator", separator,
                        "print counts in perf stat's CSV form, fields separated by SEP (as perf stat -x)")
            ->type_name("SEP");
    app->add_option("--sysfs", st.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
    add_table_options(app, machine);
    app->add_option("-o,--output", st.output, "write the counts to FILE instead of stderr");
    app->add_flag("--no-inherit", no_inherit, "do not count the command's children");
    app->add_option("-r,--repeat", st.repeat, "run the command N times: mean counts and their variation")
        ->type_name("N");
    auto* per_cpu = app->add_flag("-A,--no-aggr")->description("one line per CPU (with -a or -C)");
    auto* per_core =
        app->add_flag("--per-core")->description("one line per core: sum of its CPUs (with -a or -C)");
    auto* per_die = app->add_flag("--per-die")->description("one line per die (with -a or -C)");
    auto* per_socket = app->add_flag("--per-socket")->description("one line per socket (with -a or -C)");
    auto* per_node = app->add_flag("--per-node")->description("one line per NUMA node (with -a or -C)");
    auto* per_thread = app->add_flag("--per-thread")->description("one line per thread (with -p, -t or -a)");
    aggregation_flags = std::vector<std::pair<CLI::Option*, perfspec::Aggregation>>{
        {per_cpu, perfspec::Aggregation::cpu},   {per_core, perfspec::Aggregation::core},
        {per_die, perfspec::Aggregation::die},   {per_socket, perfspec::Aggregation::socket},
        {per_node, perfspec::Aggregation::node}, {per_thread, perfspec::Aggregation::thread}};
    app->add_option(
           "-G,--cgroup", st.cgroups,
           "count only in these cgroups: the n-th name for the n-th event, one name for all (with -a)")
        ->type_name("NAME[,NAME...]");
    app->add_option("--for-each-cgroup", st.for_each_cgroup, "count every event in each of these cgroups")
        ->type_name("NAME[,NAME...]");
    app->add_flag("--all-user", st.all_user, "count user space only (every event as with :u)");
    app->add_flag("--all-kernel", st.all_kernel, "count the kernel only (every event as with :k)");
    app->add_option("-D,--delay", st.delay_ms,
                    "start counting MSEC after the command starts; -1: start disabled (see --control)")
        ->type_name("MSEC");
    app->add_option("--control", st.control,
                    "commands enable, disable, ping, stop arrive on fifo:CTL[,ACK] or fd:CTL[,ACK]")
        ->type_name("fifo:CTL[,ACK]|fd:CTL[,ACK]");
    app->add_option("--interval-count", st.interval_count, "with -I: stop after N intervals")->type_name("N");
    app->add_flag("-n,--null", st.null_run, "count nothing: only the time elapsed");
    app->add_flag("-j,--json-output", st.perf_json, "print counts as perf stat -j does (JSON lines)");
    app->add_flag("--topdown", st.topdown,
                  "Top-down analysis: the tables' TopdownL1 metrics (or --td-level's), as --metric-only");
    app->add_option("--td-level", st.td_level, "with --topdown: the Top-down level (1, 2, ...)")
        ->type_name("N")
        ->check(CLI::Range(0u, 9u));
    metric_only_opt =
        app->add_flag("--metric-only", st.metric_only,
                      "print only the derived figures and metrics, one column each, one line per aggregate "
                      "(perf's layout, in the table, -x and -j)");
    app->add_option("--color", st.color,
                    "colour figures as perf does on a terminal (a metric over its threshold red, under it "
                    "green): auto (when the output is a terminal), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->type_name("WHEN");
    app->add_flag("-v,--verbose", st.verbose,
                  "also print each count's raw value, time enabled and running; -vv: the attrs too");
    app->footer(
        "COMMAND [ARGS...] follows the options, with or without `--`: options end at the first word that "
        "is not one, as with perf stat, so `perfspec stat -e task-clock ls -l /` counts `ls -l /`.");
  }
  int run(const perfspec::spec::MachineOptions& machine) {
    // Usage errors are thrown, so that the one printer shows them (as JSON under --format json).
    using perfspec::Error, perfspec::ErrorKind;
    if (*separator_opt && *format_opt)
      // Two different outputs were asked for; CLI11's excludes() would only say that the options
      // exclude each other.
      throw Error(ErrorKind::usage,
                  "-x prints perf's CSV and --format picks perfspec's own output: give one of them");
    // perf: --topdown prints metrics only, unless --metric-only was given either way.
    if (st.topdown && !*metric_only_opt) st.metric_only = true;
    if (st.td_level != 0 && !st.topdown) throw Error(ErrorKind::usage, "--td-level goes with --topdown");
    int modes = 0;
    for (auto& [flag, mode] : aggregation_flags)
      if (*flag) st.aggregation = mode, ++modes;
    if (modes > 1)
      throw Error(ErrorKind::usage,
                  "-A, --per-core, --per-die, --per-socket, --per-node and --per-thread exclude each other: "
                  "give one");
    if ((*separator_opt || *format_opt) && st.perf_json)
      throw Error(ErrorKind::usage, "-j prints perf's JSON; -x and --format pick other outputs: give one");
    if (*pid_opt) st.pid = pid;
    if (*separator_opt) st.field_separator = separator;
    st.inherit = !no_inherit;
    st.machine = machine;
    return perfspec::tools::run_stat(st);
  }
};

struct ListCommand {
  CLI::App* app = nullptr;
  perfspec::tools::ListOptions lo;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("list", "list PMUs and named events from every source");
    app->add_option("pattern", lo.filter.pattern,
                    "glob (*?[) or case-insensitive substring of the event name");
    app->add_option("--pmu", lo.filter.pmu, "only events of this PMU (name, wildcard or glob)");
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
    app->add_option("--sysfs", lo.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
    add_table_options(app, machine);
  }
  int run(const perfspec::spec::MachineOptions& machine) {
    lo.machine = machine;
    // `sys:name` is the form of a tracepoint: `perfspec list 'sched:sched_sw*'` asks for them.
    if (lo.filter.source == "tracepoint" || lo.filter.pattern.find(':') != std::string::npos)
      lo.filter.tracepoints = true;
    return perfspec::tools::run_list(lo);
  }
};

struct SnapshotCommand {
  CLI::App* app = nullptr;
  perfspec::tools::SnapshotCliOptions so;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("snapshot", "copy this machine's PMU description into a folder for --sysfs");
    app->add_option("out", so.out, "the folder to create")->required();
    app->add_option("--sysfs", so.sysfs, "sysfs root to copy from")->check(sysfs_tree);
    app->add_flag("--tracepoints", so.tracepoints, "copy tracepoint ids too");
    add_table_options(app, machine);
  }
  int run(const perfspec::spec::MachineOptions& machine) {
    so.machine = machine;
    return perfspec::tools::run_snapshot(so);
  }
};

struct ScriptCommand {
  CLI::App* app = nullptr;
  perfspec::tools::ScriptOptions so;

  void add(CLI::App& parent) {
    app = parent.add_subcommand("script", "print the records of a perf.data file (perf's or perfspec's)");
    app->add_option("-i,--input", so.input, "the file to read ('-': a pipe-mode stream on stdin)")
        ->capture_default_str();
    app->add_option("--format", so.format,
                    "output format: text (as perf script) or json (one line per record)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    app->add_option(
           "-F,--fields", so.fields,
           "text, as perf script -F (repeatable): [TYPE:][+-]FIELD,... (TYPE: hw, sw, trace, raw, "
           "break, synth); fields: comm,tid,pid,time,cpu,misc,event,trace,ip,addr,period,iregs,uregs,"
           "data_src,weight,ins_lat,retire_lat,phys_addr,data_page_size,code_page_size,cgroup")
        ->type_name("FIELDS");
    app->add_flag("--samples", so.samples_only, "text: samples only, as perf script prints by default");
    app->add_flag("--summary", so.summary, "count the records by type, and report what was lost");
    app->add_flag("--ns", so.ns, "times in nanoseconds");
    app->footer(
        "Text lists every record: samples as perf script prints them, the others as perf script prints "
        "them with --show-task-events, --show-mmap-events, --show-lost-events and the like.");
  }
  int run() { return perfspec::tools::run_script(so); }
};

struct DecodeCommand {
  CLI::App* app = nullptr;
  perfspec::tools::DecodeOptions dopt;
  std::string type, config, config1, config2, config3;
  std::vector<std::string> attrs;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("decode", "the event string for a perf_event_attr (the inverse of resolve)");
    app->add_option("--type", type, "attr.type");
    app->add_option("--config", config, "attr.config");
    app->add_option("--config1", config1, "attr.config1");
    app->add_option("--config2", config2, "attr.config2");
    app->add_option("--config3", config3, "attr.config3");
    app->add_option("--attr", attrs, "any attr field as NAME=VALUE (repeatable), e.g. exclude_kernel=1");
    app->add_option("--format", dopt.format, "output format")->check(CLI::IsMember({"text", "json"}));
    app->add_option("--sysfs", dopt.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
    app->footer(
        "Without attr options, reads 'perfspec resolve --format json' output or 'perf stat -vv' text on "
        "stdin.");
    add_table_options(app, machine);
  }
  int run(const perfspec::spec::MachineOptions& machine) {
    dopt.machine = machine;
    for (auto [name, value] : {std::pair{"type", &type},
                               {"config", &config},
                               {"config1", &config1},
                               {"config2", &config2},
                               {"config3", &config3}})
      if (!value->empty()) dopt.fields.emplace_back(name, *value);
    for (const auto& a : attrs) {
      auto eq = a.find('=');
      if (eq == std::string::npos)
        throw perfspec::Error(perfspec::ErrorKind::usage,
                              fmt::format("--attr wants NAME=VALUE, got '{}'", a));
      dopt.fields.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    }
    return perfspec::tools::run_decode(dopt);
  }
};

// The words CLI11 parses, in order: after `stat` or `record`, the command to run is taken verbatim,
// out of CLI11's sight (it would go on interpreting the command's options, or take its words as more
// -e values).
struct RunsCommand {
  const char* name;
  const CLI::App* app;
  std::vector<std::string>* command;
};
std::vector<std::string> cli_words(int argc, char** argv, std::initializer_list<RunsCommand> runners) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& r : runners) {
    if (args.empty() || args.front() != r.name) continue;
    auto [options, cmd] = split_stat_command(*r.app, {args.begin() + 1, args.end()});
    *r.command = std::move(cmd);
    args.assign(1, r.name);
    args.insert(args.end(), options.begin(), options.end());
  }
  return args;
}

// perf script reads the word after -F as its value whatever it looks like (`-F -ip` removes ip from
// the defaults, `-F ''` is a list of nothing, which perf refuses with its own words): the -F options of
// `script` are taken out of the words here, in order, since CLI11 would read `-ip` as options and
// refuse an empty value. A last -F without a value is left for CLI11 to refuse.
std::vector<std::string> take_script_fields(std::vector<std::string>& words) {
  std::vector<std::string> fields;
  if (words.empty() || words.front() != "script") return fields;
  for (std::size_t i = 1; i < words.size();) {
    const std::string& w = words[i];
    if (w == "--") break;
    std::size_t taken = 1;
    if ((w == "-F" || w == "--fields") && i + 1 < words.size()) {
      fields.push_back(words[i + 1]);
      taken = 2;
    } else if (w.starts_with("--fields=")) {
      fields.push_back(w.substr(9));
    } else if (w.starts_with("-F") && w.size() > 2) {
      fields.push_back(w.substr(2));
    } else {
      ++i;
      continue;
    }
    auto at = words.begin() + static_cast<std::ptrdiff_t>(i);
    words.erase(at, at + static_cast<std::ptrdiff_t>(taken));
  }
  return fields;
}

struct RecordCommand {
  CLI::App* app = nullptr;
  perfspec::tools::RecordOptions ro;
  CLI::Option *pid_opt = nullptr, *period_opt = nullptr, *freq_opt = nullptr;
  int pid = 0;
  std::uint64_t period = 0, freq = 0;
  bool no_inherit = false;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("record",
                                "sample events into a perf.data file (perf report and perf script read it)");
    app->add_option("-e,--event", ro.events, "events to sample (repeatable; default cycles, else cpu-clock)");
    period_opt = app->add_option("-c,--count", period, "sample every N events")->check(CLI::PositiveNumber);
    freq_opt = app->add_option("-F,--freq", freq, "sample N times a second (default 4000)")
                   ->check(CLI::PositiveNumber);
    app->add_flag("-g", ro.callgraph, "record callchains (frame pointers)");
    app->add_flag("-d,--data", ro.data_addr, "record the data address of each sample");
    pid_opt = app->add_option("-p,--pid", pid, "sample an existing process (all its threads)");
    app->add_flag("-a,--all-cpus", ro.all_cpus, "sample every process on every CPU");
    app->add_option("-C,--cpu", ro.cpus, "sample every process on these CPUs (e.g. 0-3,8)");
    app->add_option("-o,--output", ro.output, "the file to write")->capture_default_str();
    app->add_option("-m,--mmap-pages", ro.pages, "data pages of each ring buffer (a power of two)");
    app->add_flag("--no-inherit", no_inherit, "do not sample the command's children");
    app->add_flag("-q,--quiet", ro.quiet, "no summary on stderr");
    app->add_option("--sysfs", ro.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
    add_table_options(app, machine);
    app->footer("The command to sample follows the options (after `--` if it starts with '-').");
  }
  int run(const perfspec::spec::MachineOptions& machine, int argc, char** argv) {
    ro.machine = machine;
    if (*pid_opt) ro.pid = pid;
    if (*period_opt) ro.period = period;
    if (*freq_opt) ro.frequency = freq;
    ro.inherit = !no_inherit;
    ro.argv.assign(argv, argv + argc);
    return perfspec::tools::run_record(ro);
  }
};

struct ExporterCommand {
  CLI::App* app = nullptr;
  perfspec::tools::exporter::ExporterOptions eo;

  void add(CLI::App& parent, perfspec::spec::MachineOptions& machine) {
    app = parent.add_subcommand("exporter",
                                "serve events and metrics to Prometheus, as a configuration file says");
    app->add_option("--config", eo.config, "the configuration (TOML): sets of event strings and metrics")
        ->required()
        ->type_name("FILE");
    app->add_option("--listen", eo.listen,
                    "HOST:PORT to serve /metrics on (default: the file's [exporter] listen, else "
                    "127.0.0.1:9464; port 0 picks a free one)")
        ->type_name("ADDR");
    app->add_flag("--check", eo.check,
                  "check the configuration against this machine, open nothing, and exit");
    app->add_option("--threads", eo.threads, "HTTP worker threads")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    app->add_option("--sysfs", eo.sysfs, "sysfs root to read PMUs from")->check(sysfs_tree);
    add_table_options(app, machine);
    app->footer("SIGHUP reloads the configuration; one that does not load leaves the running one in place.");
  }
  int run(const perfspec::spec::MachineOptions& machine) {
    eo.machine = machine;
    return perfspec::tools::exporter::run(eo);
  }
};

// Every subcommand, added to the app, and the one the words chose run.
struct Commands {
  ResolveCommand resolve;
  StatCommand stat;
  ListCommand list;
  SnapshotCommand snapshot;
  DecodeCommand decode;
  ScriptCommand script;
  RecordCommand record;
  ExporterCommand exporter;

  void add(CLI::App& app, perfspec::spec::MachineOptions& machine) {
    resolve.add(app, machine);
    stat.add(app, machine);
    list.add(app, machine);
    snapshot.add(app, machine);
    decode.add(app, machine);
    script.add(app);
    record.add(app, machine);
    exporter.add(app, machine);
  }

  // Once parsed: the chosen subcommand's own --format says how errors are written.
  perfspec::tools::ErrorFormat error_format(perfspec::tools::ErrorFormat errors) const {
    namespace tools = perfspec::tools;
    if (*resolve.app) return tools::error_format(resolve.format);
    if (*stat.app) return tools::error_format(stat.st.format);
    if (*list.app) return tools::error_format(list.lo.format);
    if (*decode.app) return tools::error_format(decode.dopt.format);
    if (*script.app) return tools::error_format(script.so.format);
    return errors;
  }

  int run(const perfspec::spec::MachineOptions& machine, std::vector<std::string> script_fields, int argc,
          char** argv) {
    if (*resolve.app) return resolve.run(machine);
    if (*decode.app) return decode.run(machine);
    if (*list.app) return list.run(machine);
    if (*snapshot.app) return snapshot.run(machine);
    if (*stat.app) return stat.run(machine);
    if (*script.app) {
      script.so.fields = std::move(script_fields);
      return script.run();
    }
    if (*record.app) return record.run(machine, argc, argv);
    if (*exporter.app) return exporter.run(machine);
    return 0;
  }
};

// A first word that is no subcommand: say which it was and the closest one (CLI11 only says that a
// subcommand is required). True when it was said.
bool unknown_subcommand(const CLI::App& app, int argc, char** argv, perfspec::tools::ErrorFormat errors) {
  namespace tools = perfspec::tools;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (argc < 2 || argv[1][0] == '-' || std::find(names.begin(), names.end(), argv[1]) != names.end())
    return false;
  std::string close = perfspec::resolver::suggest(argv[1], names);
  std::string message = fmt::format("'{}' is not a subcommand", argv[1]);
  if (errors == tools::ErrorFormat::json)
    std::fputs(
        tools::usage_json(message, close.empty() ? "Run with --help for more information." : close).c_str(),
        stderr);
  else
    std::fprintf(stderr, "perfspec: %s%s%s\nRun with --help for more information.\n",
                 perfspec::spec::printable(message).c_str(), close.empty() ? "" : "; ", close.c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace tools = perfspec::tools;
  CLI::App app{"perfspec: parse, resolve and count Linux perf event strings", "perfspec"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perfspec 0.1.0");
  auto machine = perfspec::spec::MachineOptions::from_environment();
  // The tables installed with perfspec, unless $PERFSPEC_EVENTS_DIR is set (set and empty: no tables).
  if (!std::getenv("PERFSPEC_EVENTS_DIR")) machine.events_dir = perfspec::spec::default_events_dir();
  Commands commands;
  commands.add(app, machine);
  std::vector<std::string> words = cli_words(argc, argv,
                                             {{"stat", commands.stat.app, &commands.stat.st.command},
                                              {"record", commands.record.app, &commands.record.ro.command}});
  std::vector<std::string> script_fields = take_script_fields(words);
  // Errors are JSON under `--format json`, CLI11's too: they come before the option is parsed, so
  // the words say which.
  tools::ErrorFormat errors = tools::error_format_of(words);
  app.failure_message([&errors](const CLI::App* a, const CLI::Error& e) {
    return errors == tools::ErrorFormat::json
               ? tools::usage_json(e.what(), "Run with --help for more information.")
               : CLI::FailureMessage::simple(a, e);
  });
  if (unknown_subcommand(app, argc, argv, errors)) return 2;
  try {
    std::reverse(words.begin(), words.end());  // CLI11 takes a reversed vector
    app.parse(words);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as getopt-style tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  errors = commands.error_format(errors);
  try {
    return commands.run(machine, std::move(script_fields), argc, argv);
  } catch (const perfspec::Error& e) {
    return tools::report_error(e, errors);
  } catch (const std::exception& e) {
    return tools::report_internal(e.what(), errors);
  }
}
