// SPDX-License-Identifier: MIT
// perf's metric language: the parser (PEGTL actions building metric::Expr) and the canonical printer.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "grammar/metric_grammar.hpp"
#include "perfspec/metric.hpp"
#include "spec/printable.hpp"

namespace perfspec::grammar::metric {
namespace {

using perfspec::metric::Expr;

// How deep an expression may nest: parentheses, calls, unary minus and `else` branches (the recursion
// of the parse), and the syntax tree itself (its recursive destruction and printing). perf's tables
// nest a few tens of levels at most.
constexpr unsigned max_depth = 1000;

// Error messages for rules behind must<> (the table style of PEGTL's json_errors example).
template <typename Rule> inline constexpr const char* error_message = nullptr;
template <typename Rule> inline constexpr const char* error_message<operand<Rule>> = "expected an operand";
template <> inline constexpr const char* error_message<start> = "expected an operand";
template <> inline constexpr const char* error_message<end_of_expression> =
    "expected an operator or the end of the expression";
template <> inline constexpr const char* error_message<close_paren> = "expected ')'";
template <> inline constexpr const char* error_message<condition> = "expected a condition after 'if'";
template <> inline constexpr const char* error_message<else_keyword> =
    "expected 'else' after the condition of 'if'";
template <> inline constexpr const char* error_message<else_branch> = "expected an expression after 'else'";
template <> inline constexpr const char* error_message<call_open<fn::d_ratio>> = "expected '(' after d_ratio";
template <> inline constexpr const char* error_message<call_open<fn::min>> = "expected '(' after min";
template <> inline constexpr const char* error_message<call_open<fn::max>> = "expected '(' after max";
template <> inline constexpr const char* error_message<call_open<fn::source_count>> =
    "expected '(' after source_count";
template <> inline constexpr const char* error_message<call_open<fn::has_event>> =
    "expected '(' after has_event";
template <> inline constexpr const char* error_message<call_open<fn::strcmp_cpuid_str>> =
    "expected '(' after strcmp_cpuid_str";
template <> inline constexpr const char* error_message<call_comma<fn::d_ratio>> =
    "expected ',' between the arguments of d_ratio";
template <> inline constexpr const char* error_message<call_comma<fn::min>> =
    "expected ',' between the arguments of min";
template <> inline constexpr const char* error_message<call_comma<fn::max>> =
    "expected ',' between the arguments of max";
template <> inline constexpr const char* error_message<call_close<fn::d_ratio>> =
    "expected ')' after the arguments of d_ratio";
template <> inline constexpr const char* error_message<call_close<fn::min>> =
    "expected ')' after the arguments of min";
template <> inline constexpr const char* error_message<call_close<fn::max>> =
    "expected ')' after the arguments of max";
template <> inline constexpr const char* error_message<call_close<fn::source_count>> =
    "expected ')' after the argument of source_count";
template <> inline constexpr const char* error_message<call_close<fn::has_event>> =
    "expected ')' after the argument of has_event";
template <> inline constexpr const char* error_message<call_close<fn::strcmp_cpuid_str>> =
    "expected ')' after the argument of strcmp_cpuid_str";
template <> inline constexpr const char* error_message<id_arg<fn::source_count>> =
    "source_count takes an event name";
template <> inline constexpr const char* error_message<id_arg<fn::has_event>> =
    "has_event takes an event name";
template <> inline constexpr const char* error_message<id_arg<fn::strcmp_cpuid_str>> =
    "strcmp_cpuid_str takes a CPU id (an identifier such as 0x410fd493)";

// The parse builds the tree bottom-up on a stack: a token pushes a leaf, an operator's action pops its
// operands and pushes the node. `depths` is the height of each subtree on the stack.
struct State {
  const char* base;
  std::vector<Expr> stack;
  std::vector<unsigned> depths;
  unsigned nesting = 0;  // open parentheses, calls, unary minuses and `else` branches
};

std::uint32_t at(const char* p, const State& st) { return static_cast<std::uint32_t>(p - st.base); }

template <typename Input> Span span_of(const Input& in, const State& st) {
  return Span{at(in.begin(), st), at(in.end(), st)};
}

Error too_deep(std::uint32_t where) {
  return Error(ErrorKind::syntax,
               fmt::format("the expression nests too deeply (more than {} levels)", max_depth),
               Span{where, where + 1});
}

void enter(const char* p, State& st) {
  if (++st.nesting > max_depth) throw too_deep(at(p, st));
}

void push(State& st, Expr&& e, unsigned depth, std::uint32_t where) {
  if (depth > max_depth) throw too_deep(where);
  st.stack.push_back(std::move(e));
  st.depths.push_back(depth);
}

// The last `n` entries of the stack as the arguments of `node` (their order kept), and the height of
// the node over them.
unsigned take_args(State& st, Expr& node, std::size_t n) {
  auto first = st.stack.end() - static_cast<std::ptrdiff_t>(n);
  node.args.assign(std::make_move_iterator(first), std::make_move_iterator(st.stack.end()));
  st.stack.erase(first, st.stack.end());
  unsigned height = *std::max_element(st.depths.end() - static_cast<std::ptrdiff_t>(n), st.depths.end());
  st.depths.resize(st.depths.size() - n);
  return height + 1;
}

// The number of UTF-8 bytes of the character at p, or 1 when the bytes there are not UTF-8.
std::size_t char_length(const char* p, const char* end) {
  auto c = static_cast<unsigned char>(*p);
  std::size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 1;
  if (n == 1 || static_cast<std::size_t>(end - p) < n) return 1;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(p[k]) & 0xc0) != 0x80) return 1;
  return n;
}

template <typename Rule> struct metric_control : normal<Rule> {
  template <typename Input, typename... States>
  [[noreturn]] static void raise(const Input& in, States&&... st) {
    static_assert(error_message<Rule> != nullptr, "every rule behind must<> needs an error message");
    const State& state = (st, ...);
    const char* p = in.current();
    auto where = at(p, state);
    // A character no token starts with says more than what the grammar expected there.
    if (p != in.end() && !lex::is(*p, lex::cls::blank | lex::cls::punct) &&
        lex::classify(p, in.end()).token == lex::Token::none) {
      if (*p == '#')
        throw Error(ErrorKind::syntax, "expected a literal name after '#'", Span{where, where + 1},
                    "a literal is '#' and letters, digits, '_', '.' or '-', such as #smt_on");
      if (*p == '\\')
        throw Error(ErrorKind::syntax, "unexpected character '\\'", Span{where, where + 1},
                    "in an identifier '\\' escapes '-', ',' or '=' only");
      auto n = static_cast<std::uint32_t>(char_length(p, in.end()));
      throw Error(ErrorKind::syntax,
                  fmt::format("unexpected character '{}'", spec::printable(std::string_view(p, n))),
                  Span{where, where + n});
    }
    throw Error(ErrorKind::syntax, error_message<Rule>, Span{where, where + 1});
  }
};

// Whether a number from_chars found out of range is too large (else too small): the sign of its decimal
// magnitude, from the position of its first non-zero digit and its exponent (which may be huge itself).
bool too_large(std::string_view text) {
  std::size_t e = text.find('e');
  std::string_view mantissa = text.substr(0, e);
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view x = text.substr(e + 1);
    bool negative = !x.empty() && x[0] == '-';
    if (negative) x.remove_prefix(1);
    for (char c : x) exponent = std::min(exponent * 10 + (c - '0'), 1'000'000'000LL);
    if (negative) exponent = -exponent;
  }
  std::size_t dot = mantissa.find('.');
  std::string_view whole = mantissa.substr(0, dot);
  std::size_t lead = whole.find_first_not_of('0');
  if (lead != std::string_view::npos) return static_cast<long long>(whole.size() - lead) - 1 + exponent > 0;
  std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : mantissa.substr(dot + 1);
  std::size_t zeros = std::min(fraction.find_first_not_of('0'), fraction.size());
  return -static_cast<long long>(zeros) - 1 + exponent > 0;
}

template <typename Rule> struct metric_action : nothing<Rule> {};

template <> struct metric_action<number> {
  template <typename Input> static void apply(const Input& in, State& st) {
    Expr e;
    e.kind = Expr::Kind::number;
    e.span = span_of(in, st);
    std::string_view text = in.string_view();
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), e.number);
    if (ec == std::errc::result_out_of_range)
      throw Error(
          ErrorKind::syntax,
          fmt::format("number '{}' is too {} for a double", text, too_large(text) ? "large" : "small"),
          e.span, "a double holds magnitudes from about 4.9e-324 to 1.8e308");
    if (ec != std::errc{} || p != text.data() + text.size())  // the grammar matched a number: not expected
      throw Error(ErrorKind::syntax, fmt::format("invalid number '{}'", text), e.span);
    push(st, std::move(e), 1, e.span.begin);
  }
};
template <> struct metric_action<nan> {
  template <typename Input> static void apply(const Input& in, State& st) {
    Expr e;
    e.kind = Expr::Kind::nan;
    e.number = std::numeric_limits<double>::quiet_NaN();
    e.span = span_of(in, st);
    push(st, std::move(e), 1, e.span.begin);
  }
};
template <> struct metric_action<literal> {
  template <typename Input> static void apply(const Input& in, State& st) {
    Expr e;
    e.kind = Expr::Kind::literal;
    e.span = span_of(in, st);
    e.text = in.string();
    e.name = e.text.substr(1);
    push(st, std::move(e), 1, e.span.begin);
  }
};
template <> struct metric_action<identifier> {
  template <typename Input> static void apply(const Input& in, State& st) {
    Expr e;
    e.kind = Expr::Kind::id;
    e.span = span_of(in, st);
    e.text = in.string();
    e.name.reserve(e.text.size());
    for (std::size_t i = 0; i < e.text.size(); ++i) {
      char c = e.text[i];
      if (c == '\\') c = e.text[++i];  // the grammar took `\` only before '-', ',' or '='
      e.name += c == '@' ? '/' : c;
    }
    push(st, std::move(e), 1, e.span.begin);
  }
};

template <> struct metric_action<open_paren> {
  template <typename Input> static void apply(const Input& in, State& st) { enter(in.begin(), st); }
};
template <> struct metric_action<paren> {
  // A parenthesized node's span takes in its parentheses.
  template <typename Input> static void apply(const Input& in, State& st) {
    --st.nesting;
    Span& s = st.stack.back().span;
    s.begin = at(in.begin(), st);
    // The match ends after the blanks that follow ')': the span ends at the ')'.
    const char* e = in.end();
    while (lex::is(e[-1], lex::cls::blank)) --e;
    s.end = at(e, st);
  }
};

template <int Fn> struct metric_action<call_open<Fn>> {
  template <typename Input> static void apply(const Input& in, State& st) { enter(in.begin(), st); }
};
template <int Fn, lex::Token Keyword> struct finish_call {
  template <typename Input> static void apply(const Input& in, State& st) {
    --st.nesting;
    Expr e;
    e.kind = Expr::Kind::call;
    e.fn = static_cast<Expr::Fn>(Fn);
    const char* end = in.end();
    while (lex::is(end[-1], lex::cls::blank)) --end;
    e.span = Span{at(in.begin(), st), at(end, st)};
    unsigned depth = take_args(st, e, Fn == fn::d_ratio || Fn == fn::min || Fn == fn::max ? 2 : 1);
    push(st, std::move(e), depth, e.span.begin);
  }
};
template <int Fn, lex::Token Keyword> struct metric_action<call2<Fn, Keyword>> : finish_call<Fn, Keyword> {};
template <int Fn, lex::Token Keyword> struct metric_action<call1<Fn, Keyword>> : finish_call<Fn, Keyword> {};
static_assert(static_cast<int>(Expr::Fn::d_ratio) == fn::d_ratio &&
              static_cast<int>(Expr::Fn::min) == fn::min && static_cast<int>(Expr::Fn::max) == fn::max &&
              static_cast<int>(Expr::Fn::source_count) == fn::source_count &&
              static_cast<int>(Expr::Fn::has_event) == fn::has_event &&
              static_cast<int>(Expr::Fn::strcmp_cpuid_str) == fn::strcmp_cpuid_str);

template <> struct metric_action<minus> {
  template <typename Input> static void apply(const Input& in, State& st) { enter(in.begin(), st); }
};
template <> struct metric_action<negation> {
  template <typename Input> static void apply(const Input& in, State& st) {
    --st.nesting;
    Expr e;
    e.kind = Expr::Kind::negate;
    std::uint32_t begin = at(in.begin(), st);
    unsigned depth = take_args(st, e, 1);
    e.span = Span{begin, e.args[0].span.end};
    push(st, std::move(e), depth, begin);
  }
};

Expr::Op op_of(char c) {
  switch (c) {
    case '|': return Expr::Op::logical_or;
    case '^': return Expr::Op::logical_xor;
    case '&': return Expr::Op::logical_and;
    case '<': return Expr::Op::less;
    case '>': return Expr::Op::greater;
    case '+': return Expr::Op::add;
    case '-': return Expr::Op::sub;
    case '*': return Expr::Op::mul;
    case '/': return Expr::Op::div;
    default: return Expr::Op::mod;
  }
}
template <typename Next, char... Ops> struct metric_action<binary_tail<Next, Ops...>> {
  // The match is the operator (its first character), the blanks after it and the right operand.
  template <typename Input> static void apply(const Input& in, State& st) {
    Expr e;
    e.kind = Expr::Kind::binary;
    e.op = op_of(*in.begin());
    unsigned depth = take_args(st, e, 2);
    e.span = Span{e.args[0].span.begin, e.args[1].span.end};
    push(st, std::move(e), depth, at(in.begin(), st));
  }
};

template <> struct metric_action<else_keyword> {
  template <typename Input> static void apply(const Input& in, State& st) { enter(in.begin(), st); }
};
template <> struct metric_action<if_tail> {
  template <typename Input> static void apply(const Input& in, State& st) {
    --st.nesting;
    Expr e;
    e.kind = Expr::Kind::select;
    unsigned depth = take_args(st, e, 3);
    e.span = Span{e.args[0].span.begin, e.args[2].span.end};
    push(st, std::move(e), depth, at(in.begin(), st));
  }
};

}  // namespace
}  // namespace perfspec::grammar::metric

namespace perfspec::metric {

Expr parse(std::string_view text) {
  if (text.size() > 0xfffffff0u) throw Error(ErrorKind::syntax, "metric expression is too long");
  if (text.find_first_not_of(" \t\n\r") == std::string_view::npos)
    throw Error(ErrorKind::syntax, "empty metric expression",
                Span{0, static_cast<std::uint32_t>(std::max<std::size_t>(text.size(), 1))});
  tao::pegtl::memory_input<tao::pegtl::tracking_mode::lazy> in(text.data(), text.size(), "metric");
  grammar::metric::State state{text.data(), {}, {}};
  tao::pegtl::parse<grammar::metric::metric_expr, grammar::metric::metric_action,
                    grammar::metric::metric_control>(in, state);
  return std::move(state.stack.back());
}

namespace {

// Binding strength, loosest first: `if`/`else`, then the binary operators, unary minus, primaries.
int precedence(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::select: return 0;
    case Expr::Kind::binary:
      switch (e.op) {
        case Expr::Op::logical_or: return 1;
        case Expr::Op::logical_xor: return 2;
        case Expr::Op::logical_and: return 3;
        case Expr::Op::less:
        case Expr::Op::greater: return 4;
        case Expr::Op::add:
        case Expr::Op::sub: return 5;
        case Expr::Op::mul:
        case Expr::Op::div:
        case Expr::Op::mod: return 6;
      }
      return 6;
    case Expr::Kind::negate: return 7;
    default: return 8;
  }
}

constexpr std::string_view op_text(Expr::Op op) {
  switch (op) {
    case Expr::Op::logical_or: return "|";
    case Expr::Op::logical_xor: return "^";
    case Expr::Op::logical_and: return "&";
    case Expr::Op::less: return "<";
    case Expr::Op::greater: return ">";
    case Expr::Op::add: return "+";
    case Expr::Op::sub: return "-";
    case Expr::Op::mul: return "*";
    case Expr::Op::div: return "/";
    case Expr::Op::mod: return "%";
  }
  return "?";
}

constexpr std::string_view fn_text(Expr::Fn fn) {
  switch (fn) {
    case Expr::Fn::d_ratio: return "d_ratio";
    case Expr::Fn::min: return "min";
    case Expr::Fn::max: return "max";
    case Expr::Fn::source_count: return "source_count";
    case Expr::Fn::has_event: return "has_event";
    case Expr::Fn::strcmp_cpuid_str: return "strcmp_cpuid_str";
  }
  return "?";
}

// The shortest text that reads back as the same double, in the language's number syntax (fmt writes
// `1e+20`; the language has no '+' in exponents).
std::string number_text(double v) {
  std::string s = fmt::format("{}", v);
  if (auto plus = s.find("e+"); plus != std::string::npos) s.erase(plus + 1, 1);
  return s;
}

// An identifier for a tree built by hand (no `text`): its name with '/' as '@' and `\` before '-', ','
// and '='.
std::string escaped(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '/')
      c = '@';
    else if (c == '-' || c == ',' || c == '=')
      out += '\\';
    out += c;
  }
  return out;
}

void print(const Expr& e, std::string& out);

void print_within(const Expr& e, bool parens, std::string& out) {
  if (parens) out += '(';
  print(e, out);
  if (parens) out += ')';
}

void print(const Expr& e, std::string& out) {
  switch (e.kind) {
    case Expr::Kind::number: out += number_text(e.number); return;
    case Expr::Kind::nan: out += "NaN"; return;
    case Expr::Kind::literal: out += e.text.empty() ? "#" + e.name : e.text; return;
    case Expr::Kind::id: out += e.text.empty() ? escaped(e.name) : e.text; return;
    case Expr::Kind::ref: out += escaped(e.name); return;
    case Expr::Kind::negate:
      out += '-';
      if (!e.args.empty()) print_within(e.args[0], precedence(e.args[0]) < precedence(e), out);
      return;
    case Expr::Kind::binary: {
      if (e.args.size() < 2) return;
      int p = precedence(e);
      print_within(e.args[0], precedence(e.args[0]) < p, out);
      out += ' ';
      out += op_text(e.op);
      out += ' ';
      print_within(e.args[1], precedence(e.args[1]) <= p, out);
      return;
    }
    case Expr::Kind::select:
      if (e.args.size() < 3) return;
      print_within(e.args[0], precedence(e.args[0]) == 0, out);
      out += " if ";
      print_within(e.args[1], precedence(e.args[1]) == 0, out);
      out += " else ";
      print(e.args[2], out);
      return;
    case Expr::Kind::call:
      out += fn_text(e.fn);
      out += '(';
      for (std::size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        print_within(e.args[i], precedence(e.args[i]) == 0, out);
      }
      out += ')';
      return;
  }
}

}  // namespace

std::string to_string(const Expr& expr) {
  std::string out;
  print(expr, out);
  return out;
}

}  // namespace perfspec::metric
