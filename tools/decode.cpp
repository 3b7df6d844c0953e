// `perfspec decode`: attrs in (options, resolve's JSON, or perf stat -vv text), event strings out.
#include <cstdio>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/perfspec.hpp"
#include "tools/decode.hpp"

namespace perfspec::tools {

namespace {

std::uint64_t parse_u64(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    unsigned long long v = std::stoull(text, &used, 0);
    if (used != text.size() || text.starts_with('-')) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw Error(fmt::format("{}: '{}' is not a number", what, text));
  }
}

std::vector<Attr> read_input(std::istream& in) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw Error("no input: give attr fields as options, or JSON or perf stat -vv text on stdin");
  std::vector<Attr> out;
  if (text[first] == '{' || text[first] == '[') {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(fmt::format("stdin: invalid JSON at byte {}", e.byte));
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("stdin: invalid JSON: {}", e.what()));
    }
    const nlohmann::json* events = doc.is_object() && doc.contains("events") ? &doc["events"] : &doc;
    if (!events->is_array()) throw Error("stdin: expected {\"events\":[...]} as 'perfspec resolve --format json' prints");
    for (const auto& e : *events) {
      const nlohmann::json& attr = e.contains("attr") ? e["attr"] : e;
      if (!attr.is_object()) throw Error("stdin: an event without an 'attr' object");
      Attr a;
      for (const auto& f : attr_fields()) {
        auto it = attr.find(std::string(f.name));
        if (it == attr.end()) continue;
        if (!it->is_number_integer()) throw Error(fmt::format("stdin: attr field '{}' is not an integer", f.name));
        f.set(a, it->is_number_unsigned() ? it->get<std::uint64_t>() : static_cast<std::uint64_t>(it->get<std::int64_t>()));
      }
      out.push_back(a);
    }
  } else {
    out = parse_perf_attr_text(text);
    if (out.empty()) throw Error("stdin: no 'perf_event_attr:' block found (perf stat -vv output expected)");
  }
  return out;
}

}  // namespace

int run_decode(const DecodeOptions& o) {
  spec::Machine machine(o.sysfs, o.machine);
  std::vector<Attr> attrs;
  if (o.fields.empty()) {
    attrs = read_input(std::cin);
  } else {
    Attr a;
    for (const auto& [name, value] : o.fields) {
      const AttrField* f = find_attr_field(name);
      if (!f) throw Error(fmt::format("unknown attr field '{}'", name));
      f->set(a, parse_u64(value, name));
    }
    attrs.push_back(a);
  }
  auto all = nlohmann::ordered_json::array();
  for (const auto& a : attrs) {
    Decoded d = decode(a, machine);
    if (o.format == "json") {
      all.push_back({{"event", d.event}, {"how", d.how}, {"leftovers", d.leftovers}, {"notes", d.notes}});
      continue;
    }
    std::printf("%s\n", d.event.c_str());
    for (const auto& l : d.leftovers) std::fprintf(stderr, "note: %s\n", l.c_str());
    for (const auto& n : d.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  }
  if (o.format == "json") std::printf("%s\n", all.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  return 0;
}

}  // namespace perfspec::tools
