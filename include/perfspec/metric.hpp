// SPDX-License-Identifier: MIT
#pragma once
// perf's metric language (the MetricExpr of its tables, REFERENCE.md section 10): the syntax tree and
// the parser. Every node keeps the byte span of the text it came from, so that resolution and
// evaluation point their errors at the user's characters, as event strings do.
//
// Example:
// ```
// auto e = perfspec::metric::parse("instructions / cycles if #smt_on else 0");
// // e.kind == Expr::Kind::select; e.args[0] is `instructions / cycles`, e.args[1] `#smt_on`, e.args[2] `0`
// ```
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/error.hpp"

namespace perfspec::metric {

/// One node of a metric expression.
struct Expr {
  enum class Kind : std::uint8_t {
    number,   ///< `1e3`, `100`, `.5`; `number` holds it
    nan,      ///< `NaN`
    literal,  ///< `#smt_on`: `name` holds it without the '#', as written (perf compares ignoring case)
    id,       ///< an event, another metric or a tool event: `name` and `text`
    negate,   ///< `-x`: args[0]
    binary,   ///< `a OP b`: args[0] OP args[1]
    select,   ///< `a if c else b`: args[0] (taken when args[1] is non-zero), args[1], args[2]
    call,     ///< `fn(...)`: its arguments in args (see Fn)
  };
  /// Binary operators, loosest first as perf binds them: `|`, `^`, `&`, `<` `>`, `+` `-`, `*` `/` `%`.
  enum class Op : std::uint8_t { logical_or, logical_xor, logical_and, less, greater, add, sub, mul, div, mod };
  /// Functions. d_ratio, min, max take two expressions; source_count, has_event and strcmp_cpuid_str
  /// take one identifier (args[0] of Kind::id; strcmp_cpuid_str's is the CPU id to compare, e.g.
  /// `0x410fd493`).
  enum class Fn : std::uint8_t { d_ratio, min, max, source_count, has_event, strcmp_cpuid_str };

  Kind kind = Kind::number;
  Op op = Op::add;  ///< Kind::binary
  Fn fn = Fn::min;  ///< Kind::call
  double number = 0;
  /// Kind::id: the identifier as an event string: escapes dropped (`\,` is `,`), `@` as `/`; a `?`
  /// (the runtime parameter) is kept for resolution to replace. Kind::literal: the name after '#'.
  std::string name;
  std::string text;  ///< Kind::id, Kind::literal: the characters as written
  Span span;         ///< the whole node
  std::vector<Expr> args;
};

/// Parse a metric expression. Throws perfspec::Error (ErrorKind::syntax) with the span of the first
/// offending character. Blanks (spaces, tabs, newlines) separate tokens and are otherwise ignored.
///
/// Example: `parse("d_ratio(cpu@INST_RETIRED.ANY@, cycles)").args[0].name == "cpu/INST_RETIRED.ANY/"`.
Expr parse(std::string_view text);

/// The canonical text of an expression: single spaces around binary operators and `if`/`else`,
/// parentheses only where perf's precedence needs them, identifiers as written. Parsing it gives the
/// same tree (spans differ).
///
/// Example: `to_string(parse("(a+b)*c if(#smt_on)else 0"))` is `(a + b) * c if #smt_on else 0`.
std::string to_string(const Expr& expr);

/// Render an error about a metric perf-style, the caret under the metric's text: the metric's name
/// (and, with an origin, its file position) on the first line. Example:
/// ```
/// metric 'ipc': 'instructions / cyclez'
///                               \___ unknown event 'cyclez'
/// ```
std::string render(const Error& error, std::string_view metric_name, std::string_view expr,
                   const Origin& origin = {});

}  // namespace perfspec::metric
