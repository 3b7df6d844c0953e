#include <doctest/doctest.h>

#include "perfspec/perfspec.hpp"
#include "tests/support.hpp"

using perfspec::spec::Machine;

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
        fmt::format("event syntax error: 'broken/event=1/'\n"
                    "                     \\___ pmu 'broken': '{}/bus/event_source/devices/broken/type' holds 'not a "
                    "number', not a PMU type number\n",
                    tree.root()));
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

TEST_CASE("huge and binary sysfs files are errors naming the file") {
  test::TempTree tree;
  tree.pmu("big", 20);
  tree.write("bus/event_source/devices/big/format/event", std::string(100000, '1'));
  tree.pmu("bin", 21);
  tree.write("bus/event_source/devices/bin/events/ev", std::string("event=1\0\x01", 9));
  Machine machine(tree.root());
  CHECK(test::error_of("big/event=1/", machine).find("format/event' is larger than 65536 bytes; not a sysfs attribute") !=
        std::string::npos);
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
  std::filesystem::create_directory_symlink(".", tree.root() + "/bus/event_source/devices/cpu/events");  // a loop
  tree.write("bus/event_source/devices/empty/type", "");
  tree.write("bus/event_source/devices/folder/type/x", "1");  // `type` is a folder
  tree.pmu("nulls", 30);
  tree.write("bus/event_source/devices/nulls/format/event", std::string("config:0-7\0junk", 15));
  Machine m(tree.root(), test::no_libpfm4());
  CHECK(test::error_of("cpu/event=1/", m).empty());       // the loop is only listed, never followed down
  CHECK(test::error_of("cpu/nonesuch/", m).find("unknown term 'nonesuch'") != std::string::npos);
  CHECK(test::error_of("empty/event=1/", m).find("holds '', not a PMU type number") != std::string::npos);
  CHECK(test::error_of("folder/event=1/", m).find("unknown PMU 'folder'") != std::string::npos);
  CHECK(test::error_of("nulls/event=1/", m).find("invalid format") != std::string::npos);
  CHECK(test::error_of("'/etc/passwd'", m).find("expected an event") != std::string::npos);
  CHECK(test::error_of("../../etc/event=1/", m).find("expected") != std::string::npos);
}
