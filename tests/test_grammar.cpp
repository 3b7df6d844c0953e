// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <tao/pegtl/contrib/analyze.hpp>

#include "grammar/grammar.hpp"
#include "perfspec/perfspec.hpp"

using perfspec::ast::EventKind;
using Value = perfspec::ast::Term::Value;

namespace {
std::string syntax_error(std::string_view text) {
  try {
    perfspec::parse(text);
  } catch (const perfspec::Error& e) {
    return perfspec::render(e, text);
  }
  return "parsed";
}
const perfspec::ast::Event& only(const perfspec::ast::EventList& l) {
  REQUIRE(l.items.size() == 1);
  REQUIRE(l.items[0].events.size() == 1);
  return l.items[0].events[0];
}
perfspec::ast::Event first(std::string_view text) {
  auto l = perfspec::parse(text);
  REQUIRE(l.items.size() == 1);
  REQUIRE(l.items[0].events.size() == 1);
  return l.items[0].events[0];
}
}  // namespace

TEST_CASE("the grammar has no left recursion or infinite loops") {
  CHECK(tao::pegtl::analyze<perfspec::grammar::event_list>() == 0);
  CHECK(tao::pegtl::analyze<perfspec::grammar::term_list_only>() == 0);
}

TEST_CASE("pmu/terms/mods with positions") {
  auto l = perfspec::parse("cpu/event=0x2,inv,ldlat=3/u");
  const auto& e = only(l);
  CHECK(e.kind == EventKind::pmu);
  CHECK(e.name == "cpu");
  CHECK(e.name_span == perfspec::Span{0, 3});
  REQUIRE(e.terms.size() == 3);
  CHECK(e.terms[0].name == "event");
  CHECK(e.terms[0].kind == Value::number);
  CHECK(e.terms[0].number == 2);
  CHECK(e.terms[0].span == perfspec::Span{4, 13});
  CHECK(e.terms[0].value_span == perfspec::Span{10, 13});
  CHECK(e.terms[1].name == "inv");
  CHECK(e.terms[1].kind == Value::none);
  CHECK(e.terms[2].number == 3);
  CHECK(e.modifiers.letters == "u");
  CHECK(e.modifiers.span == perfspec::Span{26, 27});
  CHECK(e.span == perfspec::Span{0, 27});
  CHECK(e.terms_span == perfspec::Span{3, 26});
}

TEST_CASE("groups, named groups and group modifiers") {
  auto l = perfspec::parse("{cycles,instructions}:u,foo{task-clock:k, page-faults}:W, cs");
  REQUIRE(l.items.size() == 3);
  CHECK(l.items[0].braces);
  CHECK(l.items[0].events.size() == 2);
  CHECK(l.items[0].modifiers.letters == "u");
  CHECK(l.items[1].group_name == "foo");
  CHECK(l.items[1].events[0].modifiers.letters == "k");
  CHECK(l.items[1].modifiers.letters == "W");
  CHECK_FALSE(l.items[2].braces);
  CHECK(l.items[2].events[0].name == "cs");
  CHECK(l.items[2].span == perfspec::Span{58, 60});
}

TEST_CASE("every event form") {
  CHECK(first("cycles").kind == EventKind::named);
  CHECK(first("cycles:ppp").modifiers.letters == "ppp");
  CHECK(first("cycles//u").kind == EventKind::pmu);
  CHECK(first("cycles/period=1000/").terms[0].number == 1000);
  CHECK(first("L1-dcache-load-misses:k").name == "L1-dcache-load-misses");
  CHECK(first("L1D.READ.MISS").name == "L1D.READ.MISS");

  const auto& tp = first("sched:sched_switch");
  CHECK(tp.kind == EventKind::tracepoint);
  CHECK(tp.name == "sched");
  CHECK(tp.tp_event == "sched_switch");
  const auto& glob = first("sched:sched_wak*:u");
  CHECK(glob.tp_event == "sched_wak*");
  CHECK(glob.modifiers.letters == "u");
  CHECK(first("syscalls:sys_enter_openat/period=1/").terms.size() == 1);

  const auto& bp = first("mem:0x1000/8:rw:u");
  CHECK(bp.kind == EventKind::breakpoint);
  CHECK(bp.number1 == 0x1000);
  CHECK(bp.number2 == 8);
  CHECK(bp.has_length);
  CHECK(bp.access == "rw");
  CHECK(bp.modifiers.letters == "u");
  const auto& bp2 = first("mem:4096:u");
  CHECK(bp2.access.empty());
  CHECK(bp2.modifiers.letters == "u");

  const auto& num = first("4:0x1a8/period=7/k");
  CHECK(num.kind == EventKind::numeric);
  CHECK(num.number1 == 4);
  CHECK(num.number2 == 0x1a8);
  CHECK(num.modifiers.letters == "k");

  const auto& raw = first("r1a8:pp");
  CHECK(raw.kind == EventKind::raw);
  CHECK(raw.number1 == 0x1a8);
  CHECK(first("ref-cycles").kind == EventKind::named);  // not raw: '-' follows hex

  const auto& q = first("cpu/name='a:b,c.d=e',period=1/");
  CHECK(q.terms[0].kind == Value::quoted);
  CHECK(q.terms[0].text == "a:b,c.d=e");
  const auto& drv = first("cs_etm/@sink0,@cfg=1/");
  CHECK(drv.terms[0].driver);
  CHECK(drv.terms[0].name == "sink0");
  CHECK(drv.terms[1].text == "1");
  CHECK(first("cpu/r0x1a8/").terms[0].name == "r0x1a8");
  CHECK(first("cpu/cpu=0-3/").terms[0].text == "0-3");
  CHECK(first("cpu/foo:bar=1/").terms[0].name == "foo:bar");
  CHECK(first("cpu/event=1/:u").modifiers.letters == "u");
  CHECK(first("uncore_imc_*/event=1/").name == "uncore_imc_*");
}

TEST_CASE("numbers: decimal or hex, at most 64 bits") {
  CHECK(first("cpu/config=0xffffffffffffffff/").terms[0].number == ~0ULL);
  CHECK(first("cpu/config=18446744073709551615/").terms[0].number == ~0ULL);
  CHECK(syntax_error("cpu/config=0x10000000000000000/") ==
        "event syntax error: 'cpu/config=0x10000000000000000/'\n"
        "                                \\___ number '0x10000000000000000' is wider than 64 bits\n");
  CHECK(syntax_error("cpu/config=18446744073709551616/") ==
        "event syntax error: 'cpu/config=18446744073709551616/'\n"
        "                                \\___ number '18446744073709551616' is wider than 64 bits\n");
  CHECK(syntax_error("r12345678901234567") ==
        "event syntax error: 'r12345678901234567'\n"
        "                     \\___ raw event 'r12345678901234567' is wider than 64 bits\n");
  CHECK(syntax_error("4294967296:1") ==
        "event syntax error: '4294967296:1'\n"
        "                     \\___ event type does not fit in 32 bits\n");
}

TEST_CASE("syntax errors point at the character and say what was expected") {
  CHECK(syntax_error("") == "event syntax error: ''\n                     \\___ expected an event\n");
  CHECK(syntax_error("cycles,") ==
        "event syntax error: 'cycles,'\n                            \\___ expected an event\n");
  CHECK(syntax_error("cycles;") ==
        "event syntax error: 'cycles;'\n                           \\___ expected ',' or the end of the "
        "event list\n");
  CHECK(syntax_error("{cycles") ==
        "event syntax error: '{cycles'\n                            \\___ expected ',' or '}' to close the "
        "group\n");
  CHECK(syntax_error("{cycles,{instructions}}") ==
        "event syntax error: '{cycles,{instructions}}'\n"
        "                             \\___ nested groups are not supported\n");
  CHECK(syntax_error("cpu/event=1") ==
        "event syntax error: 'cpu/event=1'\n                                \\___ expected ',' or '/' after "
        "a term\n");
  CHECK(
      syntax_error("cpu/event=/") ==
      "event syntax error: 'cpu/event=/'\n                               \\___ expected a value after '='\n");
  CHECK(syntax_error("cpu/event=1,/") ==
        "event syntax error: 'cpu/event=1,/'\n                                 \\___ expected a term after "
        "','\n");
  CHECK(syntax_error("cpu/name='abc/") ==
        "event syntax error: 'cpu/name='abc/'\n"
        "                                   \\___ unterminated quoted value: missing the closing '\n");
  CHECK(syntax_error("cycles:") ==
        "event syntax error: 'cycles:'\n                            \\___ expected modifiers after ':'\n");
  CHECK(
      syntax_error("{cycles}:") ==
      "event syntax error: '{cycles}:'\n                              \\___ expected modifiers after ':'\n");
  CHECK(syntax_error("mem:0xzz") ==
        "event syntax error: 'mem:0xzz'\n"
        "                         \\___ expected a breakpoint address (decimal or 0x hex)\n");
  CHECK(syntax_error("cpu/@/") ==
        "event syntax error: 'cpu/@/'\n                          \\___ expected a driver config name after "
        "'@'\n");
}

TEST_CASE("modifier errors point at the letter") {
  CHECK(syntax_error("cycles:uu") ==
        "event syntax error: 'cycles:uu'\n                             \\___ Duplicate modifier 'u'\n");
  CHECK(syntax_error("cycles:pppp") ==
        "event syntax error: 'cycles:pppp'\n"
        "                               \\___ too many 'p' modifiers: precise level is at most 3 (ppp)\n");
  CHECK(syntax_error("cpu/event=1/ux") ==
        "event syntax error: 'cpu/event=1/ux'\n"
        "                                  \\___ invalid modifier 'x'\n"
        "help: modifiers are letters from 'ukhIGHpPSDWebR'\n");
  CHECK(syntax_error("{cycles}:kk") ==
        "event syntax error: '{cycles}:kk'\n                               \\___ Duplicate modifier 'k'\n");
  CHECK(syntax_error("mem:0x10:rr") ==
        "event syntax error: 'mem:0x10:rr'\n                              \\___ duplicate breakpoint access "
        "'r'\n");
  // 16 letters is the most that can be written without repeating one (p three times).
  CHECK(syntax_error("cycles:ukhIGHpppSDWebR") == "parsed");
  CHECK(syntax_error("cycles:ukhIGHpppSDWebRu") ==
        "event syntax error: 'cycles:ukhIGHpppSDWebRu'\n"
        "                                           \\___ Duplicate modifier 'u'\n");
}

TEST_CASE("blanks around list commas are allowed, as perf allows them") {
  auto l = perfspec::parse(" cycles , {instructions , cs}  ");
  CHECK(l.items.size() == 2);
  CHECK(l.items[1].events.size() == 2);
}

TEST_CASE("a NUL byte is an error at its position") {
  CHECK(syntax_error(std::string_view("cyc\0les", 7)) ==
        "event syntax error: 'cyc?les'\n                        \\___ NUL character in event list\n");
  // Inside a quoted value (the one rule that takes any byte), and after a term.
  CHECK(syntax_error(std::string_view("cpu/name='a\0b'/", 15)) ==
        "event syntax error: 'cpu/name='a?b'/'\n                                \\___ NUL character in event "
        "list\n");
  CHECK(syntax_error(std::string_view("cpu/event=1\0/", 13)) ==
        "event syntax error: 'cpu/event=1?/'\n                                \\___ NUL character in event "
        "list\n");
  // A syntax error before the NUL is reported as itself.
  CHECK(syntax_error(std::string_view("cpu/=1/\0", 8)).find("expected") != std::string::npos);
}

TEST_CASE("long inputs are shown in a window around the error") {
  std::string text = std::string(100, 'a') + "," + std::string(50, 'b') + ";";
  std::string err = syntax_error(text);
  CHECK(err.starts_with("event syntax error: '.."));
  auto lines = err.substr(err.find('\n') + 1);
  // The caret still sits under the ';'.
  auto caret = lines.find('\\');
  auto first_line = err.substr(0, err.find('\n'));
  CHECK(first_line[caret] == ';');
}

TEST_CASE("origins: diagnostics point into the user's file, escapes included") {
  std::string text = "cycles,cpu/umsk=1/";
  perfspec::Error e("unknown term 'umsk' for pmu 'cpu'", perfspec::Span{11, 15});
  CHECK(perfspec::render(e, text, perfspec::Origin{"bench.toml", 12, 9})
            .starts_with("bench.toml:12:20: error: unknown term 'umsk' for pmu 'cpu'\n"
                         "event syntax error: 'cycles,cpu/umsk=1/'\n"
                         "                                \\___ unknown term"));
  // In the file: events = "cpu/name=\"x\",umsk=1/" -- the string perfspec sees has the escapes removed.
  // File columns of its bytes: 'c' at 11; the two quotes were two bytes each in the file.
  std::string unescaped = "cpu/name=\"x\",umsk=1/";
  perfspec::Origin origin{"bench.toml", 3, 11, {}};
  std::uint32_t col = 11;
  for (char c : unescaped) {
    origin.columns.push_back(col);
    col += c == '"' ? 2 : 1;
  }
  perfspec::Error e2("unknown term 'umsk' for pmu 'cpu'", perfspec::Span{13, 17});
  CHECK(perfspec::render(e2, unescaped, origin).starts_with("bench.toml:3:26: error:"));
  CHECK(origin.column_of(0) == 11);
  CHECK(origin.column_of(30) == 11 + 21 + 2 + 30 - 21);  // past the end: one column per byte
  // A string over two lines of its file (a TOML """ string): "cycles,\n" ends line 4, "cpu/umsk=1/"
  // starts line 5 at column 3; the error's line is its byte's.
  std::string two = "cycles,cpu/umsk=1/";
  perfspec::Origin lines{"bench.toml", 4, 5, {}, {}};
  for (std::uint32_t k = 0; k < two.size(); ++k) {
    lines.lines.push_back(k < 7 ? 4 : 5);
    lines.columns.push_back(k < 7 ? 5 + k : 3 + (k - 7));
  }
  perfspec::Error e3("unknown term 'umsk' for pmu 'cpu'", perfspec::Span{11, 15});
  CHECK(perfspec::render(e3, two, lines).starts_with("bench.toml:5:7: error:"));
  CHECK(lines.line_of(0) == 4);
  CHECK(lines.line_of(100) == 5);  // past the end: the last byte's line
}
