// SPDX-License-Identifier: MIT
// The format files libtraceevent 1.7.1 must not be given as they are (record/format_guard.hpp): each
// case here is one its parser reads freed memory on, or dereferences a null field on (ASan in the
// sanitize stage; a crash or worse without it), and what perfspec gives it or says instead.
#include <doctest/doctest.h>

#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "perfspec/error.hpp"
#include "perfspec/tracepoint.hpp"
#include "record/format_guard.hpp"

using namespace perfspec;
using namespace perfspec::record;

namespace {

// A format file of the shape the kernel writes, with `fields` after the common ones.
std::string format_with(std::string_view fields, std::string_view print) {
  std::string f =
      "name: guarded\nID: 777\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
  f += fields;
  f += "\nprint fmt: ";
  f += print;
  f += "\n";
  return f;
}

const std::string_view two_fields =
    "\tfield:u64 addr;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:unsigned int nents[4];\toffset:16;\tsize:16;\tsigned:0;\n";

std::string guard(std::string_view format, std::string_view system = "dma") {
  std::lock_guard lock(format_parse_mutex());
  return guard_format(format, system);
}

std::string print_fmt_of(const std::string& format) { return format.substr(format.find("print fmt: ")); }

// A payload of the format above: common fields, then addr.
std::vector<std::byte> payload(std::uint64_t addr) {
  std::vector<std::byte> raw(32);
  std::uint16_t type = 777;
  std::memcpy(raw.data(), &type, 2);
  std::memcpy(raw.data() + 8, &addr, 8);
  return raw;
}

}  // namespace

TEST_CASE("format guard: the sizeofs libtraceevent 1.7.1 frees twice become their sizes") {
  CHECK(print_fmt_of(guard(format_with(two_fields, "\"%d\", sizeof(int)"))) == "print fmt: \"%d\", 4\n");
  CHECK(
      print_fmt_of(guard(format_with(two_fields, "\"%d %d\", sizeof( unsigned int ), sizeof(long long)"))) ==
      "print fmt: \"%d %d\", 4, 8\n");
  CHECK(print_fmt_of(guard(format_with(two_fields, "\"%d\", sizeof(unsigned\n long long)"))) ==
        "print fmt: \"%d\", 8\n");
  CHECK(print_fmt_of(guard(format_with(two_fields, "\"%d\", REC->addr / sizeof(REC->addr)"))) ==
        "print fmt: \"%d\", REC->addr / 8\n");
  // What libtraceevent reads safely stays: the traced kernel's long, "unsigned" alone, an array field
  // (it refuses it), a type it does not know, a sizeof inside a string.
  for (std::string_view safe : {"\"%d\", sizeof(long)", "\"%d\", sizeof(unsigned long)",
                                "\"%d\", sizeof(unsigned)", "\"%d\", sizeof(REC->nents)",
                                "\"%d\", sizeof(u64)", "\"sizeof(int)\"", "\"%d\", sizeof(REC->nothing)"}) {
    std::string f = format_with(two_fields, safe);
    CHECK(guard(f) == f);
  }
  // A sizeof a fixed libtraceevent refuses for its missing ')': 1.7.1 is made to refuse it at the type.
  CHECK(print_fmt_of(guard(format_with(two_fields, "\"%d\", sizeof(int, 2)"))) ==
        "print fmt: \"%d\", sizeof(__perfspec_not_a_type, 2)\n");
  CHECK(print_fmt_of(guard(format_with(two_fields, "\"%d\", sizeof(long long x)"))) ==
        "print fmt: \"%d\", sizeof(long __perfspec_not_a_type x)\n");
  CHECK(print_fmt_of(guard(format_with(two_fields, "\"%d\", sizeof(REC->addr + 1)"))) ==
        "print fmt: \"%d\", sizeof(__perfspec_not_a_type->addr + 1)\n");
}

TEST_CASE("format guard: a tracepoint whose print fmt has sizeof(REC->field) prints the field's size") {
  Tracepoints tps;
  const Tracepoint& tp = tps.add_format("dma", format_with(two_fields,
                                                           "\"addr=%llx words=%d\", REC->addr, "
                                                           "sizeof(REC->addr) / sizeof(int)"));
  CHECK(tp.print(payload(0xabc)) == "addr=abc words=2");
}

TEST_CASE("format guard: REC-> of no field in __print_flags or __print_symbolic is refused, with the line") {
  std::string flags = format_with(two_fields, "\"%s\", __print_flags(REC->flags, \"|\", { 1, \"A\" })");
  CHECK_THROWS_WITH_AS(
      guard(flags),
      "a dma format file libtraceevent cannot parse: line 12: the print fmt reads REC->flags in "
      "__print_flags, and the event has no field flags",
      Error);
  Tracepoints tps;
  CHECK_THROWS_WITH_AS(
      (void)tps.add_format("dma", flags),
      "a dma format file libtraceevent cannot parse: line 12: the print fmt reads REC->flags in "
      "__print_flags, and the event has no field flags",
      Error);
  // The flag stays set past an argument that is no field, to the next REC->.
  CHECK_THROWS_WITH_AS(
      guard(format_with(two_fields,
                        "\"%s %d\", __print_symbolic(1, { 1, \"A\" }),\n"
                        " REC->gone")),
      "a dma format file libtraceevent cannot parse: line 13: the print fmt reads REC->gone in "
      "__print_symbolic, and the event has no field gone",
      Error);
  // Without either, a REC-> of no field is libtraceevent's to refuse, safely: perf prints such an event
  // as it can.
  std::string plain = format_with(two_fields, "\"%d\", REC->gone");
  CHECK(guard(plain) == plain);
  std::string named =
      format_with(two_fields, "\"%s %d\", __print_flags(REC->addr, \"|\", { 1, \"A\" }), REC->gone");
  CHECK(guard(named) == named);
  Tracepoints other;
  CHECK(other.add_format("dma", named).name() == "guarded");
  std::string flags_ok =
      format_with(two_fields, "\"%s\", __print_flags(REC->addr, \"|\", { 1, \"A\" }, { 2, \"B\" })");
  Tracepoints third;
  CHECK(third.add_format("dma", flags_ok).print(payload(3)) == "A|B");
}

TEST_CASE("format guard: a file that stops inside __print_flags leaves nothing for the next one") {
  // libtraceevent keeps "a flag field is next" in a global: this file sets it and fails before any
  // REC->; the next file's REC-> of no field would then dereference a null field.
  Tracepoints tps;
  try {
    (void)tps.add_format("dma", format_with(two_fields, "\"%s\", __print_flags(#"));
  } catch (const Error&) {
  }
  std::string next = format_with(two_fields, "\"%d\", REC->gone");
  CHECK(tps.add_format("dma", next).name() == "guarded");
}

namespace {

// How the child ended, as the error says it: the signal (the child's fault signals are the kernel's
// default), or under AddressSanitizer, which reports a bad access that is no fault and aborts
// (abort_on_error=1, as scripts/test.sh runs it) or exits 1, one of those.
bool ended_as(const std::string& message, std::string_view signal) {
#if defined(__SANITIZE_ADDRESS__)
  if (message.ends_with("(SIGABRT)") || message.ends_with("(exit status 1)")) return true;
#endif
  return message.ends_with(fmt::format("({})", signal));
}

std::string add_error(std::string_view format) {
  Tracepoints tps;
  try {
    (void)tps.add_format("dma", format);
  } catch (const Error& e) {
    return e.message();
  }
  return "no error";
}

}  // namespace

TEST_CASE("format guard: a file whose parse faults is tried in a child first, and refused") {
  const std::string prefix =
      "a dma format file libtraceevent cannot parse: guarded: parsing it ended a child process that "
      "tried it first (";
  // A null operand: an operator libtraceevent does not know after "?:" or "[]".
  for (std::string_view print : {"\"%d\", REC->addr ? 1 : 2 @ 3", "\"%d\", REC->nents[1] $ 2"}) {
    std::string m = add_error(format_with(two_fields, print));
    CHECK(m.starts_with(prefix));
    CHECK(ended_as(m, "SIGSEGV"));
  }
  // A constant division by zero: SIGFPE on x86. arm64's sdiv gives 0 instead of trapping, so there
  // the parse ends normally and the file is taken.
  std::string m = add_error(format_with(two_fields, "\"%d\", 1 / 0"));
#if defined(__aarch64__)
  CHECK(m == "no error");
#else
  CHECK(m.starts_with(prefix));
  CHECK(ended_as(m, "SIGFPE"));
#endif
  // A field that ends at "[" (a null token), in the guard's own parse of the fields.
  std::string cut = format_with(two_fields, "\"x\"");
  cut.insert(cut.find("\tfield:u64"), "\tfield:char a[\x01\n");
  m = add_error(cut);
  CHECK(m.starts_with(prefix));
  CHECK(ended_as(m, "SIGSEGV"));
}

TEST_CASE("format guard: parse_in_child says which parse ended the child, and how") {
  std::lock_guard lock(format_parse_mutex());
  auto none = parse_in_child(3, [](std::size_t) {});
  CHECK(!none);
  auto third = parse_in_child(5, [](std::size_t i) {
    if (i == 2) ::raise(SIGSEGV);
  });
  REQUIRE(third);
  CHECK(third->index == 2);
  CHECK(third->how == "SIGSEGV");
  auto exits = parse_in_child(2, [](std::size_t i) {
    if (i == 1) ::_exit(7);
  });
  REQUIRE(exits);
  CHECK(exits->index == 1);
  CHECK(exits->how == "exit status 7");
  // What a parse throws is not a fault: the caller parses again and sees it.
  CHECK(!parse_in_child(2, [](std::size_t) { throw Error(ErrorKind::bad_value, "no"); }));
  // A parse that never ends: blamed once it has run for the timeout. The timeout also covers the fork of
  // this (perhaps sanitized, perhaps loaded) process and the first parse: generous, as the child pauses.
  auto slow = parse_in_child(
      2,
      [](std::size_t i) {
        if (i == 1) ::pause();
      },
      3000);
  REQUIRE(slow);
  CHECK(slow->index == 1);
  CHECK(slow->how == "a parse still running after 3000 ms");
}

namespace {

// The tracepoint of format_with(two_fields, print) printed on `raw`: its text, or the error.
std::string printed(std::string_view print, const std::vector<std::byte>& raw) {
  Tracepoints tps;
  const Tracepoint& tp = tps.add_format("dma", format_with(two_fields, print));
  try {
    return tp.print(raw);
  } catch (const DecodeError& e) {
    return "error: " + e.message();
  }
}

// A payload whose nents[0] is n0 and nents[1] is n1.
std::vector<std::byte> with_nents(std::uint64_t addr, std::uint32_t n0, std::uint32_t n1 = 9) {
  auto raw = payload(addr);
  std::memcpy(raw.data() + 16, &n0, 4);
  std::memcpy(raw.data() + 20, &n1, 4);
  return raw;
}

}  // namespace

TEST_CASE("print guard: lengths libtraceevent reads without a bound are checked against the payload") {
  CHECK(printed("\"%s\", __print_hex(REC->addr, 4)", payload(0x04030201)) == "01 02 03 04");
  CHECK(printed("\"%s\", __print_hex(REC->addr, 1000)", payload(1)) ==
        "error: dma:guarded payload: the print fmt's __print_hex reads [8, +1000), past the payload (32 "
        "bytes)");
  // Far enough past it to fault: libtraceevent would end the process.
  CHECK(printed("\"%s\", __print_hex_str(REC->addr, 100000000)", payload(1)) ==
        "error: dma:guarded payload: the print fmt's __print_hex reads [8, +100000000), past the payload (32 "
        "bytes)");
  // The length from the payload itself: addr bytes of addr.
  CHECK(printed("\"%s\", __print_hex(REC->addr, REC->addr)", payload(8)) == "08 00 00 00 00 00 00 00");
  CHECK(
      printed("\"%s\", __print_hex(REC->addr, REC->addr)", payload(25)) ==
      "error: dma:guarded payload: the print fmt's __print_hex reads [8, +25), past the payload (32 bytes)");
  // libtraceevent 1.8 prints an array as the kernel's trace does, {0x7,...}; 1.7 as "7 9 0 0"
  const bool braces = !std::string_view(PERFSPEC_TRACEEVENT_VERSION).starts_with("1.") ||
                      std::stoi(std::string(PERFSPEC_TRACEEVENT_VERSION).substr(2)) >= 8;
  CHECK(printed("\"%s\", __print_array(REC->nents, 4, 4)", with_nents(0, 7)) ==
        (braces ? "{0x7,0x9,0x0,0x0}" : "7 9 0 0"));
  CHECK(printed("\"%s\", __print_array(REC->nents, 5, 4)", with_nents(0, 7)) ==
        "error: dma:guarded payload: the print fmt's __print_array reads [16, +20), past the payload (32 "
        "bytes)");
  // A "field" that is an expression: libtraceevent reads it as a field's struct.
  CHECK(printed("\"%s\", __print_hex(REC->addr + 1, 4)", payload(1)) ==
        "error: dma:guarded payload: the print fmt's __print_hex reads an argument that is neither a field "
        "nor a "
        "dynamic array");
  // A length that is a symbol libtraceevent looks up: not known here, so not printed.
  CHECK(printed("\"%s\", __print_hex(REC->addr, HI_SOFTIRQ)", payload(1)) ==
        "error: dma:guarded payload: the length of a __print_hex depends on what perfspec cannot evaluate (a "
        "symbol or an address)");
}

TEST_CASE("print guard: a division by zero in the payload's branch, and an index past 2 GiB") {
  CHECK(printed("\"%d\", 100 / REC->addr", payload(5)) == "20");
  CHECK(printed("\"%d\", 100 / REC->addr", payload(0)) ==
        "error: dma:guarded payload: the print fmt divides by zero ('/' by a value of 0 in this payload)");
  CHECK(printed("\"%d\", 100 % REC->addr", payload(0)) ==
        "error: dma:guarded payload: the print fmt divides by zero ('%' by a value of 0 in this payload)");
  // Only the branch the payload takes is evaluated, as libtraceevent does.
  CHECK(printed("\"%d\", REC->addr ? 100 / REC->addr : 7", payload(0)) == "7");
  CHECK(printed("\"%d\", REC->addr ? 100 / REC->addr : 7", payload(4)) == "25");
  // libtraceevent checks an index, but as an int: from 2 GiB up it reads where the index says.
  CHECK(printed("\"%d\", REC->nents[1]", with_nents(0, 7)) == "9");
  CHECK(printed("\"%d\", REC->nents[100]", with_nents(0, 7)) == "0");
  CHECK(printed("\"%d\", REC->nents[600000000]", with_nents(0, 7)) ==
        "error: dma:guarded payload: the print fmt's index reads [2400000016, +4), past the payload (32 "
        "bytes)");
}
