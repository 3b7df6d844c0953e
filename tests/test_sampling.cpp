// SPDX-License-Identifier: MIT
// Sampling tests: the ring-buffer reader over buffers laid out in memory as the kernel lays them out
// (wrap-around at every offset, overruns, impossible headers, overwrite mode), Sampler's attrs and
// buffers through injected system calls, and real sampling on this machine (software events,
// breakpoints, group reads, inheritance, system-wide, a command, lost records).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "perfspec/errno_facts.hpp"
#include "perfspec/perfspec.hpp"
#include "perfspec/sampling.hpp"
#include "tests/support.hpp"

using namespace perfspec;
using runtime::RingBuffer;

namespace {

using Bytes = std::vector<std::byte>;

Bytes to_bytes(std::span<const std::byte> s) { return Bytes(s.begin(), s.end()); }

// A record of `size` bytes: the header, then bytes that say where they are (seed + index).
Bytes make_record(std::uint32_t type, std::uint16_t size, unsigned seed) {
  Bytes r(size);
  perf_event_header h{type, 0, size};
  std::memcpy(r.data(), &h, sizeof h);
  for (std::size_t i = sizeof h; i < size; ++i) r[i] = static_cast<std::byte>((seed * 31 + i) & 0xff);
  return r;
}

// A ring laid out as the kernel maps one: the metadata page, then `data` bytes of data area.
struct FakeRing {
  static constexpr std::size_t page = 4096;
  std::vector<std::uint64_t> words;
  std::size_t data;
  explicit FakeRing(std::size_t data_size) : words((page + data_size) / 8, 0), data(data_size) {
    meta()->data_offset = page;
    meta()->data_size = data_size;
  }
  void* base() { return words.data(); }
  std::size_t length() const { return page + data; }
  perf_event_mmap_page* meta() { return reinterpret_cast<perf_event_mmap_page*>(words.data()); }
  std::byte* area() { return reinterpret_cast<std::byte*>(words.data()) + page; }
  // Bytes at ring position `pos`, wrapping as the kernel writes them.
  void put(std::uint64_t pos, const Bytes& b) {
    for (std::size_t i = 0; i < b.size(); ++i) area()[(pos + i) & (data - 1)] = b[i];
  }
  RingBuffer reader(RingBuffer::Mode mode = RingBuffer::Mode::forward) {
    return RingBuffer(base(), length(), page, mode);
  }
};

std::vector<Bytes> read_all(RingBuffer& ring) {
  std::vector<Bytes> out;
  ring.read([&](std::span<const std::byte> r) { out.push_back(to_bytes(r)); });
  return out;
}

}  // namespace

TEST_CASE("ring: a record wrapping the end at every offset comes out whole, byte for byte") {
  constexpr std::size_t data = 256;
  // Positions near 2^64 too: data_head and data_tail are free-running counters that wrap.
  for (std::uint64_t base :
       {std::uint64_t{0}, std::uint64_t{0xffffffffffffff00ULL}, std::uint64_t{1} << 40}) {
    for (std::uint16_t size : std::initializer_list<std::uint16_t>{16, 24, 40, 64, 136, 248, 256}) {
      for (std::uint16_t k = 8; k <= size;
           k = static_cast<std::uint16_t>(k + 8)) {  // k bytes before the end, size - k after it
        CAPTURE(base);
        CAPTURE(size);
        CAPTURE(k);
        FakeRing f(data);
        const std::uint64_t tail = base + data - k;
        Bytes rec = make_record(9, size, k);
        f.put(tail, rec);
        std::vector<Bytes> want = {rec};
        std::uint64_t head = tail + size;
        if (size + 16u <= data) {  // a small record after it, when there is room
          Bytes after = make_record(3, 16, 99);
          f.put(head, after);
          want.push_back(after);
          head += 16;
        }
        f.meta()->data_tail = tail;
        f.meta()->data_head = head;
        auto ring = f.reader();
        auto got = read_all(ring);
        CHECK(got == want);
        CHECK(ring.problem() == RingBuffer::Problem::none);
        CHECK(ring.stats().copied == (k < size ? 1u : 0u));  // k == size ends exactly at the end
        CHECK(f.meta()->data_tail == head);                  // everything consumed
        CHECK(read_all(ring).empty());                       // and nothing twice
      }
    }
  }
}

TEST_CASE(
    "ring: the libperf steps, typed: begin, next (consuming the one before), end; records() as a range") {
  FakeRing f(128);
  Bytes a = make_record(9, 24, 1), b = make_record(9, 32, 2), c = make_record(2, 24, 3);
  f.put(0, a);
  f.put(24, b);
  f.put(56, c);
  f.meta()->data_head = 80;
  auto ring = f.reader();
  CHECK(ring.data_size() == 128);
  CHECK(ring.begin() == 80);
  auto r1 = ring.next();
  REQUIRE(r1);
  CHECK(to_bytes(*r1) == a);
  CHECK(f.meta()->data_tail == 0);  // not consumed until the next step
  auto r2 = ring.next();
  REQUIRE(r2);
  CHECK(to_bytes(*r2) == b);
  CHECK(f.meta()->data_tail == 24);
  ring.end();  // r2 consumed; c still there
  CHECK(f.meta()->data_tail == 56);
  {
    auto batch = ring.records();
    std::vector<Bytes> got;
    for (auto r : batch) got.push_back(to_bytes(r));
    REQUIRE(got.size() == 1);
    CHECK(got[0] == c);
    CHECK(runtime::record_header(got[0]).type == 2);
    CHECK(runtime::record_header(got[0]).size == 24);
  }
  CHECK(f.meta()->data_tail == 80);
  CHECK(ring.stats().records == 3);
  CHECK(ring.stats().bytes == 80);
}

TEST_CASE("ring: a head more than the data area ahead is an overrun: counted, skipped, never read through") {
  FakeRing f(256);
  f.meta()->data_tail = 1000;
  f.meta()->data_head = 1000 + 256 + 8;
  auto ring = f.reader();
  int calls = 0;
  CHECK(ring.read([&](std::span<const std::byte>) { ++calls; }) == 0);
  CHECK(calls == 0);
  CHECK(ring.problem() == RingBuffer::Problem::overrun);
  CHECK(ring.stats().overruns == 1);
  CHECK(ring.stats().skipped_bytes == 264);
  CHECK(f.meta()->data_tail == 1264);  // resynchronized at the kernel's next record
  // What the kernel writes after it reads normally.
  Bytes next = make_record(9, 40, 5);
  f.put(1264, next);
  f.meta()->data_head = 1264 + 40;
  auto got = read_all(ring);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == next);
  CHECK(ring.problem() == RingBuffer::Problem::none);
  // Exactly the data area ahead is not an overrun.
  FakeRing full(64);
  for (std::uint64_t p = 0; p < 64; p += 16) full.put(p, make_record(9, 16, static_cast<unsigned>(p)));
  full.meta()->data_head = 64;
  auto ring2 = full.reader();
  CHECK(read_all(ring2).size() == 4);
  CHECK(ring2.stats().overruns == 0);
}

TEST_CASE(
    "ring: a lying header (size 0, odd, larger than the buffer, past data_head) stops the read safely") {
  struct Case {
    std::uint16_t size;
    std::uint64_t head_after;  // bytes of data_head after the bad record's start
  };
  for (Case c : {Case{0, 64}, Case{4, 64}, Case{12, 64}, Case{20, 64}, Case{264, 64}, Case{0xfff8, 64},
                 Case{48, 40}, Case{16, 8}}) {
    CAPTURE(c.size);
    CAPTURE(c.head_after);
    FakeRing f(256);
    Bytes good = make_record(9, 32, 1);
    f.put(200, good);
    perf_event_header bad{9, 0, c.size};
    Bytes hb(sizeof bad);
    std::memcpy(hb.data(), &bad, sizeof bad);
    f.put(232, hb);
    f.meta()->data_tail = 200;
    f.meta()->data_head = 232 + c.head_after;
    auto ring = f.reader();
    auto got = read_all(ring);
    REQUIRE(got.size() == 1);  // the good record before it still comes out
    CHECK(got[0] == good);
    CHECK(ring.problem() == RingBuffer::Problem::bad_record);
    CHECK(ring.stats().bad_records == 1);
    CHECK(ring.stats().skipped_bytes == c.head_after);
    CHECK(f.meta()->data_tail == 232 + c.head_after);
    CHECK(read_all(ring).empty());
    CHECK(ring.problem() == RingBuffer::Problem::none);
  }
}

TEST_CASE("ring: an impossible layout is refused when the reader is made") {
  FakeRing f(256);
  f.meta()->data_size = 200;  // not a power of two
  CHECK_THROWS_AS(f.reader(), Error);
  f.meta()->data_size = 512;  // larger than the mapping
  CHECK_THROWS_AS(f.reader(), Error);
  f.meta()->data_size = 0;  // an old kernel: the rest of the mapping (256 bytes)
  f.meta()->data_offset = 0;
  CHECK(f.reader().data_size() == 256);
}

TEST_CASE("ring: overwrite mode walks backwards from data_head, newest first, whole records only") {
  constexpr std::size_t data = 256;
  FakeRing f(data);
  std::deque<Bytes> written;  // newest first
  std::uint64_t head = 0;
  unsigned seed = 0;
  // The kernel writing backwards: each record goes just below the previous one.
  auto write = [&](std::uint16_t size) {
    Bytes r = make_record(9, size, ++seed);
    head -= size;
    f.put(head, r);
    written.push_front(r);
    f.meta()->data_head = head;
  };
  // What a reader can still get: from head on, the records that fit whole in one buffer, up to `since`.
  auto expected = [&](std::size_t since_count) {
    std::vector<Bytes> out;
    std::size_t used = 0;
    for (std::size_t i = 0; i < since_count && i < written.size(); ++i) {
      if (used + written[i].size() > data) break;
      used += written[i].size();
      out.push_back(written[i]);
    }
    return out;
  };
  f.meta()->data_tail = 0x5a5a;  // never written in this mode
  auto ring = f.reader(RingBuffer::Mode::overwrite);
  CHECK(read_all(ring).empty());
  write(24);
  write(40);
  write(16);
  auto got = read_all(ring);
  CHECK(got == expected(3));
  CHECK(got.size() == 3);
  CHECK(ring.stats().overwritten == 0);
  CHECK(read_all(ring).empty());  // nothing new since
  // Twelve more, 336 bytes: more than the buffer; the oldest of them are overwritten.
  const std::uint16_t sizes[] = {32, 24, 48, 16, 8, 40, 24, 32, 16, 56, 24, 16};
  for (auto s : sizes) write(s);
  got = read_all(ring);
  CHECK(got == expected(12));
  CHECK(got.size() == 9);  // 16+24+56+16+32+24+40+8+16 = 232; the next (48) would pass 256
  CHECK(ring.stats().overwritten == 1);
  CHECK(ring.problem() == RingBuffer::Problem::none);
  // Two more: only those two, not what the last read gave.
  write(8);
  write(64);
  got = read_all(ring);
  CHECK(got == expected(2));
  CHECK(f.meta()->data_tail == 0x5a5a);
  // A lying header inside what was written is a bad record, not a walk past the data.
  write(32);
  perf_event_header bad{9, 0, 12};
  Bytes hb(sizeof bad);
  std::memcpy(hb.data(), &bad, sizeof bad);
  write(24);
  f.put(head, hb);
  got = read_all(ring);
  CHECK(got.empty());
  CHECK(ring.problem() == RingBuffer::Problem::bad_record);
}

// ---- Sampler through injected system calls -------------------------------------------------------------

namespace {

const spec::Machine& live() {
  static spec::Machine m("/sys");
  return m;
}

// A kernel that opens everything, maps zeroed memory laid out as a ring, and records what was asked.
struct FakeKernel final : runtime::Syscalls {
  struct Open {
    Attr attr;
    int pid, cpu, group_fd, fd;
  };
  std::vector<Open> opens;
  std::set<int> open_fds;
  std::map<int, int> set_output;  // fd -> the fd it writes into
  std::vector<std::pair<int, unsigned long>> ioctls;
  std::map<void*, std::vector<std::uint64_t>> maps;
  std::vector<std::pair<int, int>> mmap_calls;  // fd, prot
  std::map<int, int> mmap_errno;                // cpu -> errno for its mmap
  int set_output_errno = 0;
  std::function<int(const Attr&)> refuse;  // errno for an open, 0: opens
  std::vector<int> cpus = {0, 1};
  std::function<int(int cpu)> filter_errno;          // errno for PERF_EVENT_IOC_SET_FILTER on a CPU
  std::vector<std::pair<int, std::string>> filters;  // fd, filter set
  std::function<int(::pollfd*, std::size_t, int)> poll_script;
  int next = 100;

  int cpu_of(int fd) const {
    for (const auto& o : opens)
      if (o.fd == fd) return o.cpu;
    return -2;
  }
  int perf_event_open(const Attr& a, int pid, int cpu, int group_fd, unsigned long) override {
    if (refuse)
      if (int e = refuse(a)) return -e;
    opens.push_back({a, pid, cpu, group_fd, next});
    open_fds.insert(next);
    return next++;
  }
  long read(int, void*, std::size_t) override { return -EIO; }
  int ioctl(int fd, unsigned long request, unsigned long argument) override {
    REQUIRE(open_fds.count(fd) == 1);
    ioctls.emplace_back(fd, request);
    if (request == PERF_EVENT_IOC_ID) {
      *reinterpret_cast<std::uint64_t*>(argument) = static_cast<std::uint64_t>(fd) * 7;
      return 0;
    }
    if (request == PERF_EVENT_IOC_SET_FILTER) {
      if (filter_errno)
        if (int e = filter_errno(cpu_of(fd))) return -e;
      filters.emplace_back(fd, reinterpret_cast<const char*>(argument));
      return 0;
    }
    if (request == PERF_EVENT_IOC_SET_OUTPUT) {
      if (set_output_errno) return -set_output_errno;
      set_output[fd] = static_cast<int>(argument);
    }
    return 0;
  }
  int close(int fd) override {
    REQUIRE(open_fds.erase(fd) == 1);
    return 0;
  }
  void* mmap(int fd, std::size_t length, int prot) override {
    REQUIRE(open_fds.count(fd) == 1);
    mmap_calls.emplace_back(fd, prot);
    if (auto it = mmap_errno.find(cpu_of(fd)); it != mmap_errno.end()) {
      errno = it->second;
      return nullptr;
    }
    std::vector<std::uint64_t> mem(length / 8, 0);
    void* p = mem.data();
    maps.emplace(p, std::move(mem));
    return p;
  }
  int munmap(void* address, std::size_t) override {
    REQUIRE(maps.erase(address) == 1);
    return 0;
  }
  int poll(::pollfd* fds, std::size_t n, int timeout) override {
    return poll_script ? poll_script(fds, n, timeout) : 0;
  }
  std::size_t page_size() override { return 4096; }
  std::vector<int> online_cpus() override { return cpus; }
  std::optional<int> perf_event_paranoid() override { return 2; }
  bool privileged() override { return true; }
};

const Attr& attr_of(const FakeKernel& k, std::uint64_t config, std::uint32_t type = 1) {
  for (const auto& o : k.opens)
    if (o.attr.config == config && o.attr.type == type) return o.attr;
  FAIL("no event of config " << config);
  return k.opens.front().attr;
}

}  // namespace

TEST_CASE("sampler: start_disabled: the events wait for enable(), a tracking event starts at the exec") {
  auto set = resolve("task-clock", live());
  FakeKernel k;
  runtime::SamplingOptions o;
  o.start_disabled = true;
  runtime::Target t = runtime::Target::process(::getpid(), true);
  t.enable_on_exec = true;  // as Target::command makes it
  auto s = runtime::Sampler::open(set, t, o, k);
  REQUIRE(s.events().events.size() == 2);
  CHECK(s.events().events[1].name == "dummy:u");
  const Attr& sampled = attr_of(k, PERF_COUNT_SW_TASK_CLOCK);
  CHECK(sampled.disabled == 1);
  CHECK(sampled.enable_on_exec == 0);  // not at the exec: at enable()
  CHECK((sampled.mmap | sampled.comm | sampled.task) == 0);
  const Attr& tracking = attr_of(k, PERF_COUNT_SW_DUMMY);
  CHECK(tracking.disabled == 1);
  CHECK(tracking.enable_on_exec == 1);  // what the command maps from its exec on
  CHECK((tracking.mmap && tracking.mmap2 && tracking.comm && tracking.comm_exec && tracking.task));
  // enable(false), disable(false): the sampled event's fds only (one a CPU: inherited)
  std::set<int> sampled_fds, tracking_fds;
  for (const auto& op : k.opens)
    (op.attr.config == PERF_COUNT_SW_DUMMY ? tracking_fds : sampled_fds).insert(op.fd);
  REQUIRE(sampled_fds.size() == 2);
  for (bool on : {true, false}) {
    k.ioctls.clear();
    CHECK((on ? s.enable(false) : s.disable(false)) == 0);
    std::set<int> touched;
    for (auto [fd, request] : k.ioctls) {
      CHECK(request == (on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE));
      touched.insert(fd);
    }
    CHECK(touched == sampled_fds);
  }
  k.ioctls.clear();
  CHECK(s.disable() == 0);  // every event
  CHECK(k.ioctls.size() == sampled_fds.size() + tracking_fds.size());
}

TEST_CASE(
    "open: a tracepoint filter on each of its fds; where the kernel refuses it, that CPU's group "
    "closes and its events fail with the reason") {
  auto set = resolve("{sched:sched_switch,sched:sched_wakeup}", live());  // the first one filtered
  auto check = [](const std::vector<std::optional<runtime::Failure>>& failures, auto opened) {
    CHECK(opened(0));  // still on CPU 0
    CHECK(opened(1));
    REQUIRE(failures[0]);
    CHECK(failures[0]->filter_refused);
    CHECK(failures[0]->name == "EINVAL");
    CHECK(failures[0]->cpu == -1);
    CHECK(failures[0]->meaning == "the kernel refused the filter \"prev_pid != 0\" (Invalid argument)");
    REQUIRE(failures[1]);
    CHECK(failures[1]->filter_refused);
    CHECK(failures[1]->detail == "its group's other event had its filter refused");
  };
  {
    FakeKernel k;
    k.filter_errno = [](int cpu) { return cpu == 1 ? EINVAL : 0; };
    runtime::SamplingOptions o;
    o.filters = {"prev_pid != 0"};
    auto s = runtime::Sampler::open(set, runtime::Target::system_wide(), o, k);
    REQUIRE(k.filters.size() == 1);  // CPU 0's sched_switch; sched_wakeup has none
    CHECK(k.filters[0].second == "prev_pid != 0");
    CHECK(k.cpu_of(k.filters[0].first) == 0);
    CHECK(s.open_fds() == 2);  // CPU 1's group closed
    check(s.failures(), [&](std::size_t e) { return s.opened(e); });
  }
  {
    FakeKernel k;
    k.filter_errno = [](int cpu) { return cpu == 1 ? EINVAL : 0; };
    auto c = runtime::Counters::open(set, runtime::Target::system_wide(),
                                     runtime::OpenOptions{.filters = {"prev_pid != 0"}}, k);
    REQUIRE(k.filters.size() == 1);
    CHECK(k.cpu_of(k.filters[0].first) == 0);
    CHECK(k.open_fds.size() == 2);
    check(c.failures(), [&](std::size_t e) { return c.opened(e); });
  }
  {
    FakeKernel k;  // no filters: no SET_FILTER
    auto c = runtime::Counters::open(set, runtime::Target::system_wide(), {}, k);
    CHECK(k.filters.empty());
    CHECK(!c.failures()[0]);
  }
}

TEST_CASE("sampler attrs: -F and -c defaults only where an event has no period, :S groups, tracking, ids") {
  auto set = resolve("{task-clock,page-faults}:S,sched:sched_switch,cpu-clock/period=1000/,context-switches",
                     live());
  FakeKernel k;
  {
    auto s = runtime::Sampler::open(set, runtime::Target::self_thread(), {}, k);
    const Attr& leader = attr_of(k, PERF_COUNT_SW_TASK_CLOCK);
    CHECK(leader.freq == 1);
    CHECK(leader.sample_period == 4000);  // perf's -F default
    CHECK(leader.sample_type == (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                                 PERF_SAMPLE_READ | PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER));
    CHECK(leader.read_format == (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                 PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST));
    CHECK(leader.disabled == 1);
    CHECK(leader.sample_id_all == 1);
    // The tracking event: the first one.
    CHECK((leader.mmap && leader.mmap2 && leader.comm && leader.comm_exec && leader.task));
    const Attr& member = attr_of(k, PERF_COUNT_SW_PAGE_FAULTS);
    CHECK(member.sample_period == 0);  // its values come in the leader's samples
    CHECK(member.freq == 0);
    CHECK(member.disabled == 0);
    CHECK(member.read_format == leader.read_format);
    CHECK((member.mmap | member.mmap2 | member.comm | member.task) == 0);
    const Attr& tp = attr_of(k, set.events[2].attr.config, PERF_TYPE_TRACEPOINT);
    CHECK(tp.sample_period == 1);  // a tracepoint keeps its period 1
    CHECK(tp.freq == 0);
    CHECK((tp.sample_type & PERF_SAMPLE_RAW) != 0);
    CHECK((tp.sample_type & PERF_SAMPLE_IDENTIFIER) != 0);
    const Attr& cpu_clock = attr_of(k, PERF_COUNT_SW_CPU_CLOCK);
    CHECK(cpu_clock.sample_period == 1000);  // period= kept
    CHECK(cpu_clock.freq == 0);
    CHECK((cpu_clock.sample_type & PERF_SAMPLE_READ) == 0);
    CHECK(cpu_clock.read_format == (PERF_FORMAT_ID | PERF_FORMAT_LOST));
    // One buffer (a thread, any CPU); every other fd writes into it.
    REQUIRE(s.buffers() == 1);
    CHECK(s.place(0).cpu == -1);
    CHECK(s.open_fds() == 5);
    CHECK(k.set_output.size() == 4);
    for (const auto& [fd, out] : k.set_output) CHECK(out == k.opens.front().fd);
    REQUIRE(k.mmap_calls.size() == 1);
    CHECK(k.mmap_calls[0].second == (PROT_READ | PROT_WRITE));
    CHECK(k.maps.begin()->second.size() * 8 == (128 + 1) * 4096);  // 512 KiB + the metadata page
    // attrs(): what was opened; ids(): PERF_EVENT_IOC_ID of each.
    REQUIRE(s.attrs().size() == 5);
    CHECK(s.attrs()[0] == leader);
    REQUIRE(s.ids()[1].size() == 1);
    CHECK(s.ids()[1][0] == 101 * 7);
    CHECK(s.event_of(101 * 7) == 1u);
    CHECK(!s.event_of(5));
    for (std::size_t e = 0; e < 5; ++e) CHECK(s.opened(e));
  }
  CHECK(k.open_fds.empty());
  CHECK(k.maps.empty());
  // -c: a period instead of the frequency; asked sample bits added; one event alone needs no identifier.
  FakeKernel k2;
  runtime::SamplingOptions o;
  o.period = 5000;
  o.sample_type =
      record::sample_ip | record::sample_addr | record::sample_callchain | record::sample_branch_stack;
  o.sample_max_stack = 32;
  o.wakeup_watermark = 8192;
  auto s2 = runtime::Sampler::open(resolve("task-clock", live()), runtime::Target::self_thread(), o, k2);
  const Attr& a = k2.opens.at(0).attr;
  CHECK(a.freq == 0);
  CHECK(a.sample_period == 5000);
  CHECK(a.sample_type ==
        (PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK));
  CHECK(a.branch_sample_type == PERF_SAMPLE_BRANCH_ANY);
  CHECK(a.sample_max_stack == 32);
  CHECK(a.watermark == 1);
  CHECK(a.wakeup_events == 8192);
  CHECK(a.read_format == PERF_FORMAT_LOST);  // what full buffers drop, counted (Losses::dropped)
}

TEST_CASE("sampler buffers: one per CPU system-wide or for an inherited task, other fds redirected there") {
  auto set = resolve("{task-clock,page-faults},context-switches", live());
  for (bool system_wide : {true, false}) {
    CAPTURE(system_wide);
    FakeKernel k;
    {
      runtime::Target t = system_wide ? runtime::Target::system_wide() : runtime::Target::process(4242);
      auto s = runtime::Sampler::open(set, t, {}, k);
      REQUIRE(s.buffers() == 2);
      CHECK(s.place(0).cpu == 0);
      CHECK(s.place(1).cpu == 1);
      CHECK(k.opens.size() == 6);
      for (const auto& o : k.opens) {
        CHECK(o.pid == (system_wide ? -1 : 4242));
        CHECK(o.attr.inherit == (system_wide ? 0 : 1));
        CHECK(((o.attr.sample_type & PERF_SAMPLE_CPU) != 0) == system_wide);
      }
      CHECK(k.set_output.size() == 4);
      for (const auto& [fd, out] : k.set_output) CHECK(k.cpu_of(fd) == k.cpu_of(out));  // never across CPUs
      CHECK(k.mmap_calls.size() == 2);
      CHECK(s.ids()[0].size() == 2);
    }
    CHECK(k.open_fds.empty());
    CHECK(k.maps.empty());
  }
  // A thread without inherit: one buffer, any CPU.
  FakeKernel k;
  runtime::Target t = runtime::Target::process(4242, false);
  auto s = runtime::Sampler::open(set, t, {}, k);
  CHECK(s.buffers() == 1);
  CHECK(k.opens.size() == 3);
  // Overwrite: read-only mappings of backward-writing events, paused while read.
  FakeKernel ko;
  runtime::SamplingOptions o;
  o.overwrite = true;
  o.pages = 4;
  auto so = runtime::Sampler::open(set, runtime::Target::self_thread(), o, ko);
  REQUIRE(ko.mmap_calls.size() == 1);
  CHECK(ko.mmap_calls[0].second == PROT_READ);
  CHECK(ko.maps.begin()->second.size() * 8 == 5 * 4096);
  for (const auto& op : ko.opens) CHECK(op.attr.write_backward == 1);
  ko.ioctls.clear();
  so.read([](std::span<const std::byte>) {});
  REQUIRE(ko.ioctls.size() == 2);
  CHECK(ko.ioctls[0].second == PERF_EVENT_IOC_PAUSE_OUTPUT);
  CHECK(ko.ioctls[1].second == PERF_EVENT_IOC_PAUSE_OUTPUT);
}

TEST_CASE("sampler: a buffer that cannot be mapped (EPERM) is explained on its events; nothing leaks") {
  auto set = resolve("{task-clock,page-faults}", live());
  FakeKernel k;
  k.mmap_errno[1] = EPERM;
  {
    runtime::SamplingOptions o;
    o.pages = 64;
    auto s = runtime::Sampler::open(set, runtime::Target::system_wide(), o, k);
    CHECK(s.buffers() == 1);
    CHECK(s.open_fds() == 2);  // CPU 1's fds closed: they would sample into nothing
    CHECK(k.open_fds.size() == 2);
    for (std::size_t e = 0; e < 2; ++e) {
      CHECK(s.opened(e));  // still on CPU 0
      REQUIRE(s.failures()[e]);
      const auto& f = *s.failures()[e];
      CHECK(f.name == "EPERM");
      CHECK(f.cpu == 1);
      CHECK(f.detail == "mapping its ring buffer (64 data pages, 260 KiB) on CPU 1");
      CHECK(f.hint.find("raise /proc/sys/kernel/perf_event_mlock_kb") == 0);
      CHECK(f.hint.find("use fewer pages per buffer (SamplingOptions::pages, now 64)") != std::string::npos);
      CHECK(f.meaning.find("perf_event_mlock_kb") != std::string::npos);
    }
    CHECK(s.ids()[0].size() == 1);
  }
  CHECK(k.open_fds.empty());
  CHECK(k.maps.empty());
  // Nowhere: not opened at all.
  FakeKernel k2;
  k2.mmap_errno[-1] = ENOMEM;
  auto s2 = runtime::Sampler::open(set, runtime::Target::self_thread(), {}, k2);
  CHECK(s2.buffers() == 0);
  CHECK(!s2.opened(0));
  CHECK(s2.failures()[1]->name == "ENOMEM");
  CHECK(s2.open_fds() == 0);
  CHECK(k2.open_fds.empty());
  CHECK(s2.poll(0).state == runtime::Wakeup::target_gone);  // nothing to wait for
  // A refused SET_OUTPUT: that fd gets a buffer of its own.
  FakeKernel k3;
  k3.set_output_errno = EINVAL;
  auto s3 = runtime::Sampler::open(set, runtime::Target::self_thread(), {}, k3);
  CHECK(s3.buffers() == 2);
  CHECK(!s3.failures()[1]);
}

TEST_CASE("sampler: an inherited :S group refused (EINVAL before Linux 6.12) is explained, not thrown") {
  auto set = resolve("{task-clock,page-faults}:S", live());
  FakeKernel k;
  k.refuse = [](const Attr& a) { return a.inherit && (a.sample_type & PERF_SAMPLE_READ) ? EINVAL : 0; };
  auto s = runtime::Sampler::open(set, runtime::Target::process(4242), {}, k);
  CHECK(!s.opened(0));
  CHECK(!s.opened(1));
  REQUIRE(s.failures()[0]);
  CHECK(s.failures()[0]->name == "EINVAL");
  CHECK(s.failures()[0]->detail == "an inherited event with PERF_SAMPLE_READ (`:S`)");
  CHECK(s.failures()[0]->hint.find("from Linux 6.12 on") != std::string::npos);
  CHECK(s.attrs()[0].inherit == 1);  // the attr that was tried
  CHECK((s.attrs()[0].sample_type & PERF_SAMPLE_TID) != 0);
  CHECK(s.buffers() == 0);
  CHECK(k.open_fds.empty());
}

TEST_CASE("sampler options a program gets wrong are usage errors") {
  auto set = resolve("task-clock", live());
  FakeKernel k;
  runtime::SamplingOptions o;
  o.pages = 3;
  CHECK_THROWS_AS(runtime::Sampler::open(set, runtime::Target::self_thread(), o, k), Error);
  o.pages = 0;
  o.frequency = 0;
  CHECK_THROWS_AS(runtime::Sampler::open(set, runtime::Target::self_thread(), o, k), Error);
  CHECK(k.open_fds.empty());
}

TEST_CASE("sampler poll: overwrite buffers are waited on for their hangup only, forward ones for data") {
  auto set = resolve("task-clock", live());
  for (bool overwrite : {false, true}) {
    FakeKernel k;
    runtime::SamplingOptions o;
    o.overwrite = overwrite;
    auto s = runtime::Sampler::open(set, runtime::Target::system_wide(), o, k);
    std::vector<short> asked;
    k.poll_script = [&](::pollfd* fds, std::size_t n, int) {
      for (std::size_t i = 0; i < n; ++i) asked.push_back(fds[i].events);
      return 0;
    };
    CHECK(s.poll(10).state == runtime::Wakeup::timeout);
    CHECK(asked == std::vector<short>(2, overwrite ? 0 : POLLIN));
  }
}

TEST_CASE("sample_register_masks: the general registers, the extended ones where the kernel's probe opens") {
  FakeKernel refusing;
  refusing.refuse = [](const Attr&) { return EOPNOTSUPP; };
  const auto base = runtime::sample_register_masks(refusing);
  FakeKernel opening;
  const auto more = runtime::sample_register_masks(opening);
  CHECK(opening.open_fds.empty());  // each probe closed
#if defined(__x86_64__)
  CHECK(base.user == 0xff0fff);  // AX .. R15 but DS, ES, FS, GS
  CHECK(base.intr == 0xff0fff);
  CHECK(more.user == 0xff0fff);
  CHECK(more.intr == (0xff0fffULL | 0xffffffff00000000ULL));  // XMM0 .. XMM15, two numbers each
  REQUIRE(opening.opens.size() == 1);
  const FakeKernel::Open& o = opening.opens[0];
  CHECK(o.attr.type == PERF_TYPE_HARDWARE);
  CHECK(o.attr.config == PERF_COUNT_HW_CPU_CYCLES);
  CHECK(o.attr.sample_type == PERF_SAMPLE_REGS_INTR);
  CHECK(o.attr.sample_regs_intr == 0xffffffff00000000ULL);
  CHECK(o.attr.precise_ip == 1);
  CHECK(o.attr.sample_period == 1);
  CHECK((o.attr.disabled == 1 && o.attr.exclude_kernel == 1));
  CHECK((o.pid == 0 && o.cpu == -1 && o.group_fd == -1));
#elif defined(__aarch64__)
  CHECK(base.user == 0x1ffffffffULL);  // x0 .. x30, sp, pc
  CHECK(base.intr == 0x1ffffffffULL);
  CHECK(more.intr == 0x1ffffffffULL);
  // vg, the SVE vector length, only where the CPU has SVE (and then a probe asked for it)
  const bool sve = (::getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
  CHECK(more.user == (sve ? 0x1ffffffffULL | (1ULL << 46) : 0x1ffffffffULL));
  CHECK(opening.opens.size() == (sve ? 1u : 0u));
#else
  CHECK(base.user == 0);
  CHECK(more.intr == 0);
#endif
}

TEST_CASE("sampler poll: EINTR repeated, a hung-up buffer left out, all hung up is target_gone") {
  auto set = resolve("task-clock", live());
  FakeKernel k;
  auto s = runtime::Sampler::open(set, runtime::Target::system_wide(), {}, k);
  REQUIRE(s.buffers() == 2);
  std::vector<std::vector<int>> seen;
  std::deque<std::function<int(::pollfd*, std::size_t)>> script;
  k.poll_script = [&](::pollfd* fds, std::size_t n, int) {
    std::vector<int> f;
    for (std::size_t i = 0; i < n; ++i) f.push_back(fds[i].fd);
    seen.push_back(f);
    auto step = script.front();
    script.pop_front();
    return step(fds, n);
  };
  auto eintr = [](::pollfd*, std::size_t) { return -EINTR; };
  script = {eintr, eintr, [](::pollfd* fds, std::size_t) {
              fds[1].revents = POLLIN;
              return 1;
            }};
  CHECK(s.poll(1000).state == runtime::Wakeup::ready);
  CHECK(seen.size() == 3);
  script = {[](::pollfd*, std::size_t) { return 0; }};
  CHECK(s.poll(10).state == runtime::Wakeup::timeout);
  script = {[](::pollfd* fds, std::size_t) {
    fds[0].revents = POLLHUP | POLLIN;
    return 1;
  }};
  CHECK(s.poll(10).state == runtime::Wakeup::ready);  // one of two: read, and go on
  seen.clear();
  script = {[](::pollfd* fds, std::size_t) {
    fds[1].revents = POLLHUP;
    return 1;
  }};
  CHECK(s.poll(10).state == runtime::Wakeup::target_gone);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0][0] == -1);  // the hung-up one is not polled again
  CHECK(s.poll(10).state == runtime::Wakeup::target_gone);
  FakeKernel k2;
  k2.poll_script = [](::pollfd*, std::size_t, int) { return -ENOMEM; };
  auto s2 = runtime::Sampler::open(set, runtime::Target::self_thread(), {}, k2);
  auto r = s2.poll(10);
  CHECK(r.state == runtime::Wakeup::failed);
  CHECK(r.error == ENOMEM);
}

TEST_CASE(
    "sampler read: LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE counted and passed on; reader problems summed") {
  auto set = resolve("task-clock", live());
  FakeKernel k;
  runtime::SamplingOptions o;
  o.pages = 1;
  auto s = runtime::Sampler::open(set, runtime::Target::self_thread(), o, k);
  REQUIRE(k.maps.size() == 1);
  auto* meta = reinterpret_cast<perf_event_mmap_page*>(k.maps.begin()->second.data());
  auto* area = reinterpret_cast<std::byte*>(meta) + 4096;
  std::uint64_t pos = 0;
  auto put = [&](std::uint32_t type, std::vector<std::uint64_t> body) {
    perf_event_header h{type, 0, static_cast<std::uint16_t>(8 + 8 * body.size())};
    std::memcpy(area + pos, &h, 8);
    std::memcpy(area + pos + 8, body.data(), 8 * body.size());
    pos += h.size;
  };
  put(PERF_RECORD_SAMPLE, {1, 2, 3});
  put(PERF_RECORD_LOST, {700, 7});
  put(PERF_RECORD_LOST_SAMPLES, {3});
  put(PERF_RECORD_THROTTLE, {1, 700, 700});
  put(PERF_RECORD_UNTHROTTLE, {2, 700, 700});
  put(PERF_RECORD_LOST, {700, 5});
  meta->data_head = pos;
  std::vector<std::uint32_t> types;
  std::vector<std::size_t> from;
  CHECK(s.read([&](std::span<const std::byte> r, std::size_t b) {
    types.push_back(runtime::record_header(r).type);
    from.push_back(b);
  }) == 6);
  CHECK(types == std::vector<std::uint32_t>{9, 2, 13, 5, 6, 2});
  CHECK(from == std::vector<std::size_t>(6, 0));
  auto l = s.losses();
  CHECK(l.lost_records == 2);
  CHECK(l.lost == 12);
  CHECK(l.lost_samples == 3);
  CHECK(l.throttles == 1);
  CHECK(l.unthrottles == 1);
  CHECK(meta->data_tail == pos);
  // A reader's overrun shows in the losses too.
  meta->data_head = pos + 4096 + 8;
  CHECK(s.read([](std::span<const std::byte>) {}) == 0);
  CHECK(s.losses().overruns == 1);
  CHECK(s.losses().skipped_bytes == 4096 + 8);
}

// ---- real sampling ---------------------------------------------------------------------------------------

namespace {

// The fixed fields at the start of a sample, in the kernel's order (perf_event_open(2)); the full decoder
// is elsewhere: this reads what the tests check.
struct Sample {
  std::uint64_t identifier = 0, ip = 0, time = 0, addr = 0, id = 0, period = 0;
  std::uint32_t pid = 0, tid = 0, cpu = 0;
  std::uint64_t nr = 0, time_enabled = 0, time_running = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> values;  // value, id
};

Sample parse_sample(std::span<const std::byte> r, std::uint64_t type, std::uint64_t read_format) {
  Sample s;
  std::size_t at = 8;
  auto u64 = [&] {
    std::uint64_t v = 0;
    REQUIRE(at + 8 <= r.size());
    std::memcpy(&v, r.data() + at, 8);
    at += 8;
    return v;
  };
  if (type & PERF_SAMPLE_IDENTIFIER) s.identifier = u64();
  if (type & PERF_SAMPLE_IP) s.ip = u64();
  if (type & PERF_SAMPLE_TID) {
    std::uint64_t v = u64();
    s.pid = static_cast<std::uint32_t>(v), s.tid = static_cast<std::uint32_t>(v >> 32);
  }
  if (type & PERF_SAMPLE_TIME) s.time = u64();
  if (type & PERF_SAMPLE_ADDR) s.addr = u64();
  if (type & PERF_SAMPLE_ID) s.id = u64();
  if (type & PERF_SAMPLE_STREAM_ID) u64();
  if (type & PERF_SAMPLE_CPU) s.cpu = static_cast<std::uint32_t>(u64());
  if (type & PERF_SAMPLE_PERIOD) s.period = u64();
  if (type & PERF_SAMPLE_READ) {
    if (read_format & PERF_FORMAT_GROUP) {
      s.nr = u64();
      if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) s.time_enabled = u64();
      if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) s.time_running = u64();
      for (std::uint64_t i = 0; i < s.nr; ++i) {
        std::uint64_t v = u64();
        std::uint64_t id = read_format & PERF_FORMAT_ID ? u64() : 0;
        if (read_format & PERF_FORMAT_LOST) u64();
        s.values.emplace_back(v, id);
      }
    } else {
      std::uint64_t v = u64();
      if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) s.time_enabled = u64();
      if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) s.time_running = u64();
      std::uint64_t id = read_format & PERF_FORMAT_ID ? u64() : 0;
      if (read_format & PERF_FORMAT_LOST) u64();
      s.values.emplace_back(v, id);
    }
  }
  return s;
}

struct Collected {
  std::vector<Sample> samples;
  std::vector<std::size_t> sample_buffer;
  std::map<std::uint32_t, std::size_t> types;
  std::vector<Bytes> others;  // non-sample records
};

// Every record of the sampler, samples parsed with event `e`'s attr (or the event their identifier says).
Collected collect(runtime::Sampler& s, std::size_t e = 0) {
  Collected c;
  s.read([&](std::span<const std::byte> r, std::size_t b) {
    auto h = runtime::record_header(r);
    ++c.types[h.type];
    if (h.type != PERF_RECORD_SAMPLE) {
      c.others.push_back(to_bytes(r));
      return;
    }
    const Attr& a = s.attrs()[e];
    c.samples.push_back(parse_sample(r, a.sample_type, a.read_format));
    c.sample_buffer.push_back(b);
  });
  return c;
}

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The time the hypervisor stole from CPU `cpu` (-1: from all of them), in seconds, as /proc/stat counts
// it: rounded down to a USER_HZ tick, so one tick more than a difference of two readings may hide.
double stolen_seconds(int cpu = -1) {
  std::ifstream in("/proc/stat");
  std::string want = cpu < 0 ? "cpu" : fmt::format("cpu{}", cpu), name;
  std::uint64_t v[8] = {};
  while (in >> name) {
    for (auto& x : v) in >> x;
    std::string rest;
    std::getline(in, rest);
    if (name == want) return static_cast<double>(v[7]) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return 0;
}
double clock_tick() { return 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK)); }
// Context switches (voluntary and not) in `u`.
long switches(const rusage& u) { return u.ru_nvcsw + u.ru_nivcsw; }
double cpu_seconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
// The most samples an hrtimer clock (task-clock, cpu-clock) at period `p` s can take of a task that ran
// `cpu` s of CPU time: its timer runs on the wall clock while the task is on its CPU, which is that CPU
// time plus what the hypervisor stole meanwhile, and restarts with what was left of its period (at least
// 10 us) each time the task is switched back in: one more per switch.
double most_clock_samples(double cpu, double stolen, long switched, double p) {
  return (cpu + stolen + clock_tick()) / p + 1 + static_cast<double>(switched);
}
// The fewest samples such a clock takes of a task that ran `cpu` s of CPU time in `switched` + 1 runs
// on its CPU: the CPU time may overstate the runtime by a tick (tick-based accounting) and by what was
// stolen meanwhile (without steal accounting). task-clock's timer keeps what was left of its period
// across a switch, so a run loses at most the one expiration delivered late past its end; cpu-clock's
// timer runs on the CPU's wall clock, so a run of length L holds at least L / p - 1 of its expirations,
// and may lose one more delivered late: two a run.
// That holds only where the hypervisor accounts the time it takes from the CPUs (steal in /proc/stat):
// where it does not (QEMU's TCG guest, for one), a CPU taken away still advances the machine's clocks,
// so a task's CPU time includes time in which its timer could not fire (the expirations missed then
// collapse into one), and the fewest is 1. Steal is taken as accounted when some was, since boot.
double least_clock_samples(double cpu, double stolen, long switched, double p, int lost_per_run) {
  static const bool steal_accounted = stolen_seconds() > 0;
  if (!steal_accounted) return 1;
  const double runs = static_cast<double>(switched) + 1;
  return std::max(0.0, (cpu - clock_tick() - stolen) / p - lost_per_run * runs);
}

// Expirations of an hrtimer clock at period `p` s that collapsed into one: the kernel moves the timer
// forward past `now` after each (hrtimer_forward_now), so when its interrupt comes late by more than a
// period the ones missed meanwhile are never taken. They show in the samples' own times (the clock
// taken in the handler): consecutive samples of one task k periods apart stand for k - 1 lost. A gap
// that holds time off the CPU (the timer is stopped then) counts as lost too, which only makes the
// fewest smaller. `times` in ns, any order.
double collapsed_expirations(std::vector<std::uint64_t> times, double p) {
  std::sort(times.begin(), times.end());
  double lost = 0;
  for (std::size_t i = 1; i < times.size(); ++i)
    lost += std::max(0.0, std::round(static_cast<double>(times[i] - times[i - 1]) * 1e-9 / p) - 1);
  return lost;
}

volatile std::uint64_t sink = 0;
void burn_cpu(double seconds) {
  double until = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < until)
    for (int i = 0; i < 10000; ++i) sink = sink + static_cast<std::uint64_t>(i);
}

// `n` pages never touched, not backed by a huge page: each first write is one fault.
struct FreshPages {
  std::size_t n, page;
  std::byte* p;
  explicit FreshPages(std::size_t count) : n(count), page(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))) {
    void* m = ::mmap(nullptr, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(m != MAP_FAILED);
    ::madvise(m, n * page, MADV_NOHUGEPAGE);
    p = static_cast<std::byte*>(m);
  }
  ~FreshPages() { ::munmap(p, n * page); }
  void touch() {
    for (std::size_t i = 0; i < n; ++i) static_cast<volatile std::byte*>(p)[i * page] = std::byte{1};
  }
  std::uintptr_t address(std::size_t i) const { return reinterpret_cast<std::uintptr_t>(p + i * page); }
};

std::uint32_t my_tid() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

// Whether this machine's hardware breakpoints fire (some hypervisors accept them and never trigger).
bool breakpoints_fire() { return test::breakpoint_probe_count() == 10; }

volatile long written_variable = 0;
[[gnu::noinline]] void write_k_times(int k) {
  for (int i = 0; i < k; ++i) written_variable = written_variable + 1;
}

std::size_t open_fd_count() {
  std::size_t n = 0;
  for (int fd = 0; fd < 4096; ++fd)
    if (::fcntl(fd, F_GETFD) >= 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("time order: a record read before an earlier one of another CPU waits for it") {
  // A thread enters a call on CPU 0 at 15 and leaves it on CPU 1 at 20, then enters the next at 30 on
  // CPU 0. The second read takes CPU 0's buffer before the entry was written and CPU 1's after the exit
  // was: the exit comes one read ahead of its entry.
  runtime::TimeOrder<std::string> order;
  std::vector<std::string> out;
  auto take = [&](std::string& s) { out.push_back(s); };
  order.hold(5, "a");
  order.round(take);
  CHECK(out.empty());  // the first read's limit is nothing seen before it
  order.hold(20, "exit");
  order.round(take);
  CHECK(out == std::vector<std::string>{"a"});
  order.hold(30, "next entry");
  order.hold(15, "entry");
  order.hold(0, "untimed");
  order.round(take);
  CHECK(out == std::vector<std::string>{"a", "untimed", "entry", "exit"});
  CHECK(order.held() == 1);
  order.round(take);  // a read that found nothing: what the read before had seen goes on
  CHECK(out.back() == "next entry");
  CHECK(order.held() == 0);
}

TEST_CASE("time order: equal times keep the order held; flush hands on all") {
  runtime::TimeOrder<int> order;
  std::vector<int> out;
  auto take = [&](int i) { out.push_back(i); };
  order.hold(7, 1);
  order.hold(7, 2);
  order.hold(3, 3);
  order.round(take);
  CHECK(out.empty());
  order.hold(7, 4);
  order.hold(9, 5);
  order.flush(take);
  CHECK(out == std::vector<int>{3, 1, 2, 4, 5});
  CHECK(order.held() == 0);
}

TEST_CASE("real: task-clock at 1000 Hz over 0.3 s of CPU gives about 300 samples of this thread") {
  live();
  std::size_t fds_before = open_fd_count();
  {
    runtime::SamplingOptions o;
    o.frequency = 1000;
    auto s = runtime::Sampler::open(resolve("task-clock", live()), runtime::Target::self_thread(), o);
    REQUIRE(s.opened(0));
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    const double stolen_before = stolen_seconds(), cpu_before = thread_cpu_seconds();
    CHECK(s.enable() == 0);
    burn_cpu(0.3);
    CHECK(s.disable() == 0);
    const double cpu = thread_cpu_seconds() - cpu_before, stolen = stolen_seconds() - stolen_before;
    ::getrusage(RUSAGE_THREAD, &after);
    auto c = collect(s);
    const long switched = switches(after) - switches(before);
    const double most = most_clock_samples(cpu, stolen, switched, 0.001);
    const double least = least_clock_samples(cpu, stolen, switched, 0.001, 1);
    MESSAGE("task-clock at 1000 Hz for 0.3 s of CPU: " << c.samples.size() << " samples (at least " << least
                                                       << ", at most " << most << ": " << stolen
                                                       << " s stolen, " << switched << " switches)");
    CHECK(static_cast<double>(c.samples.size()) >= least);
    CHECK(static_cast<double>(c.samples.size()) <= most);
    std::uint64_t last = 0;
    for (const auto& x : c.samples) {
      CHECK(x.pid == static_cast<std::uint32_t>(::getpid()));
      CHECK(x.tid == my_tid());
      CHECK(x.time >= last);
      CHECK(x.period > 0);
      last = x.time;
    }
    auto l = s.losses();
    CHECK(l.lost == 0);
    CHECK(l.overruns + l.bad_records == 0);
  }
  CHECK(open_fd_count() == fds_before);
}

TEST_CASE("real: page-faults at period 1 over N fresh pages gives exactly N samples, at those pages") {
  constexpr std::size_t n = 37;
  runtime::SamplingOptions o;
  o.period = 1;
  o.sample_type = record::sample_ip | record::sample_tid | record::sample_addr;
  auto s = runtime::Sampler::open(resolve("page-faults:u", live()), runtime::Target::self_thread(), o);
  REQUIRE(s.opened(0));
  FreshPages pages(n);
  s.enable();
  pages.touch();
  s.disable();
  auto c = collect(s);
  // Exactly one sample on each page touched. Other faults may come between enable and disable
  // (under ASan, the shadow memory of those stores): they are on other pages, and not counted here.
  std::set<std::uintptr_t> want, got;
  for (std::size_t i = 0; i < n; ++i) want.insert(pages.address(i));
  std::size_t on_pages = 0;
  for (const auto& x : c.samples)
    if (want.count(x.addr)) {
      ++on_pages;
      got.insert(x.addr);
    }
  MESSAGE(c.samples.size() << " page-fault samples, " << on_pages << " on the " << n << " pages touched");
  CHECK(on_pages == n);
  CHECK(got == want);
}

TEST_CASE("real: a write breakpoint at period 1 gives exactly K samples, in the writing function") {
  constexpr int k = 25;
  auto addr = reinterpret_cast<std::uintptr_t>(&written_variable);
  auto set = resolve(fmt::format("mem:{:#x}/8:w:u", addr), live());
  REQUIRE(set.events[0].attr.sample_period == 1);
  auto s = runtime::Sampler::open(set, runtime::Target::self_thread());
  REQUIRE(s.opened(0));
  CHECK(s.attrs()[0].sample_period == 1);
  CHECK(s.attrs()[0].freq == 0);
  s.enable();
  write_k_times(k);
  s.disable();
  auto c = collect(s);
  if (!breakpoints_fire()) {
    MESSAGE("this machine's hardware breakpoints open but never fire: exact sample count not checked");
    CHECK(c.samples.empty());
    return;
  }
  REQUIRE(c.samples.size() == static_cast<std::size_t>(k));
  // Each ip lies in write_k_times as the binary's symbol table draws it: the function itself or a clone
  // the compiler made of it (g++ -O2 calls `write_k_times.constprop.0` here), never an offset guessed
  // from its address.
  std::string fn = test::function_symbol_at(reinterpret_cast<std::uintptr_t>(&write_k_times));
  REQUIRE(fn.find("write_k_times") != std::string::npos);
  std::string base = fn.substr(0, fn.find('.'));
  for (const auto& x : c.samples) {
    std::string at = test::function_symbol_at(x.ip);
    INFO("ip " << std::hex << x.ip << " is in '" << at << "'");
    CHECK((at == base || at.starts_with(base + ".")));
  }
}

TEST_CASE("real: a leader-sampled group {task-clock,page-faults}:S carries both values and their ids") {
  constexpr std::size_t n = 20;
  runtime::SamplingOptions o;
  o.period = 2000000;  // every 2 ms of task-clock
  auto s = runtime::Sampler::open(resolve("{task-clock,page-faults}:S", live()),
                                  runtime::Target::self_thread(), o);
  REQUIRE(s.opened(0));
  REQUIRE(s.opened(1));
  REQUIRE(s.ids()[0].size() == 1);
  REQUIRE(s.ids()[1].size() == 1);
  const std::uint64_t leader_id = s.ids()[0][0], member_id = s.ids()[1][0];
  FreshPages pages(n);
  s.enable();
  pages.touch();
  burn_cpu(0.05);
  s.disable();
  auto c = collect(s);
  REQUIRE(c.samples.size() >= 10);
  std::uint64_t last_faults = 0, last_clock = 0;
  for (const auto& x : c.samples) {
    CHECK(x.identifier == leader_id);
    CHECK(x.id == leader_id);
    REQUIRE(x.nr == 2);
    REQUIRE(x.values.size() == 2);
    CHECK(x.values[0].second == leader_id);
    CHECK(x.values[1].second == member_id);
    CHECK(x.values[0].first >= last_clock);
    CHECK(x.values[1].first >= last_faults);
    CHECK(x.time_enabled >= x.time_running);
    last_clock = x.values[0].first;
    last_faults = x.values[1].first;
  }
  CHECK(last_faults >= n);  // the pages were touched before the CPU was burnt
  CHECK(c.types.count(PERF_RECORD_SAMPLE) == 1);
}

TEST_CASE(
    "real: inherit: a forked child's samples arrive with its pid, in per-CPU buffers, with FORK and EXIT") {
  runtime::SamplingOptions o;
  o.period = 1000000;  // 1 ms of task-clock
  runtime::Target t = runtime::Target::self_thread();
  t.inherit = true;
  auto s = runtime::Sampler::open(resolve("task-clock", live()), t, o);
  REQUIRE(s.opened(0));
  CHECK(s.buffers() == runtime::system_calls().online_cpus().size());
  CHECK(s.place(0).cpu >= 0);
  const double stolen_before = stolen_seconds();
  // The child tells the CPU time of its burn, measured by itself: that span lies wholly inside the
  // child's life with the inherited event active. Its whole CPU time (rusage) also holds the fork's and
  // the exit's, part of which comes before the event is scheduled in or after perf_event_exit_task took
  // it away (measured at 16 ms beyond the burn on a loaded machine): it bounds the most, not the fewest.
  int report[2];
  REQUIRE(::pipe(report) == 0);
  s.enable();
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const double from = thread_cpu_seconds();
    burn_cpu(0.1);
    const double burnt = thread_cpu_seconds() - from;
    [[maybe_unused]] auto w = ::write(report[1], &burnt, sizeof burnt);
    ::_exit(0);
  }
  ::close(report[1]);
  int status = 0;
  rusage child_use{};
  ::wait4(child, &status, 0, &child_use);
  s.disable();
  double burnt = 0;
  const auto got = ::read(report[0], &burnt, sizeof burnt);
  ::close(report[0]);
  REQUIRE(got == static_cast<ssize_t>(sizeof burnt));
  const double stolen = stolen_seconds() - stolen_before;
  auto c = collect(s);
  std::size_t of_child = 0;
  std::vector<std::uint64_t> times;
  for (const auto& x : c.samples)
    if (x.pid == static_cast<std::uint32_t>(child)) ++of_child, times.push_back(x.time);
  const double most = most_clock_samples(cpu_seconds(child_use), stolen, switches(child_use), 0.001);
  const double collapsed = collapsed_expirations(times, 0.001);
  const double least =
      std::max(0.0, least_clock_samples(burnt, stolen, switches(child_use), 0.001, 1) - collapsed);
  MESSAGE("inherited task-clock samples of the child ("
          << burnt << " s of CPU burnt, " << cpu_seconds(child_use) << " s in all, at 1 ms): " << of_child
          << " (at least " << least << ", at most " << most << "; " << collapsed
          << " expirations collapsed by a late interrupt)");
  CHECK(static_cast<double>(of_child) >= least);
  CHECK(static_cast<double>(of_child) <= most);
  // FORK and EXIT bodies: u32 pid, ppid, tid, ptid, u64 time.
  std::size_t forks = 0, exits = 0;
  for (const auto& r : c.others) {
    auto h = runtime::record_header(r);
    if (h.type != PERF_RECORD_FORK && h.type != PERF_RECORD_EXIT) continue;
    std::uint32_t pid = 0, ppid = 0;
    std::memcpy(&pid, r.data() + 8, 4);
    std::memcpy(&ppid, r.data() + 12, 4);
    if (pid != static_cast<std::uint32_t>(child)) continue;
    CHECK(ppid == static_cast<std::uint32_t>(::getpid()));
    (h.type == PERF_RECORD_FORK ? forks : exits)++;
  }
  CHECK(forks == 1);
  CHECK(exits == 1);
}

TEST_CASE("real: system-wide, one buffer per CPU: each sample's CPU is its buffer's, each CPU's work there") {
  runtime::SamplingOptions o;
  o.frequency = 500;
  auto s = runtime::Sampler::open(resolve("cpu-clock", live()), runtime::Target::system_wide(), o);
  if (!s.opened(0)) {
    MESSAGE("system-wide sampling is not allowed here: " << s.failures()[0]->name << " "
                                                         << s.failures()[0]->hint);
    return;
  }
  const auto cpus = runtime::system_calls().online_cpus();
  REQUIRE(s.buffers() == cpus.size());
  // An idle CPU of a virtual machine may take no cpu-clock samples (perf record -a shows the same): a
  // child pinned to each CPU burns 0.15 s there.
  std::map<std::uint32_t, int> pinned;  // child pid -> its CPU
  std::map<int, double> stolen_from;    // CPU -> stolen before
  for (int cpu : cpus) stolen_from[cpu] = stolen_seconds(cpu);
  s.enable();
  cpu_set_t mine;
  REQUIRE(::sched_getaffinity(0, sizeof mine, &mine) == 0);
  for (int cpu : cpus) {
    // Pinned before the fork, so that the child never runs elsewhere, not even before its first line.
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    REQUIRE(::sched_setaffinity(0, sizeof set, &set) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      burn_cpu(0.15);
      ::_exit(0);
    }
    pinned[static_cast<std::uint32_t>(child)] = cpu;
  }
  REQUIRE(::sched_setaffinity(0, sizeof mine, &mine) == 0);
  std::map<std::uint32_t, double> most, least;  // child pid -> the most and fewest samples it can take
  for (const auto& [pid, cpu] : pinned) {
    int status = 0;
    rusage use{};
    ::wait4(static_cast<pid_t>(pid), &status, 0, &use);
    CHECK(status == 0);
    most[pid] = most_clock_samples(cpu_seconds(use), 0, switches(use), 0.002);
    least[pid] = least_clock_samples(cpu_seconds(use), stolen_seconds(cpu) - stolen_from[cpu], switches(use),
                                     0.002, 2);
  }
  s.disable();
  auto c = collect(s);
  std::map<std::uint32_t, std::size_t> of_child;
  for (std::size_t i = 0; i < c.samples.size(); ++i) {
    const auto& x = c.samples[i];
    const int buffer_cpu = s.place(c.sample_buffer[i]).cpu;
    CHECK(x.cpu == static_cast<std::uint32_t>(buffer_cpu));
    if (auto it = pinned.find(x.pid); it != pinned.end()) {
      CHECK(it->second == buffer_cpu);  // a pinned child ran on its CPU only
      ++of_child[x.pid];
    }
  }
  for (const auto& [pid, cpu] : pinned) {
    // cpu-clock's timer of each CPU runs on the wall clock: the child's CPU time plus what was stolen
    // from its CPU meanwhile
    const double bound = most[pid] + (stolen_seconds(cpu) - stolen_from[cpu]) / 0.002;
    MESSAGE("system-wide cpu-clock at 500 Hz: "
            << of_child[pid] << " samples of the child burning 0.15 s on CPU " << cpu << " (at least "
            << least[pid] << ", at most " << bound << ")");
    CHECK(static_cast<double>(of_child[pid]) >= least[pid]);
    CHECK(static_cast<double>(of_child[pid]) <= bound);
  }
}

TEST_CASE("real: a command sampled from its exec until it exits: poll says target_gone, COMM names it") {
  runtime::Command cmd({"/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do i=$((i+1)); done"});
  runtime::SamplingOptions o;
  o.period = 1;
  auto s = runtime::Sampler::open(resolve("page-faults", live()), runtime::Target::command(cmd), o);
  REQUIRE(s.opened(0));
  CHECK(s.attrs()[0].enable_on_exec == 1);
  CHECK(s.attrs()[0].inherit == 1);
  REQUIRE(cmd.start() == 0);
  Collected all;
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    auto p = s.poll(100);
    REQUIRE(p.state != runtime::Wakeup::failed);
    gone = p.state == runtime::Wakeup::target_gone;
    auto c = collect(s);  // drain, also after target_gone
    all.samples.insert(all.samples.end(), c.samples.begin(), c.samples.end());
    all.others.insert(all.others.end(), c.others.begin(), c.others.end());
  }
  CHECK(gone);
  cmd.wait();
  CHECK(cmd.exit_status() == 0);
  CHECK(all.samples.size() > 10);
  for (const auto& x : all.samples) CHECK(x.pid == static_cast<std::uint32_t>(cmd.pid()));
  bool comm = false;
  for (const auto& r : all.others)
    if (runtime::record_header(r).type == PERF_RECORD_COMM && r.size() >= 18 &&
        std::memcmp(r.data() + 16, "sh", 2) == 0)
      comm = true;
  CHECK(comm);
}

TEST_CASE("real: an overwrite buffer keeps the newest samples and gives them newest first") {
  runtime::SamplingOptions o;
  o.period = 100000;  // 0.1 ms of task-clock: far more samples than one page holds
  o.overwrite = true;
  o.pages = 1;
  auto s = runtime::Sampler::open(resolve("task-clock", live()), runtime::Target::self_thread(), o);
  REQUIRE(s.opened(0));
  CHECK(s.attrs()[0].write_backward == 1);
  s.enable();
  burn_cpu(0.05);
  s.disable();
  auto c = collect(s);
  REQUIRE(c.samples.size() > 10);
  for (std::size_t i = 1; i < c.samples.size(); ++i) CHECK(c.samples[i].time < c.samples[i - 1].time);
  CHECK(s.losses().overwritten == 1);
  CHECK(s.losses().bad_records == 0);
  CHECK(collect(s).samples.empty());  // nothing new since
}

TEST_CASE("real: a full buffer loses records, and the LOST record that says how many is counted") {
  runtime::SamplingOptions o;
  o.period = 20000;  // 20 us of task-clock
  o.pages = 1;
  auto s = runtime::Sampler::open(resolve("task-clock", live()), runtime::Target::self_thread(), o);
  REQUIRE(s.opened(0));
  s.enable();
  burn_cpu(0.05);  // ~2500 samples into a 4 KiB buffer nobody reads
  auto first = collect(s);
  burn_cpu(0.01);  // the kernel writes its LOST record once there is room again
  s.disable();
  auto second = collect(s);
  auto l = s.losses();
  MESSAGE("kept " << first.samples.size() + second.samples.size() << " samples, lost " << l.lost);
  CHECK(l.lost_records >= 1);
  CHECK(l.lost > 100);
  CHECK(second.types[PERF_RECORD_LOST] >= 1);
}

TEST_CASE("real: a frequency above perf_event_max_sample_rate is EINVAL with the limit in the hint") {
  runtime::SamplingOptions o;
  o.frequency = 100000000;
  auto s = runtime::Sampler::open(resolve("task-clock", live()), runtime::Target::self_thread(), o);
  CHECK(!s.opened(0));
  REQUIRE(s.failures()[0]);
  CHECK(s.failures()[0]->name == "EINVAL");
  CHECK(s.failures()[0]->detail == "a frequency of 100000000 Hz");
  CHECK(s.failures()[0]->hint.find("(/proc/sys/kernel/perf_event_max_sample_rate)") != std::string::npos);
  CHECK(s.open_fds() == 0);
}

TEST_CASE("real: an unprivileged user's buffer past the locked-memory limit is EPERM with the mlock hint") {
  std::string out = test::in_child([] {
    if (!test::become_nobody()) return std::string("skip");
    runtime::SamplingOptions o;
    o.pages = 4096;  // 16 MiB: past perf_event_mlock_kb and RLIMIT_MEMLOCK
    auto s = runtime::Sampler::open(resolve("task-clock:u", live()), runtime::Target::self_thread(), o);
    if (!s.failures()[0]) return std::string("mapped");
    const auto& f = *s.failures()[0];
    return f.name + "|" + std::to_string(s.opened(0)) + "|" + f.hint.substr(0, 42);
  });
  if (out == "skip") {
    MESSAGE("not root: cannot drop to nobody");
    return;
  }
  // Debian's perf_event_paranoid 3 (its kernel's default) lets no unprivileged user open anything:
  // the open is refused before any buffer, and says so.
  if (spec::read_paranoid().value_or(2) >= 3) {
    CHECK(out == "EACCES|0|perf_event_paranoid is 3, which forbids un");
    return;
  }
  CHECK(out == "EPERM|0|raise /proc/sys/kernel/perf_event_mlock_kb");
}

namespace {
// COMM records of `name` among the records collected.
std::size_t comms_named(const Collected& c, std::string_view name) {
  std::size_t n = 0;
  for (const auto& r : c.others)
    if (runtime::record_header(r).type == PERF_RECORD_COMM && r.size() >= 16 + name.size() + 1 &&
        std::memcmp(r.data() + 16, name.data(), name.size()) == 0 && r[16 + name.size()] == std::byte{0})
      ++n;
  return n;
}
}  // namespace

TEST_CASE("real: track_at_open: side-band records from a dummy:u of their own, before enable()") {
  // A child renames itself between open() and enable() (as a process born while a recorder scans /proc):
  // its COMM is recorded only when the tracking event is enabled as it opens, as perf record -a's is.
  for (bool at_open : {true, false}) {
    CAPTURE(at_open);
    runtime::SamplingOptions o;
    o.period = 1000000000;  // the sampled event is not what this is about
    o.track_at_open = at_open;
    auto s = runtime::Sampler::open(resolve("cpu-clock", live()), runtime::Target::system_wide(), o);
    REQUIRE(s.opened(0));
    const auto& events = s.events().events;
    if (at_open) {
      REQUIRE(events.size() == 2);
      CHECK(events[1].name == "dummy:u");
      const Attr& d = s.attrs()[1];
      CHECK((d.type == 1 && d.config == 9));
      CHECK(d.disabled == 0);  // on as it opens
      CHECK((d.exclude_kernel == 1 && d.exclude_hv == 1));
      CHECK((d.mmap == 1 && d.mmap2 == 1 && d.comm == 1 && d.comm_exec == 1 && d.task == 1));
      CHECK(s.attrs()[0].comm == 0);  // the sampled event carries none
      CHECK(s.attrs()[0].disabled == 1);
      CHECK(s.ids()[1].size() == s.ids()[0].size());  // on every CPU, into the same buffers
    } else {
      REQUIRE(events.size() == 1);
      CHECK(s.attrs()[0].comm == 1);
    }
    pid_t child = ::fork();
    if (child == 0) {
      ::prctl(PR_SET_NAME, "ps-born-early");
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    s.enable();
    s.disable();
    auto c = collect(s);
    CHECK(comms_named(c, "ps-born-early") == (at_open ? 1U : 0U));
  }
}

TEST_CASE("real: mmap_data adds the MMAP2 records of data mappings (perf record -d)") {
  std::string path = "/proc/self/exe";
  for (bool data : {true, false}) {
    CAPTURE(data);
    runtime::SamplingOptions o;
    o.period = 1000000000;
    o.mmap_data = data;
    auto s = runtime::Sampler::open(resolve("task-clock", live()), runtime::Target::self_thread(), o);
    REQUIRE(s.opened(0));
    CHECK(s.attrs()[0].mmap_data == (data ? 1U : 0U));
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    s.enable();
    void* p = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);  // a data mapping: no PROT_EXEC
    s.disable();
    REQUIRE(p != MAP_FAILED);
    ::munmap(p, 4096);
    ::close(fd);
    auto c = collect(s);
    std::size_t data_maps = 0;
    for (const auto& r : c.others) {
      auto h = runtime::record_header(r);
      if (h.type == PERF_RECORD_MMAP2 && (h.misc & PERF_RECORD_MISC_MMAP_DATA)) ++data_maps;
    }
    CHECK(data_maps == (data ? 1U : 0U));
  }
}

TEST_CASE(
    "sampler: a kernel before 6.0 refuses PERF_FORMAT_LOST (EINVAL): opened without it, said in losses()") {
  FakeKernel k;
  k.refuse = [](const Attr& a) { return (a.read_format & PERF_FORMAT_LOST) ? EINVAL : 0; };
  auto s = runtime::Sampler::open(resolve("task-clock,page-faults", live()), runtime::Target::self_thread(),
                                  {}, k);
  REQUIRE(s.opened(0));
  REQUIRE(s.opened(1));
  CHECK(s.attrs()[0].read_format == PERF_FORMAT_ID);  // the LOST bit dropped, the rest kept
  CHECK(s.attrs()[1].read_format == PERF_FORMAT_ID);
  CHECK(!s.failures()[0]);
  auto l = s.losses();
  CHECK(!l.dropped_counted);
  CHECK(l.dropped == 0);
  CHECK(l.full_reads == 0);
}

TEST_CASE("ring: a read that finds less room than the largest record counts a full read") {
  FakeRing ring(4 * 65536);
  auto r = ring.reader();
  ring.meta()->data_head = 3 * 65536;  // 64 KiB left: any record fits
  r.begin();
  r.end();
  CHECK(r.stats().full_reads == 0);
  ring.meta()->data_tail = 0;
  ring.meta()->data_head = 3 * 65536 + 8;  // one byte less than a 64 KiB record needs
  r.begin();
  r.end();
  CHECK(r.stats().full_reads == 1);
  FakeRing small(4096);  // smaller than the largest record: anything unread leaves less room than it
  auto rs = small.reader();
  rs.begin();
  rs.end();
  CHECK(rs.stats().full_reads == 0);  // empty: room for any record that fits at all
  small.meta()->data_head = 8;
  rs.begin();
  rs.end();
  CHECK(rs.stats().full_reads == 1);
}

TEST_CASE("real: enable, work, disable, then read: what the full buffer dropped is counted exactly") {
  // The read-late pattern: the kernel writes no LOST record (no room is freed while the event runs),
  // yet every page fault of the work is either a sample read back or counted in losses().dropped.
  constexpr std::size_t n = 16385;  // 16385 samples of 40 bytes: more than the default 512 KiB holds
  runtime::SamplingOptions o;
  o.period = 1;
  o.sample_type = record::sample_ip | record::sample_tid | record::sample_time | record::sample_addr;
  for (std::size_t pages : {std::size_t{0}, std::size_t{1024}}) {
    CAPTURE(pages);
    o.pages = pages;
    auto s = runtime::Sampler::open(resolve("page-faults:u", live()), runtime::Target::self_thread(), o);
    REQUIRE(s.opened(0));
    FreshPages region(n);
    s.enable();
    region.touch();
    s.disable();
    auto c = collect(s);
    std::size_t on_region = 0;
    for (const auto& x : c.samples)
      if (x.addr >= region.address(0) && x.addr <= region.address(n - 1)) ++on_region;
    auto l = s.losses();
    MESSAGE(pages << " pages: " << c.samples.size() << " samples read, " << on_region << " on the region, "
                  << l.dropped << " dropped, " << l.lost << " in LOST records, " << l.full_reads
                  << " full reads");
    REQUIRE(l.dropped_counted);
    if (pages == 0) {  // 512 KiB: some were dropped, and nothing is unaccounted for
      CHECK(l.dropped > 0);
      CHECK(l.full_reads == 1);
      CHECK(on_region + l.dropped >= n);
      CHECK(l.lost == 0);  // no LOST record: the event stopped before room was freed
    } else {               // 4 MiB holds them all: nothing dropped, every page's fault read back
      CHECK(l.dropped == 0);
      CHECK(l.full_reads == 0);
      CHECK(on_region == n);
    }
  }
}

TEST_CASE("real: a write breakpoint at period 1 into a 1-page buffer: samples read + dropped = writes") {
  constexpr int k = 2000;
  auto addr = reinterpret_cast<std::uintptr_t>(&written_variable);
  runtime::SamplingOptions o;
  o.pages = 1;
  auto s = runtime::Sampler::open(resolve(fmt::format("mem:{:#x}/8:w:u", addr), live()),
                                  runtime::Target::self_thread(), o);
  REQUIRE(s.opened(0));
  s.enable();
  write_k_times(k);
  s.disable();
  auto c = collect(s);
  auto l = s.losses();
  REQUIRE(l.dropped_counted);
  if (!breakpoints_fire()) {  // they open but never fire: nothing written, nothing dropped
    CHECK(c.samples.empty());
    CHECK(l.dropped == 0);
    return;
  }
  CHECK(l.dropped > 0);
  CHECK(c.samples.size() + l.dropped == static_cast<std::size_t>(k));
}
