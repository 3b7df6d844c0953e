// SPDX-License-Identifier: MIT
#include <array>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "grammar/grammar.hpp"
#include "perfspec/parse.hpp"
#include "spec/reuse.hpp"

namespace perfspec {
namespace grammar {
namespace {

// Error messages for rules behind must<> (the table style of PEGTL's json_errors example).
template <typename Rule> inline constexpr const char* error_message = nullptr;
template <> inline constexpr const char* error_message<item> = "expected an event";
template <> inline constexpr const char* error_message<group_member> = "expected an event";
template <> inline constexpr const char* error_message<nested_group> = "nested groups are not supported";
template <> inline constexpr const char* error_message<list_end> =
    "expected ',' or the end of the event list";
template <> inline constexpr const char* error_message<close_brace> =
    "expected ',' or '}' to close the group";
template <> inline constexpr const char* error_message<group_mods> = "expected modifiers after ':'";
template <> inline constexpr const char* error_message<event_mods> = "expected modifiers after ':'";
template <> inline constexpr const char* error_message<close_slash> = "expected ',' or '/' after a term";
template <> inline constexpr const char* error_message<term> = "expected a term after ','";
template <> inline constexpr const char* error_message<term_value> = "expected a value after '='";
template <> inline constexpr const char* error_message<close_quote> =
    "unterminated quoted value: missing the closing '";
template <> inline constexpr const char* error_message<driver_name> =
    "expected a driver config name after '@'";
template <> inline constexpr const char* error_message<bp_addr> =
    "expected a breakpoint address (decimal or 0x hex)";

// Nodes are built where they end up (an item in list.items, an event in its item, a term in its
// event), so nothing is moved. Each begin_* action takes the next node of its vector, reusing one left
// by an earlier parse into the same list (its strings and vectors keep their storage) or appending
// one, and points at it; `*_used` count the nodes taken. A rule that starts a node and then fails
// leaves it unfinished: the next begin_* of that kind reuses it, and the end of a term list drops an
// unfinished term. Whatever an earlier parse left beyond the counts is erased as each vector ends.
struct State {
  const char* base;
  ast::EventList& list;
  ast::Item* item = nullptr;
  ast::Event* event = nullptr;
  ast::Term* term = nullptr;
  bool item_open = false, event_open = false, term_open = false;
  std::size_t items_used = 0, events_used = 0, terms_used = 0;
  const char* name_from = nullptr;  // the last name scanned (grammar::name): where it began and ended
  const char* name_to = nullptr;
};

// A node back to its freshly constructed state, keeping the storage of its strings. An event's terms
// and an item's events are not emptied: they are reused one by one through terms_used and
// events_used, and trimmed when the node ends. Field by field (a reset by assignment cost a third of
// a named event's resolve); the sizes below fail the build when a field is added, until it is reset
// here too.
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(ast::Term) == 104 && sizeof(ast::Modifiers) == 40, "reset the new field in clear()");
static_assert(sizeof(ast::Event) == 240 && sizeof(ast::Item) == 112, "reset the new field in reset()");
#endif
void reset(ast::Term& t) { t.clear(); }
void reset(ast::Event& e) {
  e.kind = ast::EventKind::named;
  e.span = e.name_span = e.tp_event_span = e.access_span = e.terms_span = Span{};
  e.name.clear();
  e.tp_event.clear();
  e.number1 = e.number2 = 0;
  e.has_length = false;
  e.access.clear();
  e.has_terms = false;
  e.modifiers.clear();
}
void reset(ast::Item& i) {
  i.braces = false;
  i.group_name.clear();
  i.span = Span{};
  i.modifiers.clear();
}

// The next node of `nodes` (reused or appended).
template <typename Node> Node& take(std::vector<Node>& nodes, std::size_t& used) {
  return spec::next_node(nodes, used, [](Node& n) { reset(n); });
}

using spec::trim_nodes;

Error nul_error(std::size_t at) {
  auto b = static_cast<std::uint32_t>(at);
  return Error(ErrorKind::syntax, "NUL character in event list", Span{b, b + 1});
}

// Offset of an action's match start.
template <typename Input> std::uint32_t offset(const Input& in, const State& st) {
  return static_cast<std::uint32_t>(in.begin() - st.base);
}

template <typename Rule> struct event_control : normal<Rule> {
  template <typename Input, typename... States>
  [[noreturn]] static void raise(const Input& in, States&&... st) {
    static_assert(error_message<Rule> != nullptr, "every rule behind must<> needs an error message");
    const State& state = (st, ...);
    auto at = static_cast<std::uint32_t>(in.current() - state.base);
    throw Error(ErrorKind::syntax, error_message<Rule>, Span{at, at + 1});
  }
};

template <typename Input> Span span_of(const Input& in, const State& st) {
  return Span{static_cast<std::uint32_t>(in.begin() - st.base),
              static_cast<std::uint32_t>(in.end() - st.base)};
}

// Numbers: decimal or 0x hex, at most 64 bits (REFERENCE.md section 1).
std::uint64_t to_number(std::string_view text, Span span) {
  std::uint64_t v = 0;
  bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  std::string_view digits = hex ? text.substr(2) : text;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, hex ? 16 : 10);
  if (ec == std::errc::result_out_of_range)
    throw Error(ErrorKind::syntax, fmt::format("number '{}' is wider than 64 bits", text), span);
  if (ec != std::errc{} || p != digits.data() + digits.size())
    throw Error(ErrorKind::syntax, fmt::format("invalid number '{}'", text), span);
  return v;
}

bool looks_numeric(std::string_view t) {
  if (t.empty()) return false;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
    return t.substr(2).find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  return t.find_first_not_of("0123456789") == std::string_view::npos;
}

// Modifier letters (REFERENCE.md section 1): from `ukhIGHpPSDWebR`, at most 16, `p` up to three times,
// every other letter at most once.
void check_modifiers(std::string_view letters, Span span) {
  static constexpr std::string_view allowed = modifier_alphabet::letters;
  // Position of each letter in `allowed` plus one, 0 for the rest.
  static constexpr auto position = [] {
    std::array<std::uint8_t, 256> t{};
    for (std::size_t k = 0; k < allowed.size(); ++k)
      t[static_cast<unsigned char>(allowed[k])] = static_cast<std::uint8_t>(k + 1);
    return t;
  }();
  std::uint32_t seen = 0;  // bit k: allowed[k] was written
  int ps = 0;
  for (std::size_t i = 0; i < letters.size(); ++i) {
    char c = letters[i];
    Span at{span.begin + static_cast<std::uint32_t>(i), span.begin + static_cast<std::uint32_t>(i) + 1};
    unsigned k = position[static_cast<unsigned char>(c)];
    if (k-- == 0)
      throw Error(ErrorKind::syntax, fmt::format("invalid modifier '{}'", c), at,
                  fmt::format("modifiers are letters from '{}'", allowed));
    if (c == 'p') {
      if (++ps > 3)
        throw Error(ErrorKind::syntax, "too many 'p' modifiers: precise level is at most 3 (ppp)", at);
      continue;
    }
    if (seen & (1u << k)) throw Error(ErrorKind::syntax, fmt::format("Duplicate modifier '{}'", c), at);
    seen |= 1u << k;
  }
  if (letters.size() > 16) throw Error(ErrorKind::syntax, "too many modifiers (at most 16)", span);
}

// A term list ended: a term begun but not finished (`cpu//` tries one) is not part of it.
void drop_open_term(State& st) {
  if (st.term_open) {
    --st.terms_used;
    st.term_open = false;
  }
}

template <typename Rule> struct event_action : nothing<Rule> {};

template <> struct event_action<begin_item> {
  template <typename Input> static void apply(const Input& in, State& st) {
    if (!st.item_open)
      st.item = &take(st.list.items, st.items_used);
    else
      reset(*st.item);
    st.events_used = 0;
    st.item_open = true;
    st.item->span.begin = offset(in, st);
  }
};
template <> struct event_action<begin_event> {
  template <typename Input> static void apply(const Input& in, State& st) {
    if (!st.event_open)
      st.event = &take(st.item->events, st.events_used);
    else
      reset(*st.event);
    st.terms_used = 0;
    st.event_open = true;
    st.event->span.begin = offset(in, st);
  }
};
template <> struct event_action<begin_term> {
  template <typename Input> static void apply(const Input& in, State& st) {
    if (!st.term_open)
      st.term = &take(st.event->terms, st.terms_used);
    else
      reset(*st.term);
    st.term_open = true;
    st.term->span.begin = offset(in, st);
  }
};
template <> struct event_action<begin_terms> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->has_terms = true;
    st.terms_used = 0;
    st.term_open = false;
    if (st.event->terms.capacity() < 4) st.event->terms.reserve(4);  // one allocation for the usual few
    st.event->terms_span.begin = offset(in, st) - 1;
  }
};
template <> struct event_action<close_slash> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->terms_span.end = static_cast<std::uint32_t>(in.end() - st.base);
    drop_open_term(st);
    trim_nodes(st.event->terms, st.terms_used);
  }
};
template <> struct event_action<event_name> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->name.assign(in.begin(), in.size());
    st.event->name_span = span_of(in, st);
  }
};
template <> struct event_action<tp_system> : event_action<event_name> {};
template <> struct event_action<tp_event> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->tp_event.assign(in.begin(), in.size());
    st.event->tp_event_span = span_of(in, st);
  }
};
template <> struct event_action<raw_token> {
  template <typename Input> static void apply(const Input& in, State& st) {
    auto span = span_of(in, st);
    st.event->name.assign(in.begin(), in.size());
    st.event->name_span = span;
    std::string_view hex = in.string_view().substr(1);
    if (hex.size() > 16)
      throw Error(ErrorKind::syntax, fmt::format("raw event '{}' is wider than 64 bits", in.string_view()),
                  span);
    std::uint64_t v = 0;  // raw_token matched 1 to 16 hex digits: this cannot fail or overflow
    std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
    st.event->number1 = v;
  }
};
template <> struct event_action<bp_addr> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->number1 = to_number(in.string_view(), span_of(in, st));
    st.event->name = "mem";
  }
};
template <> struct event_action<bp_len> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->number2 = to_number(in.string_view(), span_of(in, st));
    st.event->has_length = true;
  }
};
template <> struct event_action<bp_access> {
  template <typename Input> static void apply(const Input& in, State& st) {
    auto letters = in.string_view();
    for (std::size_t i = 0; i < letters.size(); ++i)
      if (letters.find(letters[i], i + 1) != std::string_view::npos)
        throw Error(ErrorKind::syntax, fmt::format("duplicate breakpoint access '{}'", letters[i]),
                    span_of(in, st));
    st.event->access.assign(in.begin(), in.size());
    st.event->access_span = span_of(in, st);
  }
};
template <> struct event_action<numeric_type> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->number1 = to_number(in.string_view(), span_of(in, st));
    st.event->name.assign(in.begin(), in.size());
    st.event->name_span = span_of(in, st);
    if (st.event->number1 > 0xffffffffu)
      throw Error(ErrorKind::syntax, "event type does not fit in 32 bits", span_of(in, st));
  }
};
template <> struct event_action<numeric_config> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->number2 = to_number(in.string_view(), span_of(in, st));
  }
};

template <> struct event_action<term_name> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.term->name.assign(in.begin(), in.size());
    st.term->name_span = span_of(in, st);
  }
};
template <> struct event_action<driver_name> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.term->driver = true;
    st.term->name.assign(in.begin(), in.size());
    st.term->name_span = span_of(in, st);
  }
};
template <> struct event_action<quoted_body> {
  template <typename Input> static void apply(const Input& in, State& st) {
    if (auto nul = in.string_view().find('\0'); nul != std::string_view::npos)
      throw nul_error(offset(in, st) + nul);
    st.term->kind = ast::Term::Value::quoted;
    st.term->text.assign(in.begin(), in.size());
    st.term->value_span = span_of(in, st);
  }
};
template <> struct event_action<query_value> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.term->kind = ast::Term::Value::query;
    st.term->text = "?";
    st.term->value_span = span_of(in, st);
  }
};
template <> struct event_action<word_value> {
  template <typename Input> static void apply(const Input& in, State& st) {
    auto span = span_of(in, st);
    st.term->text.assign(in.begin(), in.size());
    st.term->value_span = span;
    if (looks_numeric(in.string_view())) {
      st.term->kind = ast::Term::Value::number;
      st.term->number = to_number(in.string_view(), span);
    } else {
      st.term->kind = ast::Term::Value::name;
    }
  }
};
template <> struct event_action<term> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.term->span.end = static_cast<std::uint32_t>(in.end() - st.base);
    st.term_open = false;
  }
};

template <> struct event_action<event_mods> {
  template <typename Input> static void apply(const Input& in, State& st) {
    auto span = span_of(in, st);
    check_modifiers(in.string_view(), span);
    st.event->modifiers.letters.assign(in.begin(), in.size());
    st.event->modifiers.span = span;
  }
};
template <> struct event_action<group_mods> {
  template <typename Input> static void apply(const Input& in, State& st) {
    auto span = span_of(in, st);
    check_modifiers(in.string_view(), span);
    st.item->modifiers.letters.assign(in.begin(), in.size());
    st.item->modifiers.span = span;
  }
};

template <ast::EventKind Kind> struct finish_event {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->kind = Kind;
    st.event->span.end = static_cast<std::uint32_t>(in.end() - st.base);
    trim_nodes(st.event->terms, st.terms_used);  // none when the event had no `/.../`
    st.event_open = false;
  }
};
template <> struct event_action<breakpoint> : finish_event<ast::EventKind::breakpoint> {};
template <> struct event_action<numeric> : finish_event<ast::EventKind::numeric> {};
template <> struct event_action<raw> : finish_event<ast::EventKind::raw> {};
template <> struct event_action<pmu_event> : finish_event<ast::EventKind::pmu> {};
template <> struct event_action<tracepoint> : finish_event<ast::EventKind::tracepoint> {};
template <> struct event_action<named> : finish_event<ast::EventKind::named> {};
template <> struct event_action<pfm_text> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.event->name.assign(in.begin(), in.size());
    st.event->name_span = span_of(in, st);
  }
};
template <> struct event_action<pfm_event> : finish_event<ast::EventKind::named> {};

template <> struct event_action<group_name> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.item->group_name.assign(in.begin(), in.size());
  }
};
template <> struct event_action<group> {
  template <typename Input> static void apply(const Input& in, State& st) {
    st.item->braces = true;
    st.item->span.end = static_cast<std::uint32_t>(in.end() - st.base);
    trim_nodes(st.item->events, st.events_used);
    st.item_open = false;
  }
};
template <> struct event_action<lone> {
  template <typename Input> static void apply(const Input& in, State& st) {
    trim_nodes(st.item->events, st.events_used);
    st.item->braces = false;
    st.item->span = st.item->events.front().span;
    st.item->group_name.clear();
    (void)in;
    st.item_open = false;
  }
};

}  // namespace
}  // namespace grammar

void parse(std::string_view text, ast::EventList& list) {
  if (text.size() > 0xfffffff0u) throw Error(ErrorKind::syntax, "event list is too long");
  list.text.assign(text);
  tao::pegtl::memory_input<tao::pegtl::tracking_mode::lazy> in(list.text.data(), list.text.size(), "event");
  grammar::State state{list.text.data(), list};
  try {
    tao::pegtl::parse<grammar::event_list, grammar::event_action, grammar::event_control>(in, state);
  } catch (const Error& e) {
    // No rule but a quoted value takes a NUL (and its action refuses one), so a parse cannot get past
    // the first NUL: when it fails there, name the NUL rather than what the grammar expected. Looked
    // for only here, off the path of a string that parses.
    auto nul = text.find('\0');
    if (nul != std::string_view::npos && (!e.positioned() || nul <= e.span().begin))
      throw grammar::nul_error(nul);
    throw;
  }
  spec::trim_nodes(list.items, state.items_used);
}

ast::EventList parse(std::string_view text) {
  ast::EventList list;
  parse(text, list);
  return list;
}

namespace grammar {
std::vector<ast::Term> parse_terms(std::string_view text) {
  ast::EventList holder;
  holder.text = std::string(text);
  if (text.find('\0') != std::string_view::npos) throw Error(ErrorKind::syntax, "NUL character in term list");
  tao::pegtl::memory_input<tao::pegtl::tracking_mode::lazy> in(holder.text.data(), holder.text.size(),
                                                               "terms");
  ast::Event event;  // holds the terms
  State state{holder.text.data(), holder};
  state.event = &event;
  tao::pegtl::parse<term_list_only, event_action, event_control>(in, state);
  drop_open_term(state);
  trim_nodes(event.terms, state.terms_used);
  return std::move(event.terms);
}
}  // namespace grammar

}  // namespace perfspec
