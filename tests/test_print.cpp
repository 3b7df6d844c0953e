// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <cerrno>
#include <limits>
#include <stdexcept>

#include "perfspec/fmt.hpp"
#include "perfspec/perfspec.hpp"
#include "spec/printable.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using runtime::Count;
using runtime::Note;

namespace {
const spec::Machine& skx() {
  static spec::Machine m(test::fixture("intel_skx"));
  return m;
}
using test::counted;
using test::note;
}  // namespace

TEST_CASE("stat text: values, units, alias scale, multiplexing, failures and notes, exactly") {
  auto set =
      resolve("task-clock,cycles,uncore_imc_0/cas_count_read/,power/energy-pkg/,instructions,faults", skx());
  std::vector<Count> counts = {counted(1234567), counted(1000000, 400, 100), counted(16384),
                               counted(4294967296)};
  Count missing;
  missing.state = Count::State::not_supported;
  missing.failure = runtime::Failure{ENOENT,     "ENOENT", "meaning",
                                     "the hint", -1,       "its group leader 'x' could not be opened"};
  counts.push_back(missing);
  Count idle;
  idle.state = Count::State::not_counted;
  idle.notes = {note(Note::Kind::user_only, EACCES)};
  counts.push_back(idle);
  StatRun run;
  run.target = "'true'";
  run.elapsed_seconds = 0.5;
  // perf 6.12's columns: value (18), unit (the widest, at least 4), name (32), then perf's derived
  // figure after '#' (38) and the running percentage; the reasons follow the footer, once each.
  CHECK(stat_text(set, counts, run) ==
        "\n Performance counter stats for 'true':\n\n"
        "              1.23 msec   task-clock                       #    0.002 CPUs utilized             \n"
        "           4000000        cycles                           #    3.240 GHz                         "
        "(25.00%)\n"
        "              1.00 MiB    uncore_imc_0/cas_count_read/     #  810.001 /sec                      \n"
        "              1.00 Joules power/energy-pkg/                #  810.001 /sec                      \n"
        "   <not supported>        instructions                                                          \n"
        "     <not counted>        faults                                                                \n"
        "\n       0.500000000 seconds time elapsed\n\n"
        "instructions:\n"
        "    ENOENT: the hint (its group leader 'x' could not be opened)\n"
        "faults:\n"
        "    never scheduled on a counter (time_running is 0): the event was enabled but did not run\n"
        "faults:\n"
        "    note: counted user space only (':u'): kernel counting was refused with EACCES\n\n");
}

TEST_CASE("stat: an event of a cgroup not counted says its cgroup's tasks did not run") {
  auto set = resolve("task-clock,cs,page-faults", skx());
  Count idle;
  idle.state = Count::State::not_counted;
  std::vector<Count> counts = {idle, idle, idle};
  // cs counts everywhere (no cgroup): its own reason; the others share one paragraph per cgroup.
  CHECK(
      stat_problems(set, global_report(counts), {"web", "", "web"}) ==
      "task-clock, page-faults:\n"
      "    no task of cgroup 'web' ran while it was enabled (time_running is 0): an event of a cgroup counts "
      "only while the cgroup's tasks run\n"
      "cs:\n"
      "    never scheduled on a counter (time_running is 0): the event was enabled but did not run\n\n");
  StatRun run;
  run.target = "'system wide'";
  run.cgroups = {"web", "", "web"};
  CHECK(stat_text(set, counts, run).find("cgroup 'web' ran") != std::string::npos);
}

TEST_CASE("stat csv and json") {
  auto set = resolve("cpu/event=0x3c,name='a,b'/,cycles", skx());
  std::vector<Count> counts = {counted(42, 200, 100)};
  Count missing;
  missing.failure = runtime::Failure{ENOENT, "ENOENT", "m", "h", -1, ""};
  counts.push_back(missing);
  StatRun run;
  run.target = "'x'";
  CHECK(stat_csv(set, counts, run) ==
        "time,aggregate,members,value,unit,event,time_enabled,time_running,running_percent,noise_percent,"
        "state,errno,metric_value,metric_unit\n"
        ",,,84,,\"a,b\",200,100,50.00,,counted,,,\n"
        ",,,<not supported>,,cycles,0,0,0.00,,not supported,ENOENT,,\n");
  run.interval_end = 1.5;
  CHECK(stat_csv(set, global_report(counts), run, false).starts_with("1.500000000,,,84,"));
  CHECK(
      stat_json(set, counts, run) ==
      "{\"schema\":\"perfspec-stat/"
      "1\",\"target\":\"'x'\",\"interval\":1.5,\"elapsed_seconds\":0.0,\"aggregation\":\"global\",\"counts\":"
      "[{\"event\":\"a,b\",\"pmu\":"
      "\"cpu\","
      "\"span\":[0,26],\"state\":\"counted\",\"value\":84.0,\"unit\":\"\",\"raw\":42,\"time_enabled\":200,"
      "\"time_running\":100,\"running_fraction\":0.5},{\"event\":\"cycles\",\"pmu\":\"cpu\",\"span\":[27,33],"
      "\"state\":\"not "
      "supported\",\"value\":null,\"unit\":\"\",\"raw\":0,\"time_enabled\":0,\"time_running\":0,"
      "\"running_fraction\":0.0,\"error\":{\"errno\":2,\"name\":\"ENOENT\",\"meaning\":\"m\",\"hint\":\"h\","
      "\"cpu\":-1,\"detail\":\"\"}}]}\n");
}

TEST_CASE("stat perf csv (-x): perf 6.12's fields, units, metrics and states, exactly") {
  auto set = resolve(
      "task-clock,cycles,instructions,branches,branch-misses,page-faults,uncore_imc_0/cas_count_read/,"
      "{cycles,stalled-cycles-frontend},faults,L1-dcache-load-misses",
      skx());
  std::vector<Count> counts = {counted(2000000), counted(1000000, 300, 100),
                               counted(6000000), counted(1000),
                               counted(50),      counted(3000),
                               counted(16384),   counted(3000000),
                               counted(600000)};
  Count idle;  // enabled but never scheduled
  idle.state = Count::State::not_counted;
  idle.time_enabled = 100;
  counts.push_back(idle);
  Count missing;
  missing.failure = runtime::Failure{ENOENT, "ENOENT", "m", "h", -1, ""};
  counts.push_back(missing);
  StatRun run;
  run.target = "'x'";
  run.elapsed_seconds = 0.004;
  // task-clock: 2 ms of 4 ms. cycles ran a third of the time: perf's whole percent, and its count
  // scaled to 3,000,000 makes 1.5 GHz of task-clock's 2 ms. instructions per cycle use the first
  // cycles; stalled cycles per instruction come on a line of their own. The grouped cycles have no
  // clock in their group, so no GHz; their stalled-cycles partner is a ratio of them. Every other
  // event is a rate per second of task-clock's time, with perf's K/M/G steps.
  CHECK(stat_perf_csv(set, counts, run, ";") ==
        "2.00;msec;task-clock;100;100.00;0.500;CPUs utilized\n"
        "3000000;;cycles;100;33.00;1.500;GHz\n"
        "6000000;;instructions;100;100.00;2.00;insn per cycle\n"
        ";;;;;0.10;stalled cycles per insn\n"
        "1000;;branches;100;100.00;500.000;K/sec\n"
        "50;;branch-misses;100;100.00;5.00;of all branches\n"
        "3000;;page-faults;100;100.00;1.500;M/sec\n"
        "1.00;MiB;uncore_imc_0/cas_count_read/;100;100.00;500.000;/sec\n"
        "3000000;;cycles;100;100.00;;\n"
        "600000;;stalled-cycles-frontend;100;100.00;20.00;frontend cycles idle\n"
        "<not counted>;;faults;0;0.00;;\n"
        "<not supported>;;L1-dcache-load-misses;0;100.00;;\n");

  // Interval mode: the interval's end first; CPUs utilized is of the interval asked for.
  auto clock = resolve("task-clock,cycles", skx());
  run.interval_end = 1.5;
  run.interval_seconds = 1.0;
  CHECK(stat_perf_csv(clock, {counted(2000000), missing}, run, "--") ==
        "1.500000000--2.00--msec--task-clock--100--100.00--0.002--CPUs utilized\n"
        "1.500000000--<not supported>----cycles--0--100.00----\n");
}

TEST_CASE("resolve text output in the style of perf stat -vv") {
  auto set = resolve("{cycles/call-graph=fp/S,instructions}:u", skx());
  CHECK(to_text(set) ==
        "event 0: cycles/call-graph=fp/S\n"
        "  pmu: cpu; leader of group 0 (2 members)\n"
        "------------------------------------------------------------\n"
        "perf_event_attr:\n"
        "  type                             0\n"
        "  size                             136\n"
        "  sample_type                      READ|CALLCHAIN\n"
        "  read_format                      GROUP\n"
        "  exclude_kernel                   1\n"
        "  exclude_hv                       1\n"
        "------------------------------------------------------------\n"
        "event 1: instructions\n"
        "  pmu: cpu; member of group 0 (leader: event 0)\n"
        "------------------------------------------------------------\n"
        "perf_event_attr:\n"
        "  type                             0\n"
        "  size                             136\n"
        "  config                           0x1\n"
        "  exclude_kernel                   1\n"
        "  exclude_hv                       1\n"
        "------------------------------------------------------------\n");
}

TEST_CASE("bytes a terminal acts on are escaped wherever text from a tree is printed") {
  CHECK(spec::printable("plain-name_0.x:y/z=1,2") == "plain-name_0.x:y/z=1,2");
  CHECK(spec::printable("esc\x1b[31m") == "esc\\x1b[31m");
  CHECK(spec::printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(spec::printable("bel\a tab\t nl\n del\x7f") == "bel\\x07 tab\\x09 nl\\x0a del\\x7f");
  CHECK(spec::printable("\xc2\x9b"
                        "31m") == "\\xc2\\x9b31m");  // U+009B, the one-byte CSI
  CHECK(spec::printable("5 \xc2\xb5s \xe2\x82\xac") == "5 \xc2\xb5s \xe2\x82\xac");  // UTF-8 stays: µs €
  CHECK(spec::printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(spec::printable("\xe2\x82") == "\\xe2\\x82");                    // cut short
  CHECK(spec::printable("\xc0\xaf") == "\\xc0\\xaf");                    // overlong '/'
  CHECK(spec::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");           // a surrogate
  CHECK(spec::printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF

  spec::ListedEvent e;
  e.name = "evil\x1b]0;title\a";
  e.pmu = "cpu\x1b";
  e.encoding = "event=0x1\x1b[31m";
  e.description = "line one\nline\x1b two";
  e.source = spec::Source::sysfs;
  CHECK(list_text({}, {e}, 100) ==
        "sysfs events on cpu\\x1b:\n"
        "  evil\\x1b]0;title\\x07                     event=0x1\\x1b[31m\n"
        "      line one line\\x1b two\n");
  e.name = "bad\xff utf8";
  CHECK_NOTHROW(list_json({}, {e}));  // JSON escapes controls itself; invalid UTF-8 is replaced, not thrown
  CHECK(list_json({}, {e}).find("\"name\":\"bad\xef\xbf\xbd utf8\"") != std::string::npos);  // U+FFFD

  Error err("pmu 'x\x1b[2J': event file 'y\a' is a folder", Span{0, 1},
            "did you mean 'z\x1b'?\nsecond\x07 line");
  CHECK(render(err, "q\x1bq") ==
        "event syntax error: 'q?q'\n"
        "                     \\___ pmu 'x\\x1b[2J': event file 'y\\x07' is a folder\n"
        "help: did you mean 'z\\x1b'?\nsecond\\x07 line\n");
}

TEST_CASE("notes in words: each kind, exactly; joined by '; ' in stat text and JSON") {
  CHECK(describe(note(Note::Kind::user_only, EACCES)) ==
        "counted user space only (':u'): kernel counting was refused with EACCES");
  Note weak = note(Note::Kind::weak_group_alone, EINVAL);
  weak.event = "cpu/event=0xc0/";
  CHECK(describe(weak) == "weak group fell back to counting its events alone (EINVAL on 'cpu/event=0xc0/')");
  CHECK(describe(note(Note::Kind::enable_failed, EBADF)) == "enable failed: EBADF");
  CHECK(describe(note(Note::Kind::disable_failed, EINVAL, 0)) == "disable failed on CPU 0: EINVAL");
  CHECK(describe(note(Note::Kind::reset_failed, EBADF, 7)) == "reset failed on CPU 7: EBADF");
  CHECK(describe(note(Note::Kind::read_failed, ENODEV, 1)) == "read failed on CPU 1: ENODEV");
  CHECK(describe(note(Note::Kind::read_failed, EIO)) == "read failed: EIO");  // not a perf_event_open errno
  Note cut = note(Note::Kind::short_read, 0, 3);
  cut.bytes = 40;
  cut.wanted = 72;
  CHECK(describe(cut) == "short read on CPU 3: 40 of 72 bytes");
  CHECK(describe(std::vector<Note>{}).empty());
  CHECK(describe(std::vector<Note>{weak, cut}) ==
        "weak group fell back to counting its events alone (EINVAL on 'cpu/event=0xc0/'); short read on CPU "
        "3: 40 of 72 bytes");

  auto set = resolve("cycles", skx());
  Count c = counted(10);
  c.notes = {note(Note::Kind::user_only, EACCES), note(Note::Kind::read_failed, EBADF, 2)};
  StatRun run;
  run.target = "'x'";
  CHECK(stat_text(set, {c}, run) ==
        "\n Performance counter stats for 'x':\n\n"
        "                10      cycles                                                                \n"
        "\n       0.000000000 seconds time elapsed\n\n"
        "cycles:\n"
        "    note: counted user space only (':u'): kernel counting was refused with EACCES; read failed on "
        "CPU 2: EBADF\n\n");
  CHECK(stat_json(set, {c}, run) ==
        "{\"schema\":\"perfspec-stat/1\",\"target\":\"'x'\",\"elapsed_seconds\":0.0,\"aggregation\":"
        "\"global\",\"counts\":[{\"event\":\"cycles\",\"pmu\":\"cpu\","
        "\"span\":[0,6],"
        "\"state\":\"counted\",\"value\":10.0,\"unit\":\"\",\"raw\":10,\"time_enabled\":100,\"time_running\":"
        "100,"
        "\"running_fraction\":1.0,\"note\":\"counted user space only (':u'): kernel counting was refused "
        "with EACCES; "
        "read failed on CPU 2: EBADF\"}]}\n");
  // CSV has no note column.
  CHECK(stat_csv(set, global_report({c}), run, false) == ",,,10,,cycles,100,100,100.00,,counted,,,\n");
}

TEST_CASE("fmt formatters (perfspec/fmt.hpp), exactly") {
  CHECK(fmt::format("{}", Span{3, 7}) == "3..7");
  CHECK(fmt::format("[{}]", Span{}) == "[0..0]");
  CHECK_THROWS_AS((void)fmt::format(fmt::runtime("{:>8}"), Span{1, 2}), fmt::format_error);

  CHECK(fmt::format("{}", ErrorKind::syntax) == "syntax");
  CHECK(fmt::format("{}", ErrorKind::unknown_name) == "unknown name");
  CHECK(fmt::format("{}", ErrorKind::machine) == "machine description");
  CHECK(fmt::format("{:>14}|{:<8}|", ErrorKind::unknown_name, ErrorKind::io) == "  unknown name|I/O     |");

  CHECK(fmt::format("{} {} {} {}", spec::Source::sysfs, spec::Source::json, spec::Source::libpfm4,
                    spec::Source::builtin) == "sysfs json libpfm4 builtin");
  CHECK(fmt::format("{:^9}", spec::Source::json) == "  json   ");

  CHECK(fmt::format("{}|{}|{}", Count::State::counted, Count::State::not_counted,
                    Count::State::not_supported) == "counted|not counted|not supported");
  CHECK(fmt::format("{:v}|{:v}|{:v}", Count::State::counted, Count::State::not_counted,
                    Count::State::not_supported) == "counted|<not counted>|<not supported>");
  CHECK(fmt::format("{:>18v}|", Count::State::not_supported) == "   <not supported>|");
  CHECK(fmt::format("{:9}|{:>9}|", Count::State::counted, Count::State::counted) == "counted  |  counted|");
  CHECK(fmt::format("{:*^17v}", Count::State::not_counted) == "**<not counted>**");
  CHECK(fmt::format("{:*^16v}", Count::State::not_counted) == "*<not counted>**");
  CHECK(fmt::format("{:*^16v}", Count::State::not_counted) ==
        fmt::format("{:*^16}", "<not counted>"));                             // as fmt pads
  CHECK(fmt::format("{:3v}", Count::State::not_counted) == "<not counted>");  // never cut
  CHECK_THROWS_AS((void)fmt::format(fmt::runtime("{:x}"), Count::State::counted), fmt::format_error);
  CHECK_THROWS_AS((void)fmt::format(fmt::runtime("{:v8}"), Count::State::counted), fmt::format_error);

  Note cut = note(Note::Kind::short_read, 0, 3);
  cut.bytes = 16;
  cut.wanted = 72;
  CHECK(fmt::format("{}", cut) == "short read on CPU 3: 16 of 72 bytes");
  CHECK(fmt::format("{}", note(Note::Kind::enable_failed, EBADF)) == "enable failed: EBADF");
  CHECK(fmt::format("[{:>22}]", note(Note::Kind::read_failed, EBADF)) == "[    read failed: EBADF]");
  CHECK(fmt::format("{}", note(Note::Kind::user_only, EACCES)) ==
        describe(note(Note::Kind::user_only, EACCES)));

  auto list = parse("{ cycles , cpu/event=60,inv,name='a:b'/u }:k,sched:sched_switch,mem:4096/8:w");
  CHECK(fmt::format("{}", list) ==
        "{cycles,cpu/event=0x3c,inv,name='a:b'/u}:k,sched:sched_switch,mem:0x1000/8:w");
  CHECK(fmt::format("{}", list) == to_string(list));
  const auto& group = list.items[0];
  CHECK(fmt::format("{}", group) == "{cycles,cpu/event=0x3c,inv,name='a:b'/u}:k");
  CHECK(fmt::format("{}", list.items[2]) == "mem:0x1000/8:w");
  const auto& pmu = group.events[1];
  CHECK(fmt::format("{}", pmu) == "cpu/event=0x3c,inv,name='a:b'/u");
  CHECK(fmt::format("{}", list.items[1].events[0]) == "sched:sched_switch");
  CHECK(fmt::format("{} {} {}", pmu.terms[0], pmu.terms[1], pmu.terms[2]) == "event=0x3c inv name='a:b'");
  CHECK(fmt::format("[{:>6}]", pmu.terms[1]) == "[   inv]");
  CHECK(fmt::format("{}|{}|{}|", pmu.modifiers, group.modifiers, group.events[0].modifiers) == "u|k||");
  auto query = parse("cpu/event=0x3c,period=?/").items[0].events[0];
  CHECK(fmt::format("{}", query.terms[1]) == "period=?");
}

TEST_CASE("StatRun as print.hpp's example writes it: designated members only, clean under -Wextra") {
  perfspec::StatRun run{.target = "'ls'", .elapsed_seconds = 0.5};
  CHECK(run.target == "'ls'");
  CHECK_FALSE(run.exit_status.has_value());
}

TEST_CASE("stat --metric-only: perf 6.12's columns in the table, -x and -j, colours and all, exactly") {
  // Laid out as util/stat-display.c's print_metric_only and print_metric_header lay them out: each
  // column at least 20 wide (METRIC_ONLY_LEN), or its header's length and one; a figure with a colour
  // (a threshold's green or red, a miss ratio's, even the normal one, "") is widened by the escapes
  // perf counts in whether it prints them or not. task-clock's CPUs utilized and the rates per second
  // have no column (valid_only_metric); a miss ratio is headed by its event's name (fixunit).
  auto set = resolve("task-clock,cycles,instructions,branch-misses,branches,page-faults,faults", skx());
  Count idle;  // enabled but never scheduled
  idle.state = Count::State::not_counted;
  idle.time_enabled = 100;
  StatReport report = global_report({counted(2000000), counted(3000000), counted(6000000), counted(250),
                                     counted(1000), counted(3000), idle});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  report.units[0].cells[5].metrics = {
      {"ipc_ok", "", 2.0, false, true},                            // a threshold that does not hold: green
      {"slow", "%", 95.5, true, true},                             // one that holds: red, "%8.1f", UNIT  NAME
      {"nothing", "", nan, false, false},                          // no value: an empty column
      {"a_rather_long_metric_name_here", "", 1.5, false, false}};  // wider than 20
  report.units[0].cells[6].metrics = {{"idle_metric", "", 7.0, true, true}};  // its event did not count
  StatRun run{.target = "'x'", .elapsed_seconds = 0.004};
  run.metric_only = true;
  const std::string header =
      "                  GHz       insn per cycle branch-misses of all branches               ipc_ok"
      "              %  slow              nothing a_rather_long_metric_name_here          idle_metric \n";
  CHECK(stat_text(set, report, run) ==
        "\n Performance counter stats for 'x':\n\n" + header +
            "               1.500                2.00                                  25.00%"
            "                         2.00                         95.5                     "
            "                            1.50                      \n"
            "\n       0.004000000 seconds time elapsed\n\n"
            "faults:\n    never scheduled on a counter (time_running is 0): the event was enabled but did "
            "not run\n\n");
  // On a terminal: the escapes inside the same widths, so the columns line up as shown.
  run.color = true;
  CHECK(
      stat_text(set, report, run)
          .find("               1.500                2.00                        \033[31m  25.00%\033[m"
                "             \033[32m    2.00\033[m             \033[31m    95.5\033[m                     "
                "                            1.50                      \n") != std::string::npos);
  run.color = false;
  // -x: a field per column, the figure's digits only (none for no value), each followed by SEP.
  CHECK(stat_perf_csv(set, report, run, ";") ==
        "GHz;insn per cycle;branch-misses of all branches;ipc_ok;%  slow;nothing;"
        "a_rather_long_metric_name_here;idle_metric;\n"
        "1.500;2.00;25.00;2.00;95.5;;1.50;;\n");
  // -j: one object, the header as each figure's key, the columns with no figure left out.
  CHECK(stat_perf_json(set, report, run) ==
        "{\"GHz\" : \"1.500\", \"insn per cycle\" : \"2.00\", \"branch-misses of all branches\" : \"25.00\", "
        "\"ipc_ok\" : \"2.00\", \"%  slow\" : \"95.5\", \"a_rather_long_metric_name_here\" : \"1.50\"}\n");

  // Interval mode: perf's "time" column header, each line the interval's end; -x's header has "time".
  run.interval_end = 1.5;
  run.interval_seconds = 1.0;
  run.print_interval_header = true;
  CHECK(stat_text(set, report, run)
            .starts_with("#           time " + header.substr(1) + "     1.500000000                1.500 "));
  CHECK(stat_perf_csv(set, report, run, ",").starts_with("time,GHz,insn per cycle,"));
  CHECK(stat_perf_json(set, report, run).starts_with("{\"interval\" : 1.500000000, \"GHz\" : \"1.500\", "));
  run.print_interval_header = false;  // between headers: the line only
  CHECK(stat_perf_csv(set, report, run, ",") == "1.500000000,1.500,2.00,25.00,2.00,95.5,,1.50,,\n");

  // Without -M and with nothing to show: an empty header, an empty line (perf 6.12, `perf stat
  // --metric-only -e task-clock,page-faults -- true`), and -j's "none".
  auto soft = resolve("task-clock,page-faults", skx());
  StatRun plain{.target = "'true'", .elapsed_seconds = 0.004};
  plain.metric_only = true;
  CHECK(stat_text(soft, global_report({counted(2000000), counted(50)}), plain) ==
        "\n Performance counter stats for 'true':\n\n \n\n\n       0.004000000 seconds time elapsed\n\n");
  CHECK(stat_perf_csv(soft, global_report({counted(2000000), counted(50)}), plain, ",") == "\n\n");
  CHECK(stat_perf_json(soft, global_report({counted(2000000), counted(50)}), plain) ==
        "{\"metric-value\" : \"none\"}\n");
}

TEST_CASE("stat text: a metric's threshold colours its value only when colour is on") {
  // util/stat-shadow.c's generic_metric: red where the MetricThreshold holds, green where it does
  // not, no colour without one; util/stat-display.c's print_metric_std counts only what shows.
  auto set = resolve("task-clock,page-faults", skx());
  StatReport report = global_report({counted(2000000), counted(3000)});
  report.units[0].cells[1].metrics = {
      {"slow", "%", 95.5, true, true}, {"fine", "", 2.0, false, true}, {"plain", "", 1.0, false, false}};
  StatRun run{.target = "'x'", .elapsed_seconds = 0.004};
  std::string plain = stat_text(set, report, run);
  CHECK(plain.find('\033') == std::string::npos);
  run.color = true;
  std::string painted = stat_text(set, report, run);
  CHECK(painted.find(std::string(49, ' ') + " # \033[31m    95.5\033[m %  slow                   \n") !=
        std::string::npos);
  CHECK(painted.find(std::string(49, ' ') + " # \033[32m    2.00\033[m fine                      \n") !=
        std::string::npos);
  CHECK(painted.find(std::string(49, ' ') + " #     1.00 plain                     \n") != std::string::npos);
  CHECK(stat_perf_csv(set, report, run, ",").find('\033') == std::string::npos);  // never in -x or -j
  CHECK(stat_perf_json(set, report, run).find('\033') == std::string::npos);
}
