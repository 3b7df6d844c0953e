// SPDX-License-Identifier: MIT
// `perfspec script`: the records of a perf.data file, printed by the library's ScriptPrinter
// (perfspec/script.hpp) to standard output.
#include "tools/script.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perfspec/error.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/script.hpp"
#include "perfspec/spec.hpp"
#include "perfspec/symbols.hpp"
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

void write_all(std::FILE* out, std::string_view text, const std::string& name) {
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size())
    throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", name, std::strerror(errno)));
}

// perf -v's line for each binary of HEADER_BUILD_ID, as perf's reader of the section says it
void say_build_ids(record::PerfData& file) {
  if (!file.has_feature(record::Feature::build_id)) return;
  for (const record::BinaryBuildId& b :
       record::read_build_id_section(file.feature(record::Feature::build_id))) {
    std::string hex;
    for (std::byte c : b.build_id)
      fmt::format_to(std::back_inserter(hex), "{:02x}", static_cast<unsigned>(c));
    std::fprintf(stderr, "build id event received for %s: %s [%zu]\n", b.name.c_str(), hex.c_str(),
                 b.build_id.size());
  }
}

// perf's --per-event-dump: INPUT.EVENT.dump for each event (made before the records are read, as
// perf makes them; a pipe's events are known as they come), the samples' text in them, the other
// records' on standard output, then perf's line for each file. The size is the file's whole size
// (perf's fstat before its last fflush leaves out what its stdio buffer still holds).
void per_event_dump(const ScriptPrinter& printer, record::PerfData& file, const std::string& input) {
  struct Dump {
    std::string name;
    std::FILE* out = nullptr;
    ~Dump() {
      if (out) std::fclose(out);
    }
  };
  std::vector<std::unique_ptr<Dump>> dumps;
  auto dump = [&](std::size_t event) -> Dump& {
    if (dumps.size() <= event) dumps.resize(event + 1);
    if (!dumps[event]) {
      auto d = std::make_unique<Dump>();
      d->name = fmt::format("{}.{}.dump", input, file.event_name(event));
      d->out = std::fopen(d->name.c_str(), "w");
      if (!d->out)
        throw Error(ErrorKind::io, fmt::format("cannot create {}: {}", d->name, std::strerror(errno)),
                    "perf script --per-event-dump writes beside its input");
      dumps[event] = std::move(d);
    }
    return *dumps[event];
  };
  for (std::size_t i = 0; i < file.events().size(); ++i) dump(i);
  std::vector<std::uint64_t> samples = printer.print_per_event(
      file, [](std::string_view text) { write_all(stdout, text, "standard output"); },
      [&](std::size_t event, std::string_view text) {
        Dump& d = dump(event);
        write_all(d.out, text, d.name);
      });
  for (std::size_t i = 0; i < samples.size(); ++i) {
    Dump& d = dump(i);
    if (std::fflush(d.out) != 0)
      throw Error(ErrorKind::io, fmt::format("cannot write {}: {}", d.name, std::strerror(errno)));
    struct stat st {};
    fstat(fileno(d.out), &st);
    std::printf("[ perf script: Wrote %.3f MB %s (%" PRIu64 " samples) ]\n",
                static_cast<double>(st.st_size) / 1024.0 / 1024.0, d.name.c_str(), samples[i]);
  }
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
  o.dump_raw = options.dump_raw || options.dump_unsorted;
  o.dump_ordered = !options.dump_unsorted;
  if (options.verbose)
    o.problems = [](std::string_view problem) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(problem.size()), problem.data());
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
  if (options.verbose) say_build_ids(file);
  if (options.per_event_dump) {
    if (options.format != "text" || options.summary)  // before any file is made
      throw Error(ErrorKind::usage, "--per-event-dump writes the text of each event's samples",
                  "leave out --format json and --summary");
    per_event_dump(printer, file, options.input);
    return 0;
  }
  printer.print(file, stdout);
  return 0;
}

}  // namespace perfspec::tools
