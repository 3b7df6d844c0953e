// SPDX-License-Identifier: MIT
// perf stat's counting run as a library (perfspec/stat_counting.hpp), without the CLI: exact counts of
// a process whose page faults are known, a command's status and times, counting held back until
// enable(), perf's header words for each target, and the errors for targets that cannot be counted.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/stat_counting.hpp"
#include "runtime/process.hpp"
#include "tests/support.hpp"
#include "tests/waiting_workload.hpp"

using namespace perfspec;

namespace {

// The cell of event `e` in the report's first unit.
const runtime::Count& first(const StatReport& r, std::size_t e) {
  REQUIRE(!r.units.empty());
  REQUIRE(e < r.units[0].cells.size());
  return r.units[0].cells[e].count;
}

std::string error_text(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a process counted by pid: its exact page faults, perf's header words, its end seen") {
  spec::Machine machine("/sys", test::no_libpfm4());
  constexpr int pages = 64;
  test::WaitingWorkload w(pages);
  REQUIRE(w.said() == "ready");
  StatTarget target;
  target.pid = w.pid();
  StatCounting run(resolve("page-faults,duration_time", machine), target, machine);
  CHECK(stat_target_words(target) == fmt::format("process id '{}'", w.pid()));
  CHECK_FALSE(run.has_command());
  CHECK(run.open_fds() == 1);  // duration_time is perf's tool event: nothing opened for it
  w.asleep();
  REQUIRE(run.start() == 0);
  CHECK(run.enabled());
  CHECK(first(run.read(), 0).raw == 0);
  REQUIRE(w.go());
  REQUIRE(w.said() == "done");
  w.asleep();
  StatReport now = run.read();
  CHECK(first(now, 0).raw == pages);
  CHECK(first(now, 0).state == runtime::Count::State::counted);
  // duration_time: the wall time since start(), in ns, in the first unit only
  CHECK(first(now, 1).raw > 0);
  CHECK(static_cast<double>(first(now, 1).raw) <= run.seconds() * 1e9);
  CHECK_FALSE(run.wait(1));  // it lives
  w.close_input();           // the end of its stdin ends it: a zombie, which counts as ended
  bool ended = false;
  for (int i = 0; i < 3000 && !ended; ++i) ended = run.wait(10);
  CHECK(ended);
  StatRun shown;
  StatReport last = run.finish(shown, false);
  CHECK(first(last, 0).raw == pages);
  CHECK_FALSE(shown.exit_status);  // no command of its own: no status, no times
  CHECK_FALSE(shown.user_seconds);
}

TEST_CASE("a process counted while a command times the count (perf stat -p PID sleep 10)") {
  spec::Machine machine("/sys", test::no_libpfm4());
  constexpr int pages = 32;
  test::WaitingWorkload w(pages);
  REQUIRE(w.said() == "ready");
  StatTarget target;
  target.pid = w.pid();
  target.command = {"sh", "-c", "exit 3"};
  StatCounting run(resolve("page-faults", machine), target, machine);
  CHECK(run.has_command());
  CHECK(stat_target_words(target) == fmt::format("process id '{}'", w.pid()));
  w.asleep();
  REQUIRE(run.start() == 0);
  REQUIRE(w.go());
  REQUIRE(w.said() == "done");
  w.asleep();
  // the process's faults alone: the command's own (an exec, a shell) are not counted
  CHECK(first(run.read(), 0).raw == pages);
  bool ended = false;
  for (int i = 0; i < 3000 && !ended; ++i) ended = run.wait(10);
  CHECK(ended);  // the command's end ends the count
  StatRun shown;
  StatReport last = run.finish(shown, false);
  CHECK(first(last, 0).raw == pages);
  CHECK(shown.exit_status == 3);    // the command's status, as perf's
  CHECK_FALSE(shown.user_seconds);  // not what was counted: no times of it
  w.close_input();
}

TEST_CASE("counting held back until enable(): nothing before it, every page after") {
  spec::Machine machine("/sys", test::no_libpfm4());
  constexpr int pages = 32;
  auto count_pages = [&](bool enable) {
    test::WaitingWorkload w(pages);
    REQUIRE(w.said() == "ready");
    StatTarget target;
    target.pid = w.pid();
    target.enable_later = true;
    StatCounting run(resolve("page-faults", machine), target, machine);
    w.asleep();
    REQUIRE(run.start() == 0);
    CHECK_FALSE(run.enabled());
    if (enable) run.enable();
    CHECK(run.enabled() == enable);
    REQUIRE(w.go());
    REQUIRE(w.said() == "done");
    w.asleep();
    auto raw = first(run.read(), 0).raw;
    run.disable();
    CHECK_FALSE(run.enabled());
    return raw;
  };
  CHECK(count_pages(false) == 0);
  CHECK(count_pages(true) == pages);
}

TEST_CASE("a command counted: its status, its CPU times, its words in the header") {
  spec::Machine machine("/sys", test::no_libpfm4());
  StatTarget target;
  target.command = {"/bin/sh", "-c", "exit 3"};
  StatCounting run(resolve("task-clock,user_time", machine), target, machine);
  CHECK(stat_target_words(target) == "'/bin/sh -c exit 3'");
  CHECK(run.has_command());
  REQUIRE(run.start() == 0);
  bool ended = false;
  for (int i = 0; i < 3000 && !ended; ++i) ended = run.wait(10);
  REQUIRE(ended);
  StatRun shown;
  StatReport report = run.finish(shown, false);
  CHECK(run.exit_status() == 3);
  REQUIRE(shown.exit_status);
  CHECK(*shown.exit_status == 3);
  CHECK(shown.user_seconds);
  CHECK(shown.system_seconds);
  CHECK(shown.elapsed_seconds > 0);
  CHECK(first(report, 0).state == runtime::Count::State::counted);
  CHECK(first(report, 0).raw > 0);  // the shell ran, on some CPU, for some nanoseconds
  // user_time of an ended command: its own rusage, as perf reads it
  CHECK(first(report, 1).state == runtime::Count::State::counted);
  CHECK(first(report, 1).raw == static_cast<std::uint64_t>(*shown.user_seconds * 1e9));
}

TEST_CASE("a command that cannot be run: its errno, and 127 as a shell says") {
  spec::Machine machine("/sys", test::no_libpfm4());
  StatTarget target;
  target.command = {"/nonexistent/perfspec-no-such-command"};
  StatCounting run(resolve("task-clock", machine), target, machine);
  CHECK(run.start() == ENOENT);
  CHECK(run.exit_status() == 127);
}

TEST_CASE("--null: an empty set opens nothing and still times the command") {
  spec::Machine machine("/sys", test::no_libpfm4());
  StatTarget target;
  target.command = {"/bin/true"};
  StatCounting run(EventSet{}, target, machine);
  CHECK(run.open_fds() == 0);
  REQUIRE(run.start() == 0);
  while (!run.wait(10)) {
  }
  StatRun shown;
  CHECK(run.finish(shown, false).units.empty());
  REQUIRE(shown.exit_status);
  CHECK(*shown.exit_status == 0);
}

TEST_CASE("threads by id: perf's header quotes them as written, each thread its own line") {
  spec::Machine machine("/sys", test::no_libpfm4());
  const int tid = static_cast<int>(::syscall(SYS_gettid));
  StatTarget target;
  target.threads = {tid};
  target.aggregation = Aggregation::thread;
  {
    StatCounting run(resolve("task-clock", machine), target, machine);
    CHECK(stat_target_words(target) == fmt::format("thread id '{}'", tid));
    REQUIRE(run.start() == 0);
    StatReport r = run.read();
    REQUIRE(r.units.size() == 1);
    CHECK(r.units[0].thread == tid);
    CHECK(r.units[0].label.ends_with(fmt::format("-{}", tid)));
  }
  target.as_written = fmt::format("0{}", tid);
  CHECK(stat_target_words(target) == fmt::format("thread id '0{}'", tid));
}

TEST_CASE("perf stat's header words for each target") {
  StatTarget target;
  target.system_wide = true;
  CHECK(stat_target_words(target) == "'system wide'");
  target.cpus = {0, 1, 2, 3, 8, 10, 11};
  CHECK(stat_target_words(target) == "'CPU(s) 0-3,8,10-11'");
  target.as_written = "0,1,2,3,8,10-11";
  CHECK(stat_target_words(target) == "'CPU(s) 0,1,2,3,8,10-11'");
  target.command = {"sleep", "1"};  // run beside a system-wide count: the CPUs are named
  CHECK(stat_target_words(target) == "'CPU(s) 0,1,2,3,8,10-11'");
  target = StatTarget{};
  target.system_wide = true;
  target.aggregation = Aggregation::thread;
  target.command = {"sleep", "1"};
  CHECK(stat_target_words(target) == "'system wide'");
  target = StatTarget{};
  target.command = {"ls", "-l", "/"};
  CHECK(stat_target_words(target) == "'ls -l /'");
  target.threads = {7, 8};
  target.command.clear();
  CHECK(stat_target_words(target) == "thread id '7,8'");
  target.pid = 42;
  CHECK(stat_target_words(target) == "process id '42'");
  CHECK(spec::cpu_list_text({-1}) == "-1");
  CHECK(spec::cpu_list_text({}).empty());
}

TEST_CASE("targets that cannot be counted: said before anything is opened") {
  spec::Machine machine("/sys", test::no_libpfm4());
  auto refused = [&](const StatTarget& t) {
    return error_text([&] { StatCounting(resolve("task-clock", machine), t, machine); });
  };
  // Parts that do not go together would count something else than asked.
  CHECK(refused(StatTarget{}) ==
        "nothing to count: a StatTarget needs a pid, threads, system_wide or a command");
  CHECK(refused(StatTarget{.pid = 1, .threads = {1}}) ==
        "a StatTarget counts a process (pid) or threads, not both");
  CHECK(refused(StatTarget{.threads = {1}, .system_wide = true}) ==
        "a StatTarget with a pid or threads counts them: no system_wide");
  CHECK(refused(StatTarget{.cpus = {0}, .command = {"true"}}) ==
        "cpus and cgroups are counted system-wide: set system_wide");
  CHECK(refused(StatTarget{.command = {"true"}, .cgroups = {"/"}}) ==
        "cpus and cgroups are counted system-wide: set system_wide");
  StatTarget target;
  target.pid = 4194304 + 1;  // above any pid_max
  CHECK(error_text([&] { StatCounting(resolve("task-clock", machine), target, machine); }) ==
        "no process with pid 4194305");
  target.pid.reset();
  target.threads = {4194305};
  CHECK(error_text([&] { StatCounting(resolve("task-clock", machine), target, machine); }) ==
        "no thread with id 4194305");
  // A zombie: exited, not yet reaped.
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  for (int i = 0; i < 5000 && runtime::process_state(child) != runtime::Process::zombie; ++i) ::usleep(1000);
  target.threads.clear();
  target.pid = child;
  CHECK(error_text([&] { StatCounting(resolve("task-clock", machine), target, machine); }) ==
        fmt::format("process {} has exited (a zombie its parent has not reaped): nothing to count", child));
  int status;
  ::waitpid(child, &status, 0);
  // -G: a cgroup that is not there
  target.pid.reset();
  target.system_wide = true;
  target.cgroups = {"perfspec-no-such-cgroup"};
  std::string err = error_text([&] { StatCounting(resolve("task-clock", machine), target, machine); });
  CHECK((err.starts_with("cannot open cgroup 'perfspec-no-such-cgroup' (") ||
         err == "no cgroup file system is mounted (see /proc/mounts)"));
  if (err.starts_with("cannot open")) CHECK(err.ends_with("): No such file or directory"));
}
