// SPDX-License-Identifier: MIT
// perf-format JSON tables read by the rules of perf's jevents.py (Linux 6.12), which compiles the
// same files into perf: units to PMUs, entries to terms, ArchStdEvent inheritance, and the files of a
// model or of the `sys` folders.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/error.hpp"
#include "perfspec/tables.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/table_json.hpp"

namespace perfspec::spec {

namespace fs = std::filesystem;

namespace detail {

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::optional<std::uint64_t> jevents_number(std::string_view text) {
  std::string_view t = io::trim(text);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t.remove_prefix(2), base = 16;
  if (t.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : t) {
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
    if (v > (~std::uint64_t{0} - d) / static_cast<unsigned>(base)) return std::nullopt;
    v = v * static_cast<unsigned>(base) + d;
  }
  return v;
}

bool safe_relative_folder(std::string_view folder) {
  if (folder.empty() || folder.front() == '/' || has_control(folder)) return false;
  std::size_t begin = 0;
  while (begin <= folder.size()) {
    std::size_t end = folder.find('/', begin);
    if (end == std::string_view::npos) end = folder.size();
    std::string_view part = folder.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") return false;
    begin = end + 1;
  }
  return true;
}

std::string table_topic(const std::string& file) {
  if (file.ends_with("metrics.json")) return "metrics";
  std::string t = file.substr(0, file.size() - 5);
  std::replace(t.begin(), t.end(), '-', ' ');
  return t;
}

}  // namespace detail

using detail::has_control;
using detail::jevents_number;
using detail::safe_relative_folder;
using detail::table_topic;

// ------------------------------------------------------------------------------------ entries

namespace {

// A table entry after jevents' JsonEvent: the fields that later ones inherit through ArchStdEvent.
struct Entry {
  std::string name, event, pmu, desc, long_desc, compat, scale_unit, perpkg, deprecated, counter;
  std::string metric_name, metric_group, metric_expr, metric_threshold, metric_constraint, default_group,
      aggregation, no_group;
};

// The fields jevents copies from an architecture-standard event into an entry that leaves them empty.
void inherit(Entry& e, const Entry& std) {
  for (auto field : {&Entry::name, &Entry::desc, &Entry::long_desc, &Entry::compat, &Entry::scale_unit,
                     &Entry::perpkg, &Entry::deprecated, &Entry::metric_name, &Entry::metric_group,
                     &Entry::metric_expr, &Entry::metric_threshold, &Entry::metric_constraint,
                     &Entry::default_group, &Entry::aggregation, &Entry::no_group})
    if ((e.*field).empty()) e.*field = std.*field;
}

std::string field(const nlohmann::json& entry, const char* key) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned()) return std::to_string(it->get<std::uint64_t>());
  if (it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  throw Error(ErrorKind::machine, fmt::format("'{}' must be a string, not {}", key, it->type_name()));
}

// jevents' fixdesc(): a description without its final full stop.
std::string fix_description(std::string s) {
  for (std::string_view end : {".  ", ". ", "."})
    if (s.ends_with(end)) {
      s.resize(s.size() - end.size());
      break;
    }
  return s;
}

using StdEvents = std::unordered_map<std::string, Entry>;  // lower-case EventName or MetricName

// One JSON object as jevents' JsonEvent: terms, PMU, inherited fields. Throws perfspec::Error with a
// message (the caller adds file and entry).
// The fields of an entry that make its encoding.
TableFields encoding_fields(const nlohmann::json& jd) {
  TableFields f;
  f.event_code = field(jd, "EventCode");
  f.umask = field(jd, "UMask");
  f.counter_mask = field(jd, "CounterMask");
  f.invert = field(jd, "Invert");
  f.edge_detect = field(jd, "EdgeDetect");
  f.any_thread = field(jd, "AnyThread");
  f.sample_after_value = field(jd, "SampleAfterValue");
  f.msr_index = field(jd, "MSRIndex");
  f.msr_value = field(jd, "MSRValue");
  f.filter = field(jd, "Filter");
  f.config_code = field(jd, "ConfigCode");
  f.ext_sel = field(jd, "ExtSel");
  f.port_mask = field(jd, "PortMask");
  f.fc_mask = field(jd, "FCMask");
  f.eventid_code = field(jd, "EventidCode");
  f.node_type = field(jd, "NodeType");
  f.rdwr_mask = field(jd, "RdWrMask");
  f.en_all_cores = field(jd, "EnAllCores");
  f.en_all_slices = field(jd, "EnAllSlices");
  f.slice_id = field(jd, "SliceId");
  f.thread_mask = field(jd, "ThreadMask");
  return f;
}

// The descriptions as perf shows them: fixed up, with what perf appends (address support, errata, PEBS).
void describe(const nlohmann::json& jd, Entry& e) {
  if (!e.desc.empty()) e.desc = fix_description(e.desc);
  if (!e.long_desc.empty()) e.long_desc = fix_description(e.long_desc);
  // What perf appends to descriptions.
  std::string extra;
  if (jd.contains("Data_LA"))
    extra += jd.contains("Errata") ? "  Supports address when precise." : "  Supports address when precise";
  if (auto errata = field(jd, "Errata"); !errata.empty()) extra += "  Spec update: " + errata;
  if (auto pebs = field(jd, "PEBS");
      !pebs.empty() && !e.desc.empty() && e.desc.find("(Precise Event)") == std::string::npos)
    extra += pebs == "2" ? " (Must be precise)" : " (Precise event)";
  if (!e.desc.empty()) e.desc += extra;
  if (!e.long_desc.empty()) e.long_desc += extra;
}

Entry make_entry(const nlohmann::json& jd, const StdEvents& std_events) {
  if (!jd.is_object()) throw Error(ErrorKind::machine, "expected an object");
  Entry e;
  e.name = field(jd, "EventName");
  e.pmu = table_unit_pmu(field(jd, "Unit"));
  e.compat = field(jd, "Compat");
  e.counter = field(jd, "Counter");
  e.desc = field(jd, "BriefDescription");
  e.long_desc = field(jd, "PublicDescription");
  e.scale_unit = field(jd, "ScaleUnit");
  e.perpkg = field(jd, "PerPkg");
  e.deprecated = field(jd, "Deprecated");
  e.metric_name = field(jd, "MetricName");
  e.metric_group = field(jd, "MetricGroup");
  e.metric_expr = field(jd, "MetricExpr");
  e.metric_threshold = field(jd, "MetricThreshold");
  e.metric_constraint = field(jd, "MetricConstraint");
  e.default_group = field(jd, "DefaultMetricgroupName");
  e.aggregation = field(jd, "AggregationMode");
  e.no_group = field(jd, "MetricgroupNoGroup");
  describe(jd, e);

  const std::string arch_std = field(jd, "ArchStdEvent");
  if (!e.name.empty() || arch_std.empty()) {
    if (!e.name.empty()) e.event = table_terms(encoding_fields(jd));
  }
  if (!arch_std.empty()) {
    auto it = std_events.find(ascii_lowered(arch_std));
    if (it == std_events.end())
      throw Error(ErrorKind::machine,
                  fmt::format("ArchStdEvent '{}' is not an architecture-standard event", arch_std));
    // The standard event's encoding, and every field the entry leaves empty.
    e.event = it->second.event;
    inherit(e, it->second);
  }
  // Events whose encoding perf fixes whatever the table says (jevents' real_event()).
  static constexpr std::pair<std::string_view, std::string_view> fixed[] = {
      {"inst_retired.any", "event=0xc0,period=2000003"},
      {"inst_retired.any_p", "event=0xc0,period=2000003"},
      {"cpu_clk_unhalted.ref", "event=0x0,umask=0x03,period=2000003"},
      {"cpu_clk_unhalted.thread", "event=0x3c,period=2000003"},
      {"cpu_clk_unhalted.core", "event=0x3c,period=2000003"},
      {"cpu_clk_unhalted.thread_any", "event=0x3c,any=1,period=2000003"},
  };
  std::string lower = ascii_lowered(e.name);
  for (auto [n, terms] : fixed)
    if (n == lower) e.event = terms;
  return e;
}

void parse_scale_unit(const std::string& text, Alias& a) {
  // "6.103515625E-5MiB", "1Joules", "64Bytes"
  const char* begin = text.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return;
  a.scale = v;
  a.scale_text = std::string(begin, static_cast<std::size_t>(end - begin));
  a.unit = std::string(io::trim(std::string_view(end)));
}

using Loaded = detail::LoadedTables;

std::optional<nlohmann::json> read_json(const fs::path& path, Loaded& out) {
  auto fail = [&](std::string message) {
    out.diagnostics.push_back({path.string(), std::nullopt, {}, std::move(message)});
    return std::nullopt;
  };
  if (has_control(path.filename().string())) return fail("the file name has control characters");
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(fmt::format("cannot read: {}", std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  try {
    return nlohmann::json::parse(s.str());
  } catch (const nlohmann::json::parse_error& e) {
    return fail(fmt::format("invalid JSON at byte {}", e.byte));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number out of range (1e400)
    return fail(fmt::format("invalid JSON: {}", e.what()));
  }
}

// A counter.json entry: how many fixed and generic counters a unit's PMU has.
TableCounters counters_of(const nlohmann::json& jd) {
  auto count = [&](const char* key) -> unsigned {
    auto text = field(jd, key);
    if (text.empty()) return 0;
    auto v = jevents_number(text);
    if (!v || *v > 1024)
      throw Error(ErrorKind::machine, fmt::format("{} '{}' is not a counter count", key, text));
    return static_cast<unsigned>(*v);
  };
  // Unit `core` is every core PMU, "" as a core event's TableEvent::pmu.
  const std::string unit = field(jd, "Unit");
  return {unit == "core" ? std::string() : table_unit_pmu(unit), count("CountersNumFixed"),
          count("CountersNumGeneric")};
}

// An event entry as a TableEvent of `file`; an entry whose text cannot be used is an error.
TableEvent table_event(const Entry& e, const std::string& file, const std::string& topic, bool descriptions) {
  if (e.name.find_first_of(",/{}:= \t") != std::string::npos || has_control(e.name))
    throw Error(ErrorKind::machine, "the name cannot be written in an event string");
  for (auto [what, text] : {std::pair{"Unit", &e.pmu},
                            {"ScaleUnit", &e.scale_unit},
                            {"Compat", &e.compat},
                            {"the encoding", &e.event}})
    if (has_control(*text)) throw Error(ErrorKind::machine, fmt::format("{} has control characters", what));
  TableEvent ev;
  ev.alias.name = e.name;
  ev.alias.terms = e.event;
  ev.alias.source = Source::json;
  ev.alias.origin = file;
  ev.pmu = e.pmu;
  ev.topic = topic;
  ev.compat = e.compat;
  ev.counter = e.counter;
  if (!e.scale_unit.empty()) parse_scale_unit(e.scale_unit, ev.alias);
  ev.alias.per_pkg = e.perpkg == "1";
  ev.deprecated = e.deprecated == "1";
  if (descriptions) {
    ev.description = e.desc;
    ev.long_description = e.long_desc;
  }
  return ev;
}

void load_file(const fs::path& path, const StdEvents& std_events, bool descriptions, Loaded& out) {
  auto doc = read_json(path, out);
  if (!doc) return;
  const std::string file = path.filename().string();
  if (file == "metricgroups.json") {
    if (!doc->is_object()) {
      out.diagnostics.push_back(
          {path.string(), std::nullopt, {}, "expected an object of metric-group descriptions"});
      return;
    }
    for (const auto& [group, text] : doc->items())
      if (text.is_string()) out.groups[group] = text.get<std::string>();
    return;
  }
  if (!doc->is_array()) {
    out.diagnostics.push_back({path.string(), std::nullopt, {}, "expected a JSON array of events"});
    return;
  }
  const std::string topic = table_topic(file);
  for (std::size_t i = 0; i < doc->size(); ++i) {
    const auto& jd = (*doc)[i];
    std::string name;
    auto skip = [&](std::string message) {
      out.diagnostics.push_back({path.string(), i, name, std::move(message)});
    };
    try {
      if (jd.is_object()) name = field(jd, "EventName");
      Entry e = make_entry(jd, std_events);
      name = e.name;
      if (!e.metric_name.empty() && !e.metric_expr.empty()) {
        TableMetric m{e.metric_name,  e.metric_expr,
                      e.metric_group, e.metric_threshold,
                      e.scale_unit,   e.metric_constraint,
                      e.desc,         e.default_group,
                      e.aggregation,  e.pmu,
                      e.compat,       path.string(),
                      e.no_group,     e.long_desc};
        out.metrics.push_back(std::move(m));
      }
      if (e.name.empty()) {
        if (jd.contains("CountersNumGeneric") || jd.contains("CountersNumFixed")) {
          out.counters.push_back(counters_of(jd));
        } else if (e.metric_name.empty()) {
          skip("no EventName, MetricName or counter counts: not an event");
        }
        continue;
      }
      out.events.push_back(table_event(e, file, topic, descriptions));
    } catch (const Error& err) {
      skip(err.message());
    }
  }
}

// The JSON files of a folder, sorted.
std::vector<fs::path> json_files(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".json" && e.is_regular_file(ec)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Every `sys` folder under `dir`, as deep as jevents looks.
void sys_folders(const fs::path& dir, int depth, std::vector<fs::path>& out) {
  std::error_code ec;
  std::vector<fs::path> subs;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && !e.is_symlink(ec)) subs.push_back(e.path());
  std::sort(subs.begin(), subs.end());
  for (const auto& s : subs) {
    if (s.filename() == "sys")
      out.push_back(s);
    else if (depth < 4)
      sys_folders(s, depth + 1, out);
  }
}

// The architecture-standard events of `dir` (the JSON files beside mapfile.csv), by lower-case name.
StdEvents std_events_of(const std::vector<fs::path>& files, Loaded& diagnostics) {
  StdEvents out;
  for (const auto& path : files) {
    Loaded scratch;
    auto doc = read_json(path, scratch);
    diagnostics.diagnostics.insert(diagnostics.diagnostics.end(), scratch.diagnostics.begin(),
                                   scratch.diagnostics.end());
    if (!doc || !doc->is_array()) continue;
    for (const auto& jd : *doc) {
      try {
        Entry e = make_entry(jd, out);
        if (!e.name.empty()) out[ascii_lowered(e.name)] = e;
        if (!e.metric_name.empty()) out[ascii_lowered(e.metric_name)] = e;
      } catch (const Error&) {
        // An unusable standard event is reported where a model refers to it.
      }
    }
  }
  return out;
}

using Files = detail::TableFiles;

Files files_of(const std::string& dir, const std::string& model, bool sys) {
  Files f;
  f.std_files = json_files(dir);
  if (sys) {
    std::vector<fs::path> folders;
    sys_folders(dir, 1, folders);
    for (const auto& s : folders) {
      auto more = json_files(s);
      f.files.insert(f.files.end(), more.begin(), more.end());
    }
    return f;
  }
  fs::path folder = fs::path(dir) / model;
  std::error_code ec;
  if (model.empty() || !safe_relative_folder(model) || !fs::is_directory(folder, ec))
    throw Error(ErrorKind::machine, fmt::format("events directory has no folder '{}'", folder.string()));
  f.files = json_files(folder);
  return f;
}

Loaded parse_files(const Files& files, bool descriptions) {
  Loaded out;
  StdEvents std_events = std_events_of(files.std_files, out);
  for (const auto& path : files.files) load_file(path, std_events, descriptions, out);
  return out;
}

}  // namespace

namespace detail {

TableFiles table_files(const std::string& dir, const std::string& model, bool sys) {
  return files_of(dir, model, sys);
}
LoadedTables parse_table_files(const TableFiles& files, bool descriptions) {
  return parse_files(files, descriptions);
}

}  // namespace detail

// Where a metric's MetricExpr is in its JSON file: the object whose MetricName and MetricExpr are
// these, its expression's line, column, and a file column per byte (JSON escapes make the two differ).
std::optional<Origin> table_metric_origin(const std::string& file, std::string_view name,
                                          std::string_view expr) {
  Origin o{file, 0, 0};
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at = text.find("\"MetricName\""); at != std::string::npos;
       at = text.find("\"MetricName\"", at + 1)) {
    // The object holding this MetricName (table entries hold no nested objects).
    std::size_t begin = text.rfind('{', at), end = text.find('}', at);
    if (begin == std::string::npos || end == std::string::npos) break;
    std::string_view object(text.data() + begin, end - begin);
    auto value = [&](std::string_view key) -> std::optional<std::pair<std::size_t, std::string>> {
      auto k = object.find(fmt::format("\"{}\"", key));
      if (k == std::string_view::npos) return std::nullopt;
      auto q = object.find('"', object.find(':', k + key.size() + 2));
      if (q == std::string_view::npos) return std::nullopt;
      std::string decoded;
      std::size_t i = q + 1;
      for (; i < object.size() && object[i] != '"'; ++i) {
        if (object[i] == '\\' && i + 1 < object.size()) ++i;
        decoded += object[i];
      }
      return std::pair{begin + q + 1, decoded};
    };
    auto name_found = value("MetricName");
    auto expr_found = value("MetricExpr");
    if (!name_found || !expr_found || name_found->second != name || expr_found->second != expr) continue;
    std::size_t start = expr_found->first;
    auto line_begin = text.rfind('\n', start);
    line_begin = line_begin == std::string::npos ? 0 : line_begin + 1;
    o.line = static_cast<std::uint32_t>(
        std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(start), '\n') + 1);
    o.column = static_cast<std::uint32_t>(start - line_begin + 1);
    // Each byte of the expression at its file column (an escape is two characters for one byte).
    std::uint32_t column = o.column;
    for (std::size_t i = start; i < text.size() && text[i] != '"'; ++i) {
      o.columns.push_back(column);
      if (text[i] == '\\') ++i, ++column;
      ++column;
    }
    return o;
  }
  return std::nullopt;
}

}  // namespace perfspec::spec
