// SPDX-License-Identifier: MIT
#pragma once
// perf's metric language (the MetricExpr and MetricThreshold of its tables, REFERENCE.md section 10) as
// PEGTL rules. Internal to grammar/: only grammar/metric_parse.cpp and the grammar tests include this
// header. Every rule that sits behind must<> has an error message in metric_parse.cpp (a static_assert
// there enforces it).
//
// The tokens follow perf 6.12's lexer (flex, so the longest match wins, and between matches of the same
// length the rule listed first: keywords, `NaN`, literals, numbers, identifiers). `lex::classify` makes
// that choice once per token: `iffy` and `NaNs` are identifiers, `1e3` and `1.5` numbers, `0x81` and `1E3`
// identifiers (the identifier match is longer). The expression rules follow perf's bison grammar:
// `if_expr := expr 'if' expr 'else' if_expr | expr`, the binary operators loosest first `|`, `^`, `&`,
// `<` `>`, `+` `-`, `*` `/` `%`, all left-associative, then unary `-`, then the primaries.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze_traits.hpp>

namespace perfspec::grammar::metric {

using namespace tao::pegtl;

namespace lex {

enum class Token : std::uint8_t {
  none,
  number,
  nan,
  literal,
  id,
  kw_if,
  kw_else,
  kw_d_ratio,
  kw_min,
  kw_max,
  kw_source_count,
  kw_has_event,
  kw_strcmp_cpuid_str,
};

// Character classes, one bit each: digits, identifier characters, literal characters (after '#'),
// characters `\` escapes in an identifier, blanks, and operators and punctuation.
namespace cls {
enum : std::uint8_t { digit = 1, symbol = 2, literal = 4, escapable = 8, blank = 16, punct = 32 };
}
constexpr std::array<std::uint8_t, 256> table = [] {
  std::array<std::uint8_t, 256> t{};
  auto set = [&](unsigned char c, std::uint8_t bits) { t[c] = static_cast<std::uint8_t>(t[c] | bits); };
  for (unsigned c = 0; c < 256; ++c) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool num = c >= '0' && c <= '9';
    if (num) set(static_cast<unsigned char>(c), cls::digit);
    if (alpha || num) set(static_cast<unsigned char>(c), cls::symbol | cls::literal);
  }
  for (char c : {'_', '.'}) set(static_cast<unsigned char>(c), cls::symbol | cls::literal);
  for (char c : {':', '@', '?'}) set(static_cast<unsigned char>(c), cls::symbol);
  set('-', cls::literal | cls::escapable | cls::punct);
  for (char c : {',', '='}) set(static_cast<unsigned char>(c), cls::escapable);
  for (char c : {' ', '\t', '\n', '\r'}) set(static_cast<unsigned char>(c), cls::blank);
  for (char c : {'|', '^', '&', '<', '>', '+', '*', '/', '%', '(', ')', ','})
    set(static_cast<unsigned char>(c), cls::punct);
  return t;
}();
constexpr bool is(char c, std::uint8_t bits) noexcept {
  return (table[static_cast<unsigned char>(c)] & bits) != 0;
}

// The longest identifier at p: symbol characters and the escapes `\-` `\,` `\=`.
constexpr std::size_t symbol_length(const char* p, const char* end) noexcept {
  const char* q = p;
  while (q != end) {
    if (is(*q, cls::symbol))
      ++q;
    else if (*q == '\\' && end - q >= 2 && is(q[1], cls::escapable))
      q += 2;
    else
      break;
  }
  return static_cast<std::size_t>(q - p);
}

// The longest number at p: `([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?`, 0 when there is none.
constexpr std::size_t number_length(const char* p, const char* end) noexcept {
  const char* q = p;
  while (q != end && is(*q, cls::digit)) ++q;
  bool whole = q != p;
  if (q != end && *q == '.') {
    const char* f = q + 1;
    while (f != end && is(*f, cls::digit)) ++f;
    if (whole || f != q + 1) q = f;  // `5.`, `5.2`, `.2`; a lone `.` is no number
  }
  if (q == p) return 0;
  if (q != end && *q == 'e') {
    const char* x = q + 1;
    if (x != end && *x == '-') ++x;
    const char* d = x;
    while (d != end && is(*d, cls::digit)) ++d;
    if (d != x) q = d;
  }
  return static_cast<std::size_t>(q - p);
}

struct Match {
  Token token = Token::none;
  std::size_t length = 0;
};

struct Keyword {
  std::string_view text;
  Token token;
};
inline constexpr std::array<Keyword, 9> keywords = {{
    {"if", Token::kw_if},
    {"else", Token::kw_else},
    {"d_ratio", Token::kw_d_ratio},
    {"min", Token::kw_min},
    {"max", Token::kw_max},
    {"source_count", Token::kw_source_count},
    {"has_event", Token::kw_has_event},
    {"strcmp_cpuid_str", Token::kw_strcmp_cpuid_str},
    {"NaN", Token::nan},
}};

// The token at p, as flex picks it. Blanks and operators are no tokens here (Token::none).
constexpr Match classify(const char* p, const char* end) noexcept {
  if (p == end) return {};
  if (*p == '#') {
    const char* q = p + 1;
    while (q != end && is(*q, cls::literal)) ++q;
    return q - p > 1 ? Match{Token::literal, static_cast<std::size_t>(q - p)} : Match{};
  }
  std::size_t num = number_length(p, end);
  std::size_t sym = symbol_length(p, end);
  if (num == 0 && sym == 0) return {};
  if (num >= sym) return {Token::number, num};  // a keyword is made of letters: it never ties a number
  std::string_view word(p, sym);
  for (const auto& k : keywords)
    if (word == k.text) return {k.token, sym};
  return {Token::id, sym};
}

}  // namespace lex

// One token of the given kind.
template <lex::Token T> struct token {
  using rule_t = token;
  using subs_t = empty_list;
  template <typename ParseInput> static bool match(ParseInput& in) noexcept {
    lex::Match m = lex::classify(in.current(), in.end());
    if (m.token != T) return false;
    in.bump_in_this_line(m.length);
    return true;
  }
};

struct blank : one<' ', '\t', '\n', '\r'> {};
struct blanks : star<blank> {};
// Every token takes the blanks after it, so that a rule behind must<> fails (and its error points) at
// the next token rather than at the blanks before it.
template <typename Rule> struct pad : seq<Rule, blanks> {};

struct number : token<lex::Token::number> {};
struct nan : token<lex::Token::nan> {};
struct literal : token<lex::Token::literal> {};
struct identifier : token<lex::Token::id> {};
struct kw_if : token<lex::Token::kw_if> {};
struct kw_else : token<lex::Token::kw_else> {};

struct if_expr;
struct expr;

// An operand where one must come: the error is "expected an operand" whatever level the rule is at.
template <typename Rule> struct operand : Rule {};

// Parentheses. The action on open_paren counts the nesting (bounded, so that the recursion of the
// parse is), the one on close_paren ends it. A rule behind must<> that reads a token takes the blanks
// after it itself, so that its error message is its own.
struct open_paren : one<'('> {};
struct close_paren : seq<one<')'>, blanks> {};
struct paren : seq<pad<open_paren>, must<operand<if_expr>>, must<close_paren>> {};

// Functions. `Fn` is the index of metric::Expr::Fn, kept a plain number so that this header does not
// depend on the syntax tree. The action on call_open counts the nesting, the one on the call ends it.
namespace fn {
enum : int { d_ratio, min, max, source_count, has_event, strcmp_cpuid_str };
}
template <int Fn> struct call_open : seq<one<'('>, blanks> {};
template <int Fn> struct call_comma : seq<one<','>, blanks> {};
template <int Fn> struct call_close : seq<one<')'>, blanks> {};
template <int Fn> struct id_arg : seq<identifier, blanks> {};
template <int Fn, lex::Token Keyword> struct call2
    : seq<pad<token<Keyword>>, must<call_open<Fn>>, must<operand<expr>>, must<call_comma<Fn>>,
          must<operand<expr>>, must<call_close<Fn>>> {};
template <int Fn, lex::Token Keyword> struct call1
    : seq<pad<token<Keyword>>, must<call_open<Fn>>, must<id_arg<Fn>>, must<call_close<Fn>>> {};
struct call : sor<call2<fn::d_ratio, lex::Token::kw_d_ratio>, call2<fn::min, lex::Token::kw_min>,
                  call2<fn::max, lex::Token::kw_max>, call1<fn::source_count, lex::Token::kw_source_count>,
                  call1<fn::has_event, lex::Token::kw_has_event>,
                  call1<fn::strcmp_cpuid_str, lex::Token::kw_strcmp_cpuid_str>> {};

struct primary : sor<pad<number>, pad<nan>, pad<literal>, pad<identifier>, call, paren> {};

// Unary minus binds tighter than every binary operator: `-a * b` is `(-a) * b`.
struct minus : one<'-'> {};
struct unary;
struct negation : seq<pad<minus>, must<operand<unary>>> {};
struct unary : sor<negation, primary> {};

// A level of left-associative binary operators over the next tighter level.
template <typename Next, char... Ops> struct binary_tail : seq<pad<one<Ops...>>, must<operand<Next>>> {};
template <typename Next, char... Ops> struct binary_level : seq<Next, star<binary_tail<Next, Ops...>>> {};
struct mul_level : binary_level<unary, '*', '/', '%'> {};
struct add_level : binary_level<mul_level, '+', '-'> {};
struct cmp_level : binary_level<add_level, '<', '>'> {};
struct and_level : binary_level<cmp_level, '&'> {};
struct xor_level : binary_level<and_level, '^'> {};
struct expr : binary_level<xor_level, '|'> {};

// `then if cond else otherwise`: the then-part and the condition are plain expressions, the else-part
// is another if_expr (so chains associate to the right).
struct condition : expr {};
struct else_keyword : seq<kw_else, blanks> {};
struct else_branch : seq<if_expr> {};
struct if_tail : seq<pad<kw_if>, must<condition>, must<else_keyword>, must<else_branch>> {};
struct if_expr : seq<expr, opt<if_tail>> {};

struct start : if_expr {};
struct end_of_expression : eof {};
struct metric_expr : seq<blanks, must<start>, must<end_of_expression>> {};

}  // namespace perfspec::grammar::metric

// A token consumes at least one character when it succeeds (for tao::pegtl::analyze).
template <typename Name, perfspec::grammar::metric::lex::Token T>
struct tao::pegtl::analyze_traits<Name, perfspec::grammar::metric::token<T>> : analyze_any_traits<> {};
