// SPDX-License-Identifier: MIT
// perf's metric language: tokens, precedence, functions, spans, errors, the canonical text, the
// rendering of errors, and every MetricExpr and MetricThreshold of perf 6.12's tables.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

#include "grammar/metric_grammar.hpp"
#include "perfspec/metric.hpp"
#include "tests/support.hpp"

using perfspec::Error;
using perfspec::Span;
using perfspec::metric::Expr;
using perfspec::metric::parse;
using perfspec::metric::to_string;
using Kind = Expr::Kind;
using Op = Expr::Op;
using Fn = Expr::Fn;

namespace {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::logical_or: return "|";
    case Op::logical_xor: return "^";
    case Op::logical_and: return "&";
    case Op::less: return "<";
    case Op::greater: return ">";
    case Op::add: return "+";
    case Op::sub: return "-";
    case Op::mul: return "*";
    case Op::div: return "/";
    case Op::mod: return "%";
  }
  return "?";
}
std::string_view fn_name(Fn fn) {
  switch (fn) {
    case Fn::d_ratio: return "d_ratio";
    case Fn::min: return "min";
    case Fn::max: return "max";
    case Fn::source_count: return "source_count";
    case Fn::has_event: return "has_event";
    case Fn::strcmp_cpuid_str: return "strcmp_cpuid_str";
  }
  return "?";
}

// A tree as an S-expression, written independently of to_string: `(+ a (* b c))`, `(neg a)`,
// `(if then cond else)`, `(d_ratio a b)`, numbers by their value, identifiers by their name,
// literals as `#name`.
std::string sx(const Expr& e) {
  std::string out;
  switch (e.kind) {
    case Kind::number: return fmt::format("{}", e.number);
    case Kind::nan: return "NaN";
    case Kind::literal: return "#" + e.name;
    case Kind::id: return e.name;
    case Kind::ref: return "(ref " + e.name + ")";
    case Kind::negate: out = "(neg"; break;
    case Kind::binary: out = fmt::format("({}", op_name(e.op)); break;
    case Kind::select: out = "(if"; break;
    case Kind::call: out = fmt::format("({}", fn_name(e.fn)); break;
  }
  for (const auto& a : e.args) out += " " + sx(a);
  return out + ")";
}
std::string tree(std::string_view text) { return sx(parse(text)); }

// The same tree: kinds, operators, functions, numbers and names, recursively (not spans).
bool same(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.args.size() != b.args.size()) return false;
  switch (a.kind) {
    case Kind::number:
      if (a.number != b.number || std::signbit(a.number) != std::signbit(b.number)) return false;
      break;
    case Kind::literal:
    case Kind::id:
      if (a.name != b.name || a.text != b.text) return false;
      break;
    case Kind::binary:
      if (a.op != b.op) return false;
      break;
    case Kind::call:
      if (a.fn != b.fn) return false;
      break;
    default: break;
  }
  for (std::size_t i = 0; i < a.args.size(); ++i)
    if (!same(a.args[i], b.args[i])) return false;
  return true;
}

// The span of the error parsing `text` gives, {~0, ~0} when it parses.
Span error_span(std::string_view text) {
  try {
    parse(text);
  } catch (const Error& e) {
    CHECK(e.positioned());
    CHECK(e.kind() == perfspec::ErrorKind::syntax);
    return e.span();
  }
  return Span{0xffffffffu, 0xffffffffu};
}

std::string canonical(std::string_view text) { return to_string(parse(text)); }

}  // namespace

TEST_CASE("metric grammar: no left recursion or infinite loops") {
  CHECK(tao::pegtl::analyze<perfspec::grammar::metric::metric_expr>() == 0);
}

TEST_CASE("metric grammar: numbers") {
  auto n = [](std::string_view text) {
    Expr e = parse(text);
    REQUIRE(e.kind == Kind::number);
    return e.number;
  };
  CHECK(n("100") == 100);
  CHECK(n("1e3") == 1000);
  CHECK(n("1.5") == 1.5);
  CHECK(n(".5") == 0.5);
  CHECK(n("5.") == 5);
  CHECK(n("1e-3") == 0.001);
  CHECK(n("2.5e2") == 250);
  CHECK(n("1.e2") == 100);
  CHECK(n("007") == 7);
  CHECK(n("1e-310") == 1e-310);  // subnormal, still a double
  CHECK(parse("1e3").span == Span{0, 3});
  // NaN is a keyword of its own kind.
  CHECK(parse("NaN").kind == Kind::nan);
  CHECK(std::isnan(parse("NaN").number));
  CHECK(parse(" NaN ").span == Span{1, 4});
}

TEST_CASE("metric grammar: the longest token wins, as perf's flex lexer picks it") {
  auto kind_name = [](std::string_view text) {
    Expr e = parse(text);
    switch (e.kind) {
      case Kind::number: return fmt::format("number {}", e.number);
      case Kind::nan: return std::string("nan");
      case Kind::literal: return "literal " + e.name;
      case Kind::id: return "id " + e.name;
      default: return std::string("other");
    }
  };
  // An identifier longer than the number at the same place is an identifier.
  CHECK(kind_name("0x81") == "id 0x81");
  CHECK(kind_name("1E3") == "id 1E3");  // the exponent is a lowercase 'e' only
  CHECK(kind_name("1.2.3") == "id 1.2.3");
  CHECK(kind_name("1e3x") == "id 1e3x");
  CHECK(kind_name("2e") == "id 2e");
  // A tie goes to the number.
  CHECK(kind_name("1e3") == "number 1000");
  CHECK(kind_name("42") == "number 42");
  // `1e-3`: the identifier stops at '-', the number does not.
  CHECK(kind_name("1e-3") == "number 0.001");
  // Keywords only as whole tokens.
  CHECK(kind_name("iffy") == "id iffy");
  CHECK(kind_name("min_x") == "id min_x");
  CHECK(kind_name("NaNs") == "id NaNs");
  CHECK(kind_name("elsewhere") == "id elsewhere");
  CHECK(kind_name("d_ratio2") == "id d_ratio2");
  CHECK(kind_name("has_event.x") == "id has_event.x");
  CHECK(kind_name("nan") == "id nan");  // keywords are case-sensitive
  CHECK(kind_name("If") == "id If");
  // Identifier characters: letters, digits, `_ . : @ ?`.
  CHECK(kind_name("msr@tsc@") == "id msr/tsc/");
  CHECK(kind_name("tool:duration_time") == "id tool:duration_time");
  CHECK(kind_name(".") == "id .");
  CHECK(kind_name("?") == "id ?");
  // Literals: '#' then letters, digits, `_ . -`, case as written.
  CHECK(kind_name("#SMT_on") == "literal SMT_on");
  CHECK(kind_name("#SYSTEM_TSC_FREQ") == "literal SYSTEM_TSC_FREQ");
  CHECK(kind_name("#a-b.c") == "literal a-b.c");
  CHECK(tree("#smt_on-1") == "#smt_on-1");  // '-' belongs to the literal, as in perf
  CHECK(tree("#smt_on - 1") == "(- #smt_on 1)");
  // Tokens need no blanks between them where the characters tell them apart.
  CHECK(tree("a*b") == "(* a b)");
  CHECK(tree("2*-a") == "(* 2 (neg a))");
  CHECK(tree("1-2") == "(- 1 2)");
  CHECK(tree("a\t+\nb\r") == "(+ a b)");
}

TEST_CASE("metric grammar: identifiers, escapes and parameters") {
  Expr e = parse("cpu@UOPS_EXECUTED.THREAD\\,cmask\\=1@");
  REQUIRE(e.kind == Kind::id);
  CHECK(e.name == "cpu/UOPS_EXECUTED.THREAD,cmask=1/");
  CHECK(e.text == "cpu@UOPS_EXECUTED.THREAD\\,cmask\\=1@");
  CHECK(e.span == Span{0, 35});
  CHECK(parse("cpu@INST_RETIRED.ANY\\,edge\\,inv\\,cmask\\=1@").name ==
        "cpu/INST_RETIRED.ANY,edge,inv,cmask=1/");
  CHECK(parse("a\\-b").name == "a-b");
  CHECK(parse("\\-a").name == "-a");
  // `?` is the runtime parameter: kept for resolution to replace.
  e = parse("cpu@event\\=0x1\\,umask\\=?@");
  CHECK(e.name == "cpu/event=0x1,umask=?/");
  CHECK(e.text == "cpu@event\\=0x1\\,umask\\=?@");
  CHECK(parse("power8_pm?").name == "power8_pm?");
  // Literals keep their '#' in text, not in name.
  e = parse("#num_cpus_online");
  CHECK(e.kind == Kind::literal);
  CHECK(e.name == "num_cpus_online");
  CHECK(e.text == "#num_cpus_online");
  CHECK(e.span == Span{0, 16});
}

TEST_CASE("metric grammar: precedence and associativity") {
  CHECK(tree("a + b * c") == "(+ a (* b c))");
  CHECK(tree("a * b + c") == "(+ (* a b) c)");
  CHECK(tree("a - b - c") == "(- (- a b) c)");
  CHECK(tree("a / b / c") == "(/ (/ a b) c)");
  CHECK(tree("a / b * c % d") == "(% (* (/ a b) c) d)");
  CHECK(tree("-a * b") == "(* (neg a) b)");
  CHECK(tree("-a - -b") == "(- (neg a) (neg b))");
  CHECK(tree("--a") == "(neg (neg a))");
  CHECK(tree("-(a + b)") == "(neg (+ a b))");
  CHECK(tree("a | b & c") == "(| a (& b c))");
  CHECK(tree("a & b | c") == "(| (& a b) c)");
  CHECK(tree("a ^ b | c ^ d") == "(| (^ a b) (^ c d))");
  CHECK(tree("a & b ^ c & d") == "(^ (& a b) (& c d))");
  CHECK(tree("a < b + c") == "(< a (+ b c))");
  CHECK(tree("a > b & c < d") == "(& (> a b) (< c d))");
  CHECK(tree("a < b > c") == "(> (< a b) c)");
  CHECK(tree("a | b | c") == "(| (| a b) c)");
  CHECK(tree("(a + b) * c") == "(* (+ a b) c)");
  CHECK(tree("((a))") == "a");
}

TEST_CASE("metric grammar: if/else") {
  CHECK(tree("a if c else b") == "(if a c b)");
  // Chains associate to the right.
  CHECK(tree("a if c else b if d else e") == "(if a c (if b d e))");
  // The parts are whole expressions: `if` binds loosest.
  CHECK(tree("a + 1 if c > 0 else b * 2") == "(if (+ a 1) (> c 0) (* b 2))");
  CHECK(tree("(a if b else c) if d else e") == "(if (if a b c) d e)");
  CHECK(tree("a if (b if c else d) else e") == "(if a (if b c d) e)");
  CHECK(tree("x * (a if #smt_on else b)") == "(* x (if a #smt_on b))");
  CHECK(tree("d_ratio(a, (b if c else d))") == "(d_ratio a (if b c d))");
  Expr e = parse("instructions / cycles if #smt_on else 0");
  REQUIRE(e.kind == Kind::select);
  REQUIRE(e.args.size() == 3);
  CHECK(sx(e.args[0]) == "(/ instructions cycles)");
  CHECK(sx(e.args[1]) == "#smt_on");
  CHECK(sx(e.args[2]) == "0");
}

TEST_CASE("metric grammar: functions") {
  CHECK(tree("d_ratio(a, b)") == "(d_ratio a b)");
  CHECK(tree("min(a + 1, b * 2)") == "(min (+ a 1) (* b 2))");
  CHECK(tree("max(min(a, b), -c)") == "(max (min a b) (neg c))");
  CHECK(tree("d_ratio ( a , b )") == "(d_ratio a b)");
  CHECK(tree("source_count(l2_rqsts.references)") == "(source_count l2_rqsts.references)");
  CHECK(tree("has_event(cpu_core@TOPDOWN.SLOTS@)") == "(has_event cpu_core/TOPDOWN.SLOTS/)");
  CHECK(tree("strcmp_cpuid_str(0x410fd493)") == "(strcmp_cpuid_str 0x410fd493)");
  CHECK(tree("1 - has_event(x) * 2") == "(- 1 (* (has_event x) 2))");
  Expr e = parse("d_ratio(cpu@INST_RETIRED.ANY@, cycles)");
  REQUIRE(e.kind == Kind::call);
  CHECK(e.fn == Fn::d_ratio);
  REQUIRE(e.args.size() == 2);
  CHECK(e.args[0].name == "cpu/INST_RETIRED.ANY/");
  CHECK(e.args[1].name == "cycles");
  CHECK(e.span == Span{0, 38});
}

TEST_CASE("metric grammar: spans") {
  Expr e = parse("a + b * c");
  CHECK(e.span == Span{0, 9});
  CHECK(e.args[0].span == Span{0, 1});
  CHECK(e.args[1].span == Span{4, 9});
  CHECK(e.args[1].args[1].span == Span{8, 9});
  // A parenthesized node takes in its parentheses; blanks around the expression are no part of it.
  e = parse("  (a + b)  * c ");
  CHECK(e.span == Span{2, 14});
  CHECK(e.args[0].span == Span{2, 9});
  CHECK(e.args[0].args[1].span == Span{7, 8});
  e = parse("-(x)");
  CHECK(e.span == Span{0, 4});
  CHECK(e.args[0].span == Span{1, 4});
  e = parse("x if  y else z ");
  CHECK(e.span == Span{0, 14});
  CHECK(e.args[1].span == Span{6, 7});
  CHECK(e.args[2].span == Span{13, 14});
  e = parse("1 + max( a , b ) ");
  CHECK(e.span == Span{0, 16});
  CHECK(e.args[1].span == Span{4, 16});
  CHECK(e.args[1].args[1].span == Span{13, 14});
}

TEST_CASE("metric grammar: syntax errors name the first offending character") {
  CHECK_THROWS_WITH_AS(parse(""), "empty metric expression", Error);
  CHECK(error_span("") == Span{0, 1});
  CHECK_THROWS_WITH_AS(parse(" \t "), "empty metric expression", Error);
  CHECK(error_span(" \t ") == Span{0, 3});
  CHECK_THROWS_WITH_AS(parse("a +"), "expected an operand", Error);
  CHECK(error_span("a +") == Span{3, 4});
  CHECK_THROWS_WITH_AS(parse("a * * b"), "expected an operand", Error);
  CHECK(error_span("a * * b") == Span{4, 5});
  CHECK_THROWS_WITH_AS(parse(")"), "expected an operand", Error);
  CHECK(error_span(")") == Span{0, 1});
  CHECK_THROWS_WITH_AS(parse("(a + b"), "expected ')'", Error);
  CHECK(error_span("(a + b") == Span{6, 7});
  CHECK_THROWS_WITH_AS(parse("(a b)"), "expected ')'", Error);
  CHECK(error_span("(a b)") == Span{3, 4});
  CHECK_THROWS_WITH_AS(parse("()"), "expected an operand", Error);
  CHECK(error_span("()") == Span{1, 2});
  CHECK_THROWS_WITH_AS(parse("a b"), "expected an operator or the end of the expression", Error);
  CHECK(error_span("a b") == Span{2, 3});
  CHECK_THROWS_WITH_AS(parse("a )"), "expected an operator or the end of the expression", Error);
  CHECK(error_span("a )") == Span{2, 3});
  CHECK_THROWS_WITH_AS(parse("a $ b"), "unexpected character '$'", Error);
  CHECK(error_span("a $ b") == Span{2, 3});
  CHECK_THROWS_WITH_AS(parse("a + $"), "unexpected character '$'", Error);
  CHECK(error_span("a + $") == Span{4, 5});
  CHECK_THROWS_WITH_AS(parse("a <= b"), "unexpected character '='", Error);
  CHECK(error_span("a <= b") == Span{3, 4});
  CHECK_THROWS_WITH_AS(parse("a \\+ b"), "unexpected character '\\'", Error);
  CHECK(error_span("a \\+ b") == Span{2, 3});
  CHECK_THROWS_WITH_AS(parse("a + # b"), "expected a literal name after '#'", Error);
  CHECK(error_span("a + # b") == Span{4, 5});
  // Bytes that are not ASCII: the whole UTF-8 character, or the byte escaped.
  CHECK_THROWS_WITH_AS(parse("a + \xc2\xb5s"), "unexpected character '\xc2\xb5'", Error);
  CHECK(error_span("a + \xc2\xb5s") == Span{4, 6});
  CHECK_THROWS_WITH_AS(parse("a \xff"), "unexpected character '\\xff'", Error);
  CHECK_THROWS_WITH_AS(parse(std::string_view("a\0b", 3)), "unexpected character '\\x00'", Error);
  CHECK(error_span(std::string_view("a\0b", 3)) == Span{1, 2});
  // if/else.
  CHECK_THROWS_WITH_AS(parse("a if b"), "expected 'else' after the condition of 'if'", Error);
  CHECK(error_span("a if b") == Span{6, 7});
  CHECK_THROWS_WITH_AS(parse("a if b if c else d else e"), "expected 'else' after the condition of 'if'",
                       Error);
  CHECK(error_span("a if b if c else d else e") == Span{7, 8});
  CHECK_THROWS_WITH_AS(parse("a if else b"), "expected a condition after 'if'", Error);
  CHECK(error_span("a if else b") == Span{5, 6});
  CHECK_THROWS_WITH_AS(parse("a if b else"), "expected an expression after 'else'", Error);
  CHECK(error_span("a if b else") == Span{11, 12});
  CHECK_THROWS_WITH_AS(parse("if a"), "expected an operand", Error);
  CHECK(error_span("if a") == Span{0, 1});
  CHECK_THROWS_WITH_AS(parse("a else b"), "expected an operator or the end of the expression", Error);
  // An if inside an operand needs parentheses, as in perf's grammar.
  CHECK_THROWS_WITH_AS(parse("x + a if b else c if d"), "expected 'else' after the condition of 'if'", Error);
  CHECK(error_span("x + a if b else c if d") == Span{22, 23});
  // Functions.
  CHECK_THROWS_WITH_AS(parse("d_ratio(a b)"), "expected ',' between the arguments of d_ratio", Error);
  CHECK(error_span("d_ratio(a b)") == Span{10, 11});
  CHECK_THROWS_WITH_AS(parse("min(a)"), "expected ',' between the arguments of min", Error);
  CHECK(error_span("min(a)") == Span{5, 6});
  CHECK_THROWS_WITH_AS(parse("max(a, b, c)"), "expected ')' after the arguments of max", Error);
  CHECK(error_span("max(a, b, c)") == Span{8, 9});
  CHECK_THROWS_WITH_AS(parse("min + 1"), "expected '(' after min", Error);
  CHECK(error_span("min + 1") == Span{4, 5});
  CHECK_THROWS_WITH_AS(parse("d_ratio(a if b else c, d)"), "expected ',' between the arguments of d_ratio",
                       Error);
  CHECK(error_span("d_ratio(a if b else c, d)") == Span{10, 11});
  CHECK_THROWS_WITH_AS(parse("has_event(1)"), "has_event takes an event name", Error);
  CHECK(error_span("has_event(1)") == Span{10, 11});
  CHECK_THROWS_WITH_AS(parse("has_event(a + b)"), "expected ')' after the argument of has_event", Error);
  CHECK(error_span("has_event(a + b)") == Span{12, 13});
  CHECK_THROWS_WITH_AS(parse("source_count(#smt_on)"), "source_count takes an event name", Error);
  CHECK(error_span("source_count(#smt_on)") == Span{13, 14});
  CHECK_THROWS_WITH_AS(parse("strcmp_cpuid_str()"),
                       "strcmp_cpuid_str takes a CPU id (an identifier such as 0x410fd493)", Error);
  CHECK(error_span("strcmp_cpuid_str()") == Span{17, 18});
  CHECK_THROWS_WITH_AS(parse("d_ratio(a, b"), "expected ')' after the arguments of d_ratio", Error);
  CHECK(error_span("d_ratio(a, b") == Span{12, 13});
  // Numbers a double cannot hold: an error, never inf or a silent 0.
  CHECK_THROWS_WITH_AS(parse("a * 1e999"), "number '1e999' is too large for a double", Error);
  CHECK(error_span("a * 1e999") == Span{4, 9});
  CHECK_THROWS_WITH_AS(parse("1e-999"), "number '1e-999' is too small for a double", Error);
  CHECK_THROWS_WITH_AS(parse(std::string(400, '9')),
                       fmt::format("number '{}' is too large for a double", std::string(400, '9')).c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(parse("0." + std::string(400, '0') + "1"),
                       fmt::format("number '0.{}1' is too small for a double", std::string(400, '0')).c_str(),
                       Error);
  CHECK(tree("0e999") == "0");
}

TEST_CASE("metric grammar: nesting is bounded, without overflowing the stack") {
  const std::string limit = "the expression nests too deeply (more than 1000 levels)";
  // Parentheses.
  std::string deep(100000, '(');
  CHECK_THROWS_WITH_AS(parse(deep), limit.c_str(), Error);
  CHECK(error_span(deep) == Span{1000, 1001});
  CHECK(tree(std::string(1000, '(') + "a" + std::string(1000, ')')) == "a");
  // Unary minus.
  std::string minus(100000, '-');
  CHECK_THROWS_WITH_AS(parse(minus + "a"), limit.c_str(), Error);
  CHECK(error_span(minus + "a") == Span{1000, 1001});
  CHECK(parse(std::string(999, '-') + "a").kind == Kind::negate);
  // Calls.
  std::string calls;
  for (int i = 0; i < 1001; ++i) calls += "min(";
  CHECK_THROWS_WITH_AS(parse(calls), limit.c_str(), Error);
  CHECK(error_span(calls) == Span{4003, 4004});
  // else chains.
  std::string chain;
  for (int i = 0; i < 1001; ++i) chain += "a if b else ";
  chain += "c";
  CHECK_THROWS_WITH_AS(parse(chain), limit.c_str(), Error);
  CHECK(error_span(chain) == Span{12007, 12008});  // the 1001st 'else'
  // A left-associative chain nests its tree without recursion: its depth is bounded too, at the
  // operator that goes past it. 999 operators make a tree of 1000 levels.
  std::string sum = "a";
  for (int i = 0; i < 999; ++i) sum += "+a";
  CHECK(parse(sum).kind == Kind::binary);
  sum += "+a";
  CHECK_THROWS_WITH_AS(parse(sum), limit.c_str(), Error);
  CHECK(error_span(sum) == Span{1999, 2000});
}

TEST_CASE("metric grammar: any bytes give a tree or a positioned error") {
  std::mt19937 rng(16);
  const std::string alphabet = "ab1e.-+*/%|^&<>()#,@\\?: NaNifelsmn_d\x01\xff";
  const std::vector<std::string> seeds = {"d_ratio(a, b) if #smt_on else min(c, -1e3)",
                                          "cpu@x\\,y\\=1@ * (1 - b) / #slots", "a < b | c & d ^ e % f"};
  int trees = 0, errors = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = seeds[i % seeds.size()];
    for (int k = 0; k < 1 + i % 4; ++k) {
      std::size_t at = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 1:
          if (at < s.size()) s.erase(at, 1);
          break;
        default:
          if (at < s.size()) s[at] = static_cast<char>(rng() % 256);
      }
    }
    try {
      Expr e = parse(s);
      ++trees;
      Expr again = parse(to_string(e));
      if (!same(e, again)) FAIL_CHECK("round trip changed the tree of '" << s << "'");
    } catch (const Error& e) {
      ++errors;
      if (!e.positioned() || e.span().begin > s.size()) FAIL_CHECK("bad error for '" << s << "'");
      (void)perfspec::metric::render(e, "m", s);
    }
  }
  CHECK(trees > 1000);
  CHECK(errors > 1000);
}

TEST_CASE("metric grammar: the canonical text") {
  CHECK(canonical("(a+b)*c if(#smt_on)else 0") == "(a + b) * c if #smt_on else 0");
  CHECK(canonical("a-(b-c)") == "a - (b - c)");
  CHECK(canonical("(a-b)-c") == "a - b - c");
  CHECK(canonical("a/(b*c)") == "a / (b * c)");
  CHECK(canonical("(a*b)/c") == "a * b / c");
  CHECK(canonical("-(a*b)") == "-(a * b)");
  CHECK(canonical("(-a)*b") == "-a * b");
  CHECK(canonical("- - a") == "--a");
  CHECK(canonical("-(-a)") == "--a");
  CHECK(canonical("a|(b&c)") == "a | b & c");
  CHECK(canonical("(a|b)&c") == "(a | b) & c");
  CHECK(canonical("a if b else (c if d else e)") == "a if b else c if d else e");
  CHECK(canonical("(a if b else c) if d else e") == "(a if b else c) if d else e");
  CHECK(canonical("x+(a if b else c)") == "x + (a if b else c)");
  CHECK(canonical("d_ratio( a,(b if c else d) )") == "d_ratio(a, (b if c else d))");
  CHECK(canonical("has_event( cpu@x\\,y\\=1@ )") == "has_event(cpu@x\\,y\\=1@)");
  CHECK(canonical("NaN") == "NaN");
  CHECK(canonical("#SMT_on") == "#SMT_on");
  // Numbers: the shortest text that reads back as the same double, without a '+' in the exponent.
  CHECK(canonical("1e3") == "1000");
  CHECK(canonical("1e20") == "1e20");
  CHECK(canonical("1e-7") == "1e-07");
  CHECK(canonical("0.1") == "0.1");
  CHECK(canonical("007.50") == "7.5");
  CHECK(canonical("123456789012345678901234567890") == "1.2345678901234568e29");
  CHECK(canonical("5e-324") == "5e-324");
  for (std::string_view text :
       {"1e20", "1e-7", "0.1", "123456789012345678901234567890", "5e-324", "1.7976931348623157e308"})
    CHECK(parse(canonical(text)).number == parse(text).number);
  // A tree built by hand: identifiers without text are escaped from their name.
  Expr id;
  id.kind = Kind::id;
  id.name = "cpu/event=0x3c,inv/";
  Expr lit;
  lit.kind = Kind::literal;
  lit.name = "smt_on";
  Expr sel;
  sel.kind = Kind::select;
  sel.args = {id, lit, Expr{}};
  CHECK(to_string(sel) == "cpu@event\\=0x3c\\,inv@ if #smt_on else 0");
  CHECK(parse(to_string(sel)).args[0].name == "cpu/event=0x3c,inv/");
}

TEST_CASE("metric grammar: render") {
  // Without an origin: the metric's name and text, the caret under the offending character.
  Error e(perfspec::ErrorKind::unknown_name, "unknown event 'cyclez'", Span{15, 21});
  CHECK(perfspec::metric::render(e, "ipc", "instructions / cyclez") ==
        "metric 'ipc': 'instructions / cyclez'\n"
        "                              \\___ unknown event 'cyclez'\n");
  // With an origin: the file position first, as perfspec::render writes it.
  std::string text = "d_ratio(a b)";
  try {
    parse(text);
    FAIL("parsed");
  } catch (const Error& err) {
    CHECK(perfspec::metric::render(err, "tma_x", text, perfspec::Origin{"skx/metrics.json", 12, 23}) ==
          "skx/metrics.json:12:33: error: expected ',' between the arguments of d_ratio\n"
          "metric 'tma_x': 'd_ratio(a b)'\n"
          "                           \\___ expected ',' between the arguments of d_ratio\n");
  }
  // A help line follows the caret when the error has one.
  text = "a \\+ b";
  try {
    parse(text);
    FAIL("parsed");
  } catch (const Error& err) {
    CHECK(perfspec::metric::render(err, "m", text) ==
          "metric 'm': 'a \\+ b'\n"
          "               \\___ unexpected character '\\'\n"
          "help: in an identifier '\\' escapes '-', ',' or '=' only\n");
  }
  // An error without a position names the metric.
  CHECK(perfspec::metric::render(Error("no such metric group"), "ipc", "x") ==
        "error: metric 'ipc': no such metric group\n");
  // Control bytes of a name are escaped.
  CHECK(perfspec::metric::render(Error(perfspec::ErrorKind::syntax, "m", Span{0, 1}), "a\x1b", "x") ==
        "metric 'a\\x1b': 'x'\n"
        "                 \\___ m\n");
}

TEST_CASE("metric grammar: every MetricExpr and MetricThreshold of perf 6.12's tables") {
  namespace fs = std::filesystem;
  const fs::path root = test::source_dir() + "/../shared/pmu-events";
  if (!fs::exists(root)) {
    MESSAGE("no " << root.string() << ": the corpus test is skipped");
    return;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::size_t parsed = 0, tables = 0, failed = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    REQUIRE_MESSAGE(!doc.is_discarded(), file.string());
    if (!doc.is_array() || !std::all_of(doc.begin(), doc.end(), [](const auto& x) { return x.is_object(); }))
      continue;  // metricgroups.json is an object
    ++tables;
    for (const auto& entry : doc) {
      for (const char* field : {"MetricExpr", "MetricThreshold"}) {
        auto it = entry.find(field);
        if (it == entry.end()) continue;
        REQUIRE_MESSAGE(it->is_string(), file.string() << ": " << field);
        const std::string text = it->get<std::string>();
        std::string name = entry.value("MetricName", std::string("?"));
        try {
          Expr e = parse(text);
          std::string canon = to_string(e);
          Expr again = parse(canon);
          if (!same(e, again) || to_string(again) != canon) {
            ++failed;
            FAIL_CHECK(file.string() << ": " << name << ": '" << text << "' does not round-trip: '" << canon
                                     << "'");
          }
          ++parsed;
        } catch (const Error& err) {
          ++failed;
          FAIL_CHECK(file.string() << ": " << field << "\n" << perfspec::metric::render(err, name, text));
        }
      }
    }
  }
  // Counted once over the fixed tree (perf 6.12's arch/ folder): 770 tables, 8369 expressions.
  CHECK(tables == 770);
  CHECK(parsed == 8369);
  CHECK(failed == 0);
}
