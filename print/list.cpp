// SPDX-License-Identifier: MIT
#include <nlohmann/json.hpp>

#include "perfspec/fmt.hpp"
#include "perfspec/print.hpp"
#include "spec/printable.hpp"

namespace perfspec {

namespace {

// Greedy word wrap of `text` into lines of at most `width` columns, each prefixed by `indent`.
std::string wrap(std::string_view text, std::size_t indent, std::size_t width) {
  std::string out, line;
  std::size_t room = width > indent + 20 ? width - indent : 20;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view word = text.substr(i, j - i);
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    if (!word.empty()) line += (line.empty() ? "" : " ") + std::string(word);
    i = j;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

// A description's line breaks and tabs as spaces (the listing wraps it itself).
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return text;
}

}  // namespace

std::string list_text(const std::vector<spec::ListedPmu>& pmus, const std::vector<spec::ListedEvent>& events,
                      std::size_t width, bool descriptions) {
  std::string out;
  if (!pmus.empty()) {
    out += "PMUs:\n";
    for (const auto& p : pmus) {
      out += fmt::format("  {:<28} type {:<5}{}{}\n", spec::printable(p.name), p.type, p.core ? " core" : "",
                         p.cpumask.empty() ? "" : fmt::format(" cpumask {}", spec::printable(p.cpumask)));
      if (!p.formats.empty())
        out += wrap(spec::printable(fmt::format("{}", fmt::join(p.formats, " "))), 6, width);
    }
    if (!events.empty()) out += "\n";
  }
  std::string heading;
  for (const auto& e : events) {
    std::string h = e.pmu == "tracepoint" ? "tracepoints"
                                          : fmt::format("{} events on {}", e.source, spec::printable(e.pmu));
    if (h != heading) {
      out += fmt::format("{}{}:\n", heading.empty() ? "" : "\n", h);
      heading = h;
    }
    std::string unit = e.unit.empty() ? "" : fmt::format("  [{} {}]", e.scale, spec::printable(e.unit));
    out += fmt::format("  {:<40} {}{}\n", spec::printable(e.name), spec::printable(e.encoding), unit);
    if (descriptions && !e.description.empty() && e.pmu != "tracepoint")
      out += wrap(spec::printable(one_line(e.description)), 6, width);
  }
  return out;
}

std::string list_json(const std::vector<spec::ListedPmu>& pmus,
                      const std::vector<spec::ListedEvent>& events) {
  nlohmann::ordered_json j;
  auto ps = nlohmann::ordered_json::array();
  for (const auto& p : pmus)
    ps.push_back({{"name", p.name},
                  {"type", p.type},
                  {"core", p.core},
                  {"cpumask", p.cpumask},
                  {"cpus", p.cpus},
                  {"formats", p.formats}});
  auto es = nlohmann::ordered_json::array();
  for (const auto& e : events)
    es.push_back({{"name", e.name},
                  {"pmu", e.pmu},
                  {"encoding", e.encoding},
                  {"description", e.description},
                  {"topic", e.topic},
                  {"unit", e.unit},
                  {"scale", e.scale},
                  {"source", e.pmu == "tracepoint" ? std::string("tracepoint")
                                                   : std::string(spec::source_name(e.source))},
                  {"deprecated", e.deprecated}});
  j["schema"] = list_schema;
  j["pmus"] = std::move(ps);
  j["events"] = std::move(es);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

namespace {

// A value as perf's list -j writes it: newline, carriage return, backslash and quote escaped as perf
// escapes them; the other control characters, which perf writes raw (a document no JSON reader takes),
// as \u00XX.
void json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  out += '"';
}

}  // namespace

std::string perf_list_json(const std::vector<spec::PerfListEntry>& entries) {
  std::string out = "[\n";
  bool first = true;
  for (const auto& e : entries) {
    out += first ? "{\n" : ",\n{\n";
    first = false;
    bool sep = false;
    auto key = [&](std::string_view name, const std::optional<std::string>& value, bool when = true) {
      if (!value || !when) return;
      out += sep ? ",\n\t\"" : "\t\"";
      out += name;
      out += "\": ";
      json_string(out, *value);
      sep = true;
    };
    if (e.metric) {
      key("MetricGroup", e.group);
      key("MetricName", e.name);
      key("MetricExpr", e.expr);
      key("MetricThreshold", e.threshold);
      key("ScaleUnit", e.unit);
    } else {
      key("Unit", e.pmu_name);
      key("Topic", e.topic);
      key("EventName", e.name);
      key("EventAlias", e.alias, e.alias && !e.alias->empty());
      key("ScaleUnit", e.scale_unit, e.scale_unit && !e.scale_unit->empty());
      key("EventType", e.type);
      key("Deprecated", std::string("1"), e.deprecated);
    }
    key("BriefDescription", e.desc);
    key("PublicDescription", e.long_desc);
    if (!e.metric) key("Encoding", e.encoding);
    out += sep ? "\n}" : "}";
  }
  out += first ? "]\n" : "\n]\n";
  return out;
}

}  // namespace perfspec
