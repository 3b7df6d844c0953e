// SPDX-License-Identifier: MIT
// `perfspec report`: the library's Profile of a perf.data file, printed by report_text,
// folded_stacks or pprof_profile.
#include "tools/report_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/header_info.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/profile.hpp"
#include "perfspec/report.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/time_ranges.hpp"

namespace perfspec::tools {
namespace {

// perf's -g: a list of words and a threshold, in any order (record's fp/dwarf/lbr words are not
// report's).
void call_graph(std::string_view text, ReportOptions& o) {
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t comma = text.find(',', at);
    std::string_view word =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (word == "graph" || word == "function") {
      o.folded = false;
    } else if (word == "folded") {
      o.folded = true;
    } else if (word == "none") {
      o.graph = false;
    } else if (word == "caller" || word == "callee") {
      o.caller = word == "caller";
    } else {
      char* end = nullptr;
      std::string number(word);
      double percent = std::strtod(number.c_str(), &end);
      if (number.empty() || *end != '\0' || !(percent >= 0 && percent <= 100))
        throw Error(
            ErrorKind::usage, fmt::format("-g: '{}' is no graph setting perfspec report knows", word),
            "-g graph|folded|none, a threshold in percent, caller|callee (for example -g graph,0.5,caller)");
      o.graph_percent = percent;
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
}

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    std::size_t comma = text.find(',', at);
    out.emplace_back(text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

void write_all(std::FILE* out, const void* data, std::size_t size, const std::string& name) {
  if (size && std::fwrite(data, 1, size, out) != size)
    throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", name, std::strerror(errno)));
}

// Write `text` to standard output, or say why it could not be.
void print(const std::string& text) {
  const std::string name = "standard output";
  write_all(stdout, text.data(), text.size(), name);
  if (std::fflush(stdout) != 0)
    throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", name, std::strerror(errno)));
}

// The profile to `path`, else to standard output (not a terminal). The file is closed on every path, a
// failed write's too.
void write_pprof(const std::vector<std::byte>& bytes, const std::string& path) {
  if (path.empty()) {
    if (::isatty(STDOUT_FILENO))
      throw Error(ErrorKind::usage, "a pprof profile is binary: not written to a terminal",
                  "-o FILE, or redirect standard output");
    const std::string name = "standard output";
    write_all(stdout, bytes.data(), bytes.size(), name);
    if (std::fflush(stdout) != 0)
      throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", name, std::strerror(errno)));
    return;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> written(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!written) throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  write_all(written.get(), bytes.data(), bytes.size(), path);
  if (std::fclose(written.release()) != 0)
    throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

}  // namespace

std::string header_block(const record::PerfData& file, const std::string& input, bool full) {
  struct stat st {};
  int got = input == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(input.c_str(), &st);
  if (got == 0 && S_ISDIR(st.st_mode)) got = ::stat((input + "/data").c_str(), &st);  // perf record --threads
  std::unique_ptr<spec::Machine> machine;
  try {  // perf names types and configs by this machine's PMUs; without them, by perf's enums
    machine = std::make_unique<spec::Machine>();
  } catch (const Error&) {
  }
  return header_text(
      file,
      HeaderTextOptions{.full = full, .captured = got == 0 ? st.st_mtime : 0, .machine = machine.get()});
}

namespace {

// The options that do not go together, before the file is read.
void check_cli_options(const ReportCliOptions& options) {
  bool folding = options.no_comm || options.include_pid || options.include_tid || options.kernel;
  if (folding && options.format != "folded")
    throw Error(ErrorKind::usage,
                "--no-comm, --include-pid, --include-tid and --kernel are folded stacks' options",
                "add --format folded");
  if (options.no_comm && (options.include_pid || options.include_tid))
    throw Error(ErrorKind::usage, "--include-pid and --include-tid add to the comm: not with --no-comm");
  if ((options.threads || options.cpu_utilization || options.hierarchy) && options.format != "text")
    throw Error(ErrorKind::usage, "-T, --show-cpu-utilization and --hierarchy are of the text report",
                "leave out --format, or them");
  if (!options.output.empty() && options.format != "pprof")
    throw Error(ErrorKind::usage, "-o writes a pprof profile",
                "add --format pprof, or redirect standard output");
}

bool any_event(const record::PerfData& file, std::uint64_t sample_type_bit) {
  return std::any_of(file.events().begin(), file.events().end(),
                     [&](const record::FileEvent& e) { return (e.attr.sample_type & sample_type_bit) != 0; });
}

// perf's views perfspec cannot show yet: refused (usage) for a file with the data they would show;
// without it they change nothing, as in perf (or perf refuses them: perf_refusal)
void check_views(const record::PerfData& file, const ReportCliOptions& options) {
  auto not_yet = [](std::string_view option, std::string_view why) {
    throw Error(ErrorKind::usage, fmt::format("{}: {}: not supported yet", option, why));
  };
  if (options.group) {
    auto groups = record::read_header_info(file).groups.value_or(std::vector<record::GroupInfo>{});
    if (std::any_of(groups.begin(), groups.end(), [](const record::GroupInfo& g) { return g.members > 1; }))
      not_yet("--group", "a group's members in columns of its leader's rows");
  }
  const bool all_callchains = std::all_of(
      file.events().begin(), file.events().end(),
      [](const record::FileEvent& e) { return (e.attr.sample_type & record::sample_callchain) != 0; });
  if (options.ref_call_graph && any_event(file, record::sample_callchain) && !all_callchains)
    not_yet("--show-ref-call-graph", "the graphs of events recorded without callchains");
  if ((options.total_cycles || options.stitch_lbr || options.branch_stack) &&
      any_event(file, record::sample_branch_stack))
    not_yet(options.total_cycles ? "--total-cycles"
            : options.stitch_lbr ? "--stitch-lbr"
                                 : "-b",
            "perfspec reports no branch stacks");
  if (options.mem_mode && any_event(file, record::sample_data_src))
    not_yet("--mem-mode", "the memory accesses' sort keys");
}

// What perf says, with status 0 after the header, of views the samples have no data for (perf's
// report__setup_sample_type, in its order); none for a pipe, whose sample types come too late for perf
const char* perf_refusal(const record::PerfData& file, const ReportCliOptions& options,
                         const ReportOptions& ro) {
  if (options.format != "text" || file.pipe()) return nullptr;
  if (file.has_feature(record::Feature::auxtrace)) return nullptr;  // perf takes callchains from the trace
  if (!options.call_graph.empty() && ro.graph && !any_event(file, record::sample_callchain))
    return "Error:\nSelected -g or --branch-history.\nBut no callchain or branch data.\nDid you call 'perf "
           "record' without -g or -b?\n";
  if (options.branch_stack && !any_event(file, record::sample_branch_stack))
    return "Error:\nSelected -b but no branch data. Did you call perf record without -b?\n";
  if (options.mem_mode && !any_event(file, record::sample_data_src))
    return "Error:\nSelected --mem-mode but no mem data. Did you call perf record without -d?\n";
  return nullptr;
}

// The samples gathered as the options ask (--time keeps some; a table of the samples' own functions
// needs no callchain, nor their unwinding).
record::Profile read_profile(record::PerfData& file, const ReportCliOptions& options, ReportOptions& ro) {
  record::ProfileOptions po{
      .symbols = {.symfs = options.symfs, .kallsyms = options.kallsyms, .debuginfod = options.debuginfod},
      .max_stack = options.max_stack,
      .inline_frames = options.inline_frames};
  record::TimeRanges time;
  if (!options.time.empty()) {
    const auto span = record::read_header_info(file).sample_time;
    time = record::TimeRanges::parse(options.time, span ? span->first : 0, span ? span->second : 0,
                                     span.has_value());
    po.keep = [&](const record::Record&, const record::Sample& s) {
      return time.keeps(s.has(record::sample_time) ? s.time : 0);
    };
    ro.time_slices = options.time;
  }
  if (options.format == "text" && ro.children == false && !ro.graph) po.callchains = false;
  auto profile = record::Profile::read(file, po);
  return profile;
}

// -D: perf's warning for a file read in its order, the header or perf's hint of it, the records dumped
int dump_report(record::PerfData& file, const ReportCliOptions& options, const std::string& header_text) {
  if (!options.disable_order && record::delivered_unordered(file))
    print("WARNING: No sample_id_all support, falling back to unordered processing\n");
  if (!options.quiet)
    print(!header_text.empty()
              ? header_text
              : "# To display the perf.data header info, please use --header/--header-only options.\n#\n");
  dump_raw_trace(
      file,
      {.ordered = !options.disable_order, .symbols = {.symfs = options.symfs, .kallsyms = options.kallsyms}},
      [](std::string_view text) { print(std::string(text)); });
  return 0;
}

}  // namespace

int run_report(const ReportCliOptions& options) {
  ReportOptions ro{.sort = split(options.sort),
                   .children = options.children,
                   .percent_limit = options.percent_limit,
                   .samples = options.samples,
                   .cpu_utilization = options.cpu_utilization,
                   .quiet = options.quiet,
                   .hierarchy = options.hierarchy};
  if (!options.call_graph.empty()) call_graph(options.call_graph, ro);
  if (options.inverted) ro.caller = true;
  for (auto [list, ids, option] :
       {std::tuple{&options.pids, &ro.pids, "--pid"}, std::tuple{&options.tids, &ro.tids, "--tid"}})
    for (const auto& word : list->empty() ? std::vector<std::string>{} : split(*list)) {
      char* end = nullptr;
      long id = std::strtol(word.c_str(), &end, 10);
      if (word.empty() || *end != '\0' || id < 0 || id > INT32_MAX)
        throw Error(ErrorKind::usage, fmt::format("{} {}: ids, comma-separated", option, *list));
      ids->push_back(static_cast<std::int32_t>(id));
    }
  check_report_options(ro);  // before the file is read
  check_cli_options(options);
  auto file = record::PerfData::open(options.input);
  // perf prints no header with -q (and then reports, even with --header-only)
  const bool header = (options.header || options.header_only) && !options.quiet;
  if (header && options.header_only) {
    if (file.pipe()) {  // the features are records of the stream
      record::Record r;
      while (file.next(r)) {
      }
    }
    print(header_block(file, options.input, options.show_info));
    return 0;
  }
  std::string header_text;
  if (header && !file.pipe()) header_text = header_block(file, options.input, options.show_info);
  if (options.dump_raw) return dump_report(file, options, header ? header_text : std::string());
  ro.header_shown = header;
  // Graphs asked for with -g (not -G), --mem-mode, -b of a file whose samples have no such data: perf
  // says so on standard error and stops, with status 0, after the header
  if (const char* refusal = perf_refusal(file, options, ro)) {
    if (!options.quiet)
      print(header
                ? header_text
                : "# To display the perf.data header info, please use --header/--header-only options.\n#\n");
    std::fputs(refusal, stderr);
    return 0;
  }
  check_views(file, options);
  if (options.stitch_lbr)  // (a file with branch stacks was refused)
    std::fputs(
        "Warning:\nCan't find LBR callchain. Switch off --stitch-lbr.\nPlease apply --call-graph lbr when "
        "recording.\n",
        stderr);
  auto profile = read_profile(file, options, ro);
  if (options.format == "pprof") {
    write_pprof(pprof_profile(profile), options.output);
    return 0;
  }
  // a pipe's features have passed by now, as perf prints them while it reads
  if (header && file.pipe()) header_text = header_block(file, options.input, options.show_info);
  std::string text = options.format == "text" ? header_text : std::string();
  if (options.format == "folded") {
    text += folded_stacks(profile, FoldedOptions{.comm = !options.no_comm,
                                                 .pid = options.include_pid,
                                                 .tid = options.include_tid,
                                                 .kernel = options.kernel});
  } else {
    text += report_text(profile, ro);
    bool any = false;
    for (const auto& e : profile.events()) any = any || e.samples > 0;
    if (!any) std::fprintf(stderr, "Error:\nThe %s data has no samples!\n", options.input.c_str());
  }
  if (options.threads) text += thread_counts_text(profile);
  print(text);
  if (profile.lost_by_kernel() > 0)  // perf warns too: "Processed N events and lost M chunks!"
    std::fprintf(stderr, "perfspec: warning: the kernel lost %llu records of this recording (LOST records)\n",
                 static_cast<unsigned long long>(profile.lost_by_kernel()));
  return 0;
}

}  // namespace perfspec::tools
