// The perfspec command line: thin, over the library's public API.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "spec/printable.hpp"
#include "tools/decode.hpp"
#include "tools/exit_status.hpp"
#include "tools/list.hpp"
#include "tools/stat.hpp"
#include "tools/warnings.hpp"

namespace {

int run_resolve(const std::string& sysfs, const perfspec::spec::MachineOptions& options, const std::string& format,
                const std::vector<std::string>& lists, bool keep_going) {
  perfspec::spec::Machine machine(sysfs, options);
  perfspec::EventSet all;
  int status = 0;
  for (const auto& text : lists) {
    try {
      auto set = perfspec::resolve(text, machine);
      std::size_t base = all.events.size(), gbase = all.groups.size();
      for (auto& e : set.events) {
        e.leader += base;
        e.group += gbase;
        all.events.push_back(std::move(e));
      }
      for (auto& g : set.groups) {
        for (auto& m : g.members) m += base;
        all.groups.push_back(std::move(g));
      }
    } catch (const perfspec::Error& e) {
      std::fputs(perfspec::render(e, text).c_str(), stderr);
      if (!keep_going) return perfspec::tools::exit_status(e.kind());
      status = std::max(status, perfspec::tools::exit_status(e.kind()));
    }
  }
  if (format == "json") std::cout << perfspec::to_json(all) << '\n';
  else std::cout << perfspec::to_text(all);
  perfspec::tools::warn_about_table_cache(machine);
  return status;
}

/// Where the counted command starts in the words after `stat`, found as perf's parse_options does
/// with PARSE_OPT_STOP_AT_NON_OPTION: options end at the first word that is neither an option nor
/// an option's value, so `stat -e task-clock ls -l /` counts `ls -l /` and an option after the
/// command's first word is the command's. Which options take a value comes from CLI11's own
/// definitions of them, which then parse the option words; this only finds where they end.
/// `--` ends the options too and is dropped. Returns {the option words, the command}.
std::pair<std::vector<std::string>, std::vector<std::string>> split_stat_command(const CLI::App& stat,
                                                                                 const std::vector<std::string>& words) {
  auto takes_value = [&](const std::string& name) {
    const CLI::Option* opt = stat.get_option_no_throw(name);
    return opt != nullptr && opt->get_items_expected_max() != 0;  // an unknown option is CLI11's error to report
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"perfspec: parse, resolve and count Linux perf event strings"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "perfspec 0.1.0");

  std::string sysfs = "/sys";
  std::string format = "text";
  std::vector<std::string> lists;
  auto* resolve = app.add_subcommand("resolve", "print the perf_event_attr encoding of event lists");
  resolve->add_option("--sysfs", sysfs, "sysfs root to read PMUs from (a fixture or snapshot tree)")
      ->check(CLI::ExistingDirectory);
  resolve->add_option("--format", format, "output format")->check(CLI::IsMember({"text", "json"}));
  // Named-event tables: options win over $PERFSPEC_EVENTS_DIR / $PERFSPEC_CPUID.
  auto machine_options = perfspec::spec::MachineOptions::from_environment();
  auto add_table_options = [&](CLI::App* sub) {
    sub->add_option("--events-dir", machine_options.events_dir,
                    "perf-format JSON event tables (mapfile.csv + model folders); default $PERFSPEC_EVENTS_DIR")
        ->check(CLI::ExistingDirectory);
    sub->add_option("--cpuid", machine_options.cpuid,
                    "CPU id picking the table model, as perf's PERF_CPUID (e.g. GenuineIntel-6-55-4); default $PERFSPEC_CPUID, else this machine's");
    sub->add_flag("--no-libpfm4{false}", machine_options.libpfm4, "do not ask libpfm4 for names sysfs and the tables lack");
  };
  add_table_options(resolve);
  bool keep_going = false;
  resolve->add_flag("-k,--keep-going", keep_going,
                    "resolve every list even when some fail (each failure is reported; the status is still 1)");
  resolve->add_option("events", lists, "event lists, e.g. 'cycles,{cpu/event=0x3c/u,instructions}:k'")->required();

  perfspec::tools::StatOptions st;
  int pid = 0;
  auto* stat = app.add_subcommand("stat", "count events for a command, a process or CPUs");
  stat->add_option("-e,--event", st.events, "event list (repeatable); default: " + std::string(perfspec::tools::default_stat_events));
  auto* pid_opt = stat->add_option("-p,--pid", pid, "count an existing process (all its threads)");
  stat->add_flag("-a,--all-cpus", st.all_cpus, "count every process on every CPU");
  stat->add_option("-C,--cpu", st.cpus, "count every process on these CPUs (e.g. 0-3,8)");
  stat->add_option("-I,--interval", st.interval_ms, "print counts every N milliseconds")->check(CLI::Range(10u, 3600000u));
  auto* format_opt =
      stat->add_option("--format", st.format, "output format")->check(CLI::IsMember({"text", "csv", "json"}));
  std::string separator;
  auto* separator_opt = stat->add_option("-x,--field-separator", separator,
                                         "print counts in perf stat's CSV form, fields separated by SEP (as perf stat -x)")
                            ->type_name("SEP");
  stat->add_option("--sysfs", st.sysfs, "sysfs root to read PMUs from")->check(CLI::ExistingDirectory);
  add_table_options(stat);
  stat->add_option("-o,--output", st.output, "write the counts to FILE instead of stderr");
  bool no_inherit = false;
  stat->add_flag("--no-inherit", no_inherit, "do not count the command's children");
  perfspec::tools::ListOptions lo;
  auto* list = app.add_subcommand("list", "list PMUs and named events from every source");
  list->add_option("pattern", lo.filter.pattern, "glob (*?[) or case-insensitive substring of the event name");
  list->add_option("--pmu", lo.filter.pmu, "only events of this PMU (name, wildcard or glob)");
  list->add_option("--topic", lo.filter.topic, "only this topic (hardware, software, cache, sysfs, or a table topic)");
  list->add_option("--source", lo.filter.source, "only this source")
      ->check(CLI::IsMember({"builtin", "sysfs", "json", "tracepoint"}));
  list->add_flag("--tracepoints", lo.filter.tracepoints, "include tracepoints (implied by a PATTERN with ':')");
  list->add_flag("--deprecated", lo.filter.deprecated, "include deprecated table events");
  list->add_flag("--pmus", lo.pmus, "list the PMUs and their formats too");
  list->add_flag("-v,--verbose", lo.verbose, "also report, on stderr, table entries and files that were skipped and why");
  list->add_option("--format", lo.format, "output format")->check(CLI::IsMember({"text", "json"}));
  list->add_option("--sysfs", lo.sysfs, "sysfs root to read PMUs from")->check(CLI::ExistingDirectory);
  add_table_options(list);

  perfspec::tools::SnapshotCliOptions so;
  auto* snap = app.add_subcommand("snapshot", "copy this machine's PMU description into a folder for --sysfs");
  snap->add_option("out", so.out, "the folder to create")->required();
  snap->add_option("--sysfs", so.sysfs, "sysfs root to copy from")->check(CLI::ExistingDirectory);
  snap->add_flag("--tracepoints", so.tracepoints, "copy tracepoint ids too");
  add_table_options(snap);

  perfspec::tools::DecodeOptions dopt;
  std::string d_type, d_config, d_config1, d_config2, d_config3;
  std::vector<std::string> d_attrs;
  auto* dec = app.add_subcommand("decode", "the event string for a perf_event_attr (the inverse of resolve)");
  dec->add_option("--type", d_type, "attr.type");
  dec->add_option("--config", d_config, "attr.config");
  dec->add_option("--config1", d_config1, "attr.config1");
  dec->add_option("--config2", d_config2, "attr.config2");
  dec->add_option("--config3", d_config3, "attr.config3");
  dec->add_option("--attr", d_attrs, "any attr field as NAME=VALUE (repeatable), e.g. exclude_kernel=1");
  dec->add_option("--format", dopt.format, "output format")->check(CLI::IsMember({"text", "json"}));
  dec->add_option("--sysfs", dopt.sysfs, "sysfs root to read PMUs from")->check(CLI::ExistingDirectory);
  dec->footer("Without attr options, reads 'perfspec resolve --format json' output or 'perf stat -vv' text on stdin.");
  add_table_options(dec);

  stat->footer("COMMAND [ARGS...] follows the options, with or without `--`: options end at the first word that is "
               "not one, as with perf stat, so `perfspec stat -e task-clock ls -l /` counts `ls -l /`.");

  // The command to count is taken verbatim, out of CLI11's sight (it would go on interpreting the
  // command's options, or take its words as more -e values).
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "stat") {
    auto [options, command] = split_stat_command(*stat, {args.begin() + 1, args.end()});
    st.command = std::move(command);
    args.assign(1, "stat");
    args.insert(args.end(), options.begin(), options.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector

  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as getopt-style tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*separator_opt && *format_opt) {
    // Two different outputs were asked for; CLI11's excludes() would only say that the options exclude each other.
    std::fputs("perfspec stat: -x prints perf's CSV and --format picks perfspec's own output: give one of them\n", stderr);
    return 2;
  }
  try {
    if (*resolve) return run_resolve(sysfs, machine_options, format, lists, keep_going);
    if (*dec) {
      dopt.machine = machine_options;
      for (auto [name, value] : {std::pair{"type", &d_type}, {"config", &d_config}, {"config1", &d_config1},
                                 {"config2", &d_config2}, {"config3", &d_config3}})
        if (!value->empty()) dopt.fields.emplace_back(name, *value);
      for (const auto& a : d_attrs) {
        auto eq = a.find('=');
        if (eq == std::string::npos) throw perfspec::Error(perfspec::ErrorKind::usage, fmt::format("--attr wants NAME=VALUE, got '{}'", a));
        dopt.fields.emplace_back(a.substr(0, eq), a.substr(eq + 1));
      }
      return perfspec::tools::run_decode(dopt);
    }
    if (*list) {
      lo.machine = machine_options;
      // `sys:name` is the form of a tracepoint: `perfspec list 'sched:sched_sw*'` asks for them.
      if (lo.filter.source == "tracepoint" || lo.filter.pattern.find(':') != std::string::npos)
        lo.filter.tracepoints = true;
      return perfspec::tools::run_list(lo);
    }
    if (*snap) {
      so.machine = machine_options;
      return perfspec::tools::run_snapshot(so);
    }
    if (*stat) {
      if (*pid_opt) st.pid = pid;
      if (*separator_opt) st.field_separator = separator;
      st.inherit = !no_inherit;
      st.machine = machine_options;
      return perfspec::tools::run_stat(st);
    }
  } catch (const perfspec::Error& e) {
    // No event string is in sight here: an error is shown without its position, as render() shows
    // an unpositioned one ("error: ...", "help: ..."), after the program's name.
    const perfspec::Error shown = e.positioned() ? perfspec::Error(e.kind(), e.message(), e.help()) : e;
    std::fputs(("perfspec: " + perfspec::render(shown, {})).c_str(), stderr);
    return perfspec::tools::exit_status(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfspec: internal error: %s\n", e.what());
    return 70;
  }
  return 0;
}
