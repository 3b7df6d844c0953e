// SPDX-License-Identifier: MIT
// The exporter's configuration (every error at its file position, with the caret) and its series from
// real counters.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

#include "exporter/exporter.hpp"
#include "exporter/process_metrics.hpp"
#include "perfspec/perfspec.hpp"
#include "runtime/process.hpp"
#include "tests/support.hpp"
#include "tests/waiting_workload.hpp"

using namespace perfspec;
using namespace perfspec::exporter;

namespace {

std::string config_error(std::string_view text) {
  try {
    parse_config(text, "exp.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string prepare_error(std::string_view text, const spec::Machine& machine) {
  try {
    State::prepare(parse_config(text, "exp.toml"), machine);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

const prometheus::MetricFamily* find(const std::vector<prometheus::MetricFamily>& fs, std::string_view name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

std::string label(const prometheus::ClientMetric& m, std::string_view name) {
  for (const auto& l : m.label)
    if (l.name == name) return l.value;
  return "(none)";
}

// The one series of family `name` whose label `key` is `value` (nullptr when there is none).
const prometheus::ClientMetric* series(const std::vector<prometheus::MetricFamily>& fs, std::string_view name,
                                       std::string_view key, std::string_view value) {
  const prometheus::ClientMetric* found = nullptr;
  if (const auto* f = find(fs, name))
    for (const auto& m : f->metric)
      if (label(m, key) == value) {
        REQUIRE_FALSE(found);
        found = &m;
      }
  return found;
}

}  // namespace

TEST_CASE("a configuration: its sets, targets, labels, and where each string is written") {
  auto c = parse_config(R"([exporter]
listen = "127.0.0.1:9999"
read_timeout = 0.25

[[metric]]
name = "fps"
expr = "page-faults / duration_time"

[[set]]
name = "sys"
events = ["task-clock",
          "cpu/name=\"x\"/"]
metrics = ["fps"]
aggregation = "cpu"
labels = { zone = "b", team = "db" }

[[set]]
name = "proc"
command = "postgres"
events = 'page-faults'
)",
                        "exp.toml");
  CHECK(c.listen == "127.0.0.1:9999");
  CHECK(c.read_timeout == 0.25);
  CHECK(c.metric_window == 1.0);
  REQUIRE(c.metrics.size() == 1);
  CHECK(c.metrics[0].origin.line == 7);
  CHECK(c.metrics[0].origin.column == 9);
  REQUIRE(c.sets.size() == 2);
  const auto& s = c.sets[0];
  CHECK(s.name == "sys");
  CHECK(s.grouping == Grouping::cpu);
  CHECK(s.target == SetConfig::Target::system);
  REQUIRE(s.events.size() == 2);
  CHECK(s.events[0].origin.line == 11);
  CHECK(s.events[0].origin.column == 12);
  CHECK(s.events[1].text == "cpu/name=\"x\"/");
  CHECK(s.events[1].origin.line == 12);
  CHECK(s.events[1].origin.column_of(0) == 12);   // 'c'
  CHECK(s.events[1].origin.column_of(9) == 21);   // the '"' written \"
  CHECK(s.events[1].origin.column_of(10) == 23);  // 'x'
  REQUIRE(s.labels.size() == 2);
  CHECK(s.labels[0] == std::pair<std::string, std::string>{"team", "db"});
  CHECK(c.sets[1].target == SetConfig::Target::command);
  CHECK(c.sets[1].command.text == "postgres");
  REQUIRE(c.sets[1].events.size() == 1);
  CHECK(c.sets[1].events[0].origin.column == 11);
}

TEST_CASE("a multi-line string's bytes keep their own lines and columns") {
  auto c = parse_config("[[set]]\nname = \"m\"\nevents = [\"\"\"\ntask-clock,\\\n   page-faults\"\"\"]\n",
                        "exp.toml");
  const auto& e = c.sets[0].events[0];
  CHECK(e.text == "task-clock,page-faults");
  CHECK(e.origin.line_of(0) == 4);
  CHECK(e.origin.column_of(0) == 1);
  CHECK(e.origin.line_of(11) == 5);  // 'p', after the line-ending backslash
  CHECK(e.origin.column_of(11) == 4);
}

TEST_CASE("configuration errors: each at its file position, the caret under the character") {
  CHECK(config_error("[[set]]\nname = \"a\"\nevents = [\"x\",]\nq = = 1\n") ==
        "exp.toml:4:5: error: TOML: Error while parsing value: could not determine value type\n"
        " 4 | q = = 1\n"
        "   |     ^\n");
  CHECK(config_error("[[set]]\nname = \"a\"\n  evnets = [\"x\"]\n") ==
        "exp.toml:3:3: error: unknown key 'evnets'\n"
        " 3 |   evnets = [\"x\"]\n"
        "   |   ^\n"
        "help: known keys here: name, events, metrics, cgroup, pid, command, cpus, aggregation, labels\n");
  CHECK(config_error("[[set]]\nname = \"a\"\nevents = [\"x\", 3]\n") ==
        "exp.toml:3:16: error: each of events must be a string\n"
        " 3 | events = [\"x\", 3]\n"
        "   |                ^\n");
  CHECK(config_error("[[set]]\nname = \"a\"\nevents = [\"x\"]\naggregation = \"die\"\n") ==
        "exp.toml:4:16: error: unknown aggregation 'die'\n"
        " 4 | aggregation = \"die\"\n"
        "   |                ^\n"
        "help: aggregation is one of total, cpu, core, socket\n");
  CHECK(config_error("[[set]]\nname = \"a\"\nevents = [\"x\"]\npid = 3\ncgroup = \"/x\"\n") ==
        "exp.toml:5:1: error: a set has one target: cgroup, pid or command (none: the whole system)\n"
        " 5 | cgroup = \"/x\"\n"
        "   | ^\n");
  CHECK(config_error("[[set]]\nname = \"a\"\nevents = [\"x\"]\n[[set]]\nname = \"a\"\nevents = [\"y\"]\n") ==
        "exp.toml:5:8: error: set 'a' is defined twice\n"
        " 5 | name = \"a\"\n"
        "   |        ^\n"
        "help: its first definition is at line 2\n");
  CHECK(config_error("[[set]]\nname = \"a\"\nevents = [\"x\"]\nlabels = { set = \"1\" }\n") ==
        "exp.toml:4:12: error: label 'set' is one the exporter sets itself\n"
        " 4 | labels = { set = \"1\" }\n"
        "   |            ^\n"
        "help: choose another name\n");
  CHECK(config_error("[[set]]\nname = \"a\"\ncommand = \"p\"\nevents = [\"x\"]\naggregation = \"cpu\"\n") ==
        "exp.toml:5:16: error: aggregation 'cpu' needs counts per CPU: a process is counted as one total\n"
        " 5 | aggregation = \"cpu\"\n"
        "   |                ^\n");
  CHECK(config_error("[set]\nname = \"a\"\n") ==
        "exp.toml:1:1: error: 'set' is a list of tables: write each as [[set]]\n"
        " 1 | [set]\n"
        "   | ^\n");
  CHECK(config_error("# nothing\n[exporter]\nlisten = \"127.0.0.1:1\"\n") ==
        "exp.toml:1:1: error: no [[set]] in the file: nothing to count\n"
        " 1 | # nothing\n"
        "   | ^\n"
        "help: a [[set]] names events or metrics to count; see the example configuration\n");
  CHECK(config_error("[[metric]]\nname = \"m\"\n") ==
        "exp.toml:1:1: error: a [[metric]] needs a name and an expr (this one has no expr)\n"
        " 1 | [[metric]]\n"
        "   | ^\n");
}

TEST_CASE("event strings, metrics, CPU lists and cgroups of a configuration resolve or point into the file") {
  spec::Machine machine(test::fixture("intel_skx"), test::no_libpfm4());
  // The bad term sits after an escape (\u0063 is the 'c' of 0x3c): its column counts the file's
  // characters, not the string's bytes.
  CHECK(prepare_error("[[set]]\nname = \"a\"\nevents = [\"task-clock\", \"cpu/event=0x3\\u0063,evnt=1/\"]\n",
                      machine) ==
        "exp.toml:3:46: error: unknown term 'evnt' for pmu 'cpu'\n"
        " 3 | events = [\"task-clock\", \"cpu/event=0x3\\u0063,evnt=1/\"]\n"
        "   |                                              ^\n"
        "help: did you mean 'event'?\n"
        "valid terms: "
        "any,cmask,edge,event,frontend,in_tx,in_tx_cp,inv,ldlat,offcore_rsp,pc,umask,config,config1,"
        "config2,config3,name,period,freq,branch_type,time,call-graph,stack-size,max-stack,nr,inherit,no-"
        "inherit,"
        "overwrite,no-overwrite,percore,aux-output,aux-sample-size,metric-id,cpu\n");
  CHECK(prepare_error("[[set]]\nname = \"a\"\nmetrics = [\"no_such_metric\"]\n", machine)
            .starts_with("exp.toml:3:13: error: unknown metric or metric group 'no_such_metric'\n"));
  CHECK(prepare_error("[[metric]]\nname = \"m\"\nexpr = \"instructions / cyclez\"\n"
                      "[[set]]\nname = \"a\"\nmetrics = [\"m\"]\n",
                      machine) ==
        "exp.toml:3:24: error: metric 'm': unknown event 'cyclez'\n"
        " 3 | expr = \"instructions / cyclez\"\n"
        "   |                        ^\n"
        "help: did you mean 'cycles'?\n");
  CHECK(prepare_error("[[set]]\nname = \"a\"\nevents = [\"task-clock\", \"task-clock\"]\n", machine) ==
        "exp.toml:3:26: error: event 'task-clock' is already in set 'a' (line 3): its series would be the "
        "same\n"
        " 3 | events = [\"task-clock\", \"task-clock\"]\n"
        "   |                          ^\n"
        "help: give one of them another name with the name= term\n");
  CHECK(prepare_error("[[set]]\nname = \"a\"\nevents = [\"task-clock\"]\ncpus = \"0-2,x\"\n", machine)
            .starts_with("exp.toml:4:"));
  CHECK(prepare_error(
            "[[set]]\nname = \"a\"\nevents = [\"task-clock\"]\ncgroup = \"/perfspec/no/such/cgroup\"\n",
            machine)
            .starts_with("exp.toml:4:11: error: no cgroup '/perfspec/no/such/cgroup' ("));
  CHECK(prepare_error("[[set]]\nname = \"a\"\nevents = [\"user_time\"]\n", machine)
            .starts_with("exp.toml:3:12: error: 'user_time' is counted by perfspec stat"));
}

TEST_CASE("series of a process's page faults: the exact count, the labels, failures in an info series") {
  spec::Machine machine("/sys", test::no_libpfm4());
  constexpr int pages = 64;
  test::WaitingWorkload w(pages);
  const pid_t child = w.pid();
  REQUIRE(w.said() == "ready");
  auto text = fmt::format(
      "[exporter]\nmetric_window = 0.000001\n"
      "[[metric]]\nname = \"faults\"\nexpr = \"page\\\\-faults\"\n"
      "[[set]]\nname = \"faults\"\npid = {}\nevents = [\"page-faults\", \"task-clock\", \"cycles\"]\n"
      "metrics = [\"faults\"]\nlabels = {{ team = \"db\" }}\n",
      child);
  auto state = State::prepare(parse_config(text, "exp.toml"), machine);
  state->open(nullptr);
  auto faults = [&](const std::vector<prometheus::MetricFamily>& fs) {
    const auto* m = series(fs, "perfspec_event_total", "event", "page-faults");
    REQUIRE(m);
    return m->counter.value;
  };
  w.asleep();
  const double warm = faults(state->collect());
  REQUIRE(w.go());
  REQUIRE(w.said() == "done");
  w.asleep();
  auto fs = state->collect();
  CHECK(faults(fs) - warm == pages);
  // The metric, over the window since the last read (metric_window is tiny): the same pages.
  const auto* metric = series(fs, "perfspec_metric", "metric", "faults");
  REQUIRE(metric);
  CHECK(metric->gauge.value == pages);
  const auto* m = series(fs, "perfspec_event_total", "event", "page-faults");
  CHECK(label(*m, "set") == "faults");
  CHECK(label(*m, "pmu") == "software");
  CHECK(label(*m, "pid") == std::to_string(child));
  CHECK(label(*m, "team") == "db");
  CHECK(series(fs, "perfspec_event_seconds_total", "event", "task-clock"));
  CHECK(series(fs, "perfspec_event_enabled_seconds_total", "event", "page-faults"));
  CHECK(series(fs, "perfspec_event_running_seconds_total", "event", "task-clock"));
  // cycles: counted where there is a hardware PMU, else in the failures with its errno.
  if (const auto* failed = series(fs, "perfspec_event_failed_info", "event", "cycles")) {
    CHECK(label(*failed, "errno").starts_with("E"));
    CHECK_FALSE(series(fs, "perfspec_event_total", "event", "cycles"));
  } else {
    CHECK(series(fs, "perfspec_event_total", "event", "cycles"));
  }
  const auto* up = find(fs, "perfspec_target_up");
  REQUIRE(up);
  CHECK(up->metric[0].gauge.value == 1);
  // The process ends: reported, not fatal, its last counts kept.
  w.end();
  fs = state->collect();
  up = find(fs, "perfspec_target_up");
  CHECK(up->metric[0].gauge.value == 0);
  CHECK(label(up->metric[0], "reason") == fmt::format("process {} has exited", child));
  CHECK(faults(fs) >= warm + pages);  // and its exit's faults
}

TEST_CASE("listen addresses: HOST:PORT only") {
  CHECK(valid_listen("127.0.0.1:9464"));
  CHECK(valid_listen("0.0.0.0:0"));
  CHECK(valid_listen("[::1]:9464"));
  CHECK(valid_listen("localhost:65535"));
  CHECK_FALSE(valid_listen("9464"));
  CHECK_FALSE(valid_listen(":9464"));
  CHECK_FALSE(valid_listen("127.0.0.1:"));
  CHECK_FALSE(valid_listen("127.0.0.1:65536"));
  CHECK_FALSE(valid_listen("127.0.0.1:123456"));
  CHECK_FALSE(valid_listen("127.0.0.1:94a4"));
  CHECK_FALSE(valid_listen("::1:9464"));
  CHECK_FALSE(valid_listen("[]:9464"));
  CHECK_FALSE(valid_listen("a b:1"));
}

TEST_CASE("a reload keeps the counters of a set that did not change, and opens a changed one afresh") {
  spec::Machine machine("/sys", test::no_libpfm4());
  const std::string same =
      "[[set]]\nname = \"self\"\npid = " + std::to_string(::getpid()) + "\nevents = [\"page-faults\"]\n";
  auto value = [](const std::vector<prometheus::MetricFamily>& fs, std::string_view set) {
    for (const auto& f : fs)
      if (f.name == "perfspec_event_total")
        for (const auto& m : f.metric)
          if (label(m, "set") == set) return m.counter.value;
    return -1.0;
  };
  auto first = State::prepare(parse_config(same + "labels = { v = \"1\" }\n", "exp.toml"), machine);
  first->open(nullptr);
  const long page = ::sysconf(_SC_PAGESIZE);
  constexpr int pages = 16;
  char* region = static_cast<char*>(
      ::mmap(nullptr, 2 * pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(region != MAP_FAILED);
  for (int i = 0; i < pages; ++i) region[i * page] = 1;
  const double before = value(first->collect(), "self");
  CHECK(before >= pages);
  // Same target and events (a label changed): the counters move over and keep counting.
  auto second = State::prepare(
      parse_config(same + "labels = { v = \"2\" }\n[[set]]\nname = \"other\"\nevents = [\"page-faults\"]\n",
                   "exp.toml"),
      machine);
  second->open(first.get());
  CHECK(first->event_fds() == 0);
  CHECK(second->event_fds() >= 1);
  for (int i = pages; i < 2 * pages; ++i) region[i * page] = 1;
  auto fs = second->collect();
  CHECK(value(fs, "self") >= before + pages);
  // A changed event list: opened afresh, from zero.
  auto third = State::prepare(parse_config("[[set]]\nname = \"self\"\npid = " + std::to_string(::getpid()) +
                                               "\nevents = [\"page-faults:u\"]\n",
                                           "exp.toml"),
                              machine);
  third->open(second.get());
  CHECK(value(third->collect(), "self") < before);
  ::munmap(region, 2 * pages * page);
}

TEST_CASE("counts in base units: seconds for the clocks, joules with the alias's scale, bytes") {
  spec::Machine machine(test::fixture("intel_skx"), test::no_libpfm4());
  auto set =
      resolve("task-clock,cpu-clock,page-faults,power/energy-pkg/,uncore_imc_0/cas_count_read/,duration_time",
              machine);
  auto unit = [&](std::size_t i) { return base_unit(set.events[i]); };
  CHECK(std::string(unit(0).family) == "seconds_total");
  CHECK(unit(0).factor == 1.0);
  CHECK(unit(0).divisor == 1e9);
  CHECK(std::string(unit(1).family) == "seconds_total");
  CHECK(std::string(unit(2).family) == "total");
  CHECK(unit(2).factor == 1.0);
  CHECK(unit(2).divisor == 1.0);
  CHECK(std::string(unit(3).family) == "joules_total");
  CHECK(unit(3).factor == 0x1p-32);  // 2.3283064365386962890625e-10 J per count
  CHECK(std::string(unit(4).family) == "bytes_total");
  CHECK(unit(4).factor == 64.0);  // 6.103515625e-5 MiB per count: one cache line
  CHECK(std::string(unit(5).family) == "seconds_total");
}

TEST_CASE("aggregation by CPU, core and socket: one series per unit of this machine's topology") {
  spec::Machine machine("/sys", test::no_libpfm4());
  const auto& topology = machine.cpu_topology();
  const auto online = runtime::system_calls().online_cpus();
  std::set<std::string> cores, sockets;
  for (const auto& t : topology)
    if (std::find(online.begin(), online.end(), t.cpu) != online.end()) {
      cores.insert(fmt::format("{}/{}/{}", t.socket, t.die, t.core));
      sockets.insert(std::to_string(t.socket));
    }
  for (std::string_view by : {"cpu", "core", "socket", "total"}) {
    CAPTURE(by);
    auto state = State::prepare(
        parse_config(
            fmt::format("[[set]]\nname = \"s\"\nevents = [\"task-clock\"]\naggregation = \"{}\"\n", by),
            "exp.toml"),
        machine);
    state->open(nullptr);
    auto fs = state->collect();
    const auto* f = find(fs, "perfspec_event_seconds_total");
    REQUIRE(f);
    std::set<std::string> units;
    for (const auto& m : f->metric) {
      if (by == "cpu") units.insert(label(m, "cpu"));
      if (by == "core")
        units.insert(fmt::format("{}/{}/{}", label(m, "socket"), label(m, "die"), label(m, "core")));
      if (by == "socket") units.insert(label(m, "socket"));
      if (by == "total") units.insert(label(m, "cpu") + label(m, "socket"));
      CHECK(m.counter.value > 0);
    }
    if (by == "cpu") CHECK(units.size() == online.size());
    if (by == "core") CHECK(units == cores);
    if (by == "socket") CHECK(units == sockets);
    if (by == "total") CHECK(units == std::set<std::string>{"(none)(none)"});
  }
}

TEST_CASE("a command target: found by name, reported when it exits, found again when it is back") {
  spec::Machine machine("/sys", test::no_libpfm4());
  // The workload's name as /proc/PID/comm has it: 15 characters at most. The test runs alone with
  // this name only if no other process has it.
  const std::string comm = std::string("perfspec_workload").substr(0, 15);
  auto start = [] {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(PERFSPEC_WORKLOAD, "workload", "spin", "60000", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  };
  auto stop = [](pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  };
  auto up_of = [&](State& state) {
    auto fs = state.collect();
    const auto* up = find(fs, "perfspec_target_up");
    REQUIRE(up);
    REQUIRE(up->metric.size() == 1);
    return std::pair{up->metric[0].gauge.value, label(up->metric[0], "reason")};
  };
  auto state = State::prepare(
      parse_config("[[set]]\nname = \"w\"\ncommand = \"" + comm + "\"\nevents = [\"task-clock\"]\n",
                   "exp.toml"),
      machine);
  state->open(nullptr);
  CHECK(up_of(*state) == std::pair{0.0, "no process named '" + comm + "'"});
  pid_t first = start();
  // until it has exec'd (a loaded machine may take long: 30 s, then the test says so)
  for (int i = 0; i < 6000 && runtime::comm_of(first) != comm; ++i) ::usleep(5000);
  REQUIRE(runtime::comm_of(first) == comm);
  CHECK(up_of(*state).first == 1);
  stop(first);
  CHECK(up_of(*state) == std::pair{0.0, fmt::format("process {} ({}) has exited", first, comm)});
  pid_t second = start();
  for (int i = 0; i < 6000 && runtime::comm_of(second) != comm; ++i) ::usleep(5000);
  REQUIRE(runtime::comm_of(second) == comm);
  CHECK(up_of(*state).first == 1);
  stop(second);
}

TEST_CASE("a configuration that cannot be read: its errno, as an I/O error") {
  auto error_of = [](const std::string& path) {
    try {
      load_config(path);
    } catch (const ConfigError& e) {
      CHECK(e.kind() == ErrorKind::io);
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error_of("/nonexistent/exp.toml") ==
        "/nonexistent/exp.toml: error: cannot read the configuration: No such file or directory\n");
  CHECK(error_of("/") == "/: error: cannot read the configuration: Is a directory\n");
  // Only a regular file, opened without waiting on a FIFO, and not without end.
  test::TempTree tree;
  const std::string fifo = tree.root() + "/fifo.toml", zero = tree.root() + "/zero.toml",
                    big = tree.root() + "/big.toml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of(fifo) == fifo + ": error: cannot read the configuration: not a regular file\n");
  REQUIRE(::symlink("/dev/zero", zero.c_str()) == 0);
  CHECK(error_of(zero) == zero + ": error: cannot read the configuration: not a regular file\n");
  REQUIRE(::truncate((tree.write("big.toml", ""), big).c_str(), static_cast<off_t>(max_config_bytes + 1)) ==
          0);
  CHECK(error_of(big) ==
        big +
            ": error: cannot read the configuration: 16777217 bytes, more than a configuration "
            "may have (16777216)\n");
}

TEST_CASE("a file that is not TOML is not shown in the error; a long line is shown around the column") {
  // /etc/shadow given as the configuration: the position alone, none of its lines.
  const std::string shadow = "root:$y$j9T$abc:19000:0:99999:7:::\n";
  try {
    parse_config(shadow, "/etc/shadow");
    FAIL("parsed");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "/etc/shadow:1:5: error: TOML: Error while parsing key-value pair: expected '=', saw ':'\n");
  }
  // The same text in a file named as a TOML configuration is shown.
  CHECK(config_error(shadow).find(" 1 | root:$y$") != std::string::npos);
  // 5,000 event strings on one line: 100 bytes either side of the column.
  std::string events;
  for (int i = 0; i < 5000; ++i) events += fmt::format("\"e{}\",", i);
  std::string text = "[[set]]\nname = \"a\"\nevents = [" + events + " 3]\n";
  std::string error = config_error(text);
  const std::size_t column = text.size() - text.rfind('\n', text.size() - 2) - 3;  // the 3
  CHECK(error.starts_with(fmt::format("exp.toml:3:{}: error: each of events must be a string\n", column)));
  CHECK(error.find(" 3 | ...7\",\"e4988\",") != std::string::npos);
  CHECK(error.find("\"e4999\", 3]\n") != std::string::npos);
  CHECK(error.find(fmt::format("\n   | {}^\n", std::string(103, ' '))) != std::string::npos);
}

namespace {
// Runs `body` in a child whose standard error goes to a file; returns what body returned, then a line
// "--- stderr", then what it wrote there.
std::string with_stderr(const std::function<std::string()>& body) {
  return test::in_child([&] {
    std::string path = fmt::format("/tmp/perfspec-test-stderr-{}", ::getpid());
    std::FILE* f = std::freopen(path.c_str(), "w", stderr);
    if (!f) return std::string("cannot redirect stderr");
    std::string out = body();
    std::fflush(stderr);
    std::ifstream in(path);
    std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ::unlink(path.c_str());
    return out + "--- stderr\n" + err;
  });
}
// The failed_info series and target_up of one set, as text.
std::string failures_of(const std::vector<prometheus::MetricFamily>& fs) {
  std::string out;
  if (const auto* f = find(fs, "perfspec_event_failed_info"))
    for (const auto& m : f->metric)
      out += fmt::format("failed {} {}: {}\n", label(m, "event"), label(m, "errno"), label(m, "reason"));
  if (const auto* up = find(fs, "perfspec_target_up"))
    for (const auto& m : up->metric) out += fmt::format("up {} {}\n", m.gauge.value, label(m, "reason"));
  return out;
}
}  // namespace

TEST_CASE("a set none of whose events opens: not up, each errno and reason in its series and in the log") {
  // A tracepoint whose id no kernel has: EINVAL on every machine (perf_trace_init finds no such id).
  test::TempTree tree;
  tree.write("kernel/tracing/events/fake/gone/id", "999999\n");
  tree.write("kernel/tracing/events/sched/sched_switch/id", "999998\n");
  spec::Machine machine(tree.root(), test::no_libpfm4());
  auto text = "[[set]]\nname = \"gone\"\nevents = [\"fake:gone\", \"sched:sched_switch\"]\ncpus = \"0\"\n";
  std::string got = with_stderr([&] {
    auto state = State::prepare(parse_config(text, "exp.toml"), machine);
    state->open(nullptr);
    return failures_of(state->collect());
  });
  const std::string hint =
      "the kernel has no tracepoint with this id (the module that defines it was unloaded, or the id is from "
      "another kernel's tracefs)";
  CHECK(got ==
        fmt::format("failed fake:gone EINVAL: {0}\n"
                    "failed sched:sched_switch EINVAL: {0}\n"
                    "up 0 no event of the set could be opened: fake:gone: EINVAL: {0}\n"
                    "--- stderr\n"
                    "perfspec exporter: set 'gone': 'fake:gone' cannot be counted: EINVAL: {0}\n"
                    "perfspec exporter: set 'gone': 'sched:sched_switch' cannot be counted: EINVAL: {0}\n",
                    hint));
}

TEST_CASE("the exporter as an unprivileged user: a system-wide set says EACCES and why, as stat does") {
  spec::Machine machine("/sys", test::no_libpfm4());
  auto paranoid = runtime::system_calls().perf_event_paranoid();
  REQUIRE(paranoid);
  std::string got = with_stderr([&] {
    if (!test::become_nobody()) return std::string("not root\n");
    auto state = State::prepare(
        parse_config("[[set]]\nname = \"sys\"\nevents = [\"context-switches\"]\n", "e.toml"), machine);
    state->open(nullptr);
    return failures_of(state->collect());
  });
  if (*paranoid <= 0) {  // anyone may count every CPU here
    CHECK(got == "up 1 (none)\n--- stderr\n");
    return;
  }
  auto first = got.substr(0, got.find('\n'));
  CHECK(first.starts_with("failed context-switches EACCES: "));
  CHECK(first.find("perf_event_paranoid") != std::string::npos);  // why, for this machine
  CHECK(got.find("\nup 0 no event of the set could be opened: context-switches: EACCES: ") !=
        std::string::npos);
  CHECK(
      got.find("--- stderr\nperfspec exporter: set 'sys': 'context-switches' cannot be counted: EACCES: ") !=
      std::string::npos);
}

namespace {

// A connection to 127.0.0.1:`port`, or -1 with errno.
int connect_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  int err = errno;
  ::close(fd);
  errno = err;
  return -1;
}

std::string http_raw(int port, const std::string& request);

// One HTTP/1.1 GET of `path` on 127.0.0.1:`port` with an Accept header: the whole answer (status
// line, headers, body), read until the server closes.
std::string http_get(int port, std::string_view path, std::string_view accept) {
  return http_raw(
      port, fmt::format("GET {} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {}\r\nConnection: close\r\n\r\n", path,
                        accept));
}

// `request` sent as it is; the whole answer, read until the server closes.
std::string http_raw(int port, const std::string& request) {
  int fd = connect_loopback(port);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

}  // namespace

TEST_CASE("the exporter layer without the command: an Exporter served by a Server, in both formats") {
  test::TempTree dir;
  dir.write("exp.toml",
            fmt::format("[[set]]\nname = \"self\"\npid = {}\nevents = [\"page-faults\"]\n", ::getpid()));
  spec::Machine machine("/sys", test::no_libpfm4());
  std::vector<std::string> log;
  auto engine = std::make_shared<Exporter>(machine, dir.root() + "/exp.toml",
                                           [&](std::string_view message) { log.emplace_back(message); });
  // Served before its configuration is open (the command listens first): not ready, no series.
  Server server(engine, "127.0.0.1:0", 2);
  REQUIRE(server.port() > 0);
  // A machine whose loopback interface is down (a bare init that never brought it up) cannot be
  // scraped here: said, and the rest left out. Everywhere else this runs.
  if (int fd = connect_loopback(server.port()); fd >= 0) {
    ::close(fd);
  } else if (errno == ENETUNREACH) {
    MESSAGE("skipped the scrapes: the loopback interface is down here (connect: ENETUNREACH)");
    return;
  }
  const std::string plain = "Content-Type: text/plain; charset=utf-8\r\n";
  CHECK(
      http_get(server.port(), "/-/ready", "*/*") ==
      "HTTP/1.1 503 Service Unavailable\r\n" + plain +
          "Content-Length: 67\r\nConnection: close\r\n\r\nperfspec exporter is not ready: the configuration "
          "is not open yet.\n");
  CHECK(http_get(server.port(), "/metrics", "*/*").starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
  CHECK(http_get(server.port(), "/-/healthy", "*/*") ==
        "HTTP/1.1 200 OK\r\n" + plain +
            "Content-Length: 30\r\nConnection: close\r\n\r\nperfspec exporter is healthy.\n");
  CHECK(engine->reload().empty());
  CHECK(engine->summary() == "1 sets, 1 events, 0 metrics");
  CHECK(http_get(server.port(), "/-/ready", "*/*") ==
        "HTTP/1.1 200 OK\r\n" + plain +
            "Content-Length: 28\r\nConnection: close\r\n\r\nperfspec exporter is ready.\n");
  // Two servers of one process each serve (civetweb's contexts are the servers' own).
  {
    Server second(engine, "127.0.0.1:0", 1);
    CHECK(http_get(second.port(), "/-/ready", "*/*").starts_with("HTTP/1.1 200 OK\r\n"));
  }
  const std::string series = "perfspec_event_total{set=\"self\",pid=\"" + std::to_string(::getpid()) +
                             "\",event=\"page-faults\",pmu=\"software\"} ";
  std::string text = http_get(server.port(), "/metrics", "text/plain;version=0.0.4");
  CHECK(text.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(text.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
  CHECK(text.find("\n" + series) != std::string::npos);
  CHECK(text.find("# EOF") == std::string::npos);
  // the exporter's own: its build, its process, as every client library names them; nothing else's
  CHECK(text.find("\nperfspec_exporter_build_info{version=\"0.1.0\",revision=\"") != std::string::npos);
  CHECK(text.find("\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ") !=
        std::string::npos);
  CHECK(text.find("\nprocess_open_fds ") != std::string::npos);
  CHECK(text.find("exposer_") == std::string::npos);
  std::string open_metrics =
      http_get(server.port(), "/metrics", "application/openmetrics-text;version=1.0.0");
  CHECK(open_metrics.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(open_metrics.find("Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n") !=
        std::string::npos);
  CHECK(open_metrics.find("\n" + series) != std::string::npos);
  CHECK(open_metrics.ends_with("# EOF\n"));
  // gzip when the scraper takes it (as Prometheus asks), its length the compressed one
  std::string zipped =
      http_raw(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  const auto body_at = zipped.find("\r\n\r\n") + 4;
  CHECK(zipped.find("Content-Encoding: gzip\r\n") < body_at);
  CHECK(zipped.find(fmt::format("Content-Length: {}\r\n", zipped.size() - body_at)) < body_at);
  CHECK(zipped.substr(body_at, 2) == "\x1f\x8b");
  CHECK(http_raw(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0\r\n\r\n")
            .find("Content-Encoding") == std::string::npos);
  // The landing page: what this is, and the configuration's sets
  std::string page = http_get(server.port(), "/", "text/html");
  CHECK(page.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"));
  CHECK(page.find("<a href=\"metrics\">Metrics</a>") != std::string::npos);
  CHECK(page.find("<tr><td>self</td><td>process " + std::to_string(::getpid()) +
                  "</td><td>total</td><td>page-faults</td><td></td></tr>") != std::string::npos);
  // What load balancers and odd clients send: HEAD answers as GET without the body, OPTIONS says what
  // is allowed, a WebSocket upgrade is refused with a status line, another path is 404 and another
  // method 405; every answer closes its connection (keep-alive would let a client that keeps asking
  // hold an HTTP thread).
  CHECK(http_raw(server.port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n") ==
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nConnection: "
        "close\r\n\r\n");
  CHECK(http_raw(server.port(), "HEAD /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n") ==
        "HTTP/1.1 200 OK\r\n" + plain + "Content-Length: 30\r\nConnection: close\r\n\r\n");
  CHECK(http_raw(server.port(), "OPTIONS /metrics HTTP/1.1\r\nHost: x\r\n\r\n") ==
        "HTTP/1.1 200 OK\r\nAllow: GET, HEAD, OPTIONS\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  CHECK(http_raw(server.port(),
                 "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n") ==
        "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  CHECK(http_get(server.port(), "/nosuch", "*/*") ==
        "HTTP/1.1 404 Not Found\r\n" + plain +
            "Content-Length: 19\r\nConnection: close\r\n\r\n404 page not found\n");
  CHECK(http_raw(server.port(), "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n") ==
        "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD, OPTIONS\r\n" + plain +
            "Content-Length: 31\r\nConnection: close\r\n\r\nthe method is not allowed here\n");
  // Two requests on one keep-alive connection: one answer, then the server closes.
  std::string two = http_raw(server.port(),
                             "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"
                             "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
  CHECK(two.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(two.find("HTTP/1.1", 1) == std::string::npos);
  CHECK(log.empty());  // page-faults of this process opens everywhere
}

TEST_CASE("the exporter layer says what it could not open to its log, not to standard error") {
  test::TempTree tree;
  tree.write("kernel/tracing/events/fake/gone/id", "999999\n");
  spec::Machine machine(tree.root(), test::no_libpfm4());
  // (with_stderr runs its body in a child: the log comes back in its text)
  std::string got = with_stderr([&] {
    std::string log;
    auto state = State::prepare(
        parse_config("[[set]]\nname = \"gone\"\nevents = [\"fake:gone\"]\ncpus = \"0\"\n", "exp.toml"),
        machine, [&](std::string_view message) { log += fmt::format("log: {}\n", message); });
    state->open(nullptr);
    (void)state->collect();
    return log;
  });
  CHECK(got.starts_with("log: set 'gone': 'fake:gone' cannot be counted: EINVAL: "));
  CHECK(got.ends_with("\n--- stderr\n"));  // nothing on standard error
  CHECK(std::count(got.begin(), got.end(), '\n') == 2);
}

TEST_CASE("config_error_info's file label is UTF-8 whatever bytes the path has") {
  test::TempTree dir;
  const std::string name = "conf\xff.toml";
  dir.write(name, "[[set]]\nname = \"s\"\nevents = [\"task-clock\"]\ncpus = \"0\"\n");
  spec::Machine machine("/sys", test::no_libpfm4());
  Exporter engine(machine, dir.root() + "/" + name, [](std::string_view) {});
  REQUIRE(engine.reload().empty());
  dir.write(name, "[[set]]\nname = \"s\"\nevents = [\"no_such_event\"]\n");
  CHECK(!engine.reload().empty());
  const auto families = engine.Collect();
  const auto* info = find(families, "perfspec_exporter_config_error_info");
  REQUIRE(info);
  REQUIRE(info->metric.size() == 1);
  CHECK(label(info->metric[0], "file") == dir.root() + "/conf\\xff.toml");
  CHECK(label(info->metric[0], "error").starts_with(dir.root() + "/conf\\xff.toml:3:"));
}

TEST_CASE(
    "a set whose counters would leave fewer than 64 descriptors for serving is not opened, and says "
    "which limit") {
  spec::Machine machine("/sys", test::no_libpfm4());
  std::string events;
  for (int i = 0; i < 100; ++i) events += fmt::format("{}\"software/config=0,name=e{}/\"", i ? "," : "", i);
  // In a child: its RLIMIT_NOFILE is lowered to 150, and this process's stays as it is.
  std::string got = test::in_child([&] {
    rlimit l{150, 150};
    if (::setrlimit(RLIMIT_NOFILE, &l) != 0) return std::string("setrlimit failed");
    auto state = State::prepare(
        parse_config("[[set]]\nname = \"many\"\npid = " + std::to_string(::getpid()) + "\nevents = [" +
                         events + "]\n[[set]]\nname = \"few\"\npid = " + std::to_string(::getpid()) +
                         "\nevents = [\"task-clock\"]\n",
                     "exp.toml"),
        machine, [](std::string_view) {});
    state->open(nullptr);
    std::string out;
    auto fs = state->collect();
    if (const auto* up = find(fs, "perfspec_target_up"))
      for (const auto& m : up->metric)
        out += fmt::format("{} {} {}\n", label(m, "set"), m.gauge.value, label(m, "reason"));
    return out;
  });
  CHECK(
      got.starts_with("many 0 its 100 counters would leave fewer than 64 of RLIMIT_NOFILE's 150 file "
                      "descriptors for serving ("));
  CHECK(got.find(" open): raise the limit (LimitNOFILE= in its systemd unit, ulimit -n)\nfew 1 (none)\n") !=
        std::string::npos);
}

TEST_CASE(
    "the process series, as the client libraries name them, from /proc: exact, and none from bad files") {
  test::TempTree proc;
  // a command with a space and parentheses of its own, then fields 3..24: utime 150, stime 50,
  // starttime 12345 ticks after boot, vsize, rss 2560 pages
  proc.write("4242/stat",
             "4242 (odd) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 150 50 0 0 20 0 3 0 12345 104857600 2560 "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
  proc.write("stat", "cpu  1 2 3 4\nintr 5\nbtime 1700000000\nprocesses 9\n");
  proc.write("4242/limits",
             "Limit                     Soft Limit           Hard Limit           Units     \n"
             "Max open files            1024                 524288               files     \n");
  for (const char* fd : {"4242/fd/0", "4242/fd/1", "4242/fd/2", "4242/fd/7"}) proc.write(fd, "");
  std::vector<prometheus::MetricFamily> out;
  process_series(out, proc.root(), "4242");
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  auto value = [&](std::string_view name) {
    const auto* f = find(out, name);
    REQUIRE(f);
    REQUIRE(f->metric.size() == 1);
    return f->type == prometheus::MetricType::Counter ? f->metric[0].counter.value : f->metric[0].gauge.value;
  };
  CHECK(out.size() == 6);
  CHECK(find(out, "process_cpu_seconds_total")->type == prometheus::MetricType::Counter);
  CHECK(value("process_cpu_seconds_total") == 200 / ticks);
  CHECK(value("process_resident_memory_bytes") == 2560 * page);
  CHECK(value("process_virtual_memory_bytes") == 104857600);
  CHECK(value("process_start_time_seconds") == 1700000000 + 12345 / ticks);
  CHECK(value("process_open_fds") == 4);
  CHECK(value("process_max_fds") == 1024);
  // a stat cut short, no btime, an unlimited soft limit: those series left out, the rest kept
  proc.write("4242/stat", "4242 (x) S 1 4242 4242 0 -1 4194560 500 0 0 0 150\n");
  proc.write("stat", "cpu  1 2 3 4\n");
  proc.write("4242/limits", "Max open files            unlimited            unlimited            files\n");
  out.clear();
  process_series(out, proc.root(), "4242");
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "process_open_fds");
  // the build's info: one series, value 1, its labels
  out.clear();
  build_info_series(out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].name == "perfspec_exporter_build_info");
  REQUIRE(out[0].metric.size() == 1);
  CHECK(out[0].metric[0].gauge.value == 1);
  CHECK(label(out[0].metric[0], "version") == "0.1.0");
  CHECK(!label(out[0].metric[0], "revision").empty());
  CHECK(!label(out[0].metric[0], "compiler").empty());
  CHECK(!label(out[0].metric[0], "arch").empty());
}
