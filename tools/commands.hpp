// SPDX-License-Identifier: MIT
#pragma once
// The perfspec command line's subcommands: each one's options, added to its subcommand (CLI11), and
// how it runs once they are parsed; and the helpers they share.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "perfspec/spec.hpp"
#include "perfspec/stat.hpp"
#include "tools/decode.hpp"
#include "tools/exporter.hpp"
#include "tools/list.hpp"
#include "tools/record.hpp"
#include "tools/report_command.hpp"
#include "tools/script.hpp"
#include "tools/stat.hpp"
#include "tools/top.hpp"
#include "tools/trace.hpp"

namespace perfspec::tools::cli {

/// `--sysfs DIR`: a folder with the PMU folders where sysfs has them, so that a wrong folder is an
/// error rather than a machine without PMUs.
extern const CLI::Validator sysfs_tree;
/// Named-event tables, for every subcommand that reads a machine: options win over
/// $PERFSPEC_EVENTS_DIR / $PERFSPEC_CPUID, which win over the tables installed with perfspec (main()).
void add_table_options(CLI::App* sub, spec::MachineOptions& machine);
/// perf's flags for how metrics are set up, shared by stat and resolve.
void add_metric_flags(CLI::App& app, bool& no_group, bool& no_merge, bool& no_threshold);

/// The words CLI11 parses, in order: after `stat` or `record`, the command to run is taken verbatim,
/// out of CLI11's sight (it would go on interpreting the command's options, or take its words as more
/// -e values).
struct RunsCommand {
  const char* name;
  const CLI::App* app;
  std::vector<std::string>* command;
};
std::vector<std::string> cli_words(std::vector<std::string> args, std::initializer_list<RunsCommand> runners);
/// perf script reads the word after -F as its value whatever it looks like (`-F -ip` removes ip from
/// the defaults, `-F ''` is a list of nothing, which perf refuses with its own words): the -F options
/// of `script` are taken out of the words here, in order, since CLI11 would read `-ip` as options and
/// refuse an empty value. A last -F without a value is left for CLI11 to refuse.
std::vector<std::string> take_script_fields(std::vector<std::string>& words);
/// perf's parse-options take a long option by any prefix that names one option only (`--time 200` is
/// `--timeout 200`, `--no-inh` is `--no-inherit`): the subcommand's option words so abbreviated are
/// written out whole. Returns the other long options a prefix names when it names more than one (an
/// error perf reports as ambiguous; `ambiguous` is the word), else empty.
std::vector<std::string> expand_long_options(const CLI::App& app, std::vector<std::string>& words,
                                             std::string& ambiguous);
/// perf's --filter (record, stat) belongs to the -e given before it: each filter with the index of that
/// -e among `app`'s, in the order given. Throws Error (usage) for a filter before any -e.
std::vector<std::pair<std::size_t, std::string>> filters_by_list(const CLI::App& app,
                                                                 const CLI::Option* event_opt,
                                                                 const CLI::Option* filter_opt,
                                                                 const std::vector<std::string>& filters);

struct ResolveCommand {
  CLI::App* app = nullptr;
  std::string sysfs = "/sys", format = "text";
  std::vector<std::string> lists, metrics;
  bool keep_going = false, from_stdin = false;
  bool no_group = false, no_merge = false, no_threshold = false;

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine) const;
};

struct StatCommand {
  CLI::App* app = nullptr;
  perfspec::tools::StatOptions st;
  int pid = 0;
  std::string separator;
  bool no_inherit = false;
  CLI::Option *pid_opt = nullptr, *format_opt = nullptr, *separator_opt = nullptr, *metric_only_opt = nullptr,
              *big_num_opt = nullptr, *event_opt = nullptr, *filter_opt = nullptr, *cputype_opt = nullptr;
  std::vector<std::string> filters;  // --filter, each for the -e before it
  bool big_num = true;               // -B, --no-big-num: perf's default, counts grouped as the locale says
  std::vector<std::pair<CLI::Option*, perfspec::Aggregation>> aggregation_flags;

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

struct ListCommand {
  CLI::App* app = nullptr;
  perfspec::tools::ListOptions lo;
  std::string output;  ///< -o: the list goes to this file

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

struct SnapshotCommand {
  CLI::App* app = nullptr;
  perfspec::tools::SnapshotCliOptions so;

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

struct ScriptCommand {
  CLI::App* app = nullptr;
  perfspec::tools::ScriptOptions so;
  // perf's --show-*-events: (flag, the record types it adds)
  std::vector<std::pair<bool, std::uint64_t>> shows;
  bool force = false;  // -f: accepted (perf refuses another user's file without it; perfspec reads it)

  void add(CLI::App* sub);
  int run();
};

struct ReportCommand {
  CLI::App* app = nullptr;
  perfspec::tools::ReportCliOptions ro;
  bool children = false, no_children = false;
  bool force = false;                            // -f: accepted, as script's
  bool no_call_graph = false, inverted = false;  // -g none; -G: -g caller
  unsigned samples_kept = 0;                     // --samples: accepted (perf's TUI only)

  void add(CLI::App* sub);
  int run();
};

struct DecodeCommand {
  CLI::App* app = nullptr;
  perfspec::tools::DecodeOptions dopt;
  std::string type, config, config1, config2, config3;
  std::vector<std::string> attrs;

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

struct RecordCommand {
  CLI::App* app = nullptr;
  perfspec::tools::RecordOptions ro;
  CLI::Option *pid_opt = nullptr, *period_opt = nullptr, *freq_opt = nullptr, *event_opt = nullptr,
              *filter_opt = nullptr, *compression_opt = nullptr;
  int pid = 0;
  std::uint64_t period = 0;
  std::string freq, tids, max_size, user_regs, intr_regs, switch_output;
  CLI::Option *user_regs_opt = nullptr, *intr_regs_opt = nullptr, *switch_output_opt = nullptr;
  std::vector<std::string> filters;
  bool no_inherit = false;
  bool timestamp = false;     // -T: accepted; perfspec record always samples the time
  bool branch_any = false;    // -b
  std::string branch_filter;  // -j

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  void add_files();  // the options of the file it writes: --switch-output, --overwrite, --max-size, ...
  int run(const perfspec::spec::MachineOptions& machine, int argc, char** argv);
};

struct TraceCommand {
  CLI::App* app = nullptr;
  perfspec::tools::TraceCliOptions to;
  CLI::Option *syscalls_opt = nullptr, *pf_opt = nullptr;

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

struct TopCommand {
  CLI::App* app = nullptr;
  perfspec::tools::TopCliOptions to;
  bool stdio = false, tui = false;
  CLI::Option* freq_opt = nullptr;
  std::string freq;  ///< -F as given: a number or max

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

struct ExporterCommand {
  CLI::App* app = nullptr;
  perfspec::tools::exporter::ExporterOptions eo;

  void add(CLI::App* sub, perfspec::spec::MachineOptions& machine);
  int run(const perfspec::spec::MachineOptions& machine);
};

}  // namespace perfspec::tools::cli
