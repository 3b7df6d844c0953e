// SPDX-License-Identifier: MIT
#pragma once
// The syntax tree of an event list. Every node keeps the byte span of the text it came from, so the
// resolver can point its errors at the user's characters. The parser knows no PMU: whether `foo` is a
// hardware symbol, a cache name or a sysfs alias is decided by the resolver.
#include <cstdint>
#include <string>
#include <vector>

#include "perfspec/error.hpp"

namespace perfspec::ast {

/// One `name[=value]` inside `/.../`.
struct Term {
  enum class Value : std::uint8_t {
    none,    ///< bare `inv`
    number,  ///< `event=0x3c`, `period=1000`
    name,    ///< `event=cpu-cycles`, `call-graph=fp`
    quoted,  ///< `name='a:b'` (quotes stripped in `text`)
    query,   ///< `param=?` (only in alias files)
  };
  std::string name;     ///< term name as written (may contain ':'); for `@cfg` the text after '@'
  bool driver = false;  ///< `@cfg[=value]` driver configuration term
  Value kind = Value::none;
  std::uint64_t number = 0;  ///< when kind == number
  std::string text;          ///< the value's text (number as written, name, or unquoted string)
  Span span;                 ///< whole term
  Span name_span;
  Span value_span;
  /// Back to default-constructed, keeping the strings' storage (the parser reuses terms).
  void clear() {
    name.clear();
    driver = false;
    kind = Value::none;
    number = 0;
    text.clear();
    span = name_span = value_span = Span{};
  }
};

/// The modifier letters after `:` (or directly after a closing `/`).
struct Modifiers {
  std::string letters;
  Span span;  ///< empty span when absent
  bool present() const { return !letters.empty(); }
  void clear() {
    letters.clear();
    span = Span{};
  }
};

enum class EventKind : std::uint8_t {
  named,       ///< NAME[:mods]: hardware/software/cache symbol, dotted cache name or alias
  pmu,         ///< NAME/terms/[mods]: a PMU (or a hardware/cache symbol with terms)
  tracepoint,  ///< SYS:EVENT
  breakpoint,  ///< mem:ADDR[/LEN][:rwx]
  numeric,     ///< TYPE:CONFIG
  raw,         ///< rNNN
};

struct Event {
  EventKind kind = EventKind::named;
  Span span;         ///< the whole event including its own modifiers
  std::string name;  ///< PMU or symbol name; tracepoint system; raw text
  Span name_span;
  std::string tp_event;  ///< tracepoint event name
  Span tp_event_span;
  std::uint64_t number1 = 0;  ///< numeric: type; raw: config; breakpoint: address
  std::uint64_t number2 = 0;  ///< numeric: config; breakpoint: length (when has_length)
  bool has_length = false;
  std::string access;  ///< breakpoint access letters (`rw`, `x`, ...), empty: default
  Span access_span;
  bool has_terms = false;  ///< a `/.../` block was written (possibly empty)
  std::vector<Term> terms;
  Span terms_span;
  Modifiers modifiers;
};

/// A `{...}` group or a lone event (`braces == false`, exactly one event).
struct Item {
  bool braces = false;
  std::string group_name;  ///< `name{...}`
  Span span;
  std::vector<Event> events;
  Modifiers modifiers;  ///< group modifiers
};

struct EventList {
  std::string text;  ///< the parsed input, owned (spans index into it)
  std::vector<Item> items;
};

}  // namespace perfspec::ast
