// SPDX-License-Identifier: MIT
// What the subcommands share: their common options, and the words of the command line as CLI11 is
// given them (a command to run, and script's -F values, kept out of its sight).
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "tools/commands.hpp"

namespace perfspec::tools::cli {

namespace {

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
  // perf's options whose value may only be attached (PARSE_OPT_OPTARG): --per-cache=L2, -z3,
  // --compression-level=3; the next word is never theirs
  auto attached_only = [&](const std::string& name) {
    const CLI::Option* opt = stat.get_option_no_throw(name);
    if (opt == nullptr) return false;
    for (const char* lname : {"per-cache", "compression-level", "user-regs", "intr-regs", "switch-output"})
      if (opt->check_lname(lname)) return true;
    return false;
  };
  // An option whose value may be left out (trace's -F) takes the next word only when it is no option
  // (perf's PARSE_OPT_LASTARG_DEFAULT).
  auto takes_next = [&](const std::string& name, std::size_t next) {
    if (!takes_value(name) || next >= words.size() || attached_only(name)) return false;
    const CLI::Option* opt = stat.get_option_no_throw(name);
    return opt->get_items_expected_min() != 0 || words[next].empty() || words[next][0] != '-';
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
        if (takes_next(w, i + 1)) options.push_back(words[++i]);
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
      if (j + 1 == w.size() && takes_next(std::string{'-', w[j]}, i + 1)) options.push_back(words[++i]);
      break;
    }
  }
  return {options, {words.begin() + static_cast<std::ptrdiff_t>(i), words.end()}};
}

}  // namespace

const CLI::Validator sysfs_tree(
    [](std::string& dir) -> std::string {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) return fmt::format("'{}' is not a folder", dir);
      if (!std::filesystem::is_directory(dir + "/bus/event_source/devices", ec))
        return fmt::format("'{}' is not a sysfs tree: it has no bus/event_source/devices", dir);
      return {};
    },
    "SYSFS");

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

void add_metric_flags(CLI::App& app, bool& no_group, bool& no_merge, bool& no_threshold) {
  app.add_flag("--metric-no-group", no_group, "open each metric's events alone, not as a group");
  app.add_flag("--metric-no-merge", no_merge, "do not share a group of events between metrics");
  app.add_flag("--metric-no-threshold", no_threshold,
               "do not compute MetricThreshold (nor open the events only it needs)");
}

std::vector<std::string> cli_words(std::vector<std::string> args,
                                   std::initializer_list<RunsCommand> runners) {
  for (const auto& r : runners) {
    if (args.empty() || args.front() != r.name) continue;
    auto [options, cmd] = split_stat_command(*r.app, {args.begin() + 1, args.end()});
    *r.command = std::move(cmd);
    args.assign(1, r.name);
    args.insert(args.end(), options.begin(), options.end());
  }
  return args;
}

std::vector<std::string> expand_long_options(const CLI::App& app, std::vector<std::string>& words,
                                             std::string& ambiguous) {
  if (words.empty()) return {};
  const CLI::App* sub = nullptr;
  for (const CLI::App* a : app.get_subcommands({}))
    if (a->get_name() == words.front()) sub = a;
  if (!sub) return {};
  std::vector<std::string> names;  // every long name the subcommand and the program take
  for (const CLI::App* a : {sub, &app})
    for (const CLI::Option* opt : a->get_options())
      for (const std::string& n : opt->get_lnames()) names.push_back(n);
  auto takes_value = [&](const std::string& name) {
    const CLI::Option* opt = sub->get_option_no_throw(name);
    return opt != nullptr && opt->get_items_expected_max() != 0;
  };
  // stat and record: the options end at the command's first word (split_stat_command), whose own
  // options are its own
  const bool runs_command = words.front() == "stat" || words.front() == "record";
  for (std::size_t i = 1; i < words.size(); ++i) {
    std::string& w = words[i];
    if (w == "--") break;
    if (runs_command && (w.size() < 2 || w[0] != '-')) break;
    if (w.size() < 3 || !w.starts_with("--")) {
      // a short option's value in the next word (-e X) is not an option word
      if (w.size() == 2 && w[0] == '-' && w[1] != '-' && takes_value(w)) ++i;
      continue;
    }
    const std::size_t eq = w.find('=');
    const std::string given = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::vector<std::string> matches;
    if (std::find(names.begin(), names.end(), given) == names.end()) {
      for (const std::string& n : names)
        if (n.starts_with(given) && std::find(matches.begin(), matches.end(), n) == matches.end())
          matches.push_back(n);
      if (matches.size() > 1) {
        ambiguous = given;
        return matches;
      }
      if (matches.size() == 1) w = "--" + matches.front() + (eq == std::string::npos ? "" : w.substr(eq));
    }
    if (eq == std::string::npos && takes_value(w.substr(0, w.find('=')))) ++i;  // --name VALUE
  }
  return {};
}

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

}  // namespace perfspec::tools::cli
