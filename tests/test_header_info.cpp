// SPDX-License-Identifier: MIT
// The header block of `report --header` over a file whose every feature section is set (the ones
// perfspec record does not write made byte by byte as perf lays them out). The expected text is what
// perf 6.12 printed for the same file (`perf report --header-only -I`, run over the intel_skx fixture
// with the file's time set to 0, TZ=UTC).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "perfspec/header_info.hpp"
#include "perfspec/perf_data.hpp"
#include "perfspec/report.hpp"
#include "support.hpp"

using namespace perfspec;
using namespace perfspec::record;

namespace {

// perf's feature section bytes: u32, u64, and perf_header_strings (u32 length, NUL-padded to 64)
struct Bytes {
  std::vector<std::byte> b;
  Bytes& u32(std::uint32_t v) { return raw(&v, 4); }
  Bytes& u64(std::uint64_t v) { return raw(&v, 8); }
  Bytes& str(std::string_view s) {
    std::uint32_t len = static_cast<std::uint32_t>((s.size() + 1 + 63) / 64 * 64);
    u32(len);
    std::size_t at = b.size();
    b.resize(at + len);
    std::memcpy(b.data() + at, s.data(), s.size());
    return *this;
  }
  Bytes& raw(const void* p, std::size_t n) {
    const auto* c = static_cast<const std::byte*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
};

Attr event(std::uint32_t type, std::uint64_t config) {
  Attr a;
  a.type = type;
  a.config = config;
  a.sample_period = 4000;
  a.freq = 1;
  a.sample_type = 0x10107;  // IP|TID|TIME|PERIOD|IDENTIFIER
  a.read_format = 4;        // ID
  a.sample_id_all = 1;
  a.exclude_kernel = 1;
  a.config1 = 3;
  return a;
}

std::string write_file() {
  std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                     "/perfspec-header-" + std::to_string(::getpid()) + ".data";
  auto out = PerfDataWriter::create(path, {{event(1, 1), {11}, "task-clock"},
                                           {event(1, 2), {12}, "page-faults"},
                                           {event(4, 0x1cd), {13}, "mem-loads"},
                                           {event(3, 0x10000), {14}, "L1-dcache-load-misses"},
                                           {event(0, 0), {15}, "cycles"}});
  out.set_string(Feature::hostname, "build-7");
  out.set_string(Feature::osrelease, "6.12.0");
  out.set_string(Feature::version, "6.12.117");
  out.set_string(Feature::arch, "x86_64");
  out.set_nr_cpus(3, 2);
  out.set_string(Feature::cpudesc, "Example CPU");
  out.set_string(Feature::cpuid, "GenuineIntel,6,85,4");
  out.set_total_mem(8000000);
  out.set_cmdline({"/usr/bin/perf", "record", "-e", "it's"});
  out.set_cpu_topology({.packages = {"0-1"}, .dies = {"0-1"}, .cores = {"0", "1"}},
                       {{0, 0, 0, 0, 0}, {1, 0, 0, 1, 0}}, 3);
  out.set_numa_topology({{0, 8000000, 4000000, "1,0"}, {1, 1000, 500, ""}});
  out.set_feature(Feature::branch_stack, {});
  out.set_pmu_mappings({{4, "cpu"}, {1, "software"}});
  out.set_group_desc({{"{anon_group}", 0, 2}, {"pair", 3, 2}});
  out.set_feature(Feature::cache, Bytes{}
                                      .u32(1)
                                      .u32(2)
                                      .u32(1)
                                      .u32(64)
                                      .u32(64)
                                      .u32(8)
                                      .str("Data")
                                      .str("32K")
                                      .str("0")
                                      .u32(2)
                                      .u32(64)
                                      .u32(1024)
                                      .u32(16)
                                      .str("Unified")
                                      .str("1024K")
                                      .str("0-1")
                                      .b);
  out.set_sample_time(1'000'123'456'789, 1'002'500'000'000);
  Bytes memory;
  memory.u64(1).u64(0x8000000).u64(1).u64(0).u64(std::uint64_t{40} * 0x8000000);
  memory.u64(70)
      .u64(((std::uint64_t{1} << 24) - 1) | (std::uint64_t{0xff} << 32))
      .u64(0x3f);  // 0-23,32-39,64-69
  out.set_feature(Feature::mem_topology, memory.b);
  out.set_feature(Feature::clockid, Bytes{}.u64(1).b);
  out.set_feature(Feature::compressed, Bytes{}.u32(1).u32(1).u32(3).u32(4).u32(0).b);
  out.set_feature(Feature::cpu_pmu_caps,
                  Bytes{}.u32(2).str("branches").str("32").str("max_precise").str("3").b);
  out.set_feature(Feature::clock_data, Bytes{}.u32(1).u32(1).u64(86'400'123'456'789).u64(5'000'000'123).b);
  out.set_feature(Feature::pmu_caps, Bytes{}.u32(1).u32(0).str("cpu_atom").b);
  out.finish();
  return path;
}

}  // namespace

TEST_CASE("header: every feature section as perf 6.12 prints it") {
  const char* tz = std::getenv("TZ");
  std::string saved = tz ? tz : "";
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  const std::string path = write_file();
  auto file = PerfData::open(path);
  spec::Machine machine(test::fixture("intel_skx"), test::no_libpfm4());

  auto info = read_header_info(file);
  REQUIRE(info.cpu_topology);
  CHECK(info.cpu_topology->cpus.size() == 3);  // HEADER_NRCPUS' available CPUs
  CHECK(info.cpu_topology->cpus[2].core == -1);
  REQUIRE(info.groups);
  CHECK(info.groups->at(1).name == "pair");

  const std::string head = R"(# ========
# captured on    : Thu Jan  1 00:00:00 1970
# header version : 1
)";
  const std::string layout =
      fmt::format("# data offset    : {}\n# data size      : 0\n# feat offset    : {}\n", file.data_offset(),
                  file.data_offset());
  const std::string events =
      "# hostname : build-7\n"
      "# os release : 6.12.0\n"
      "# perf version : 6.12.117\n"
      "# arch : x86_64\n"
      "# nrcpus online : 2\n"
      "# nrcpus avail : 3\n"
      "# cpudesc : Example CPU\n"
      "# cpuid : GenuineIntel,6,85,4\n"
      "# total memory : 8000000 kB\n"
      "# cmdline : /usr/bin/perf record -e it\\'s \n"
      "# event : name = task-clock, , id = { 11 }, type = 1 (software), size = 64, config = 0x1 "
      "(PERF_COUNT_SW_TASK_CLOCK), { sample_period, sample_freq } = 4000, sample_type = "
      "IP|TID|TIME|PERIOD|IDENTIFIER, "
      "read_format = ID, exclude_kernel = 1, freq = 1, sample_id_all = 1, { bp_addr, config1 } = 0x3\n"
      "# event : name = page-faults, , id = { 12 }, type = 1 (software), size = 64, config = 0x2 "
      "(PERF_COUNT_SW_PAGE_FAULTS), { sample_period, sample_freq } = 4000, sample_type = "
      "IP|TID|TIME|PERIOD|IDENTIFIER, "
      "read_format = ID, exclude_kernel = 1, freq = 1, sample_id_all = 1, { bp_addr, config1 } = 0x3\n"
      "# event : name = mem-loads, , id = { 13 }, type = 4 (cpu), size = 64, config = 0x1cd (mem-loads), "
      "{ sample_period, sample_freq } = 4000, sample_type = IP|TID|TIME|PERIOD|IDENTIFIER, read_format = ID, "
      "exclude_kernel = 1, freq = 1, sample_id_all = 1, { bp_addr, config1 } = 0x3\n"
      "# event : name = L1-dcache-load-misses, , id = { 14 }, type = 3 (PERF_TYPE_HW_CACHE), size = 64, "
      "config = "
      "0x10000 (PERF_COUNT_HW_CACHE_RESULT_MISS | PERF_COUNT_HW_CACHE_OP_READ | PERF_COUNT_HW_CACHE_L1D), "
      "{ sample_period, sample_freq } = 4000, sample_type = IP|TID|TIME|PERIOD|IDENTIFIER, read_format = ID, "
      "exclude_kernel = 1, freq = 1, sample_id_all = 1, { bp_addr, config1 } = 0x3\n"
      "# event : name = cycles, , id = { 15 }, type = 0 (PERF_TYPE_HARDWARE), size = 64, config = 0 "
      "(PERF_COUNT_HW_CPU_CYCLES), { sample_period, sample_freq } = 4000, sample_type = "
      "IP|TID|TIME|PERIOD|IDENTIFIER, "
      "read_format = ID, exclude_kernel = 1, freq = 1, sample_id_all = 1, { bp_addr, config1 } = 0x3\n";
  const std::string topology = R"(# sibling sockets : 0-1
# sibling dies    : 0-1
# sibling threads : 0
# sibling threads : 1
# CPU 0: Core ID 0, Die ID 0, Socket ID 0
# CPU 1: Core ID 1, Die ID 0, Socket ID 0
# CPU 2: Core ID -1, Die ID -1, Socket ID -1
# node0 meminfo  : total = 8000000 kB, free = 4000000 kB
# node0 cpu list : 0-1
# node1 meminfo  : total = 1000 kB, free = 500 kB
# node1 cpu list : -1
)";
  const std::string middle = R"(# contains samples with branch stack
# pmu mappings: cpu = 4, software = 1
# group: {task-clock,page-faults}
# group: pair{L1-dcache-load-misses,cycles}
)";
  const std::string cache = R"(# CPU cache info:
#  L1 Data                 32K [0]
#  L2 Unified            1024K [0-1]
)";
  const std::string times = R"(# time of first sample : 1000.123456
# time of last sample : 1002.500000
# sample duration :   2376.543 ms
)";
  const std::string memory = R"(# memory nodes (nr 1, block size 0x8000000):
#    0 [4G]: 0-23,32-39,64-69
)";
  const std::string tail = R"(# clockid frequency: 1000 MHz
# compressed : Zstd, level = 3, ratio = 4
# cpu pmu capabilities: branches=32, max_precise=3
# clockid: monotonic (1)
# reference time: 1970-01-02 00:00:00.123456 = 86400.123456 (TOD) = 5.000000123 (monotonic)
# cpu_atom pmu capabilities: not available
# missing features: TRACING_DATA BUILD_ID AUXTRACE STAT DIR_FORMAT BPF_PROG_INFO BPF_BTF HYBRID_TOPOLOGY 
# ========
#
)";
  std::string full = header_text(file, {.full = true, .captured = 0, .machine = &machine});
  CHECK(full == head + layout + events + topology + middle + cache + times + memory + tail);

  const std::string brief_topology =
      "# CPU_TOPOLOGY info available, use -I to display\n"
      "# NUMA_TOPOLOGY info available, use -I to display\n";
  std::string brief = header_text(file, {.full = false, .captured = 0, .machine = &machine});
  CHECK(brief == head + layout + events + brief_topology + middle +
                     "# CACHE info available, use -I to display\n" + times +
                     "# MEM_TOPOLOGY info available, use -I to display\n" + tail);

  // PERFSPEC_KEEP_HEADER_FILE=PATH keeps the file there (to print it with perf: see the top of this file)
  if (const char* keep = std::getenv("PERFSPEC_KEEP_HEADER_FILE")) CHECK(::rename(path.c_str(), keep) == 0);
  ::unlink(path.c_str());
  if (tz)
    ::setenv("TZ", saved.c_str(), 1);
  else
    ::unsetenv("TZ");
  ::tzset();
}

TEST_CASE("header: a feature section that does not follow perf's layout is an error naming it") {
  auto make = [](Feature f, std::vector<std::byte> bytes) {
    std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                       "/perfspec-bad-header-" + std::to_string(::getpid()) + ".data";
    {
      auto out = PerfDataWriter::create(path, {{event(1, 1), {11}, "task-clock"}});
      out.set_feature(f, std::move(bytes));
      out.finish();
    }
    auto file = PerfData::open(path);
    ::unlink(path.c_str());
    std::string what;
    try {
      read_header_info(file);
    } catch (const DecodeError& e) {
      what = e.message();
    }
    return what;
  };
  CHECK(make(Feature::cache, Bytes{}.u32(2).u32(0).b).find("the cache section at offset 0x") == 0);
  CHECK(make(Feature::cache, Bytes{}.u32(2).u32(0).b).find(": version 2 is not the one perf writes (1)") !=
        std::string::npos);
  CHECK(make(Feature::numa_topology, Bytes{}.u32(1000000).b)
            .ends_with(": 1000000 nodes do not fit in the 0 bytes left of its section"));
  CHECK(make(Feature::group_desc, Bytes{}.u32(1).str("g").u32(0).u32(2).b)
            .ends_with(
                ": a group of 2 events led by event 0 is not within the file's 1 events after the groups "
                "before it"));
  CHECK(make(Feature::clock_data, Bytes{}.u32(1).u32(1).b).ends_with(": the time of day is cut off"));
  // a NUMA node's CPU list that is none: the section's offset and the node in the error
  std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                     "/perfspec-bad-numa-" + std::to_string(::getpid()) + ".data";
  {
    auto out = PerfDataWriter::create(path, {{event(1, 1), {11}, "task-clock"}});
    out.set_feature(Feature::numa_topology, Bytes{}.u32(1).u32(3).u64(1).u64(1).str("0-x").b);
    out.finish();
  }
  auto file = PerfData::open(path);
  ::unlink(path.c_str());
  std::string what;
  try {
    header_text(file, {.full = true});
  } catch (const DecodeError& e) {
    what = e.message();
  }
  CHECK(what.starts_with("the numa_topology section at offset 0x"));
  CHECK(what.ends_with(": node 3: '0-x' is not a CPU list"));
}
