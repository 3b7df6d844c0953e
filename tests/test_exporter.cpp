// SPDX-License-Identifier: MIT
// The exporter's configuration (every error at its file position, with the caret) and its series from
// real counters.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <cmath>
#include <fstream>
#include <iterator>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"
#include "tools/exporter.hpp"
#include "tools/exporter_config.hpp"

using namespace perfspec;
using namespace perfspec::tools::exporter;

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
  CHECK(config_error("[[metric]]\nname = \"m\"\n") ==
        "exp.toml:1:1: error: a [[metric]] needs a name and an expr (this one has no expr)\n"
        " 1 | [[metric]]\n"
        "   | ^\n");
}

TEST_CASE("event strings, metrics, CPU lists and cgroups of a configuration resolve or point into the file") {
  spec::Machine machine(test::fixture("intel_skx"), test::no_libpfm4());
  // The bad term sits after an escape (\u0063 is the 'c' of 0x3c): its column counts the file's
  // characters, not the string's bytes.
  CHECK(
      prepare_error("[[set]]\nname = \"a\"\nevents = [\"task-clock\", \"cpu/event=0x3\\u0063,evnt=1/\"]\n",
                    machine) ==
      "exp.toml:3:46: error: unknown term 'evnt' for pmu 'cpu'\n"
      " 3 | events = [\"task-clock\", \"cpu/event=0x3\\u0063,evnt=1/\"]\n"
      "   |                                              ^\n"
      "help: did you mean 'event'?\n"
      "valid terms: "
      "any,cmask,edge,event,frontend,in_tx,in_tx_cp,inv,ldlat,offcore_rsp,pc,umask,config,config1,"
      "config2,config3,name,period,freq,branch_type,time,call-graph,stack-size,max-stack,inherit,no-inherit,"
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
  int go[2], done[2];
  REQUIRE(::pipe(go) == 0);
  REQUIRE(::pipe(done) == 0);
  const long page = ::sysconf(_SC_PAGESIZE);
  constexpr int pages = 64;
  char* region = static_cast<char*>(
      ::mmap(nullptr, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(region != MAP_FAILED);
  pid_t child = ::fork();
  if (child == 0) {
    // Round 0 touches one page and goes through every code path once (its faults are the process's
    // own); round 1 touches `pages` fresh pages, and nothing else faults.
    ::close(go[1]);
    ::close(done[0]);
    char c;
    for (int round = 0; round < 2; ++round) {
      if (::read(go[0], &c, 1) != 1) ::_exit(1);
      for (int i = 0; i < (round == 0 ? 1 : pages); ++i) region[(round + i) * page] = 1;
      if (::write(done[1], "d", 1) != 1) ::_exit(1);
    }
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    ::_exit(0);
  }
  ::close(go[0]);
  ::close(done[1]);
  auto text = fmt::format(
      "[[set]]\nname = \"faults\"\npid = {}\nevents = [\"page-faults\", \"task-clock\", \"cycles\"]\n"
      "labels = {{ team = \"db\" }}\n",
      child);
  auto state = State::prepare(parse_config(text, "exp.toml"), machine);
  state->open(nullptr);
  auto round = [&] {
    char c;
    REQUIRE(::write(go[1], "x", 1) == 1);
    REQUIRE(::read(done[0], &c, 1) == 1);
    // "done" comes before the child is back asleep in read(2): wait until it is, so that what it
    // does on the way is in this round's count.
    for (int i = 0; i < 1000; ++i) {
      std::ifstream stat(fmt::format("/proc/{}/stat", child));
      std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      auto paren = all.rfind(')');
      if (paren != std::string::npos && paren + 2 < all.size() && all[paren + 2] == 'S') break;
      ::usleep(1000);
    }
    auto fs = state->collect();
    const auto* f = find(fs, "perfspec_event_total");
    REQUIRE(f);
    REQUIRE(f->metric.size() == 1);
    return f->metric[0].counter.value;
  };
  const double warm = round();
  CHECK(warm >= 1);
  CHECK(round() - warm == pages);
  auto fs = state->collect();
  const auto* f = find(fs, "perfspec_event_total");
  CHECK(label(f->metric[0], "set") == "faults");
  CHECK(label(f->metric[0], "event") == "page-faults");
  CHECK(label(f->metric[0], "pmu") == "software");
  CHECK(label(f->metric[0], "pid") == std::to_string(child));
  CHECK(label(f->metric[0], "team") == "db");
  CHECK(find(fs, "perfspec_event_seconds_total"));
  CHECK(find(fs, "perfspec_event_enabled_seconds_total")->metric.size() == 2);
  const auto* failed = find(fs, "perfspec_event_failed_info");
  if (failed) {  // no hardware PMU here: cycles cannot be opened, and says why
    REQUIRE(failed->metric.size() == 1);
    CHECK(label(failed->metric[0], "event") == "cycles");
    CHECK(label(failed->metric[0], "errno") != "");
  }
  const auto* up = find(fs, "perfspec_target_up");
  REQUIRE(up);
  CHECK(up->metric[0].gauge.value == 1);
  // The process ends: reported, not fatal, its last counts kept.
  REQUIRE(::write(go[1], "x", 1) == 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  fs = state->collect();
  up = find(fs, "perfspec_target_up");
  CHECK(up->metric[0].gauge.value == 0);
  CHECK(label(up->metric[0], "reason") == fmt::format("process {} has exited", child));
  CHECK(find(fs, "perfspec_event_total")->metric[0].counter.value >= pages);  // and its exit's faults
  ::close(go[1]);
  ::close(done[0]);
  ::munmap(region, (pages + 1) * page);
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
