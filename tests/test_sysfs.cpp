// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "perfspec/perfspec.hpp"
#include "spec/sysfs_io.hpp"
#include "spec/tracefs.hpp"
#include "tests/support.hpp"

using perfspec::spec::Machine;
namespace io = perfspec::spec::io;

TEST_CASE("PMUs load lazily: a broken PMU does not disturb an event on another") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7");
  tree.write("bus/event_source/devices/broken/type", "not a number\n");
  tree.write("bus/event_source/devices/broken/format/event", "config:9-1\n");
  tree.write("bus/event_source/devices/cpu2/type", "5\n");
  tree.write("bus/event_source/devices/cpu2/format/event", "garbage");
  Machine machine(tree.root());
  auto set = perfspec::resolve("cpu/event=1/", machine);
  CHECK(set.events[0].attr.config == 1);
  // ...while naming the broken one is a clear error about its file.
  CHECK(test::error_of("broken/event=1/", machine) ==
        fmt::format(
            "event syntax error: 'broken/event=1/'\n"
            "                     \\___ pmu 'broken': '{}/bus/event_source/devices/broken/type' holds 'not a "
            "number', not a PMU type number\n",
            tree.root()));
  // A bare alias name is looked up on every PMU: the broken one does not hide it on the others...
  tree.write("bus/event_source/devices/cpu/events/myev", "event=0x42\n");
  Machine fresh(tree.root(), test::no_libpfm4());
  CHECK(perfspec::resolve("myev", fresh).events.at(0).attr.config == 0x42);
  // ...and a name found nowhere reports the PMU that could not be searched, not "unknown event".
  CHECK(test::error_of("nosuchev", fresh)
            .find("pmu 'broken': '" + tree.root() +
                  "/bus/event_source/devices/broken/type' holds 'not a number'") != std::string::npos);
}

TEST_CASE("aliases with metadata, with and without trailing newlines") {
  test::TempTree tree;
  tree.pmu("uncore_imc_0", 13);
  const std::string d = "bus/event_source/devices/uncore_imc_0/";
  tree.write(d + "format/event", "config:0-7\n");
  tree.write(d + "format/umask", "config:8-15");
  tree.write(d + "events/cas_count_read", "event=0x04,umask=0x03");
  tree.write(d + "events/cas_count_read.scale", "6.103515625e-5\n");
  tree.write(d + "events/cas_count_read.unit", "MiB");
  tree.write(d + "events/cas_count_read.per-pkg", "1\n");
  tree.write(d + "events/clockticks", "event=0x00,umask=0x00\n");
  tree.write(d + "cpumask", "0,28\n");
  Machine machine(tree.root());
  const auto* pmu = machine.pmu("uncore_imc_0");
  REQUIRE(pmu);
  CHECK(pmu->type() == 13);
  CHECK(pmu->cpumask() == "0,28");
  CHECK_FALSE(pmu->is_core());
  REQUIRE(pmu->aliases().size() == 2);  // metadata files are not events
  const auto* a = pmu->alias("CAS_COUNT_READ");
  REQUIRE(a);
  CHECK(a->terms == "event=0x04,umask=0x03");
  CHECK(a->scale == doctest::Approx(6.103515625e-5));
  CHECK(a->scale_text == "6.103515625e-5");
  CHECK(a->unit == "MiB");
  CHECK(a->per_pkg);
  CHECK_FALSE(a->snapshot);
  auto set = perfspec::resolve("uncore_imc_0/cas_count_read/", machine);
  CHECK(set.events[0].attr.config == 0x304);
  CHECK(set.events[0].unit == "MiB");
  CHECK(set.events[0].per_pkg);
}

TEST_CASE("core PMUs: `cpu`, or any PMU with a cpus file") {
  Machine skx(test::fixture("intel_skx"));
  auto cores = skx.core_pmus();
  REQUIRE(cores.size() == 1);
  CHECK(cores[0]->name() == "cpu");
  CHECK(cores[0]->max_precise() == 3);
  Machine adl(test::fixture("hybrid_adl"));
  auto hy = adl.core_pmus();
  REQUIRE(hy.size() == 2);
  CHECK(hy[0]->name() == "cpu_atom");
  CHECK(hy[1]->name() == "cpu_core");
  CHECK(hy[1]->cpus() == "0-7");
  Machine arm(test::fixture("arm_n1"));
  REQUIRE(arm.core_pmus().size() == 1);
  CHECK(arm.core_pmus()[0]->name() == "armv8_pmuv3_0");
}

TEST_CASE("tracepoints: kernel/tracing, falling back to kernel/debug/tracing") {
  test::TempTree tree;
  tree.write("kernel/debug/tracing/events/sched/sched_switch/id", "316\n");
  tree.write("kernel/debug/tracing/events/sched/sched_wakeup/id", "318");
  tree.write("kernel/debug/tracing/events/sched/enable", "0\n");
  Machine machine(tree.root());
  CHECK(machine.tracepoint_id("sched", "sched_switch") == 316u);
  CHECK(machine.tracepoints("sched", "sched_*").size() == 2);
  CHECK_FALSE(machine.tracepoint_id("sched", "nope"));
  tree.write("kernel/tracing/events/sched/sched_switch/id", "7\n");
  Machine preferred(tree.root());
  CHECK(preferred.tracepoint_id("sched", "sched_switch") == 7u);
}

TEST_CASE("names from user text never leave the sysfs root") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("secret/type", "99\n");
  tree.write("kernel/tracing/events/sched/sched_switch/id", "1\n");
  tree.write("kernel/tracing/secret/id", "2\n");
  Machine machine(tree.root());
  CHECK(machine.pmu("..") == nullptr);
  CHECK(machine.pmu("../../../secret") == nullptr);
  CHECK(machine.pmu(std::string("cpu\0x", 5)) == nullptr);
  CHECK(machine.pmu(std::string(300, 'a')) == nullptr);
  CHECK_FALSE(machine.tracepoint_id("..", "secret"));
  CHECK_FALSE(machine.tracepoint_id("sched", "../../secret"));
  CHECK(perfspec::spec::safe_component("uncore_imc_0"));
  CHECK_FALSE(perfspec::spec::safe_component("a/b"));
  CHECK_FALSE(perfspec::spec::safe_component("."));
}

TEST_CASE("symlinks that lead out of the tree are refused, naming the link; nothing outside is read") {
  test::TempTree outside;  // another tree: what a hostile snapshot would point at
  outside.write("secret", "config:0-7 SECRET\n");
  outside.write("dir/ev", "event=0x66 SECRET\n");
  outside.pmu("evil", 4);
  test::TempTree tree;
  namespace fs = std::filesystem;
  const std::string devices = tree.root() + "/bus/event_source/devices/";
  // sysfs's own shape: the PMU folder is a relative symlink that stays inside the tree.
  tree.write("devices/cpu/type", "4\n");
  tree.write("devices/cpu/format/event", "config:0-7\n");
  tree.write("devices/cpu/events/ok", "event=0x11\n");
  fs::create_directories(devices);
  fs::create_directory_symlink("../../../devices/cpu", devices + "cpu");
  tree.pmu("fmt", 20);
  tree.write("bus/event_source/devices/fmt/format/event", "config:0-7\n");
  fs::create_symlink(outside.root() + "/secret", devices + "fmt/format/umask");  // absolute
  tree.pmu("ali", 21);
  tree.write("bus/event_source/devices/ali/format/event", "config:0-7\n");
  fs::create_directories(devices + "ali/events");
  fs::create_symlink(fs::relative(outside.root() + "/dir/ev", devices + "ali/events"),
                     devices + "ali/events/ev");
  tree.pmu("dir", 22);
  tree.write("bus/event_source/devices/dir/format/event", "config:0-7\n");
  fs::create_directory_symlink(outside.root() + "/dir", devices + "dir/events");
  fs::create_directory_symlink(outside.root() + "/bus/event_source/devices/evil", devices + "evil");
  tree.write("kernel/tracing/events/sched/sched_switch/id", "7\n");
  fs::create_directories(tree.root() + "/kernel/tracing/events/sys/leak");
  fs::create_symlink(outside.root() + "/secret", tree.root() + "/kernel/tracing/events/sys/leak/id");
  Machine m(tree.root(), test::no_libpfm4());

  CHECK(perfspec::resolve("cpu/ok/", m).events.at(0).attr.config == 0x11);  // inside: followed
  CHECK(perfspec::resolve("sched:sched_switch", m).events.at(0).attr.config == 7);
  auto refused = [&](std::string_view text, const std::string& link) {
    std::string err = test::error_of(text, m);
    CAPTURE(err);
    CHECK(err.find(fmt::format("'{}' leads outside the tree '{}' (a symlink out of it): not read", link,
                               tree.root())) != std::string::npos);
    CHECK(err.find("SECRET") == std::string::npos);
  };
  refused("fmt/event=1/", devices + "fmt/format/umask");
  refused("ali/ev/", devices + "ali/events/ev");
  refused("dir/ev/", devices + "dir/events");
  refused("evil/event=1/", devices + "evil/type");
  refused("sys:leak", tree.root() + "/kernel/tracing/events/sys/leak/id");
  // The fallback for kernels without openat2 (realpath, then open) refuses the same links.
  for (auto check : {io::Jail::Check::kernel, io::Jail::Check::realpath}) {
    io::Jail jail(tree.root(), check);
    CHECK(io::read_small_file(jail, devices + "cpu/events/ok") == "event=0x11\n");
    CHECK_FALSE(io::read_small_file(jail, devices + "cpu/events/none"));
    CHECK(io::list_dir(jail, devices + "cpu/format") == std::vector<std::string>{"event"});
    CHECK(io::exists(jail, devices + "cpu/type"));
    CHECK_THROWS_WITH_AS(io::read_small_file(jail, devices + "fmt/format/umask"),
                         doctest::Contains("leads outside the tree"), perfspec::Error);
    CHECK_THROWS_WITH_AS(io::read_small_file(jail, devices + "ali/events/ev"),
                         doctest::Contains("leads outside the tree"), perfspec::Error);
    CHECK_THROWS_WITH_AS(io::list_dir(jail, devices + "dir/events"),
                         doctest::Contains("leads outside the tree"), perfspec::Error);
    CHECK_THROWS_WITH_AS(io::exists(jail, devices + "evil/type"), doctest::Contains("leads outside the tree"),
                         perfspec::Error);
  }
  // A snapshot copies nothing from outside either: the links out are reported as skipped.
  test::TempTree snap;
  std::filesystem::remove_all(snap.root());
  auto report = perfspec::spec::snapshot(m, snap.root(), {});
  for (const auto& skipped : report.skipped) CHECK(skipped.find("SECRET") == std::string::npos);
  CHECK_FALSE(fs::exists(snap.root() + "/bus/event_source/devices/fmt/format/umask"));
  CHECK(fs::exists(snap.root() + "/bus/event_source/devices/cpu/events/ok"));
}

TEST_CASE("huge and binary sysfs files are errors naming the file") {
  test::TempTree tree;
  tree.pmu("big", 20);
  tree.write("bus/event_source/devices/big/format/event", std::string(100000, '1'));
  tree.pmu("bin", 21);
  tree.write("bus/event_source/devices/bin/events/ev", std::string("event=1\0\x01", 9));
  Machine machine(tree.root());
  CHECK(test::error_of("big/event=1/", machine)
            .find("format/event' is larger than 65536 bytes; not a sysfs attribute") != std::string::npos);
  CHECK(test::error_of("bin/ev/", machine).find("events/ev' holds binary data") != std::string::npos);
}

TEST_CASE("a malformed .scale file is an error, not a silent 1.0") {
  test::TempTree tree;
  tree.pmu("power", 11);
  tree.write("bus/event_source/devices/power/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/power/events/energy-pkg", "event=0x02\n");
  tree.write("bus/event_source/devices/power/events/energy-pkg.scale", "lots\n");
  Machine machine(tree.root());
  CHECK(test::error_of("power/energy-pkg/", machine).find("energy-pkg.scale' holds 'lots', not a number") !=
        std::string::npos);
}

TEST_CASE("hostile trees: symlink loops, empty and non-numeric files, folders in place of files") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  std::filesystem::create_directory_symlink(".",
                                            tree.root() + "/bus/event_source/devices/cpu/events");  // a loop
  tree.write("bus/event_source/devices/empty/type", "");
  tree.write("bus/event_source/devices/folder/type/x", "1");  // `type` is a folder
  tree.pmu("nulls", 30);
  tree.write("bus/event_source/devices/nulls/format/event", std::string("config:0-7\0junk", 15));
  Machine m(tree.root(), test::no_libpfm4());
  CHECK(test::error_of("cpu/event=1/", m).empty());  // the loop is only listed, never followed down
  CHECK(test::error_of("cpu/nonesuch/", m).find("unknown term 'nonesuch'") != std::string::npos);
  CHECK(test::error_of("empty/event=1/", m).find("holds '', not a PMU type number") != std::string::npos);
  CHECK(test::error_of("folder/event=1/", m).find("unknown PMU 'folder'") != std::string::npos);
  CHECK(test::error_of("nulls/event=1/", m).find("invalid format") != std::string::npos);
  CHECK(test::error_of("'/etc/passwd'", m).find("expected an event") != std::string::npos);
  CHECK(test::error_of("../../etc/event=1/", m).find("expected") != std::string::npos);
}

TEST_CASE("a folder or a symlink to nothing where a file belongs: an error naming it, never an empty file") {
  test::TempTree tree;
  const std::string cpu = tree.root() + "/bus/event_source/devices/cpu";
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/cpu/events/good", "event=0x11\n");
  std::filesystem::create_symlink("missing", cpu + "/events/dangling");
  std::filesystem::create_directory(cpu + "/events/afolder");
  tree.write("bus/event_source/devices/cpu/events/scaled", "event=0x12\n");
  std::filesystem::create_directory(cpu + "/events/scaled.scale");
  tree.write("bus/event_source/devices/cpu/events/unitless", "event=0x13\n");
  std::filesystem::create_symlink("nowhere", cpu + "/events/unitless.unit");
  Machine m(tree.root(), test::no_libpfm4());
  CHECK(test::error_kind_of("dangling:u", m) == "machine description");  // PERFSPEC_E_MACHINE, status 3
  CHECK(test::error_of("dangling:u", m) ==
        fmt::format("event syntax error: 'dangling:u'\n"
                    "                     \\___ '{}/events/dangling' is a symlink to nothing ('missing')\n",
                    cpu));
  CHECK(test::error_of("cpu/afolder/", m) ==
        fmt::format("event syntax error: 'cpu/afolder/'\n"
                    "                         \\___ '{}/events/afolder' is a folder, not a file\n",
                    cpu));
  CHECK(test::error_of("cpu/scaled/", m)
            .find(fmt::format("'{}/events/scaled.scale' is a folder, not a file", cpu)) != std::string::npos);
  CHECK(test::error_of("unitless", m)
            .find(fmt::format("'{}/events/unitless.unit' is a symlink to nothing ('nowhere')", cpu)) !=
        std::string::npos);
  CHECK(perfspec::resolve("good", m).events.at(0).attr.config == 0x11);  // the rest of the PMU is unharmed
  // Listing leaves them out and says why.
  const perfspec::spec::Pmu* p = m.pmu("cpu");
  REQUIRE(p);
  std::vector<std::string> listed;
  for (const auto& a : p->aliases()) listed.push_back(a.name);
  CHECK(listed == std::vector<std::string>{"good"});
  REQUIRE(p->skipped().size() == 4);
  CHECK(p->skipped()[0].path == cpu + "/events/afolder");
  CHECK(p->skipped()[0].reason == fmt::format("'{}/events/afolder' is a folder, not a file", cpu));
  CHECK(p->skipped()[1].path == cpu + "/events/dangling");
  CHECK(p->skipped()[2].path == cpu + "/events/scaled");
  CHECK(p->skipped()[3].path == cpu + "/events/unitless");
  // Formats and caps likewise.
  tree.pmu("fmt", 30);
  std::filesystem::create_directories(tree.root() + "/bus/event_source/devices/fmt/format");
  std::filesystem::create_symlink("gone", tree.root() + "/bus/event_source/devices/fmt/format/event");
  CHECK(test::error_of("fmt/event=1/", m).find("/fmt/format/event' is a symlink to nothing ('gone')") !=
        std::string::npos);
  tree.pmu("caps", 31);
  tree.write("bus/event_source/devices/caps/format/event", "config:0-7\n");
  std::filesystem::create_directories(tree.root() + "/bus/event_source/devices/caps/caps/max_precise");
  CHECK(test::error_of("caps/event=1/P", m).find("/caps/caps/max_precise' is a folder, not a file") !=
        std::string::npos);
  tree.pmu("unc", 32);
  std::filesystem::create_directories(tree.root() + "/bus/event_source/devices/unc/cpumask");
  CHECK(test::error_of("unc/config=1/", m).find("/unc/cpumask' is a folder, not a file") !=
        std::string::npos);
}

TEST_CASE("a PMU folder that vanishes between listing and reading: clear errors, the rest unharmed") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/cpu/events/ev", "event=0x11\n");
  for (const char* name : {"gone", "halfgone"}) {
    tree.pmu(name, 30);
    tree.write(fmt::format("bus/event_source/devices/{}/format/event", name), "config:0-7\n");
  }
  Machine m(tree.root(), test::no_libpfm4());
  REQUIRE(m.pmu_names() == std::vector<std::string>{"cpu", "gone", "halfgone"});  // listed...
  REQUIRE(m.pmu("halfgone"));                                                     // ...and one read
  std::filesystem::remove_all(tree.root() + "/bus/event_source/devices/gone");
  std::filesystem::remove_all(tree.root() + "/bus/event_source/devices/halfgone/format");
  CHECK(test::error_of("gone/event=1/", m).find("unknown PMU 'gone'") != std::string::npos);
  CHECK(test::error_of("halfgone/event=1/", m).find("unknown term 'event' for pmu 'halfgone'") !=
        std::string::npos);
  CHECK(perfspec::resolve("ev", m).events.at(0).attr.config == 0x11);  // a bare name still searches the rest
  CHECK(perfspec::resolve("cpu/event=2/", m).events.at(0).attr.config == 2);
  CHECK_NOTHROW(perfspec::spec::list_events(m, {}));
  CHECK(perfspec::spec::list_pmus(m, {}).size() == 2);  // `gone` is no longer a PMU
}

TEST_CASE("unreadable files and folders, as a user without the permission: errors name the file") {
  test::TempTree tree;
  const std::string devices = tree.root() + "/bus/event_source/devices/";
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/cpu/events/ev", "event=0x11\n");
  tree.pmu("notype", 20);
  tree.write("bus/event_source/devices/notype/format/event", "config:0-7\n");
  tree.pmu("noformat", 21);
  tree.write("bus/event_source/devices/noformat/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/noformat/format/umask", "config:8-15\n");
  tree.pmu("noalias", 22);
  tree.write("bus/event_source/devices/noalias/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/noalias/events/ev", "event=0x22\n");
  tree.write("bus/event_source/devices/noalias/events/other", "event=0x23\n");
  tree.pmu("noformatdir", 23);
  tree.write("bus/event_source/devices/noformatdir/format/event", "config:0-7\n");
  tree.pmu("noeventsdir", 24);
  tree.write("bus/event_source/devices/noeventsdir/format/event", "config:0-7\n");
  tree.write("bus/event_source/devices/noeventsdir/events/ev", "event=0x24\n");
  // mkdtemp makes the root 0700: the unprivileged user must get in to meet the unreadable ones.
  std::filesystem::permissions(tree.root(), std::filesystem::perms(0755));
  const std::vector<std::string> locked = {devices + "notype/type", devices + "noformat/format/event",
                                           devices + "noalias/events/ev", devices + "noformatdir/format",
                                           devices + "noeventsdir/events"};
  for (const auto& p : locked) std::filesystem::permissions(p, std::filesystem::perms::none);
  // The caret is under the event, or under the term whose definition could not be read.
  auto denied = [](std::string_view text, const std::string& path, std::size_t at = 0) {
    return fmt::format("event syntax error: '{}'\n{:{}}\\___ cannot read '{}': Permission denied\n", text, "",
                       21 + at, path);
  };
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"notype/event=1/", denied("notype/event=1/", locked[0])},
      {"noformat/event=1/", denied("noformat/event=1/", locked[1])},
      {"noformat/umask=1/", denied("noformat/umask=1/", locked[1])},  // the PMU's formats load together
      {"noalias/ev/", denied("noalias/ev/", locked[2], 8)},
      {"noalias/other/", "config=0x23"},  // only the alias asked for is read
      {"noformatdir/event=1/", denied("noformatdir/event=1/", locked[3])},
      {"noeventsdir/ev/", denied("noeventsdir/ev/", locked[4], 12)},
      {"noeventsdir/event=1/", "config=0x1"},  // format terms need no events/ listing
      {"cpu/event=1/", "config=0x1"},
      {"cpu/ev/", "config=0x11"},
  };
  // doctest checks in a forked child would not reach this process: the child (root drops to nobody,
  // since root reads anything) sends what it saw, each string ended by '\0', and the parent checks.
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(3);
    if (::geteuid() == 0) ::_exit(4);
    Machine m(tree.root(), test::no_libpfm4());
    std::string report;
    for (const auto& [text, want] : expected) {
      std::string err = test::error_of(text, m);
      report +=
          err.empty() ? fmt::format("config={:#x}", perfspec::resolve(text, m).events[0].attr.config) : err;
      report += '\0';
    }
    const char* at = report.data();
    for (std::size_t left = report.size(); left > 0;) {
      ssize_t n = ::write(pipefd[1], at, left);
      if (n <= 0) ::_exit(5);
      at += n, left -= static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      report.append(buf, static_cast<std::size_t>(n));
    else if (errno != EINTR)
      break;
  ::close(pipefd[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  for (const auto& p : locked)
    std::filesystem::permissions(p, std::filesystem::perms(0755));  // removable again
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);  // 3: could not drop root; 4: still root; 5: pipe
  std::vector<std::string> seen;
  for (std::size_t at = 0, end; (end = report.find('\0', at)) != std::string::npos; at = end + 1)
    seen.push_back(report.substr(at, end - at));
  REQUIRE(seen.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(expected[i].first);
    CHECK(seen[i] == expected[i].second);
  }
}

// ---- tracefs: where tracepoints come from, and why they cannot be looked up when they cannot ----

namespace {

namespace tracefs = perfspec::spec::tracefs;

std::size_t tracefs_mounts() {
  std::ifstream in("/proc/self/mounts");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return tracefs::mount_points(text, "tracefs").size();
}

// In a forked child: a mount namespace of its own, with every tracefs and debugfs mount taken away, so
// that this machine's tracefs looks as on a fresh machine whatever the host has mounted. "" when done.
std::string fresh_machine_namespace() {
  if (::unshare(CLONE_NEWNS) != 0) return fmt::format("skip: unshare(CLONE_NEWNS): {}", std::strerror(errno));
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return fmt::format("skip: making / private: {}", std::strerror(errno));
  std::ifstream in("/proc/self/mounts");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> gone = tracefs::mount_points(text, "tracefs");
  for (auto& d : tracefs::mount_points(text, "debugfs")) gone.push_back(d);
  // Last mounted first: a tracefs may sit inside a debugfs.
  for (auto it = gone.rbegin(); it != gone.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
  if (tracefs_mounts() != 0) return "tracefs still mounted";
  return {};
}

// Runs `body` in a child with a fresh machine's mount namespace; doctest skips (with the reason) where
// the suite is not root or namespaces are not allowed (a container).
std::string on_fresh_machine(const std::function<std::string()>& body) {
  return test::in_child([&] {
    if (std::string failed = fresh_machine_namespace(); !failed.empty()) return failed;
    return body();
  });
}

bool skipped(const std::string& report) {
  if (!report.starts_with("skip: ")) return false;
  MESSAGE(report);
  return true;
}

// Root without CAP_SYS_ADMIN (a container's root, typically): mount(2) fails with EPERM.
bool drop_sys_admin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  const unsigned bit = 1u << (CAP_SYS_ADMIN % 32);
  auto& word = data[CAP_SYS_ADMIN / 32];
  word.effective &= ~bit, word.permitted &= ~bit, word.inheritable &= ~bit;
  return ::syscall(SYS_capset, &header, data) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

TEST_CASE("tracefs: /proc/mounts lines give the mount points of a type, octal escapes decoded") {
  const std::string mounts =
      "sysfs /sys sysfs rw,nosuid 0 0\n"
      "nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n"
      "none /srv/my\\040trace\\134x tracefs rw 0 0\n"
      "debugfs /sys/kernel/debug debugfs rw 0 0\n"
      "none /odd\\04 tracefs rw 0 0";  // a cut escape stays as written; no newline at the end
  CHECK(tracefs::mount_points(mounts, "tracefs") ==
        std::vector<std::string>{"/sys/kernel/tracing", "/srv/my trace\\x", "/odd\\04"});
  CHECK(tracefs::mount_points(mounts, "debugfs") == std::vector<std::string>{"/sys/kernel/debug"});
  CHECK(tracefs::mount_points(mounts, "trace").empty());
  CHECK(tracefs::mount_points("", "tracefs").empty());
  // Only this machine's sysfs is looked at for tracefs (and mounted on): never a fixture or snapshot.
  CHECK(tracefs::is_real_sysfs("/sys"));
  CHECK_FALSE(tracefs::is_real_sysfs(test::fixture("intel_skx")));
}

TEST_CASE("tracefs: a fixture root without a tracing folder names the root, and nothing is mounted") {
  test::TempTree tree;
  tree.pmu("cpu", 4);
  Machine m(tree.root(), test::no_libpfm4());
  std::size_t before = tracefs_mounts();
  CHECK(test::error_of("sched:sched_switch", m) ==
        fmt::format("event syntax error: 'sched:sched_switch'\n"
                    "                     \\___ unknown tracepoint 'sched:sched_switch'\n"
                    "help: no tracefs events folder under '{}' (kernel/tracing/events)\n",
                    tree.root()));
  CHECK(m.tracefs_problem().kind == Machine::TracefsProblem::Kind::absent);
  CHECK(m.tracepoint_names().empty());
  CHECK(tracefs_mounts() == before);
}

TEST_CASE("tracefs: a tracing folder this user may not read is named, with the remedy (as uid 65534)") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to drop to another user");
    return;
  }
  namespace fs = std::filesystem;
  test::TempTree tree;
  tree.pmu("cpu", 4);
  tree.write("bus/event_source/devices/cpu/format/event", "config:0-7\n");
  tree.write("kernel/tracing/events/sched/sched_switch/id", "316\n");
  tree.write("kernel/tracing/events/sched/sched_wakeup/id", "318\n");
  // mkdtemp makes the root 0700: the unprivileged user must get in to meet the tracing folder.
  fs::permissions(tree.root(), fs::perms(0755));
  const std::string tracing = tree.root() + "/kernel/tracing";
  auto as_nobody = [&](std::string_view text) {
    return test::in_child([&] {
      if (!test::become_nobody()) return std::string("could not become nobody");
      Machine m(tree.root(), test::no_libpfm4());
      return test::error_of(text, m);
    });
  };
  fs::permissions(tracing, fs::perms(0700));
  CHECK(test::in_child([&] {
          if (!test::become_nobody()) return std::string("could not become nobody");
          return test::error_kind_of("sched:sched_switch", Machine(tree.root(), test::no_libpfm4()));
        }) == "permission");  // PERFSPEC_E_PERMISSION
  const std::string help =
      fmt::format("help: run as a user who may read it, or make it readable: 'chmod -R a+rX {}'\n", tracing);
  CHECK(
      as_nobody("sched:sched_switch") ==
      fmt::format(
          "event syntax error: 'sched:sched_switch'\n"
          "                     \\___ cannot look up tracepoint 'sched:sched_switch': no permission to read "
          "'{}/events'\n{}",
          tracing, help));
  // Positioned in a list; a glob says the same.
  CHECK(as_nobody("cycles,sched:sched_*") == fmt::format("event syntax error: 'cycles,sched:sched_*'\n"
                                                         "                            \\___ cannot look up "
                                                         "tracepoint 'sched:sched_*': no permission to read "
                                                         "'{}/events'\n{}",
                                                         tracing, help));
  // The folders open, one id file closed: that file is named.
  fs::permissions(tracing, fs::perms(0755));
  fs::permissions(tracing + "/events/sched/sched_switch/id", fs::perms(0600));
  CHECK(
      as_nobody("sched:sched_switch") ==
      fmt::format(
          "event syntax error: 'sched:sched_switch'\n"
          "                     \\___ cannot look up tracepoint 'sched:sched_switch': no permission to read "
          "'{}/events/sched/sched_switch/id'\n{}",
          tracing, help));
  CHECK(as_nobody("sched:sched_wakeup") == "");  // the rest still resolve
  // Root reads it all: nothing to say.
  Machine m(tree.root(), test::no_libpfm4());
  CHECK(m.tracepoint_id("sched", "sched_switch") == 316u);
  CHECK(m.tracefs_problem("sched", "sched_switch").kind == Machine::TracefsProblem::Kind::none);
}

TEST_CASE(
    "tracefs on this machine: as root, mounted at /sys/kernel/tracing when mounted nowhere, once per "
    "process") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root");
    return;
  }
  std::string report = on_fresh_machine([] {
    std::string out;
    {
      Machine m("/sys", test::no_libpfm4());
      auto id = m.tracepoint_id("sched", "sched_switch");
      out += fmt::format(
          "mounted={} same_id={} mounts={}", tracefs::is_tracefs("/sys/kernel/tracing"),
          id && std::to_string(*id) == read_text("/sys/kernel/tracing/events/sched/sched_switch/id"),
          tracefs_mounts());
    }
    {
      Machine again("/sys", test::no_libpfm4());  // finds it: no second mount
      out += fmt::format("; again={} mounts={}", again.tracepoint_id("sched", "sched_switch").has_value(),
                         tracefs_mounts());
    }
    // Unmounted behind perfspec's back: the process mounted once and does not again; it says so.
    ::umount2("/sys/kernel/tracing", MNT_DETACH);
    Machine later("/sys", test::no_libpfm4());
    out += fmt::format("; later={} mounts={}", later.tracepoint_id("sched", "sched_switch").has_value(),
                       tracefs_mounts());
    out += "; " + test::error_of("sched:sched_switch", later);
    return out;
  });
  if (skipped(report)) return;
  CHECK(report ==
        "mounted=true same_id=true mounts=1; again=true mounts=1; later=false mounts=0; "
        "event syntax error: 'sched:sched_switch'\n"
        "                     \\___ unknown tracepoint 'sched:sched_switch': tracefs is not mounted\n"
        "help: run as root so that perfspec mounts it, or mount it: 'mount -t tracefs nodev "
        "/sys/kernel/tracing'\n");
}

TEST_CASE("tracefs on this machine: mounted nowhere, the error says so, with the remedy") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root");
    return;
  }
  // An unprivileged user: perfspec does not try to mount.
  std::string report = on_fresh_machine([] {
    if (!test::become_nobody()) return std::string("could not become nobody");
    Machine m("/sys", test::no_libpfm4());
    return test::error_of("sched:sched_switch", m) + fmt::format("mounts={}", tracefs_mounts());
  });
  if (skipped(report)) return;
  CHECK(report ==
        "event syntax error: 'sched:sched_switch'\n"
        "                     \\___ unknown tracepoint 'sched:sched_switch': tracefs is not mounted\n"
        "help: run as root so that perfspec mounts it, or mount it: 'mount -t tracefs nodev "
        "/sys/kernel/tracing'\n"
        "mounts=0");
  // Root without CAP_SYS_ADMIN (a container): the mount fails, and the error gives the reason.
  report = on_fresh_machine([] {
    if (!drop_sys_admin()) return std::string("could not drop CAP_SYS_ADMIN");
    Machine m("/sys", test::no_libpfm4());
    return test::error_of("sched:sched_switch", m) + fmt::format("mounts={}", tracefs_mounts());
  });
  if (skipped(report)) return;
  CHECK(report ==
        "event syntax error: 'sched:sched_switch'\n"
        "                     \\___ unknown tracepoint 'sched:sched_switch': tracefs is not mounted, and "
        "mounting it "
        "at /sys/kernel/tracing failed: Operation not permitted\n"
        "help: mount it yourself where mounting is allowed: 'mount -t tracefs nodev /sys/kernel/tracing'\n"
        "mounts=0");
}

TEST_CASE("tracefs on this machine: found where /proc/mounts says, and unreadable as another user") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root");
    return;
  }
  test::TempTree elsewhere;  // a mount point outside /sys, as perf finds tracefs through /proc/mounts
  std::string report = on_fresh_machine([&] {
    if (::mount("nodev", elsewhere.root().c_str(), "tracefs", 0, nullptr) != 0)
      return fmt::format("mount at {}: {}", elsewhere.root(), std::strerror(errno));
    Machine m("/sys", test::no_libpfm4());
    auto id = m.tracepoint_id("sched", "sched_switch");
    return fmt::format(
        "events={} same_id={} mounts={} default_mounted={}",
        m.tracefs_events() == elsewhere.root() + "/events",
        id && std::to_string(*id) == read_text(elsewhere.root() + "/events/sched/sched_switch/id"),
        tracefs_mounts(), tracefs::is_tracefs("/sys/kernel/tracing"));
  });
  if (skipped(report)) return;
  CHECK(report == "events=true same_id=true mounts=1 default_mounted=false");
  // Mounted, but its root is 0700 (tracefs's default) or its files 0440: another user is told which
  // path it may not read and how to open tracefs to it.
  report = on_fresh_machine([] {
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
      return std::string("mount failed");
    if (!test::become_nobody()) return std::string("could not become nobody");
    Machine m("/sys", test::no_libpfm4());
    return test::error_of("sched:sched_switch", m);
  });
  if (skipped(report)) return;
  const std::string head =
      "event syntax error: 'sched:sched_switch'\n"
      "                     \\___ cannot look up tracepoint 'sched:sched_switch': no permission "
      "to read '/sys/kernel/tracing/events";
  const std::string help =
      "help: run as root, or let a group this user is in read tracefs: 'mount -o remount,mode=755,gid=GROUP "
      "/sys/kernel/tracing'\n";
  CAPTURE(report);
  CHECK(report.starts_with(head));
  CHECK(report.ends_with(help));
}
