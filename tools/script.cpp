// SPDX-License-Identifier: MIT
// `perfspec script`: the records of a perf.data file, printed by the library's ScriptPrinter
// (perfspec/script.hpp) to standard output.
#include "tools/script.hpp"

#include <cstdio>

#include "perfspec/perf_data.hpp"
#include "perfspec/script.hpp"

namespace perfspec::tools {

int run_script(const ScriptOptions& options) {
  perfspec::ScriptOptions o{
      .format = options.format == "json" ? perfspec::ScriptOptions::Format::json
                                         : perfspec::ScriptOptions::Format::text,
      .fields = options.fields,
      .samples_only = options.samples_only,
      .summary = options.summary,
      .ns = options.ns,
      .symfs = options.symfs,
      .kallsyms = options.kallsyms,
      .name = options.input,
  };
  // The -F lists are read first, as perf reads them with its other options: their warnings come
  // before anything of the file.
  ScriptPrinter printer(std::move(o), [](std::string_view warning) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(warning.size()), warning.data());
  });
  auto file = record::PerfData::open(options.input);
  printer.print(file, stdout);
  return 0;
}

}  // namespace perfspec::tools
