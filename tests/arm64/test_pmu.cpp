// SPDX-License-Identifier: MIT
// The hardware paths against a real PMU driver: Linux's armv8_pmuv3 on QEMU's emulated Arm PMUv3,
// inside scripts/vm-arm64.sh's guest (run by tests/arm64/run.sh, as root).
//
// QEMU derives the PMU's counts from its clocks (target/arm): `cpu_cycles` is the virtual clock at
// 1 GHz; `inst_retired` exists only under -icount, where it is the instruction count and the virtual
// clock advances 2^shift ns an instruction. With `-icount shift=0` (run.sh's second machine) a cycle
// is an instruction and the emulation is deterministic, so counts are exact: the user-space
// instructions of a loop are known, and cycles equal instructions. Without -icount the cycle counter
// follows the host's clock, which a loaded host makes uneven; those checks are then about what the
// kernel reports (states, times, encodings), not about how many.
#include <doctest/doctest.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perfspec/perfspec.hpp"
#include "perfspec/print.hpp"
#include "perfspec/runtime.hpp"
#include "runtime/user_page.hpp"

using namespace perfspec;
using runtime::Count;
using runtime::Counters;
using runtime::Note;
using runtime::OpenOptions;
using runtime::Target;

namespace {

const std::string pmu_dir = "/sys/bus/event_source/devices/armv8_pmuv3";

const spec::Machine& machine() {
  static const spec::Machine m{"/sys"};
  return m;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

void write_file(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  REQUIRE_MESSAGE(out.good(), "cannot write " << path);
}

// -icount: QEMU's PMU then has inst_retired (event 0x08), which the driver lists in sysfs.
bool icount() { return std::filesystem::exists(pmu_dir + "/events/inst_retired"); }

// Exactly 2n user-space instructions (subs, b.ne), plus the call's own few.
__attribute__((noinline)) void spin(std::uint64_t n) {
  asm volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
}

void syscalls(int n) {
  for (int i = 0; i < n; ++i) ::syscall(SYS_getppid);
}

struct Counted {
  Counters counters;
  std::vector<Count> counts;
};

// Open `text` on this thread, run `work` between enable and disable, read.
template <typename Work> Counted count(const std::string& text, Work&& work, OpenOptions options = {}) {
  auto counters = Counters::open(resolve(text, machine()), Target::self_thread(), options);
  counters.enable();
  work();
  counters.disable();
  auto counts = counters.read();
  return {std::move(counters), std::move(counts)};
}

std::string show(const Count& c) {
  return fmt::format("{} raw, enabled {} ns, running {} ns, state {}{}", c.raw, c.time_enabled,
                     c.time_running, static_cast<int>(c.state),
                     c.failure ? ", " + c.failure->name + ": " + c.failure->hint : "");
}

// cpu_cycles:u with `config1` (long, rdpmc), opened on this thread with the raw system call and its
// first page mapped; unmapped and closed on leaving, a failed REQUIRE included.
struct RawCycles {
  int fd = -1;
  void* page = MAP_FAILED;
  const std::size_t length = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  explicit RawCycles(std::uint64_t config1) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = static_cast<std::uint32_t>(std::stoul(read_line(pmu_dir + "/type")));
    attr.config = 0x11;
    attr.config1 = config1;
    attr.exclude_kernel = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    if (fd >= 0) page = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  }
  ~RawCycles() {
    if (page != MAP_FAILED) ::munmap(page, length);
    if (fd >= 0) ::close(fd);
  }
  RawCycles(const RawCycles&) = delete;
  RawCycles& operator=(const RawCycles&) = delete;
};

// The user-space instructions of spin(n) and of what surrounds it between enable and disable (the
// call, the ioctl wrapper's return and the next call into it): at most this many more than 2n.
constexpr std::uint64_t call_overhead = 2000;

}  // namespace

TEST_CASE("the machine: armv8_pmuv3 as the guest's kernel describes it") {
  REQUIRE(std::filesystem::exists(pmu_dir));
  CHECK(read_line(pmu_dir + "/format/event") == "config:0-15");
  CHECK(read_line(pmu_dir + "/format/long") == "config1:0");
  CHECK(read_line(pmu_dir + "/format/rdpmc") == "config1:1");
  auto names = machine().pmu_names();
  CHECK(std::find(names.begin(), names.end(), "armv8_pmuv3") != names.end());
  MESSAGE("icount: " << icount() << ", type " << read_line(pmu_dir + "/type") << ", cpus "
                     << read_line(pmu_dir + "/cpus"));
}

TEST_CASE("cycles, cpu_cycles, armv8_pmuv3/event=0x11/ and r11: perf's encodings, the same cycles") {
  const auto type = static_cast<std::uint32_t>(std::stoul(read_line(pmu_dir + "/type")));
  auto set = resolve("cycles,cpu_cycles,armv8_pmuv3/event=0x11/,r11", machine());
  REQUIRE(set.events.size() == 4);
  CHECK(set.events[0].attr.type == PERF_TYPE_HARDWARE);
  CHECK(set.events[0].attr.config == PERF_COUNT_HW_CPU_CYCLES);
  CHECK(set.events[1].attr.type == type);
  CHECK(set.events[1].attr.config == 0x11);
  CHECK(set.events[2].attr.type == type);
  CHECK(set.events[2].attr.config == 0x11);
  CHECK(set.events[3].attr.type == PERF_TYPE_RAW);
  CHECK(set.events[3].attr.config == 0x11);

  // One group, user space only: the four count the same window of the same clock.
  constexpr std::uint64_t n = 20'000'000;
  auto r = count("{cycles,cpu_cycles,armv8_pmuv3/event=0x11/,r11}:u", [] { spin(n); });
  for (const auto& c : r.counts) {
    INFO(show(c));
    REQUIRE(c.state == Count::State::counted);
    CHECK(c.time_running == c.time_enabled);  // a group of 4 on 7 counters is never multiplexed
    CHECK(c.raw > 0);
  }
  if (icount()) {
    // A cycle is an instruction: the loop's 2n and the call's few; and one clock for all four.
    for (const auto& c : r.counts) {
      CHECK(c.raw >= 2 * n);
      CHECK(c.raw <= 2 * n + call_overhead);
      CHECK(c.raw == r.counts[0].raw);
    }
  }
  // Without -icount the four read the host's clock separately (see the next case): counted, not equal.
}

TEST_CASE("exception levels: :u is EL0, :k is EL1, :h counts nothing in a guest, :H all, :G nothing") {
  // The guest kernel runs at EL1 (QEMU's virt machine without virtualization: no EL2, no VHE). The
  // arm64 rules (Documentation/arch/arm64/perf.rst): exclude_user excludes EL0; exclude_kernel EL1;
  // exclude_hv has no effect in a guest, where EL2 is never counted; exclude_host, on a kernel without
  // VHE, leaves the counter to be enabled at guest entry, which never comes here.
  auto set = resolve("cycles:u,cycles:k,cycles:h,cycles:H,cycles:G", machine());
  const Attr& u = set.events[0].attr;
  CHECK((u.exclude_user == 0 && u.exclude_kernel == 1 && u.exclude_hv == 1));
  const Attr& k = set.events[1].attr;
  CHECK((k.exclude_user == 1 && k.exclude_kernel == 0 && k.exclude_hv == 1));
  const Attr& h = set.events[2].attr;
  CHECK((h.exclude_user == 1 && h.exclude_kernel == 1 && h.exclude_hv == 0));
  const Attr& host = set.events[3].attr;
  CHECK((host.exclude_guest == 1 && host.exclude_host == 0));
  const Attr& guest = set.events[4].attr;
  CHECK((guest.exclude_guest == 0 && guest.exclude_host == 1));

  constexpr std::uint64_t n = 10'000'000;
  auto r = count("{cycles,cycles:u,cycles:k,cycles:h,cycles:H,cycles:G}", [] {
    syscalls(2000);
    spin(n);
  });
  for (const auto& c : r.counts) {
    INFO(show(c));
    REQUIRE(c.state == Count::State::counted);
  }
  const auto all = r.counts[0].raw, user = r.counts[1].raw, kernel = r.counts[2].raw;
  CHECK(user > 0);
  CHECK(kernel > 0);  // 2000 system calls
  CHECK(r.counts[3].raw == 0);
  CHECK(r.counts[5].raw == 0);
  if (icount()) {
    // One clock, filtered by exception level: the parts add up to the whole.
    CHECK(user + kernel == all);
    CHECK(user >= 2 * n);
    CHECK(r.counts[4].raw == all);
    CHECK(user <= 2 * n + call_overhead + 2000 * 50);  // + the syscall wrappers' user instructions
  }
  // Without -icount each counter reads the host's clock on its own at every exception-level change,
  // and a host that preempts QEMU between two of those reads skews them by the preemption: no bound
  // on the sum holds on a loaded host, so the exact check is the -icount machine's.
  CHECK(r.counts[4].raw > 0);
}

TEST_CASE("groups: 7 fit the 7 counters; an 8th cannot, and says so; 12 alone multiplex") {
  // A cycle counter and 6 event counters: a group of 7 cycle events opens whole and always runs.
  std::string seven = "{cycles:u";
  for (int i = 0; i < 6; ++i) seven += ",cpu_cycles:u";
  seven += "}";
  auto r = count(seven, [] { spin(1'000'000); });
  for (const auto& c : r.counts) {
    INFO(show(c));
    REQUIRE(c.state == Count::State::counted);
    CHECK(c.time_running == c.time_enabled);
  }

  // An 8th. The driver checks a group when a member joins, counting only the members that are
  // enabled or will be at exec (armv8pmu's validate_group): opened for a command (enable_on_exec),
  // the 8th is refused with EINVAL and explained; opened disabled on this thread, the group is
  // accepted and can never run, which the read says.
  std::string eight_text = seven.substr(0, seven.size() - 1) + ",cpu_cycles:u}";
  runtime::Command spin_command({"/opt/perfspec-tests/perfspec_arm64_spin", "1000"});
  auto for_command = Counters::open(resolve(eight_text, machine()), Target::command(spin_command));
  const auto& f = for_command.failures();
  REQUIRE(f.size() == 8);
  for (std::size_t e = 0; e < 7; ++e) CHECK_FALSE(f[e].has_value());
  REQUIRE(f[7].has_value());
  CHECK(f[7]->error == EINVAL);
  CHECK(f[7]->hint ==
        "the group does not fit the PMU's counters; this event opens alone: split the group, or count it "
        "outside");
  CHECK(f[7]->detail == "its first 7 events were accepted together, this one was not");
  spin_command.start();
  spin_command.wait();
  auto c8 = for_command.read();
  for (std::size_t e = 0; e < 7; ++e) CHECK(c8[e].state == Count::State::counted);
  CHECK(c8[7].state == Count::State::not_supported);  // as perf stat: the 7 that fit count

  auto disabled = count(eight_text, [] { spin(1000); });
  for (const auto& c : disabled.counts) {
    INFO(show(c));
    CHECK(c.state == Count::State::not_counted);
    CHECK(c.time_running == 0);
    CHECK(describe(c.notes) ==
          "its group never ran: enabled but never on the PMU (a group needing more counters than are free "
          "cannot "
          "be scheduled: split it)");
  }

  // 12 events alone on 7 counters: the kernel rotates them (perf_event_mux_interval_ms), each runs
  // part of the time and its count is scaled by time_enabled / time_running.
  constexpr std::uint64_t n = 100'000'000;
  std::string twelve;
  for (int i = 0; i < 12; ++i) twelve += (i ? "," : "") + std::string("cpu_cycles:u");
  auto alone = count("cpu_cycles:u", [] { spin(n); });
  auto mux = count(twelve, [] { spin(n); });
  REQUIRE(alone.counts[0].state == Count::State::counted);
  const double truth = static_cast<double>(alone.counts[0].raw);
  const double interval_ms = std::stod(read_line(pmu_dir + "/perf_event_mux_interval_ms"));
  bool some_multiplexed = false;
  for (const auto& c : mux.counts) {
    INFO(show(c));
    REQUIRE(c.state == Count::State::counted);
    CHECK(c.time_running <= c.time_enabled);
    if (c.time_running < c.time_enabled) some_multiplexed = true;
    if (icount()) {
      // The loop's rate is one count per ns of EL0 time, so a rotation slice holds at most
      // interval_ms * 1e6 counts: scaling errs by at most the two partial slices at the ends, scaled.
      const double bound = 2 * interval_ms * 1e6 / c.running_fraction();
      CHECK(std::abs(c.scaled() - truth) <= bound);
    }
  }
  CHECK(some_multiplexed);
}

TEST_CASE("user-space reads: the seqlock protocol agrees with read(2), on a 64-bit and a 32-bit counter") {
  const std::string sysctl = "/proc/sys/kernel/perf_user_access";
  REQUIRE(std::filesystem::exists(sysctl));
  write_file(sysctl, "1");
  OpenOptions page;
  page.user_page = true;
  for (const std::string text :
       {"armv8_pmuv3/cpu_cycles,rdpmc=1,long=1/u", "armv8_pmuv3/cpu_cycles,rdpmc=1/u"}) {
    INFO(text);
    auto set = resolve(text, machine());
    CHECK(set.events[0].attr.config1 == (text.find("long") != std::string::npos ? 3u : 2u));
    // Through Counters, while it counts: read in user space (no note).
    auto fast = Counters::open(set, Target::self_thread(), page);
    fast.enable();
    spin(1'000'000);
    auto a = fast.read();
    spin(1'000'000);
    auto b = fast.read();
    fast.disable();
    INFO(show(a[0]) << " / " << show(b[0]));
    REQUIRE(a[0].state == Count::State::counted);
    CHECK(a[0].notes.empty());
    CHECK(b[0].notes.empty());
    CHECK(a[0].raw > 0);
    CHECK(b[0].raw > a[0].raw);
    if (icount()) {
      CHECK(a[0].raw >= 2'000'000);
      CHECK(b[0].raw - a[0].raw >= 2'000'000);
      CHECK(b[0].raw - a[0].raw <= 2'000'000 + call_overhead);
    }
  }

  // One counter opened with the raw system call, its page as the seed describes it (cap_user_rdpmc,
  // index 32 (the cycle counter) and 64 bits for long=1, pmc_width 32 without), then read both ways:
  // the user-page read lies between two read(2)s, and under -icount adds only the instructions
  // between them.
  for (const auto& [config1, width] : {std::pair{3u, 64u}, std::pair{2u, 32u}}) {
    INFO("config1 " << config1);
    RawCycles counter(config1);
    REQUIRE(counter.fd >= 0);
    REQUIRE(counter.page != MAP_FAILED);
    const auto* pg = static_cast<const perf_event_mmap_page*>(counter.page);
    CHECK(pg->cap_user_rdpmc == 1);
    CHECK(pg->pmc_width == width);
    if (width == 64) CHECK(pg->index == 32);
    spin(100'000);
    std::uint64_t v1[3]{}, v3[3]{};
    REQUIRE(::read(counter.fd, v1, sizeof v1) == sizeof v1);
    auto v2 = runtime::read_mapped_page(counter.page);
    REQUIRE(::read(counter.fd, v3, sizeof v3) == sizeof v3);
    REQUIRE(v2.has_value());
    INFO("read(2) " << v1[0] << ", user page " << v2->value << ", read(2) " << v3[0]);
    CHECK(v1[0] <= v2->value);
    CHECK(v2->value <= v3[0]);
    if (icount()) CHECK(v3[0] - v1[0] <= call_overhead);
  }

  // The switch off: the same reads fall back to read(2), and say why.
  write_file(sysctl, "0");
  auto r = count(
      "armv8_pmuv3/cpu_cycles,rdpmc=1/u", [] { spin(1'000'000); }, page);
  write_file(sysctl, "1");
  REQUIRE(r.counts[0].state == Count::State::counted);
  CHECK(r.counts[0].raw > 0);
  if (icount()) CHECK(r.counts[0].raw >= 2'000'000);
  REQUIRE(r.counts[0].notes.size() == 1);
  CHECK(r.counts[0].notes[0].obstacle == Note::Obstacle::perf_user_access_off);
  CHECK(describe(r.counts[0].notes) ==
        "read with read(2), not in user space: user-space counter access is off "
        "(/proc/sys/kernel/perf_user_access is 0; 1 turns it on)");
  // Without the rdpmc term the kernel does not grant it.
  auto plain = count(
      "cpu_cycles:u", [] { spin(1000); }, page);
  REQUIRE(plain.counts[0].notes.size() == 1);
  CHECK(plain.counts[0].notes[0].obstacle == Note::Obstacle::not_granted);
}

TEST_CASE("what the emulated PMU lacks is explained, never a silent zero") {
  auto r = count("instructions,branch-misses", [] { spin(1000); });
  for (const auto& c : r.counts) {
    INFO(show(c));
    if (icount()) continue;  // -icount gives the PMU inst_retired
    CHECK(c.state == Count::State::not_supported);
    REQUIRE(c.failure.has_value());
    CHECK(c.failure->error == ENOENT);
  }
  if (icount()) {
    REQUIRE(r.counts[0].state == Count::State::counted);
    CHECK(r.counts[0].raw >= 2000);
  }
}
