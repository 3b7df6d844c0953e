// SPDX-License-Identifier: MIT
// Canonical printing of syntax trees (no PEGTL here).
#include <fmt/format.h>

#include "perfspec/parse.hpp"

namespace perfspec {

std::string to_string(const ast::Term& t) {
  std::string out = t.driver ? "@" + t.name : t.name;
  switch (t.kind) {
    case ast::Term::Value::none: break;
    case ast::Term::Value::number: out += fmt::format("={:#x}", t.number); break;
    case ast::Term::Value::name: out += "=" + t.text; break;
    case ast::Term::Value::quoted: out += "='" + t.text + "'"; break;
    case ast::Term::Value::query: out += "=?"; break;
  }
  return out;
}

namespace {

std::string terms_text(const ast::Event& e) {
  if (!e.has_terms) return {};
  std::string out = "/";
  for (std::size_t i = 0; i < e.terms.size(); ++i) out += (i ? "," : "") + to_string(e.terms[i]);
  return out + "/";
}

}  // namespace

std::string to_string(const ast::Event& e) {
  std::string out;
  switch (e.kind) {
    case ast::EventKind::named: out = e.name; break;
    case ast::EventKind::pmu: out = e.name; break;
    case ast::EventKind::tracepoint: out = e.name + ":" + e.tp_event; break;
    case ast::EventKind::breakpoint:
      out = fmt::format("mem:{:#x}", e.number1);
      if (e.has_length) out += fmt::format("/{}", e.number2);
      if (!e.access.empty()) out += ":" + e.access;
      break;
    case ast::EventKind::numeric: out = fmt::format("{}:{:#x}", e.number1, e.number2); break;
    case ast::EventKind::raw: out = fmt::format("r{:x}", e.number1); break;
  }
  out += terms_text(e);
  if (e.modifiers.present()) out += (e.has_terms ? "" : ":") + e.modifiers.letters;
  return out;
}

std::string to_string(const ast::EventList& list) {
  std::string out;
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const auto& item = list.items[i];
    if (i) out += ',';
    if (!item.braces) {
      out += to_string(item.events.front());
      continue;
    }
    out += item.group_name + "{";
    for (std::size_t k = 0; k < item.events.size(); ++k) out += (k ? "," : "") + to_string(item.events[k]);
    out += "}";
    if (item.modifiers.present()) out += ":" + item.modifiers.letters;
  }
  return out;
}

}  // namespace perfspec
