// SPDX-License-Identifier: MIT
// Tracepoint payloads: perf's tracing data read defensively, format files parsed by libtraceevent,
// payloads decoded into named fields and printed as perf script prints them. The format files are
// tests/fixtures/tracing/, copied from a 6.18 kernel's tracefs.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>

#include "perfspec/perf_data.hpp"
#include "perfspec/tracepoint.hpp"
#include "support.hpp"

using namespace perfspec;
using namespace perfspec::record;

namespace {

std::string read_fixture(std::string_view name) {
  std::ifstream in(test::fixture(fmt::format("tracing/{}", name)), std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Bytes laid out as perf writes them, in either byte order.
struct Blob {
  bool big = false;
  std::vector<std::byte> b;
  void raw(std::string_view s) {
    for (char c : s) b.push_back(static_cast<std::byte>(c));
  }
  void cstr(std::string_view s) {
    raw(s);
    b.push_back(std::byte{0});
  }
  void number(std::uint64_t v, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) {
      std::size_t shift = big ? size - 1 - i : i;
      b.push_back(static_cast<std::byte>(v >> (8 * shift) & 0xff));
    }
  }
  void u32(std::uint64_t v) { number(v, 4); }
  void u64(std::uint64_t v) { number(v, 8); }
  void file(std::string_view text) {
    u64(text.size());
    raw(text);
  }
};

constexpr std::uint64_t switch_id = 372, exec_id = 365, sys_enter_id = 443;

// perf's tracing data for sched:sched_switch, sched:sched_process_exec and raw_syscalls:sys_enter.
std::vector<std::byte> tracing_data(bool big = false, std::string_view version = "0.6") {
  Blob t{big, {}};
  t.raw("\027\010\104tracing");
  t.cstr(version);
  t.b.push_back(std::byte{big ? std::uint8_t{1} : std::uint8_t{0}});
  t.b.push_back(std::byte{8});
  t.u32(4096);
  t.cstr("header_page");
  t.file(read_fixture("header_page"));
  t.cstr("header_event");
  t.file(read_fixture("header_event"));
  t.u32(0);  // no ftrace formats
  t.u32(2);
  t.cstr("sched");
  t.u32(2);
  t.file(read_fixture("sched_switch.format"));
  t.file(read_fixture("sched_process_exec.format"));
  t.cstr("raw_syscalls");
  t.u32(1);
  t.file(read_fixture("sys_enter.format"));
  t.u32(0);  // kallsyms: none, as perf writes it
  std::string printk = "0xffffffff82a0c1e8 : \"rcu_preempt\"\n";
  t.u32(printk.size());
  t.raw(printk);
  if (version == "0.6") {
    std::string comms = "1 systemd\n42 bash\n";
    t.u64(comms.size());
    t.raw(comms);
  }
  return t.b;
}

// A payload: the common fields, then the event's.
struct Payload {
  Blob p;
  explicit Payload(std::uint64_t type, bool big = false, std::int32_t pid = 42) : p{big, {}} {
    p.number(type, 2);
    p.number(0, 1);  // common_flags
    p.number(0, 1);  // common_preempt_count
    p.number(static_cast<std::uint32_t>(pid), 4);
  }
  void comm(std::string_view s) {
    std::string c(s);
    c.resize(16, '\0');
    p.raw(c);
  }
  std::span<const std::byte> bytes() const { return p.b; }
};

std::vector<std::byte> switch_payload(bool big = false, std::int32_t prev_pid = 42, std::uint64_t state = 1) {
  Payload s(switch_id, big, prev_pid);
  s.comm("bash");
  s.p.number(static_cast<std::uint32_t>(prev_pid), 4);
  s.p.number(120, 4);
  s.p.number(state, 8);
  s.comm("swapper/1");
  s.p.number(0, 4);
  s.p.number(120, 4);
  s.p.number(0, 4);  // the padding that makes a raw sample's size + 4 a multiple of 8
  return s.p.b;
}

std::vector<std::byte> exec_payload(std::uint32_t loc = (12u << 16) | 20u) {
  Payload e(exec_id, false, 7);
  e.p.number(loc, 4);  // __data_loc: length 12 << 16 | offset 20
  e.p.number(7, 4);
  e.p.number(7, 4);
  e.p.raw(std::string_view("/usr/bin/sh\0", 12));
  return e.p.b;
}

template <typename T> T value_of(const std::vector<TracepointField>& fields, std::string_view name) {
  for (const auto& f : fields)
    if (f.name == name) {
      REQUIRE(std::holds_alternative<T>(f.value));
      return std::get<T>(f.value);
    }
  FAIL("no field " << name);
  return T{};
}

}  // namespace

TEST_CASE("read_tracing_data splits perf's tracing data into its parts") {
  auto bytes = tracing_data();
  TracingFiles t = read_tracing_data(bytes);
  CHECK(t.version == "0.6");
  CHECK(!t.big_endian);
  CHECK(t.long_size == 8);
  CHECK(t.page_size == 4096);
  CHECK(t.header_page.size() == read_fixture("header_page").size());
  CHECK(t.header_event.size() == read_fixture("header_event").size());
  CHECK(t.ftrace_formats.empty());
  REQUIRE(t.systems.size() == 2);
  CHECK(t.systems[0].name == "sched");
  CHECK(t.systems[0].formats.size() == 2);
  CHECK(t.systems[1].name == "raw_syscalls");
  CHECK(t.systems[1].formats.size() == 1);
  CHECK(t.kallsyms.empty());
  CHECK(std::string_view(reinterpret_cast<const char*>(t.saved_cmdlines.data()), t.saved_cmdlines.size()) ==
        "1 systemd\n42 bash\n");
  CHECK(t.size == bytes.size());
  // Before 0.6 no saved_cmdlines follow.
  auto old = tracing_data(false, "0.5");
  CHECK(read_tracing_data(old).saved_cmdlines.empty());
  CHECK(read_tracing_data(old).size == old.size());
}

TEST_CASE("every truncation of the tracing data is an error at an offset inside it") {
  auto bytes = tracing_data();
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::span<const std::byte> cut(bytes.data(), n);
    try {
      (void)Tracepoints::from_tracing_data(cut, 1000);
      FAIL("no error for " << n << " bytes");
    } catch (const DecodeError& e) {
      CHECK(e.offset() >= 1000);
      CHECK(e.offset() <= 1000 + n);
    }
  }
}

TEST_CASE("tracing data that lies is an error naming the offset of the lie") {
  auto with = [](std::size_t at, std::vector<std::byte> replacement) {
    auto b = tracing_data();
    std::copy(replacement.begin(), replacement.end(), b.begin() + static_cast<std::ptrdiff_t>(at));
    return b;
  };
  auto offset_of = [](const std::vector<std::byte>& b) -> std::uint64_t {
    try {
      (void)read_tracing_data(b);
    } catch (const DecodeError& e) {
      return e.offset();
    }
    return ~std::uint64_t{0};
  };
  CHECK(offset_of(with(0, {std::byte{23}, std::byte{8}, std::byte{69}})) == 0);  // magic
  CHECK(offset_of(with(14, {std::byte{2}})) == 14);                              // endianness byte
  CHECK(offset_of(with(15, {std::byte{3}})) == 15);                              // long size
  CHECK(offset_of(with(16, {std::byte{0}, std::byte{0x30}, std::byte{0}, std::byte{0}})) == 16);  // page size
  CHECK(offset_of(with(20, {std::byte{'H'}})) == 20);  // the header_page tag
  // header_page's size, the largest u64: runs past everything, nothing is taken
  auto huge = with(32, std::vector<std::byte>(8, std::byte{0xff}));
  CHECK(offset_of(huge) == 40);
  try {
    (void)read_tracing_data(huge);
  } catch (const DecodeError& e) {
    CHECK(std::string(e.message()).find("header_page of 18446744073709551615 bytes runs past the end") !=
          std::string::npos);
  }
  // A system name without its NUL before the end.
  Blob t;
  t.raw("\027\010\104tracing");
  t.cstr("0.6");
  t.b.push_back(std::byte{0});
  t.b.push_back(std::byte{8});
  t.u32(4096);
  t.cstr("header_page");
  t.u64(0);
  t.cstr("header_event");
  t.u64(0);
  t.u32(0);
  t.u32(1);
  t.raw("sched");
  CHECK_THROWS_WITH_AS((void)read_tracing_data(t.b),
                       doctest::Contains("the name of system 0 is not terminated"), DecodeError);
  // A format file that is no format file.
  Blob f;
  f.raw("\027\010\104tracing");
  f.cstr("0.6");
  f.b.push_back(std::byte{0});
  f.b.push_back(std::byte{8});
  f.u32(4096);
  f.cstr("header_page");
  f.u64(0);
  f.cstr("header_event");
  f.u64(0);
  f.u32(0);
  f.u32(1);
  f.cstr("sched");
  f.u32(1);
  f.file("this is not a format file");
  f.u32(0);
  f.u32(0);
  f.u64(0);
  CHECK_NOTHROW((void)read_tracing_data(f.b));
  CHECK_THROWS_AS((void)Tracepoints::from_tracing_data(f.b), DecodeError);
}

TEST_CASE("Tracepoints finds a tracepoint by id, and by a tracepoint attr") {
  auto bytes = tracing_data();
  auto tps = Tracepoints::from_tracing_data(bytes);
  CHECK(tps.size() == 3);
  const Tracepoint* tp = tps.find(switch_id);
  REQUIRE(tp);
  CHECK(tp->id() == switch_id);
  CHECK(tp->system() == "sched");
  CHECK(tp->name() == "sched_switch");
  CHECK(tp->full_name() == "sched:sched_switch");
  CHECK(tp->field_names() == std::vector<std::string_view>{"prev_comm", "prev_pid", "prev_prio", "prev_state",
                                                           "next_comm", "next_pid", "next_prio"});
  CHECK(tp->field_names(true).size() == 11);
  CHECK(tps.find(Attr{.type = 2, .config = exec_id})->full_name() == "sched:sched_process_exec");
  CHECK(tps.find(Attr{.type = 1, .config = exec_id}) == nullptr);
  CHECK(tps.find(12345) == nullptr);
  // Moved, the views stay valid.
  Tracepoints moved = std::move(tps);
  CHECK(moved.find(sys_enter_id)->full_name() == "raw_syscalls:sys_enter");
}

TEST_CASE("a sched_switch payload: named fields and perf's text") {
  auto bytes = tracing_data();
  auto tps = Tracepoints::from_tracing_data(bytes);
  const Tracepoint& tp = *tps.find(switch_id);
  auto raw = switch_payload();
  auto fields = tp.decode(raw);
  REQUIRE(fields.size() == 7);
  CHECK(fields[0].name == "prev_comm");
  CHECK(fields[0].type == "char[16]");
  CHECK(value_of<std::string>(fields, "prev_comm") == "bash");
  CHECK(value_of<std::int64_t>(fields, "prev_pid") == 42);
  CHECK(value_of<std::int64_t>(fields, "prev_prio") == 120);
  CHECK(value_of<std::int64_t>(fields, "prev_state") == 1);
  CHECK(value_of<std::string>(fields, "next_comm") == "swapper/1");
  CHECK(value_of<std::int64_t>(fields, "next_pid") == 0);
  CHECK(tp.print(raw) ==
        "prev_comm=bash prev_pid=42 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 "
        "next_prio=120");
  // Common fields on request; signed values sign-extended.
  auto neg = switch_payload(false, -1, 0);
  auto all = tp.decode(neg, true);
  CHECK(all.size() == 11);
  CHECK(value_of<std::uint64_t>(all, "common_type") == switch_id);
  CHECK(value_of<std::uint64_t>(all, "common_flags") == 0);
  CHECK(value_of<std::int64_t>(all, "common_pid") == -1);
  CHECK(value_of<std::int64_t>(all, "prev_pid") == -1);
  CHECK(tp.print(neg) ==
        "prev_comm=bash prev_pid=-1 prev_prio=120 prev_state=R ==> next_comm=swapper/1 next_pid=0 "
        "next_prio=120");
  // Every truncation of the payload is an error, for decode and print alike.
  for (std::size_t n = 0; n < 64; ++n) {
    std::span<const std::byte> cut(raw.data(), n);
    CHECK_THROWS_AS((void)tp.decode(cut, false, 77), DecodeError);
    CHECK_THROWS_AS((void)tp.print(cut, 0, 77), DecodeError);
  }
  try {
    (void)tp.decode(std::span<const std::byte>(raw.data(), 60), false, 77);
  } catch (const DecodeError& e) {
    CHECK(e.offset() == 77);
    CHECK(e.message() ==
          "sched:sched_switch payload: field 'next_prio' at [60, +4) runs past the payload (60 bytes)");
  }
  CHECK_NOTHROW((void)tp.decode(std::span<const std::byte>(raw.data(), 64)));
}

TEST_CASE("a __data_loc string, checked against the payload") {
  auto bytes = tracing_data();
  auto tps = Tracepoints::from_tracing_data(bytes);
  const Tracepoint& tp = *tps.find(exec_id);
  auto raw = exec_payload();
  auto fields = tp.decode(raw);
  REQUIRE(fields.size() == 3);
  CHECK(fields[0].type == "__data_loc char[]");
  CHECK(value_of<std::string>(fields, "filename") == "/usr/bin/sh");
  CHECK(value_of<std::int64_t>(fields, "pid") == 7);
  CHECK(value_of<std::int64_t>(fields, "old_pid") == 7);
  CHECK(tp.print(raw) == "filename=/usr/bin/sh pid=7 old_pid=7");
  // The string's bytes cut off, or a location that points past the payload.
  for (std::size_t n = 0; n < raw.size(); ++n)
    CHECK_THROWS_AS((void)tp.decode(std::span<const std::byte>(raw.data(), n)), DecodeError);
  auto past = exec_payload((12u << 16) | 40u);
  CHECK_THROWS_WITH_AS((void)tp.decode(past),
                       doctest::Contains("dynamic field 'filename' points at [40, +12)"), DecodeError);
  CHECK_THROWS_AS((void)tp.print(past), DecodeError);
  auto longer = exec_payload((0xffffu << 16) | 20u);
  CHECK_THROWS_AS((void)tp.decode(longer), DecodeError);
  // A string without its NUL ends where its bytes end; printing it reads no further.
  auto unterminated = exec_payload((11u << 16) | 20u);
  unterminated.pop_back();
  CHECK(value_of<std::string>(tp.decode(unterminated), "filename") == "/usr/bin/sh");
  CHECK(tp.print(unterminated) == "filename=/usr/bin/sh pid=7 old_pid=7");
}

TEST_CASE("an array field is a list of its elements") {
  auto bytes = tracing_data();
  auto tps = Tracepoints::from_tracing_data(bytes);
  const Tracepoint& tp = *tps.find(sys_enter_id);
  Payload s(sys_enter_id);
  s.p.number(static_cast<std::uint64_t>(-1), 8);  // id
  for (std::uint64_t a : {3ULL, 0x7ffd1234ULL, 0ULL, 1ULL, 0xffffffffffffffffULL, 6ULL}) s.p.number(a, 8);
  auto fields = tp.decode(s.bytes());
  CHECK(value_of<std::int64_t>(fields, "id") == -1);
  CHECK(value_of<std::vector<std::uint64_t>>(fields, "args") ==
        std::vector<std::uint64_t>{3, 0x7ffd1234, 0, 1, 0xffffffffffffffffULL, 6});
  CHECK(tp.print(s.bytes()) == "NR -1 (3, 7ffd1234, 0, 1, ffffffffffffffff, 6)");
}

TEST_CASE("big-endian tracing data and payloads") {
  auto bytes = tracing_data(true);
  TracingFiles t = read_tracing_data(bytes);
  CHECK(t.big_endian);
  CHECK(t.page_size == 4096);
  auto tps = Tracepoints::from_tracing_data(bytes);
  const Tracepoint& tp = *tps.find(switch_id);
  auto raw = switch_payload(true, 4242, 2);
  auto fields = tp.decode(raw);
  CHECK(value_of<std::int64_t>(fields, "prev_pid") == 4242);
  CHECK(value_of<std::int64_t>(fields, "prev_state") == 2);
  CHECK(value_of<std::int64_t>(fields, "next_prio") == 120);
  CHECK(tp.print(raw) ==
        "prev_comm=bash prev_pid=4242 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 "
        "next_prio=120");
}

TEST_CASE("the tracepoints of a tracefs tree, for a set resolved against it") {
  test::TempTree tree;
  tree.write("kernel/tracing/events/sched/sched_switch/id", "372\n");
  tree.write("kernel/tracing/events/sched/sched_switch/format", read_fixture("sched_switch.format"));
  tree.write("kernel/tracing/events/sched/sched_process_exec/id", "365\n");
  spec::Machine m(tree.root(), test::no_libpfm4());
  CHECK(m.tracepoint_format("sched", "sched_switch") == read_fixture("sched_switch.format"));
  CHECK(!m.tracepoint_format("sched", "nosuch"));
  CHECK(!m.tracepoint_format("..", "sched_switch"));
  auto set = resolve("sched:sched_switch:u,sched:sched_switch/name=sw/", m);
  REQUIRE(set.events.size() == 2);
  CHECK(set.events[0].tracepoint == "sched:sched_switch");
  CHECK(set.events[1].name == "sw");
  CHECK(set.events[1].tracepoint == "sched:sched_switch");
  auto tps = Tracepoints::from_tracefs(m, set);
  CHECK(tps.size() == 1);
  REQUIRE(tps.find(set.events[0].attr));
  CHECK(tps.find(set.events[0].attr)->full_name() == "sched:sched_switch");
  auto raw = switch_payload();
  CHECK(tps.find(switch_id)->print(raw).starts_with("prev_comm=bash prev_pid=42"));
  // A tracepoint without its format file is named in the error.
  auto exec = resolve("sched:sched_process_exec", m);
  CHECK_THROWS_WITH_AS((void)Tracepoints::from_tracefs(m, exec),
                       doctest::Contains("no format file for tracepoint 'sched:sched_process_exec'"), Error);
}

TEST_CASE("a perf.data file's tracepoints: perf 6.12's sched_process_exec fixture") {
  auto file = PerfData::open(test::fixture("perf_data/tracepoint.data"));
  REQUIRE(file.tracepoints());
  const Tracepoint* tp = nullptr;
  std::size_t index = 0;
  for (std::size_t i = 0; i < file.events().size(); ++i)
    if (file.events()[i].attr.type == 2) tp = file.tracepoints()->find(file.events()[index = i].attr);
  REQUIRE(tp);
  CHECK(tp->full_name() == "sched:sched_process_exec");
  CHECK(file.event_name(index) == "sched:sched_process_exec");
  Record r;
  std::size_t samples = 0;
  while (file.next(r))
    if (auto* s = r.get<Sample>(); s && r.attr == index) {
      ++samples;
      auto fields = tp->decode(s->raw, false, r.offset);
      CHECK(value_of<std::string>(fields, "filename") == "/usr/bin/sh");
      CHECK(value_of<std::int64_t>(fields, "pid") == s->pid);
      CHECK(tp->print(s->raw, static_cast<int>(s->cpu)) ==
            fmt::format("filename=/usr/bin/sh pid={} old_pid={}", s->pid, s->pid));
    }
  CHECK(samples >= 1);
}

TEST_CASE("a tracepoint attr the file does not name is named from the tracing data, else as perf does") {
  CHECK(attr_name(Attr{.type = 2, .config = 372}) == "unknown tracepoint");
  CHECK(attr_name(Attr{.type = 2, .config = 372, .exclude_kernel = 1}) == "unknown tracepoint");
}

TEST_CASE("pipe mode: a tracepoint attr is named sys:name once the tracing data has passed") {
  Blob s;
  s.raw("PERFILE2");
  s.u64(16);
  auto header = [&](std::uint32_t type, std::size_t size) {
    s.u32(type);
    s.number(0, 2);
    s.number(size, 2);
  };
  Attr attr{.type = 2, .config = switch_id, .sample_type = sample_raw};
  attr.sample_period = 1;
  auto attr_bytes = attr_to_bytes(attr);
  header(64, 8 + attr_bytes.size() + 8);
  s.b.insert(s.b.end(), attr_bytes.begin(), attr_bytes.end());
  s.u64(1000);  // its id
  auto tracing = tracing_data();
  tracing.resize((tracing.size() + 7) / 8 * 8);  // perf pads it to 8 bytes
  header(66, 16);
  s.u32(tracing.size());
  s.u32(0);
  s.b.insert(s.b.end(), tracing.begin(), tracing.end());
  auto raw = switch_payload();
  header(9, 8 + 4 + raw.size());
  s.u32(raw.size());
  s.b.insert(s.b.end(), raw.begin(), raw.end());
  auto file = PerfData::from_bytes(s.b);
  CHECK(file.tracepoints() == nullptr);
  Record r;
  REQUIRE(file.next(r));
  CHECK(r.kind() == Type::header_attr);
  CHECK(file.event_name(0) == "unknown tracepoint");
  REQUIRE(file.next(r));
  CHECK(r.kind() == Type::header_tracing_data);
  CHECK(file.event_name(0) == "sched:sched_switch");
  REQUIRE(file.tracepoints());
  REQUIRE(file.next(r));
  const auto* sample = r.get<Sample>();
  REQUIRE(sample);
  CHECK(value_of<std::string>(file.tracepoints()->find(attr)->decode(sample->raw), "prev_comm") == "bash");
  CHECK(!file.next(r));
  // Tracing data without its magic: the event keeps perf's name, the error names the file's offset.
  std::size_t at = 16 + (8 + attr_bytes.size() + 8) + 16;
  auto bad = s.b;
  bad[at] = std::byte{'X'};
  auto broken = PerfData::from_bytes(bad);
  while (broken.next(r)) {
  }
  CHECK(broken.event_name(0) == "unknown tracepoint");
  try {
    (void)broken.tracepoints();
    FAIL("no error");
  } catch (const DecodeError& e) {
    CHECK(e.offset() == at);
    CHECK(e.message() == fmt::format("perf.data: tracing data at offset {:#x}: no tracing data magic "
                                     "(\\027\\010\\104tracing)",
                                     at));
  }
}

TEST_CASE("the live tracefs: sched:sched_switch's format, as a Sampler of it needs (root)") {
  if (::geteuid() != 0) return;
  spec::Machine m("/sys", test::no_libpfm4());
  if (m.tracefs_events().empty() || !m.tracepoint_id("sched", "sched_switch")) return;
  auto set = resolve("sched:sched_switch", m);
  auto tps = Tracepoints::from_tracefs(m, set);
  const Tracepoint* tp = tps.find(set.events[0].attr);
  REQUIRE(tp);
  CHECK(tp->full_name() == "sched:sched_switch");
  auto names = tp->field_names();
  CHECK(std::find(names.begin(), names.end(), "prev_comm") != names.end());
  CHECK(std::find(names.begin(), names.end(), "next_pid") != names.end());
}

TEST_CASE("write_tracing_data writes what read_tracing_data reads, byte for byte, in either byte order") {
  for (bool big : {false, true}) {
    for (std::string_view version : {"0.6", "0.5"}) {
      auto bytes = tracing_data(big, version);
      CHECK(write_tracing_data(read_tracing_data(bytes)) == bytes);
    }
  }
  // perf 6.12's own tracing data (tests/fixtures/perf_data/tracepoint.data), written again the same
  auto file = PerfData::open(test::fixture("perf_data/tracepoint.data"));
  auto theirs = file.tracing_data();
  REQUIRE(!theirs.empty());
  auto ours = write_tracing_data(read_tracing_data(theirs));
  CHECK(std::vector<std::byte>(theirs.begin(), theirs.end()) == ours);
  TracingFiles bad = read_tracing_data(tracing_data());
  bad.version = "";
  CHECK_THROWS_WITH_AS((void)write_tracing_data(bad), "tracing data: a version is a string without NUL",
                       Error);
}

TEST_CASE("tracing_data_of: the tracing data perf record writes, from a tracefs tree") {
  test::TempTree tree;
  tree.write("kernel/tracing/events/header_page", read_fixture("header_page"));
  tree.write("kernel/tracing/events/header_event", read_fixture("header_event"));
  tree.write("kernel/tracing/events/sched/sched_switch/id", "372\n");
  tree.write("kernel/tracing/events/sched/sched_switch/format", read_fixture("sched_switch.format"));
  tree.write("kernel/tracing/events/sched/sched_process_exec/id", "365\n");
  tree.write("kernel/tracing/events/sched/sched_process_exec/format",
             read_fixture("sched_process_exec.format"));
  tree.write("kernel/tracing/events/raw_syscalls/sys_enter/id", "21\n");
  tree.write("kernel/tracing/events/raw_syscalls/sys_enter/format", read_fixture("sys_enter.format"));
  tree.write("kernel/tracing/printk_formats", "0xffffffff82a0c1e8 : \"rcu_preempt\"\n");
  tree.write("kernel/tracing/saved_cmdlines", "1 systemd\n42 bash\n");
  spec::Machine m(tree.root(), test::no_libpfm4());
  // the set's tracepoints once each, grouped by system in the set's order; other events left out
  auto set = resolve(
      "sched:sched_switch,task-clock,raw_syscalls:sys_enter,sched:sched_process_exec,"
      "sched:sched_switch:u",
      m);
  auto bytes = tracing_data_of(m, set);
  TracingFiles t = read_tracing_data(bytes);
  CHECK(t.version == "0.6");
  CHECK(t.long_size == sizeof(long));
  CHECK(t.page_size == static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE)));
  auto text = [](std::span<const std::byte> b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  CHECK(text(t.header_page) == read_fixture("header_page"));
  CHECK(text(t.header_event) == read_fixture("header_event"));
  REQUIRE(t.systems.size() == 2);
  CHECK(t.systems[0].name == "sched");
  REQUIRE(t.systems[0].formats.size() == 2);
  CHECK(text(t.systems[0].formats[0]) == read_fixture("sched_switch.format"));
  CHECK(text(t.systems[0].formats[1]) == read_fixture("sched_process_exec.format"));
  CHECK(t.systems[1].name == "raw_syscalls");
  CHECK(t.kallsyms.empty());
  CHECK(text(t.printk_formats) == "0xffffffff82a0c1e8 : \"rcu_preempt\"\n");
  CHECK(text(t.saved_cmdlines) == "1 systemd\n42 bash\n");
  // read back as perf script reads it: the payload prints
  auto tps = Tracepoints::from_tracing_data(bytes);
  REQUIRE(tps.find(switch_id));
  CHECK(tps.find(switch_id)->print(switch_payload()).starts_with("prev_comm=bash prev_pid=42"));
  // without header_page the tracing data cannot be made: the error says which file
  tree.write("kernel/tracing/events/header_page", "");
  std::filesystem::remove(tree.root() + "/kernel/tracing/events/header_page");
  spec::Machine again(tree.root(), test::no_libpfm4());
  CHECK_THROWS_WITH_AS((void)tracing_data_of(again, resolve("sched:sched_switch", again)),
                       doctest::Contains("no header_page file beside"), Error);
}

TEST_CASE("tracing_data_of the live tracefs reads back as perf's (root)") {
  if (::geteuid() != 0) return;
  spec::Machine m("/sys", test::no_libpfm4());
  REQUIRE(!m.tracefs_events().empty());
  auto set = resolve("sched:sched_switch,sched:sched_process_exec", m);
  auto tps = Tracepoints::from_tracing_data(tracing_data_of(m, set));
  CHECK(tps.size() == 2);
  REQUIRE(tps.find(set.events[0].attr));
  CHECK(tps.find(set.events[0].attr)->full_name() == "sched:sched_switch");
}
