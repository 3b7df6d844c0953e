// SPDX-License-Identifier: MIT
#pragma once
// {fmt} formatters for perfspec's types. Opt-in: the other public headers do not include fmt, so
// only a program that includes this one needs fmt's headers (find_package(perfspec) already finds
// fmt, which the static library links). Each prints what perfspec's own printers print:
//
//   Span                    `3..7`
//   ErrorKind               `unknown name` (error_kind_name)
//   spec::Source            `json` (source_name)
//   runtime::Count::State   `not counted` (the state column of CSV and JSON); with `v`, the value
//                           column's `<not counted>` / `<not supported>` (`counted` stays)
//   runtime::Note           `read failed on CPU 1: EBADF` (describe)
//   ast::EventList, Item, Event, Term
//                           canonical text (to_string): `{cycles,cpu/event=0x3c,inv/u}`
//   ast::Modifiers          the letters: `ukp`
//
// All but Span take the string format specs (`{:>18}`, `{:<8}`); Count::State takes
// `[[fill]align][width][v]` (`{:>18v}`).
//
// Example:
// ```
// #include <perfspec/fmt.hpp>
// for (const auto& c : counters.read()) {
//   fmt::print("{:>15v} {}\n", c.state, c.raw);
//   for (const auto& note : c.notes) fmt::print("  note: {}\n", note);
// }
// ```
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "perfspec/ast.hpp"
#include "perfspec/error.hpp"
#include "perfspec/parse.hpp"
#include "perfspec/print.hpp"
#include "perfspec/runtime.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::detail {

/// What a value prints as: `text_of<T>::text(value)`, a string or a string_view.
template <typename T> struct text_of;

template <> struct text_of<ErrorKind> {
  static std::string_view text(ErrorKind kind) { return error_kind_name(kind); }
};
template <> struct text_of<spec::Source> {
  static std::string_view text(spec::Source source) { return spec::source_name(source); }
};
template <> struct text_of<runtime::Note> {
  static std::string text(const runtime::Note& note) { return describe(note); }
};
template <> struct text_of<ast::EventList> {
  static std::string text(const ast::EventList& list) { return to_string(list); }
};
template <> struct text_of<ast::Item> {
  // The canonical printer prints lists: this item as a list of one.
  static std::string text(const ast::Item& item) {
    ast::EventList list;
    list.items.push_back(item);
    return to_string(list);
  }
};
template <> struct text_of<ast::Event> {
  static std::string text(const ast::Event& event) { return to_string(event); }
};
template <> struct text_of<ast::Term> {
  static std::string text(const ast::Term& term) { return to_string(term); }
};
template <> struct text_of<ast::Modifiers> {
  static std::string_view text(const ast::Modifiers& modifiers) { return modifiers.letters; }
};

/// A formatter that prints `text_of<T>::text(value)` with the string format specs.
template <typename T> struct text_formatter : fmt::formatter<fmt::string_view> {
  template <typename FormatContext> auto format(const T& value, FormatContext& ctx) const
      -> decltype(ctx.out()) {
    const auto& text = text_of<T>::text(value);
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text.data(), text.size()), ctx);
  }
};

}  // namespace perfspec::detail

template <> struct fmt::formatter<perfspec::Span> {
  constexpr auto parse(format_parse_context& ctx) -> decltype(ctx.begin()) {
    auto it = ctx.begin();
    if (it != ctx.end() && *it != '}') throw format_error("perfspec::Span takes no format specs");
    return it;
  }
  template <typename FormatContext> auto format(const perfspec::Span& span, FormatContext& ctx) const
      -> decltype(ctx.out()) {
    return fmt::format_to(ctx.out(), "{}..{}", span.begin, span.end);
  }
};

/// `[[fill]align][width][v]`: without `v` the state's name as the CSV and JSON state field has it
/// (`counted`, `not counted`, `not supported`); with `v` what the value column shows when there is
/// no value (`<not counted>`, `<not supported>`; `counted` unchanged). Aligned left by default.
template <> struct fmt::formatter<perfspec::runtime::Count::State> {
  char fill = ' ';
  char align = '<';
  std::size_t width = 0;
  bool placeholder = false;

  constexpr auto parse(format_parse_context& ctx) -> decltype(ctx.begin()) {
    auto it = ctx.begin(), end = ctx.end();
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^'; };
    if (it != end && it + 1 != end && *it != '}' && is_align(it[1])) {
      fill = it[0];
      align = it[1];
      it += 2;
    } else if (it != end && is_align(*it)) {
      align = *it++;
    }
    while (it != end && *it >= '0' && *it <= '9') width = width * 10 + static_cast<std::size_t>(*it++ - '0');
    if (it != end && *it == 'v') placeholder = true, ++it;
    if (it != end && *it != '}')
      throw format_error("perfspec::runtime::Count::State takes [[fill]align][width][v]");
    return it;
  }

  template <typename FormatContext>
  auto format(perfspec::runtime::Count::State state, FormatContext& ctx) const -> decltype(ctx.out()) {
    using State = perfspec::runtime::Count::State;
    std::string_view text;
    switch (state) {
      case State::counted: text = "counted"; break;
      case State::not_counted: text = placeholder ? "<not counted>" : "not counted"; break;
      case State::not_supported: text = placeholder ? "<not supported>" : "not supported"; break;
    }
    const std::size_t pad = width > text.size() ? width - text.size() : 0;
    const std::size_t left = align == '>' ? pad : align == '^' ? pad / 2 : 0;
    auto out = ctx.out();
    for (std::size_t i = 0; i < left; ++i) *out++ = fill;
    for (char c : text) *out++ = c;
    for (std::size_t i = left; i < pad; ++i) *out++ = fill;
    return out;
  }
};

template <> struct fmt::formatter<perfspec::ErrorKind>
    : perfspec::detail::text_formatter<perfspec::ErrorKind> {};
template <> struct fmt::formatter<perfspec::spec::Source>
    : perfspec::detail::text_formatter<perfspec::spec::Source> {};
template <> struct fmt::formatter<perfspec::runtime::Note>
    : perfspec::detail::text_formatter<perfspec::runtime::Note> {};
template <> struct fmt::formatter<perfspec::ast::EventList>
    : perfspec::detail::text_formatter<perfspec::ast::EventList> {};
template <> struct fmt::formatter<perfspec::ast::Item>
    : perfspec::detail::text_formatter<perfspec::ast::Item> {};
template <> struct fmt::formatter<perfspec::ast::Event>
    : perfspec::detail::text_formatter<perfspec::ast::Event> {};
template <> struct fmt::formatter<perfspec::ast::Term>
    : perfspec::detail::text_formatter<perfspec::ast::Term> {};
template <> struct fmt::formatter<perfspec::ast::Modifiers>
    : perfspec::detail::text_formatter<perfspec::ast::Modifiers> {};
