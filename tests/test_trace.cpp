// SPDX-License-Identifier: MIT
// perf trace's printer (SyscallTrace) on records made here, with exact lines: the layout of
// perf 6.12's builtin-trace.c (checked against perf 6.12 itself by tests/cli/perf_trace_side_by_side.py),
// pairing, interruptions, return values, filters and the -s table's figures. Formats are
// tests/fixtures/tracing/, copied from a 6.18 kernel's tracefs.
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "perfspec/top.hpp"
#include "perfspec/trace.hpp"
#include "support.hpp"

namespace {

using namespace perfspec;
using Kind = TraceEvent::Kind;

std::string read_fixture(std::string_view name) {
  std::ifstream in(test::fixture(fmt::format("tracing/{}", name)), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename T> void put(std::vector<std::byte>& b, std::size_t at, T v) {
  if (b.size() < at + sizeof v) b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}

constexpr std::uint64_t base = 1'000'000'000;  // the first sample's time

struct Fixture {
  record::Tracepoints tps;
  const record::Tracepoint *enter, *exit, *openat, *sched_switch;
  std::string out;
  std::vector<std::vector<std::byte>> payloads;  // kept alive for the records' spans
  std::map<int, std::string> names{{42, "sleep"}, {43, "cat"}};

  Fixture()
      : enter(&tps.add_format("raw_syscalls", read_fixture("sys_enter.format"))),
        exit(&tps.add_format("raw_syscalls", read_fixture("sys_exit.format"))),
        openat(&tps.add_format("syscalls", read_fixture("sys_enter_openat.format"))),
        sched_switch(&tps.add_format("sched", read_fixture("sched_switch.format"))) {}

  SyscallTrace make(TraceOptions options = {}) {
    std::vector<TraceEvent> events{{Kind::sys_enter, "raw_syscalls:sys_enter", enter, 0},
                                   {Kind::sys_exit, "raw_syscalls:sys_exit", exit, 0},
                                   {Kind::tracepoint, "sched:sched_switch", sched_switch, 0}};
    TraceHost host;
    host.comm = [this](int tid) -> std::optional<std::string> {
      auto it = names.find(tid);
      if (it == names.end()) return std::nullopt;
      return it->second;
    };
    host.enter_format = [this](std::string_view name) { return name == "openat" ? openat : nullptr; };
    host.syscall_name = [](long nr) -> std::optional<std::string> {
      static const std::map<long, std::string> n{
          {12, "brk"}, {257, "openat"}, {231, "exit_group"}, {0, "read"}};
      auto it = n.find(nr);
      return it == n.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    return SyscallTrace(std::move(events), options, std::move(host),
                        [this](std::string_view s) { out += s; });
  }

  record::Record sample(std::size_t attr, int tid, std::uint64_t time, std::vector<std::byte> raw) {
    payloads.push_back(std::move(raw));
    record::Sample s;
    s.type = record::sample_tid | record::sample_time | record::sample_raw;
    s.pid = s.tid = static_cast<std::uint32_t>(tid);
    s.time = time;
    s.raw = payloads.back();
    record::Record r;
    r.type = static_cast<std::uint32_t>(record::Type::sample);
    r.attr = attr;
    r.body = s;
    return r;
  }
  record::Record sys_enter(int tid, std::uint64_t time, long nr, std::vector<std::uint64_t> args = {}) {
    std::vector<std::byte> raw(64);
    put<std::uint16_t>(raw, 0, 443);
    put<std::int32_t>(raw, 4, tid);
    put<std::int64_t>(raw, 8, nr);
    for (std::size_t i = 0; i < args.size(); ++i) put<std::uint64_t>(raw, 16 + 8 * i, args[i]);
    return sample(0, tid, time, std::move(raw));
  }
  record::Record sys_exit(int tid, std::uint64_t time, long nr, long ret) {
    std::vector<std::byte> raw(24);
    put<std::uint16_t>(raw, 0, 442);
    put<std::int32_t>(raw, 4, tid);
    put<std::int64_t>(raw, 8, nr);
    put<std::int64_t>(raw, 16, ret);
    return sample(1, tid, time, std::move(raw));
  }
  record::Record switch_out(int tid, std::uint64_t time) {
    std::vector<std::byte> raw(64);
    put<std::uint16_t>(raw, 0, 372);
    std::memcpy(raw.data() + 8, "sleep", 5);
    put<std::int32_t>(raw, 24, tid);
    put<std::int32_t>(raw, 28, 120);
    put<std::int64_t>(raw, 32, 1);
    std::memcpy(raw.data() + 40, "swapper/0", 9);
    put<std::int32_t>(raw, 60, 120);
    return sample(2, tid, time, std::move(raw));
  }
};

// perf's padding: the system call and its arguments fill 70 columns before "= ".
std::string line(std::string_view head, std::string_view call, std::string_view ret) {
  return fmt::format("{}{}{:>{}}= {}\n", head, call, " ", call.size() < 70 ? 70 - call.size() : 1, ret);
}

// An entry printed as it stands when another event comes: its ")" and " ..." at column 66.
std::string interrupted(std::string_view head, std::string_view call) {
  return fmt::format("{}{}){}{}", head, call, std::string(call.size() + 1 < 66 ? 65 - call.size() : 0, ' '),
                     " ...\n");
}

}  // namespace

TEST_CASE("trace: a system call is one line when it returns, its arguments named by its format") {
  Fixture f;
  auto t = f.make();
  t.add(f.sys_enter(42, base, 257, {static_cast<std::uint64_t>(-100), 0x7f00, 0x80000, 0}));
  CHECK(f.out.empty());  // printed when it returns
  t.add(f.sys_exit(42, base + 500'000, 257, 3));
  t.add(f.sys_enter(42, base + 2'000'000, 257,
                    {static_cast<std::uint64_t>(-100), 0x7f10, 01 | 0100 | 01000, 0644}));
  t.add(f.sys_exit(42, base + 2'012'000, 257, -2));
  t.add(f.sys_enter(42, base + 3'000'000, 12, {0}));
  t.add(f.sys_exit(42, base + 3'001'000, 12, 0x5000));
  CHECK(f.out == line("     0.000 ( 0.500 ms): sleep/42 ",
                      "openat(dfd: CWD, filename: 0x7f00, flags: RDONLY|CLOEXEC)", "3") +
                     line("     2.000 ( 0.012 ms): sleep/42 ",
                          "openat(dfd: CWD, filename: 0x7f10, flags: CREAT|TRUNC|WRONLY, mode: IRUGO|IWUSR)",
                          "-1 ENOENT (No such file or directory)") +
                     // brk has no format here: arguments as arg0.. (all zero: none); its return in hex
                     line("     3.000 ( 0.001 ms): sleep/42 ", "brk()", "0x5000"));
  CHECK(t.printed() == 3);
}

TEST_CASE("trace: an entry another thread interrupts, its return continued; exit_group never returns") {
  Fixture f;
  auto t = f.make();
  t.add(f.sys_enter(42, base, 0, {3, 0x1000, 64}));
  t.add(f.sys_enter(43, base + 100'000, 12, {0}));
  t.add(f.sys_exit(43, base + 110'000, 12, 0x9000));
  t.add(f.sys_exit(42, base + 400'000, 0, 64));
  t.add(f.sys_enter(43, base + 500'000, 231, {0}));
  CHECK(f.out == interrupted("     0.000 (         ): sleep/42 ", "read(arg0: 3, arg1: 4096, arg2: 64") +
                     line("     0.100 ( 0.010 ms): cat/43 ", "brk()", "0x9000") +
                     line("     0.000 ( 0.400 ms): sleep/42 ", " ... [continued]: read())", "64") +
                     line("     0.500 (         ): cat/43 ", "exit_group()", "?"));
}

TEST_CASE("trace: a return without its entry, and a thread without a name") {
  Fixture f;
  auto t = f.make();
  t.add(f.sys_exit(77, base, 12, 0x1000));
  CHECK(f.out == line("         ? (         ): :77/77 ", " ... [continued]: brk())", "0x1000"));
}

TEST_CASE("trace: a tracepoint's fields, zero ones left out, between system calls") {
  Fixture f;
  auto t = f.make();
  t.add(f.sys_enter(42, base, 12, {0}));
  t.add(f.switch_out(42, base + 1'000'000));
  CHECK(f.out == interrupted("     0.000 (         ): sleep/42 ", "brk(") +
                     "     1.000 (         ): sleep/42 sched:sched_switch(prev_comm: \"sleep\", prev_pid: 42 "
                     "(sleep), prev_prio: 120, prev_state: 1, next_comm: \"swapper/0\", next_prio: 120)\n");
}

TEST_CASE("trace: --failure, --duration and --max-events") {
  SUBCASE("failure") {
    Fixture f;
    auto t = f.make({.failure_only = true});
    t.add(f.sys_enter(42, base, 12, {0}));
    t.add(f.sys_exit(42, base + 1000, 12, 0x1000));
    t.add(f.sys_enter(42, base + 2000, 12, {0}));
    t.add(f.sys_exit(42, base + 3000, 12, -12));
    CHECK(f.out == line("     0.002 ( 0.001 ms): sleep/42 ", "brk()", "-1 ENOMEM (Cannot allocate memory)"));
  }
  SUBCASE("duration") {
    Fixture f;
    auto t = f.make({.min_duration_ms = 1.5});
    t.add(f.sys_enter(42, base, 12, {0}));
    t.add(f.sys_exit(42, base + 1'499'999, 12, 1));
    t.add(f.sys_enter(42, base + 2'000'000, 12, {0}));
    t.add(f.sys_exit(42, base + 3'600'000, 12, 2));
    t.add(f.sys_exit(43, base + 4'000'000, 12, 3));  // no entry: no duration to compare
    CHECK(f.out == line("     2.000 ( 1.600 ms): sleep/42 ", "brk()", "0x2"));
  }
  SUBCASE("max-events") {
    Fixture f;
    auto t = f.make({.max_events = 2});
    for (int i = 0; i < 3; ++i) {
      t.add(f.sys_enter(42, base + 10 * i, 12, {0}));
      t.add(f.sys_exit(42, base + 10 * i + 5, 12, i));
    }
    CHECK(t.done());
    CHECK(t.printed() == 2);
  }
}

TEST_CASE("trace -s: per thread, calls, errors and times as perf's Welford figures") {
  Fixture f;
  auto t = f.make({.summary = true, .summary_only = true, .errno_summary = true});
  // openat taking 1, 2 and 3 ms, the last failing: total 6, mean 2, the standard deviation of the mean
  // sqrt(2e12 / 2 / 3) ns = 0.577 ms, 28.87 % of the mean
  std::uint64_t at = base;
  for (int i = 1; i <= 3; ++i) {
    t.add(f.sys_enter(42, at, 257, {static_cast<std::uint64_t>(-100), 0x7f00, 0, 0}));
    t.add(f.sys_exit(42, at + 1'000'000ull * static_cast<std::uint64_t>(i), 257, i == 3 ? -2 : 3));
    at += 10'000'000;
  }
  t.add(f.sys_enter(43, at, 12, {0}));
  t.add(f.sys_exit(43, at + 10'000, 12, 0x1000));
  t.finish();
  const std::string table_head =
      "\n   syscall            calls  errors  total       min       avg       max       stddev\n"
      "                                     (msec)    (msec)    (msec)    (msec)        (%)\n"
      "   --------------- --------  ------ -------- --------- --------- ---------     ------\n";
  CHECK(f.out ==
        "\n Summary of events:\n\n"
        " cat (43), 2 events, 25.0%\n" +
            table_head +
            "   brk                    1      0     0.010     0.010     0.010     0.010      0.00%\n\n\n"
            " sleep (42), 6 events, 75.0%\n" +
            table_head +
            "   openat                 3      1     6.000     1.000     2.000     3.000     28.87%\n"
            "\t\t\t\tENOENT: 1\n\n\n");
}

TEST_CASE("spec: the system calls of this machine by number and name (libaudit)") {
  auto all = spec::syscalls();
  REQUIRE(all.size() > 250);
  auto read = spec::syscall_number("read");
  REQUIRE(read);
  CHECK(spec::syscall_name(*read) == "read");
  CHECK(spec::syscall_number("openat"));
  CHECK_FALSE(spec::syscall_number("no_such_call"));
  CHECK_FALSE(spec::syscall_name(-1));
#if defined(__x86_64__)
  CHECK(*read == 0);
  CHECK(spec::syscall_name(257) == "openat");
#elif defined(__aarch64__)
  CHECK(*read == 63);
  CHECK(spec::syscall_name(56) == "openat");
#endif
}

TEST_CASE("top: perf top's table, its header, and aging by 7/8") {
  TopTable top({.sort = {"dso", "sym"},
                .show_nr_samples = false,
                .hide_kernel = false,
                .hide_user = false,
                .zero = false,
                .event = "cpu-clock:ppp",
                .frequency = 4000});
  for (int i = 0; i < 3; ++i)
    top.add({.comm = "sh",
             .pid = 7,
             .dso = "/usr/bin/dash",
             .symbol = "evaltree",
             .address = 0x10,
             .level = '.',
             .period = 250000});
  top.add({.comm = "sh",
           .pid = 7,
           .dso = "[kernel.kallsyms]",
           .symbol = "pvm_safe_halt",
           .address = 0,
           .level = 'k',
           .period = 250000});
  top.add({.comm = "sh",
           .pid = 7,
           .dso = "/usr/lib/x86_64-linux-gnu/libc.so.6",
           .symbol = {},
           .address = 0x1750ce,
           .level = '.',
           .period = 250000});
  CHECK(top.screen(120, 10, 1, 3) ==
        "Samples: 5 of event 'cpu-clock:ppp', 4000 Hz, Event count (approx.): 1250000 lost: 1/3 drop: 0/0\n"
        "Overhead  Shared Object  Symbol\n"
        "  60.00%  dash           [.] evaltree\n"
        "  20.00%  [kernel]       [k] pvm_safe_halt\n"
        "  20.00%  libc.so.6      [.] 0x00000000001750ce");
  // a screen of 3 lines holds one row; 20 columns cut each line
  CHECK(top.screen(20, 3) == "Samples: 5 of event \nOverhead  Shared Obj\n  60.00%  dash      ");
  top.age();  // 750000 * 7/8 = 656250, 250000 * 7/8 = 218750
  CHECK(top.screen(200, 3).starts_with(
      "Samples: 5 of event 'cpu-clock:ppp', 4000 Hz, Event count (approx.): 1093750 lost: 0/0 drop: 0/0\n"));
  TopTable by_comm({.sort = {"comm", "pid"},
                    .show_nr_samples = true,
                    .hide_kernel = true,
                    .hide_user = false,
                    .zero = true,
                    .event = "cycles",
                    .frequency = 0});
  by_comm.add({.comm = "sh", .pid = 7, .dso = {}, .symbol = {}, .address = 0, .level = '.', .period = 3});
  by_comm.add(
      {.comm = "sh", .pid = 7, .dso = {}, .symbol = {}, .address = 0, .level = 'k', .period = 5});  // -K
  CHECK(by_comm.screen(100, 5) ==
        "Samples: 1 of event 'cycles', Event count (approx.): 3 lost: 0/0 drop: 0/0\n"
        "Overhead    Samples  Command      Pid:Command\n"
        " 100.00%          1  sh             7:sh");
  by_comm.age();
  CHECK(by_comm.screen(100, 5).ends_with("Pid:Command"));  // -z: nothing left
  CHECK_THROWS_WITH_AS(TopTable({.sort = {"srcline"},
                                 .show_nr_samples = false,
                                 .hide_kernel = false,
                                 .hide_user = false,
                                 .zero = false,
                                 .event = {},
                                 .frequency = 0}),
                       "unknown --sort key: 'srcline' (perfspec top sorts by comm, pid, dso and sym)", Error);
}
