// SPDX-License-Identifier: MIT
// The perfspec command line: thin, over the library's public API. Each subcommand's options are in
// tools/commands.hpp; this chooses the one the words name and writes its errors.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "perfspec/perfspec.hpp"
#include "resolver/suggest.hpp"
#include "spec/printable.hpp"
#include "tools/commands.hpp"
#include "tools/report.hpp"

namespace {

using namespace perfspec::tools::cli;

// Every subcommand, added to the app, and the one the words chose run.
struct Commands {
  ResolveCommand resolve;
  StatCommand stat;
  ListCommand list;
  SnapshotCommand snapshot;
  DecodeCommand decode;
  ScriptCommand script;
  ReportCommand report;
  RecordCommand record;
  TraceCommand trace;
  TopCommand top;
  ExporterCommand exporter;

  // Every subcommand with the line --help prints for it, in that order. Only the one the words name
  // (`chosen`) gets its options: CLI11 reads no other's, and building all of them took half of
  // perfspec's start (CLI11 checks each new option's names against all before it).
  void add(CLI::App& app, perfspec::spec::MachineOptions& machine, std::string_view chosen) {
    auto sub = [&](const char* name, const char* about, CLI::App*& into, auto&& options) {
      into = app.add_subcommand(name, about);
      if (chosen == name) options(into);
    };
    auto with_machine = [&](auto& command) { return [&](CLI::App* s) { command.add(s, machine); }; };
    sub("resolve", "print the perf_event_attr encoding of event lists", resolve.app, with_machine(resolve));
    sub("stat", "count events for a command, a process or CPUs", stat.app, with_machine(stat));
    sub("list", "list PMUs and named events from every source", list.app, with_machine(list));
    sub("snapshot", "copy this machine's PMU description into a folder for --sysfs", snapshot.app,
        with_machine(snapshot));
    sub("decode", "the event string for a perf_event_attr (the inverse of resolve)", decode.app,
        with_machine(decode));
    sub("script", "print the records of a perf.data file (perf's or perfspec's)", script.app,
        [&](CLI::App* s) { script.add(s); });
    sub("report", "a perf.data file's samples as perf report tables, folded stacks or pprof", report.app,
        [&](CLI::App* s) { report.add(s); });
    sub("record", "sample events into a perf.data file (perf report and perf script read it)", record.app,
        with_machine(record));
    sub("trace", "trace system calls (as strace), tracepoints and page faults, as perf trace", trace.app,
        with_machine(trace));
    sub("top", "a live profile of the system or processes, redrawn every few seconds, as perf top", top.app,
        with_machine(top));
    sub("exporter", "serve events and metrics to Prometheus, as a configuration file says", exporter.app,
        with_machine(exporter));
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
    if (*report.app) return report.run();
    if (*record.app) return record.run(machine, argc, argv);
    if (*trace.app) return trace.run(machine);
    if (*top.app) return top.run(machine);
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
  std::vector<std::string> words(argv + 1, argv + argc);
  // The subcommand CLI11 will choose: the first word that is no option (perfspec's own are flags).
  auto first_word =
      std::find_if(words.begin(), words.end(), [](const std::string& w) { return !w.starts_with('-'); });
  Commands commands;
  commands.add(app, machine, first_word == words.end() ? std::string_view{} : std::string_view{*first_word});
  std::string abbreviated;
  if (auto could_be = tools::cli::expand_long_options(app, words, abbreviated); !could_be.empty()) {
    std::string list;  // perf's words: "Ambiguous option: ti (could be --tid or --timeout)"
    for (std::size_t i = 0; i < could_be.size(); ++i)
      list += (i == 0 ? "--" : i + 1 == could_be.size() ? " or --" : ", --") + could_be[i];
    std::fprintf(stderr,
                 "perfspec: ambiguous option: --%s (could be %s)\nRun with --help for more information.\n",
                 perfspec::spec::printable(abbreviated).c_str(), perfspec::spec::printable(list).c_str());
    return 2;
  }
  words = cli_words(std::move(words), {{"stat", commands.stat.app, &commands.stat.st.command},
                                       {"record", commands.record.app, &commands.record.ro.command},
                                       {"trace", commands.trace.app, &commands.trace.to.command}});
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
  } catch (const CLI::CallForHelp&) {
    // The help of the command the words name, ended by one empty line whichever CLI11 wrote it (2.3
    // ends it so, 2.4 does not).
    std::string help = app.help();
    while (!help.empty() && help.back() == '\n') help.pop_back();
    std::cout << help << "\n\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    // --version exits 0; a usage error exits 2, as getopt-style tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  errors = commands.error_format(errors);
  try {
    const int status = commands.run(machine, std::move(script_fields), argc, argv);
    std::cout.flush();
    tools::flush_output(stdout, "standard output");  // what was not written is not a success
    return status;
  } catch (const perfspec::Error& e) {
    return tools::report_error(e, errors);
  } catch (const std::exception& e) {
    return tools::report_internal(e.what(), errors);
  }
}
