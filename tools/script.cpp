// SPDX-License-Identifier: MIT
// `perfspec script`: the records of a perf.data file, printed by the library's ScriptPrinter
// (perfspec/script.hpp) to standard output.
#include "tools/script.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/script.hpp"
#include "perfspec/spec.hpp"
#include "tools/report_command.hpp"

namespace perfspec::tools {

namespace {

// perf's intlist of --pid and --tid: ids apart by commas (or blanks)
std::vector<std::int32_t> id_list(const std::string& text, std::string_view option) {
  std::vector<std::int32_t> ids;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find_first_of(", ", at);
    if (end == std::string::npos) end = text.size();
    if (end > at) {
      std::string word = text.substr(at, end - at);
      char* stop = nullptr;
      errno = 0;
      long id = std::strtol(word.c_str(), &stop, 10);
      if (*stop != '\0' || errno != 0 || id < INT32_MIN || id > INT32_MAX)
        throw Error(ErrorKind::usage, fmt::format("{} {}: '{}' is no id", option, text, word),
                    "ids apart by commas, for example 1234,1240");
      ids.push_back(static_cast<std::int32_t>(id));
    }
    at = end + 1;
  }
  return ids;
}

}  // namespace

int run_script(const ScriptOptions& options) {
  perfspec::ScriptOptions o{
      .format = options.format == "json" ? perfspec::ScriptOptions::Format::json
                                         : perfspec::ScriptOptions::Format::text,
      .fields = options.fields,
      .samples_only = options.samples_only,
      .also_shown = options.also_shown,
      .summary = options.summary,
      .ns = options.ns,
      .symfs = options.symfs,
      .kallsyms = options.kallsyms,
      .debuginfod = options.debuginfod,
      .inline_frames = options.inline_frames,
      .time = options.time,
      .name = options.input,
  };
  o.pids = id_list(options.pids, "--pid");
  o.tids = id_list(options.tids, "--tid");
  if (!options.cpus.empty()) o.cpus = spec::parse_cpu_list(options.cpus);
  o.comms = options.comms;
  o.symbols = options.symbols;
  o.addr_range = options.addr_range;
  o.reltime = options.reltime;
  o.max_stack = options.max_stack;
  o.hide_call_graph = options.hide_call_graph;
  // The -F lists are read first, as perf reads them with its other options: their warnings come
  // before anything of the file.
  ScriptPrinter printer(std::move(o), [](std::string_view warning) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(warning.size()), warning.data());
  });
  auto file = record::PerfData::open(options.input);
  if ((options.header || options.header_only) && options.format != "text")
    throw Error(ErrorKind::usage, "--header and --header-only print text", "leave out --format json");
  if (options.header || options.header_only) {
    // perf prints a pipe's features as their records pass, among the records it prints
    if (file.pipe() && !options.header_only)
      throw Error(ErrorKind::usage, "--header of a pipe-mode stream is not supported by perfspec script yet",
                  "perfspec report --header-only prints its features");
    std::string header = header_block(file, options.input, options.show_info);
    if (std::fwrite(header.data(), 1, header.size(), stdout) != header.size())
      throw Error(ErrorKind::io, fmt::format("cannot write standard output: {}", std::strerror(errno)));
    if (options.header_only) {
      if (std::fflush(stdout) != 0)
        throw Error(ErrorKind::io, fmt::format("cannot write standard output: {}", std::strerror(errno)));
      return 0;
    }
  }
  printer.print(file, stdout);
  return 0;
}

}  // namespace perfspec::tools
