// SPDX-License-Identifier: MIT
// `perfspec script`: the records of a perf.data file, printed by the library's ScriptPrinter
// (perfspec/script.hpp) to standard output.
#include "tools/script.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/script.hpp"
#include "tools/report_command.hpp"

namespace perfspec::tools {

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
