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
  enum class Op : std::uint8_t {
    logical_or,
    logical_xor,
    logical_and,
    less,
    greater,
    add,
    sub,
    mul,
    div,
    mod
  };
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
  /// Kind::id, Kind::literal: the characters as written (a literal's with its '#'). A tree built by
  /// hand may leave it empty: to_string then writes `name` back in the language's form.
  std::string text;
  /// The whole node: a parenthesized node's span takes in its parentheses, and none takes in the
  /// blanks around it.
  Span span;
  std::vector<Expr> args;
};

/// Parse a metric expression. Throws perfspec::Error (ErrorKind::syntax) with the span of the first
/// offending character. Blanks (spaces, tabs, carriage returns, newlines) separate tokens and are
/// otherwise ignored. Tokens are perf 6.12's, the longest match winning as in its lexer: `iffy` and
/// `NaNs` are identifiers, `0x81` an identifier, `1e3` a number. Besides perf's syntax errors, a number
/// a double cannot hold (`1e999`, `1e-999`) is an error rather than inf or 0, and so is an expression
/// that nests more than 1000 levels deep (parentheses, calls, unary minus and `else` branches, or the
/// tree itself: a chain of 1000 `+`), which keeps the parse's recursion and the tree's bounded. An
/// empty or blank text is an error at offset 0.
///
/// Example: `parse("d_ratio(cpu@INST_RETIRED.ANY@, cycles)").args[0].name == "cpu/INST_RETIRED.ANY/"`.
Expr parse(std::string_view text);

/// The canonical text of an expression: single spaces around binary operators and `if`/`else`,
/// parentheses only where perf's precedence needs them, identifiers as written, numbers in the shortest
/// form that reads back as the same double (`1000`, `1e20`, `0.1`). Parsing it gives the same tree
/// (spans differ). A tree built by hand reads back the same as long as its numbers are finite and not
/// negative (`-2` reads back as the negation of 2) and its nodes have their arguments.
///
/// Example: `to_string(parse("(a+b)*c if(#smt_on)else 0"))` is `(a + b) * c if #smt_on else 0`.
std::string to_string(const Expr& expr);

/// Render an error about a metric perf-style, the caret under the metric's text, the metric's name on
/// the line that shows it. Example:
/// ```
/// metric 'ipc': 'instructions / cyclez'
///                               \___ unknown event 'cyclez'
/// ```
/// followed by a `help:` line when the error has one. With an origin (where the expression's text
/// starts in its file), a first line `skx/metrics.json:12:35: error: unknown event 'cyclez'` names the
/// file position of the offending character, as perfspec::render does. An error without a position is
/// one line, `error: metric 'ipc': MESSAGE`.
std::string render(const Error& error, std::string_view metric_name, std::string_view expr,
                   const Origin& origin = {});

}  // namespace perfspec::metric
