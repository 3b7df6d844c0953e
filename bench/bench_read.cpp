// SPDX-License-Identifier: MIT
// Reading counters: one group read of 8 software counters vs 8 lone reads vs one lone read, through
// runtime::Counters and through bare system calls (the floor); and the user-page (rdpmc) path.
//
// On a machine without a hardware PMU (this VM) software counters have index 0 in their user page, so
// the user-page path cannot read them in user space: Counters checks each page and falls back to
// read(2). BM_Read_Counters_single_userpage measures that fallback; BM_UserPage_check measures the
// page check on its own.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/print.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/user_page.hpp"

namespace {

using perfspec::runtime::Count;
using perfspec::runtime::Counters;
using perfspec::runtime::OpenOptions;
using perfspec::runtime::Target;

constexpr const char* eight =
    "task-clock,page-faults,context-switches,cpu-migrations,minor-faults,major-faults,"
    "alignment-faults,emulation-faults";

// Open, enable and check; nullopt (with the error reported) when something cannot be counted here.
std::optional<Counters> open_counted(benchmark::State& state, const std::string& text, bool user_page) {
  perfspec::spec::Machine machine{"/sys"};
  OpenOptions options;
  options.user_page = user_page;
  auto counters = Counters::open(perfspec::resolve(text, machine), Target::self_thread(), options);
  counters.enable();
  for (const auto& c : counters.read())
    if (c.state != Count::State::counted) {
      state.SkipWithError(("not counted: " + text).c_str());
      return std::nullopt;
    }
  return counters;
}

void BM_Read_Counters_single(benchmark::State& state) {
  auto c = open_counted(state, "task-clock", false);
  if (!c) return;
  for (auto _ : state) benchmark::DoNotOptimize(c->read());
  state.counters["syscalls"] = 1;
}
BENCHMARK(BM_Read_Counters_single);

void BM_Read_Counters_group8(benchmark::State& state) {
  auto c = open_counted(state, std::string("{") + eight + "}", false);
  if (!c) return;
  for (auto _ : state) benchmark::DoNotOptimize(c->read());
  state.counters["syscalls"] = 1;
}
BENCHMARK(BM_Read_Counters_group8);

// The same through read(std::vector<Count>&), which reuses its storage: the API for frequent reads.
void BM_Read_Counters_single_reuse(benchmark::State& state) {
  auto c = open_counted(state, "task-clock", false);
  if (!c) return;
  std::vector<Count> out;
  for (auto _ : state) {
    c->read(out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Read_Counters_single_reuse);

void BM_Read_Counters_group8_reuse(benchmark::State& state) {
  auto c = open_counted(state, std::string("{") + eight + "}", false);
  if (!c) return;
  std::vector<Count> out;
  for (auto _ : state) {
    c->read(out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Read_Counters_group8_reuse);

void BM_Read_Counters_lone8(benchmark::State& state) {
  auto c = open_counted(state, eight, false);
  if (!c) return;
  for (auto _ : state) benchmark::DoNotOptimize(c->read());
  state.counters["syscalls"] = 8;
}
BENCHMARK(BM_Read_Counters_lone8);

void BM_Read_Counters_single_userpage(benchmark::State& state) {
  auto c = open_counted(state, "task-clock", true);
  if (!c) return;
  for (auto _ : state) benchmark::DoNotOptimize(c->read());
}
BENCHMARK(BM_Read_Counters_single_userpage);

void BM_Read_Counters_group8_userpage(benchmark::State& state) {
  auto c = open_counted(state, std::string("{") + eight + "}", true);
  if (!c) return;
  for (auto _ : state) benchmark::DoNotOptimize(c->read());
}
BENCHMARK(BM_Read_Counters_group8_userpage);

// ---- a hardware counter: user page against read(2) --------------------------------------------
// Where the PMU lets user space read its counters: arm64 with /proc/sys/kernel/perf_user_access at 1
// and the event's `rdpmc` term (scripts/vm-arm64.sh's guest), x86 with a core PMU. Skipped, with the
// reason, where the read falls back to read(2) or the event cannot be counted.
#if defined(__aarch64__)
constexpr const char* hw_event = "armv8_pmuv3/cpu_cycles,rdpmc=1/u";
#else
constexpr const char* hw_event = "cycles:u";
#endif

// Registered only where the event counts (a machine without a PMU, as the CI machines, has no such
// benchmark rather than one that fails).
bool hw_counts() {
  try {
    perfspec::spec::Machine machine{"/sys"};
    auto c = Counters::open(perfspec::resolve(hw_event, machine), Target::self_thread());
    c.enable();
    return c.read()[0].state == Count::State::counted;
  } catch (const std::exception&) {
    return false;
  }
}

void BM_Read_Counters_hw(benchmark::State& state) {
  const bool user_page = state.range(0) != 0;
  auto c = open_counted(state, hw_event, user_page);
  if (!c) return;
  if (user_page) {
    auto first = c->read();
    if (!first[0].notes.empty())
      return state.SkipWithError((std::string(hw_event) + ": " + perfspec::describe(first[0].notes)).c_str());
  }
  for (auto _ : state) benchmark::DoNotOptimize(c->read());
  state.SetLabel(std::string(hw_event) + (user_page ? ", user page" : ", read(2)"));
}
const bool hw_registered = [] {
  if (!hw_counts()) return false;
  benchmark::RegisterBenchmark("BM_Read_Counters_hw", BM_Read_Counters_hw)->Arg(0)->Arg(1);
  return true;
}();

// ---- bare system calls: the floor -------------------------------------------------------------

constexpr std::uint64_t sw_configs[8] = {PERF_COUNT_SW_TASK_CLOCK,       PERF_COUNT_SW_PAGE_FAULTS,
                                         PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS,
                                         PERF_COUNT_SW_PAGE_FAULTS_MIN,  PERF_COUNT_SW_PAGE_FAULTS_MAJ,
                                         PERF_COUNT_SW_ALIGNMENT_FAULTS, PERF_COUNT_SW_EMULATION_FAULTS};

int open_sw(std::uint64_t config, int group_fd) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = config;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
                  PERF_FORMAT_GROUP;  // what Counters asks for
  a.disabled = group_fd < 0;
  return static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC));
}

struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) ::close(fd);
  }
};

void BM_Read_syscall_single(benchmark::State& state) {
  Fds f;
  f.fds.push_back(open_sw(PERF_COUNT_SW_TASK_CLOCK, -1));
  if (f.fds[0] < 0) return state.SkipWithError("perf_event_open failed");
  ::ioctl(f.fds[0], PERF_EVENT_IOC_ENABLE, 0);
  std::uint64_t buf[5];
  for (auto _ : state) benchmark::DoNotOptimize(::read(f.fds[0], buf, sizeof buf));
}
BENCHMARK(BM_Read_syscall_single);

void BM_Read_syscall_group8(benchmark::State& state) {
  Fds f;
  for (auto config : sw_configs) {
    int fd = open_sw(config, f.fds.empty() ? -1 : f.fds[0]);
    if (fd < 0) return state.SkipWithError("perf_event_open failed");
    f.fds.push_back(fd);
  }
  ::ioctl(f.fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  std::uint64_t buf[3 + 2 * 8];
  for (auto _ : state) benchmark::DoNotOptimize(::read(f.fds[0], buf, sizeof buf));
}
BENCHMARK(BM_Read_syscall_group8);

// The user-page check alone: map a software counter's page and run the seqlock protocol on it. Here
// the page says index 0 (no user-space read), so this is the cost Counters pays before its read(2).
void BM_UserPage_check(benchmark::State& state) {
  Fds f;
  f.fds.push_back(open_sw(PERF_COUNT_SW_TASK_CLOCK, -1));
  if (f.fds[0] < 0) return state.SkipWithError("perf_event_open failed");
  auto length = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, f.fds[0], 0);
  if (p == MAP_FAILED) return state.SkipWithError("mmap failed");
  // The library's own page reader (runtime/user_page.cpp): the seqlock loop, and rdpmc when the page
  // allows it (here it never does: index 0).
  bool usable = false;
  for (auto _ : state) {
    auto r = perfspec::runtime::read_mapped_page(p);
    usable = r.has_value();
    benchmark::DoNotOptimize(r);
  }
  state.counters["index_nonzero"] = usable ? 1 : 0;
  ::munmap(p, length);
}
BENCHMARK(BM_UserPage_check);

}  // namespace
