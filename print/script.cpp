// SPDX-License-Identifier: MIT
// The printer behind `perfspec script` (perfspec/script.hpp): the -F lists read first, as perf reads
// them with its other options; then the session's checks of them against the file's events; then the
// layout asked for. And --summary: the records counted by type.
#include "perfspec/script.hpp"

#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/error.hpp"
#include "print/script_session.hpp"

namespace perfspec {

struct ScriptPrinter::Fields {
  script_fields::FieldSpec spec;
};

ScriptPrinter::ScriptPrinter(ScriptOptions options, const std::function<void(std::string_view)>& warn)
    : options_(std::move(options)), fields_(std::make_unique<Fields>()) {
  if (options_.summary && !options_.time.empty())
    throw Error(ErrorKind::usage,
                "--time picks the samples to print; --summary counts every record of the file",
                "leave out one of them");
  if (options_.dump_raw && (options_.format != ScriptOptions::Format::text || options_.summary))
    throw Error(ErrorKind::usage, "-D dumps the records as perf does, in text",
                "leave out --format json and --summary");
  if (options_.dump_raw) options_.samples_only = true;  // perf's: the other records with --show-* only
  if (options_.format == ScriptOptions::Format::json &&
      (!options_.comms.empty() || !options_.symbols.empty()))
    throw Error(ErrorKind::usage, "--comm and -S/--symbols pick samples of the text",
                "leave out --format json");
  for (const std::string& f : options_.fields)
    fields_->spec.parse(f, [&](std::string_view warning) {
      if (options_.format == ScriptOptions::Format::text && warn) warn(warning);
    });
  fields_->spec.refuse_unprintable();
}

ScriptPrinter::ScriptPrinter(ScriptPrinter&&) noexcept = default;
ScriptPrinter& ScriptPrinter::operator=(ScriptPrinter&&) noexcept = default;
ScriptPrinter::~ScriptPrinter() = default;

void ScriptPrinter::print(record::PerfData& file, const std::function<void(std::string_view)>& write) const {
  script::Session session(file, options_, fields_->spec);
  session.check_output();
  script::Buffer out(write);
  print_into(session, out);
}

std::vector<std::uint64_t> ScriptPrinter::print_per_event(
    record::PerfData& file, const std::function<void(std::string_view)>& write,
    const std::function<void(std::size_t, std::string_view)>& write_event) const {
  if (options_.format != ScriptOptions::Format::text || options_.summary)
    throw Error(ErrorKind::usage, "--per-event-dump writes the text of each event's samples",
                "leave out --format json and --summary");
  script::Session session(file, options_, fields_->spec);
  session.check_output();
  script::Buffer out(write, &write_event);
  print_into(session, out);
  std::vector<std::uint64_t> samples = out.samples();
  samples.resize(file.events().size());
  return samples;
}

void ScriptPrinter::print_into(script::Session& session, script::Buffer& out) const {
  // What was printed before a record that does not follow the format is written, then the error.
  try {
    if (options_.summary)
      script::print_summary(session, out);
    else if (options_.format == ScriptOptions::Format::json)
      script::print_json(session, out);
    else
      script::print_text(session, out);
  } catch (const Error&) {
    out.flush();
    throw;
  }
  out.flush();
}

void ScriptPrinter::print(record::PerfData& file, std::FILE* out) const {
  print(file, [&](std::string_view text) {
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size())
      throw Error(ErrorKind::io, fmt::format("cannot write the records: {}", std::strerror(errno)));
  });
}

namespace script {

// The records by type, and what the kernel lost or throttled.
void print_summary(Session& session, Buffer& out) {
  using namespace record;
  std::map<std::string, std::uint64_t> counts;
  std::uint64_t lost = 0, lost_samples = 0, throttled = 0, unthrottled = 0, unknown_id = 0;
  auto count = [&](const Record& r) {
    auto name = type_name(r.type);
    ++counts[name.empty() ? fmt::format("type {}", r.type) : std::string(name)];
    if (auto* l = r.get<Lost>()) lost += l->lost;
    if (auto* l = r.get<LostSamples>()) lost_samples += l->lost;
    if (r.kind() == Type::throttle) ++throttled;
    if (r.kind() == Type::unthrottle) ++unthrottled;
    if (r.type < user_type_start && r.attr == Record::npos) ++unknown_id;
  };
  auto print = [&] {
    auto it = out.it();
    if (session.options().format == ScriptOptions::Format::json) {
      nlohmann::ordered_json j;
      j["schema"] = script_summary_schema;
      for (const auto& [name, n] : counts) j["records"][name] = n;
      j["lost"] = lost;
      j["lost_samples"] = lost_samples;
      j["throttle"] = throttled;
      j["unthrottle"] = unthrottled;
      j["unknown_id"] = unknown_id;
      fmt::format_to(it, "{}\n", j.dump());
      return;
    }
    std::uint64_t total = 0;
    for (const auto& [name, n] : counts) total += n;
    fmt::format_to(it, "{:<20} {:>12}\n", "record", "count");
    for (const auto& [name, n] : counts) fmt::format_to(it, "{:<20} {:>12}\n", name, n);
    fmt::format_to(it, "{:<20} {:>12}\n", "total", total);
    fmt::format_to(it, "lost: {} records lost by the kernel (LOST), {} samples lost (LOST_SAMPLES)\n", lost,
                   lost_samples);
    if (throttled || unthrottled)
      fmt::format_to(it, "throttled: {} times, unthrottled: {} times\n", throttled, unthrottled);
    if (unknown_id) fmt::format_to(it, "{} records name an id no attr of the file has\n", unknown_id);
  };
  Record r;
  try {
    while (session.file().next(r)) count(r);
  } catch (const Error&) {
    print();  // what was counted before the record that ended it
    throw;
  }
  print();
}

}  // namespace script
}  // namespace perfspec
