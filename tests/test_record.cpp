// SPDX-License-Identifier: MIT
// Record decoding from crafted bytes: every sample_type bit, every record type, the sample_id
// trailer, attrs told apart by id, and every truncation of a record.
#include <doctest/doctest.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <string>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>
#include <vector>

#include <fmt/format.h>

#include "perfspec/perf_data.hpp"
#include "perfspec/record.hpp"
#include "perfspec/spec.hpp"
#include "support.hpp"

using namespace perfspec;
using namespace perfspec::record;

// GCC 12 reports writes into the byte vectors below as overflowing a region of size 0 once they are
// inlined into long test functions (a false positive of its value-range tracking: GCC PR 109071).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

namespace {

// Bytes of a record as the kernel writes them.
struct Bytes {
  std::vector<std::byte> b;
  Bytes& u64(std::uint64_t v) { return raw(&v, 8); }
  Bytes& u32(std::uint32_t v) { return raw(&v, 4); }
  Bytes& u16(std::uint16_t v) { return raw(&v, 2); }
  Bytes& u8(std::uint8_t v) { return raw(&v, 1); }
  Bytes& raw(const void* p, std::size_t n) {
    std::size_t at = b.size();
    b.resize(at + n);
    if (n) std::memcpy(b.data() + at, p, n);
    return *this;
  }
  // a NUL-terminated string padded to 8 bytes
  Bytes& str(std::string_view s) {
    raw(s.data(), s.size());
    do b.push_back(std::byte{0});
    while (b.size() % 8 != 0);
    return *this;
  }
  Bytes& pad8() {
    while (b.size() % 8 != 0) b.push_back(std::byte{0});
    return *this;
  }
};

// A record: header then body (the size filled in).
std::vector<std::byte> rec(std::uint32_t type, std::uint16_t misc, const Bytes& body) {
  Bytes r;
  r.u32(type).u16(misc).u16(static_cast<std::uint16_t>(8 + body.b.size()));
  r.b.insert(r.b.end(), body.b.begin(), body.b.end());
  return r.b;
}

// Keeps the bytes a record is decoded from alive as long as the test runs (a Record views them).
struct Kept {
  std::deque<std::vector<std::byte>> store;
  Record operator()(const Formats& f, std::vector<std::byte> b, std::uint64_t offset = 0) {
    store.push_back(std::move(b));
    return f.decode(store.back(), offset);
  }
};

// A sample of `a` (IP, TID, TIME and PERIOD as its sample_type has them).
std::vector<std::byte> kept_sample(const Attr& a, std::uint64_t ip, std::uint32_t tid, std::uint64_t period) {
  Bytes b;
  if (a.sample_type & sample_ip) b.u64(ip);
  if (a.sample_type & sample_tid) b.u32(tid).u32(tid);
  if (a.sample_type & sample_time) b.u64(100);
  if (a.sample_type & sample_period) b.u64(period);
  return rec(9, misc_user, b);
}

Attr attr_with(std::uint64_t sample_type, bool id_all = true) {
  Attr a;
  a.sample_type = sample_type;
  a.sample_id_all = id_all ? 1 : 0;
  return a;
}

}  // namespace

TEST_CASE("record: type names are perf's") {
  Kept kept;
  CHECK(type_name(1) == "MMAP");
  CHECK(type_name(9) == "SAMPLE");
  CHECK(type_name(10) == "MMAP2");
  CHECK(type_name(14) == "SWITCH");
  CHECK(type_name(21) == "AUX_OUTPUT_HW_ID");
  CHECK(type_name(64) == "ATTR");
  CHECK(type_name(68) == "FINISHED_ROUND");
  CHECK(type_name(82) == "FINISHED_INIT");
  CHECK(type_name(0).empty());
  CHECK(type_name(22).empty());
  CHECK(type_name(83).empty());
  CHECK(cpumode_letter(misc_user) == 'u');
  CHECK(cpumode_letter(misc_kernel | misc_exact_ip) == 'k');
  CHECK(cpumode_letter(misc_hypervisor) == 'H');
  CHECK(cpumode_letter(misc_guest_kernel) == 'G');
  CHECK(cpumode_letter(misc_guest_user) == 'g');
  CHECK(cpumode_letter(0) == '?');
}

TEST_CASE("record: every sample_type bit, in the uapi order") {
  Kept kept;
  Attr a = attr_with(sample_known & ~sample_weight);  // WEIGHT and WEIGHT_STRUCT are one u64: take STRUCT
  a.read_format = 1 | 2 | 4 | 8 | 16;                 // TOTAL_TIME_ENABLED|RUNNING|ID|GROUP|LOST
  a.branch_sample_type = (1U << 17) | (1U << 19);     // HW_INDEX, COUNTERS
  a.sample_regs_user = 0b1011;                        // 3 registers
  a.sample_regs_intr = 0b110;                         // 2 registers
  Bytes body;
  body.u64(0x1d);                                                     // IDENTIFIER
  body.u64(0x401000);                                                 // IP
  body.u32(100).u32(101);                                             // TID
  body.u64(123456789);                                                // TIME
  body.u64(0xdead0000);                                               // ADDR
  body.u64(0x1d);                                                     // ID
  body.u64(77);                                                       // STREAM_ID
  body.u32(3).u32(0);                                                 // CPU
  body.u64(1000);                                                     // PERIOD
  body.u64(2).u64(500).u64(400);                                      // READ: nr, enabled, running
  body.u64(11).u64(0x1d).u64(0);                                      //   leader: value, id, lost
  body.u64(22).u64(0x1e).u64(5);                                      //   member
  body.u64(3).u64(-128ULL).u64(0xffffffff81000000).u64(0x401000);     // CALLCHAIN
  body.u32(12).u64(0xaabbccdd).u32(0x11223344);                       // RAW: 12 bytes (4+12 = 16)
  body.u64(1).u64(7);                                                 // BRANCH_STACK nr, hw_idx
  body.u64(0x10).u64(0x20).u64(0x3).u64(9);                           //   entry, counters
  body.u64(2).u64(10).u64(11).u64(13);                                // REGS_USER abi 64, 3 values
  body.u64(16).u64(0x1111).u64(0x2222).u64(8);                        // STACK_USER size 16, data, dyn 8
  body.u64((std::uint64_t{3} << 48) | (std::uint64_t{2} << 32) | 1);  // WEIGHT_STRUCT
  body.u64(0x42);                                                     // DATA_SRC
  body.u64(0x43);                                                     // TRANSACTION
  body.u64(2).u64(21).u64(22);                                        // REGS_INTR
  body.u64(0x7000);                                                   // PHYS_ADDR
  body.u64(99);                                                       // CGROUP
  body.u64(4096);                                                     // DATA_PAGE_SIZE
  body.u64(2097152);                                                  // CODE_PAGE_SIZE
  body.u64(8).u64(0x5555);                                            // AUX
  auto bytes = rec(9, misc_user | misc_exact_ip, body);

  Formats f;
  f.add(a, std::vector<std::uint64_t>{0x1d});
  Record r = f.decode(bytes, 0x100);
  REQUIRE(r.kind() == Type::sample);
  CHECK(r.attr == 0);
  CHECK(r.offset == 0x100);
  CHECK(r.size == bytes.size());
  const Sample& s = *r.get<Sample>();
  CHECK(s.identifier == 0x1d);
  CHECK(s.ip == 0x401000);
  CHECK(s.pid == 100);
  CHECK(s.tid == 101);
  CHECK(s.time == 123456789);
  CHECK(s.addr == 0xdead0000);
  CHECK(s.id == 0x1d);
  CHECK(s.stream_id == 77);
  CHECK(s.cpu == 3);
  CHECK(s.period == 1000);
  REQUIRE(s.read.size() == 2);
  CHECK(s.read.time_enabled == 500);
  CHECK(s.read.time_running == 400);
  CHECK(s.read[0].value == 11);
  CHECK(s.read[0].id == 0x1d);
  CHECK(s.read[1].value == 22);
  CHECK(s.read[1].id == 0x1e);
  CHECK(s.read[1].lost == 5);
  REQUIRE(s.callchain.size() == 3);
  CHECK(s.callchain[0] == context_kernel);
  CHECK(s.callchain[1] == 0xffffffff81000000);
  CHECK(s.callchain[2] == 0x401000);
  REQUIRE(s.raw.size() == 12);
  std::uint32_t last;
  std::memcpy(&last, s.raw.data() + 8, 4);
  CHECK(last == 0x11223344);
  REQUIRE(s.branches.size() == 1);
  CHECK(s.branches.hw_idx == 7);
  CHECK(s.branches[0].from == 0x10);
  CHECK(s.branches[0].to == 0x20);
  CHECK(s.branches[0].flags == 3);
  REQUIRE(s.branches.counters.size() == 1);
  CHECK(s.branches.counters[0] == 9);
  CHECK(s.regs_user.abi == 2);
  REQUIRE(s.regs_user.values.size() == 3);
  CHECK(s.regs_user.get(0) == 10);
  CHECK(s.regs_user.get(1) == 11);
  CHECK(s.regs_user.get(2) == std::nullopt);
  CHECK(s.regs_user.get(3) == 13);
  CHECK(s.stack_user.data.size() == 16);
  CHECK(s.stack_user.dyn_size == 8);
  CHECK(s.weight.var1_dw() == 1);
  CHECK(s.weight.var2_w() == 2);
  CHECK(s.weight.var3_w() == 3);
  CHECK(s.data_src == 0x42);
  CHECK(s.transaction == 0x43);
  CHECK(s.regs_intr.get(1) == 21);
  CHECK(s.regs_intr.get(2) == 22);
  CHECK(s.phys_addr == 0x7000);
  CHECK(s.cgroup == 99);
  CHECK(s.data_page_size == 4096);
  CHECK(s.code_page_size == 2097152);
  CHECK(s.aux.size() == 8);
  // the sample's id fields are also the record's sample_id
  CHECK(r.sample_id.pid == 100);
  CHECK(r.sample_id.time == 123456789);
  CHECK(r.sample_id.id == 0x1d);
  CHECK(r.sample_id.cpu == 3);

  SUBCASE("every shorter size is an error naming the record, never a read past it") {
    for (std::size_t n = 8; n < bytes.size(); n += 8) {
      auto cut = bytes;
      cut.resize(n);
      std::uint16_t size = static_cast<std::uint16_t>(n);
      std::memcpy(cut.data() + 6, &size, 2);
      CHECK_THROWS_AS(f.decode(cut, 0x100), DecodeError);
    }
  }
  SUBCASE("a header size past the bytes given") {
    auto cut = bytes;
    cut.resize(bytes.size() - 8);
    try {
      f.decode(cut, 0x200);
      FAIL("no error");
    } catch (const DecodeError& e) {
      CHECK(e.offset() == 0x200);
      CHECK(e.message() ==
            fmt::format("SAMPLE record at offset 0x200: header size {} runs past the {} bytes there",
                        bytes.size(), cut.size()));
    }
  }
}

TEST_CASE("record: each sample field alone") {
  Kept kept;
  struct One {
    std::uint64_t bit;
    std::vector<std::uint64_t> words;
  };
  const One ones[] = {{sample_ip, {0x1234}},
                      {sample_tid, {(std::uint64_t{8} << 32) | 7}},
                      {sample_time, {55}},
                      {sample_addr, {0x99}},
                      {sample_id, {3}},
                      {sample_stream_id, {4}},
                      {sample_cpu, {1}},
                      {sample_period, {10}},
                      {sample_weight, {12}},
                      {sample_data_src, {13}},
                      {sample_transaction, {14}},
                      {sample_phys_addr, {15}},
                      {sample_cgroup, {16}},
                      {sample_data_page_size, {17}},
                      {sample_code_page_size, {18}},
                      {sample_identifier, {19}}};
  for (const auto& o : ones) {
    CAPTURE(o.bit);
    Bytes body;
    for (auto w : o.words) body.u64(w);
    Formats f;
    f.add(attr_with(o.bit));
    auto bytes = rec(9, misc_user, body);
    Record decoded = f.decode(bytes);
    const Sample& s = *decoded.get<Sample>();
    std::uint64_t got = 0;
    switch (o.bit) {
      case sample_ip: got = s.ip; break;
      case sample_tid: got = (std::uint64_t{s.tid} << 32) | s.pid; break;
      case sample_time: got = s.time; break;
      case sample_addr: got = s.addr; break;
      case sample_id: got = s.id; break;
      case sample_stream_id: got = s.stream_id; break;
      case sample_cpu: got = s.cpu; break;
      case sample_period: got = s.period; break;
      case sample_weight: got = s.weight.full; break;
      case sample_data_src: got = s.data_src; break;
      case sample_transaction: got = s.transaction; break;
      case sample_phys_addr: got = s.phys_addr; break;
      case sample_cgroup: got = s.cgroup; break;
      case sample_data_page_size: got = s.data_page_size; break;
      case sample_code_page_size: got = s.code_page_size; break;
      case sample_identifier: got = s.identifier; break;
    }
    CHECK(got == o.words[0]);
    // one byte short of the field: an error
    auto cut = rec(9, misc_user, Bytes{});
    CHECK_THROWS_AS(f.decode(cut), DecodeError);
  }
}

TEST_CASE("record: READ without GROUP, registers with abi NONE, an empty user stack") {
  Kept kept;
  Attr a = attr_with(sample_read | sample_regs_user | sample_stack_user);
  a.read_format = 1 | 4;  // TOTAL_TIME_ENABLED | ID
  a.sample_regs_user = 0xff;
  Bytes body;
  body.u64(42).u64(1000).u64(9);  // value, enabled, id
  body.u64(0);                    // REGS_USER abi NONE: no values follow
  body.u64(0);                    // STACK_USER size 0: no data, no dyn_size
  Formats f;
  f.add(a);
  auto bytes = rec(9, misc_user, body);
  Record decoded = f.decode(bytes);
  const Sample& s = *decoded.get<Sample>();
  REQUIRE(s.read.size() == 1);
  CHECK(s.read[0].value == 42);
  CHECK(s.read[0].id == 9);
  CHECK(s.read.time_enabled == 1000);
  CHECK(s.regs_user.abi == 0);
  CHECK(s.regs_user.values.empty());
  CHECK(s.regs_user.get(0) == std::nullopt);
  CHECK(s.stack_user.data.empty());
  CHECK(s.stack_user.dyn_size == 0);
}

TEST_CASE("record: counts that lie are errors, not reads past the record") {
  Kept kept;
  Formats f;
  f.add(attr_with(sample_callchain));
  auto huge = rec(9, misc_user, Bytes{}.u64(0x2000000000000000ULL).u64(1));
  try {
    f.decode(huge, 0x40);
    FAIL("no error");
  } catch (const DecodeError& e) {
    CHECK(e.offset() == 0x40);
    CHECK(e.message() ==
          "SAMPLE record at offset 0x40: CALLCHAIN ips does not fit in the record (8 bytes left)");
  }
  auto more = rec(9, misc_user, Bytes{}.u64(2).u64(1));
  CHECK_THROWS_WITH_AS(f.decode(more),
                       "SAMPLE record at offset 0x0: CALLCHAIN ips needs 16 bytes, 8 are left", DecodeError);

  Formats raw;
  raw.add(attr_with(sample_raw));
  auto r = rec(9, misc_user, Bytes{}.u32(0xffffffff).u32(0));
  CHECK_THROWS_WITH_AS(
      raw.decode(r), "SAMPLE record at offset 0x0: RAW data needs 4294967295 bytes, 4 are left", DecodeError);

  Formats stack;
  stack.add(attr_with(sample_stack_user));
  auto st = rec(9, misc_user, Bytes{}.u64(8).u64(0).u64(9));
  CHECK_THROWS_WITH_AS(stack.decode(st),
                       "SAMPLE record at offset 0x0: STACK_USER dyn_size 9 is more than its size 8",
                       DecodeError);

  Formats group;
  Attr g = attr_with(sample_read);
  g.read_format = 8 | 4;
  group.add(g);
  auto gr = rec(9, misc_user, Bytes{}.u64(~0ULL).u64(1).u64(2));
  CHECK_THROWS_AS(group.decode(gr), DecodeError);

  CHECK_THROWS_WITH_AS(f.decode(std::span<const std::byte>(huge).first(7), 16),
                       "record at offset 0x10: 7 bytes, a header needs 8", DecodeError);
  auto zero = huge;
  zero[6] = zero[7] = std::byte{0};
  CHECK_THROWS_WITH_AS(f.decode(zero),
                       "SAMPLE record at offset 0x0: header size 0 is less than the header itself",
                       DecodeError);
}

TEST_CASE("record: kernel records with their sample_id trailer") {
  Kept kept;
  const std::uint64_t st =
      sample_tid | sample_time | sample_id | sample_stream_id | sample_cpu | sample_identifier;
  Formats f;
  f.add(attr_with(st | sample_ip), std::vector<std::uint64_t>{5});
  Bytes trailer;
  trailer.u32(10).u32(11).u64(999).u64(5).u64(6).u32(1).u32(0).u64(5);
  auto with_trailer = [&](std::uint32_t type, std::uint16_t misc, Bytes body) {
    body.b.insert(body.b.end(), trailer.b.begin(), trailer.b.end());
    return kept(f, rec(type, misc, body));
  };
  auto check_id = [](const Record& r) {
    CHECK(r.attr == 0);
    CHECK(r.sample_id.pid == 10);
    CHECK(r.sample_id.tid == 11);
    CHECK(r.sample_id.time == 999);
    CHECK(r.sample_id.id == 5);
    CHECK(r.sample_id.stream_id == 6);
    CHECK(r.sample_id.cpu == 1);
  };

  auto r = with_trailer(1, misc_user, Bytes{}.u32(1).u32(2).u64(0x1000).u64(0x2000).u64(0).str("/bin/true"));
  check_id(r);
  CHECK(r.get<Mmap>()->filename == "/bin/true");
  CHECK(r.get<Mmap>()->len == 0x2000);

  r = with_trailer(10, misc_user,
                   Bytes{}
                       .u32(1)
                       .u32(2)
                       .u64(0x1000)
                       .u64(0x2000)
                       .u64(0x10)
                       .u32(0xfe)
                       .u32(1)
                       .u64(77)
                       .u64(3)
                       .u32(5)
                       .u32(2)
                       .str("/usr/lib/libc.so.6"));
  check_id(r);
  const Mmap2& m2 = *r.get<Mmap2>();
  CHECK(m2.maj == 0xfe);
  CHECK(m2.min == 1);
  CHECK(m2.ino == 77);
  CHECK(m2.ino_generation == 3);
  CHECK(m2.prot == 5);
  CHECK(m2.flags == 2);
  CHECK(m2.filename == "/usr/lib/libc.so.6");

  std::uint8_t id[20] = {0xab, 0xcd};
  r = with_trailer(
      10, misc_user | misc_mmap_build_id,
      Bytes{}.u32(1).u32(2).u64(0x1000).u64(0x2000).u64(0).u8(2).u8(0).u16(0).raw(id, 20).u32(5).u32(2).str(
          "/x"));
  REQUIRE(r.get<Mmap2>()->build_id.size() == 2);
  CHECK(std::to_integer<int>(r.get<Mmap2>()->build_id[1]) == 0xcd);

  r = with_trailer(2, 0, Bytes{}.u64(5).u64(17));
  CHECK(r.get<Lost>()->lost == 17);
  r = with_trailer(3, misc_comm_exec, Bytes{}.u32(3).u32(4).str("sleep"));
  CHECK(r.get<Comm>()->comm == "sleep");
  CHECK(r.get<Comm>()->exec);
  r = with_trailer(4, 0, Bytes{}.u32(3).u32(1).u32(4).u32(2).u64(50));
  CHECK(r.get<Task>()->ppid == 1);
  CHECK(r.get<Task>()->ptid == 2);
  r = with_trailer(7, 0, Bytes{}.u32(3).u32(1).u32(4).u32(2).u64(50));
  CHECK(r.kind() == Type::fork);
  r = with_trailer(5, 0, Bytes{}.u64(1).u64(5).u64(6));
  CHECK(r.get<Throttle>()->time == 1);
  r = with_trailer(6, 0, Bytes{}.u64(2).u64(5).u64(6));
  CHECK(r.get<Throttle>()->time == 2);
  r = with_trailer(11, 0, Bytes{}.u64(0x100).u64(0x200).u64(1));
  CHECK(r.get<Aux>()->aux_size == 0x200);
  r = with_trailer(12, 0, Bytes{}.u32(8).u32(9));
  CHECK(r.get<ItraceStart>()->tid == 9);
  r = with_trailer(13, 0, Bytes{}.u64(33));
  CHECK(r.get<LostSamples>()->lost == 33);
  r = with_trailer(14, misc_switch_out | misc_switch_out_preempt, Bytes{});
  CHECK(r.get<Switch>()->out);
  CHECK(r.get<Switch>()->preempt);
  r = with_trailer(15, 0, Bytes{}.u32(20).u32(21));
  CHECK(!r.get<Switch>()->out);
  CHECK(r.get<Switch>()->next_prev_tid == 21);
  r = with_trailer(16, 0, Bytes{}.u32(1).u32(1).u64(2).u64(3).u64(4).u64(5).u64(6));
  REQUIRE(r.get<Namespaces>()->size() == 2);
  CHECK(r.get<Namespaces>()->words[3] == 6);
  r = with_trailer(17, 0, Bytes{}.u64(0xffff0000).u32(64).u16(1).u16(0).str("bpf_prog_x"));
  CHECK(r.get<Ksymbol>()->name == "bpf_prog_x");
  CHECK(r.get<Ksymbol>()->len == 64);
  std::uint8_t tag[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  r = with_trailer(18, 0, Bytes{}.u16(1).u16(0).u32(42).raw(tag, 8));
  CHECK(r.get<BpfEvent>()->id == 42);
  CHECK(r.get<BpfEvent>()->tag[7] == 8);
  r = with_trailer(19, 0, Bytes{}.u64(7).str("/sys/fs/cgroup/a"));
  CHECK(r.get<Cgroup>()->path == "/sys/fs/cgroup/a");
  std::uint8_t poke[5] = {0x90, 0x90, 0xe8, 0, 0};
  r = with_trailer(20, 0, Bytes{}.u64(0xffffffff81000000).u16(2).u16(3).raw(poke, 5).pad8());
  CHECK(r.get<TextPoke>()->old_bytes.size() == 2);
  CHECK(r.get<TextPoke>()->new_bytes.size() == 3);
  r = with_trailer(21, 0, Bytes{}.u64(4));
  CHECK(r.get<AuxOutputHwId>()->hw_id == 4);
  r = with_trailer(8, 0, Bytes{}.u32(1).u32(2).u64(123));
  CHECK(r.get<Read>()->values[0].value == 123);

  // a string without its NUL, a trailer longer than the record
  CHECK_THROWS_WITH_AS(with_trailer(3, 0, Bytes{}.u32(3).u32(4).raw("sleepers", 8)),
                       "COMM record at offset 0x0: comm is not terminated within its 8 bytes", DecodeError);
  CHECK_THROWS_WITH_AS(kept(f, rec(2, 0, Bytes{}.u64(1))),
                       "LOST record at offset 0x0: its sample_id needs 48 bytes, the body has 8",
                       DecodeError);
  // an unknown kernel type keeps its body
  r = with_trailer(30, 0, Bytes{}.u64(1));
  CHECK(r.get<Opaque>()->body.size() == 8);
}

TEST_CASE("record: attrs told apart by id") {
  Kept kept;
  SUBCASE("SAMPLE_IDENTIFIER: first in a sample, last in a trailer") {
    Formats f;
    f.add(attr_with(sample_identifier | sample_ip | sample_tid), std::vector<std::uint64_t>{100, 101});
    f.add(attr_with(sample_identifier | sample_ip | sample_tid | sample_period),
          std::vector<std::uint64_t>{200});
    auto a = kept(f, rec(9, misc_user, Bytes{}.u64(200).u64(0x10).u32(1).u32(1).u64(7)));
    CHECK(a.attr == 1);
    CHECK(a.get<Sample>()->period == 7);
    auto b = kept(f, rec(9, misc_user, Bytes{}.u64(101).u64(0x10).u32(1).u32(1)));
    CHECK(b.attr == 0);
    auto c = kept(f, rec(3, 0, Bytes{}.u32(1).u32(1).str("x").u32(1).u32(1).u64(200)));
    CHECK(c.attr == 1);
    // id 0: perf's synthesized records, the first attr's
    auto d = kept(f, rec(3, 0, Bytes{}.u32(1).u32(1).str("x").u32(0).u32(0).u64(0)));
    CHECK(d.attr == 0);
    // an id no attr has: kept whole, marked as belonging to none
    auto e = kept(f, rec(9, misc_user, Bytes{}.u64(999).u64(0x10).u32(1).u32(1)));
    CHECK(e.attr == Record::npos);
    CHECK(e.get<Opaque>() != nullptr);
  }
  SUBCASE("SAMPLE_ID at one position") {
    Formats f;
    f.add(attr_with(sample_ip | sample_tid | sample_id | sample_cpu), std::vector<std::uint64_t>{1});
    f.add(attr_with(sample_ip | sample_tid | sample_id | sample_cpu | sample_period),
          std::vector<std::uint64_t>{2});
    auto a = kept(f, rec(9, misc_user, Bytes{}.u64(0x10).u32(1).u32(1).u64(2).u32(0).u32(0).u64(55)));
    CHECK(a.attr == 1);
    CHECK(a.get<Sample>()->period == 55);
    // the trailer: TID, ID, CPU: the id is 2 u64 from its end
    auto b = kept(f, rec(2, 0, Bytes{}.u64(0).u64(3).u32(1).u32(1).u64(1).u32(0).u32(0)));
    CHECK(b.attr == 0);
    CHECK(b.get<Lost>()->lost == 3);
  }
  SUBCASE("attrs that cannot share a stream") {
    Formats f;
    f.add(attr_with(sample_ip | sample_id));
    CHECK_THROWS_WITH_AS(
        f.add(attr_with(sample_ip | sample_tid | sample_id)),
        "the attrs of one stream cannot be told apart: each needs SAMPLE_IDENTIFIER, or SAMPLE_ID "
        "at the same position",
        Error);
    CHECK_THROWS_WITH_AS(f.add(attr_with(sample_ip | sample_id, false)),
                         "the attrs of one stream disagree on sample_id_all", Error);
    Formats g;
    CHECK_THROWS_WITH_AS(g.add(attr_with(std::uint64_t{1} << 30)),
                         "sample_type 0x40000000 has bits this decoder does not know (0x40000000)", Error);
  }
  SUBCASE("no sample_id_all: a non-sample record is the first attr's, with no trailer") {
    Formats f;
    f.add(attr_with(sample_identifier | sample_tid, false), std::vector<std::uint64_t>{1});
    f.add(attr_with(sample_identifier | sample_tid, false), std::vector<std::uint64_t>{2});
    auto r = kept(f, rec(3, 0, Bytes{}.u32(1).u32(2).str("abc")));
    CHECK(r.attr == 0);
    CHECK(r.sample_id.fields == 0);
    CHECK(r.get<Comm>()->comm == "abc");
  }
}

TEST_CASE("record: perf's own records") {
  Kept kept;
  Formats f;  // no attr needed: perf's records carry no trailer
  Attr inner;
  inner.type = 1;
  inner.config = 2;
  inner.sample_type = sample_ip | sample_tid;
  inner.disabled = 1;
  inner.sample_id_all = 1;
  auto ab = attr_to_bytes(inner);
  Bytes body;
  body.raw(ab.data(), ab.size()).u64(70).u64(71);
  auto r = kept(f, rec(64, 0, body));
  const HeaderAttr& h = *r.get<HeaderAttr>();
  CHECK(h.attr.config == 2);
  CHECK(h.attr.disabled == 1);
  CHECK(h.attr.sample_id_all == 1);
  CHECK(h.attr.sample_type == (sample_ip | sample_tid));
  REQUIRE(h.ids.size() == 2);
  CHECK(h.ids[1] == 71);

  r = kept(f, rec(69, 0, Bytes{}.u64(1).u64(5).u64(0).u64(1).u64(static_cast<std::uint64_t>(-1))));
  REQUIRE(r.get<IdIndex>()->size() == 1);
  CHECK((*r.get<IdIndex>())[0].cpu == 1);
  r = kept(f, rec(79, 0, Bytes{}.u64(10).u64(20).u64(30).u64(40).u64(50).u8(1).u8(0).u16(0).u32(0)));
  CHECK(r.get<TimeConv>()->time_mult == 20);
  CHECK(r.get<TimeConv>()->time_cycles == 40);
  CHECK(r.get<TimeConv>()->cap_user_time_zero);
  r = kept(f, rec(73, 0, Bytes{}.u64(1).u64(42).raw("worker\0\0\0\0\0\0\0\0\0\0", 16)));
  CHECK((*r.get<ThreadMap>())[0].comm == "worker");
  r = kept(f, rec(68, 0, Bytes{}));
  CHECK(r.get<Opaque>()->body.empty());
  r = kept(f, rec(80, 0, Bytes{}.u64(3).str("host")));
  CHECK(r.get<HeaderFeature>()->feature == 3);
  r = kept(f, rec(66, 0, Bytes{}.u32(4096).u32(0)));
  CHECK(r.get<TracingData>()->size == 4096);
  CHECK_THROWS_WITH_AS(kept(f, rec(73, 0, Bytes{}.u64(2).u64(42))),
                       "THREAD_MAP record at offset 0x0: 2 thread map entries do not fit in the record",
                       DecodeError);
  // a kernel record needs an attr
  CHECK_THROWS_WITH_AS(kept(f, rec(3, 0, Bytes{}.u64(0))),
                       "record at offset 0x0: no attr describes the stream", DecodeError);
}

TEST_CASE("attr bytes: the uapi layout both ways") {
  Kept kept;
  Attr a;
  a.type = 5;
  a.config = 0x11;
  a.sample_period = 1;
  a.sample_type = 0x107;
  a.read_format = 0xf;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.precise_ip = 2;
  a.sample_id_all = 1;
  a.sigtrap = 1;
  a.wakeup_events = 3;
  a.bp_type = 2;
  a.config1 = 0x1000;
  a.config2 = 8;
  a.branch_sample_type = 0x20;
  a.sample_regs_user = 0xff;
  a.sample_stack_user = 8192;
  a.clockid = -1;
  a.sample_regs_intr = 0x3;
  a.aux_watermark = 7;
  a.sample_max_stack = 127;
  a.aux_sample_size = 9;
  a.sig_data = 0xabc;
  a.config3 = 0x33;
  auto b = attr_to_bytes(a);
  Attr back = attr_from_bytes(b);
  a.size = 136;
  CHECK(back == a);
  std::uint64_t flags;
  std::memcpy(&flags, b.data() + 40, 8);
  // disabled bit 0, exclude_kernel bit 5, precise_ip bits 15-16, sample_id_all bit 18, sigtrap bit 37
  CHECK(flags == (1ULL | 1ULL << 5 | 2ULL << 15 | 1ULL << 18 | 1ULL << 37));
  // an older, shorter attr (VER0, 64 bytes): the rest reads as zero
  std::uint32_t ver0 = 64;
  std::memcpy(b.data() + 4, &ver0, 4);
  Attr old = attr_from_bytes(std::span<const std::byte>(b).first(64));
  CHECK(old.size == 64);
  CHECK(old.config1 == 0x1000);
  CHECK(old.config2 == 0);
  CHECK(old.config3 == 0);
}

namespace {

// A COMM record of `attr` (trailer zeroed) for pid/tid `n`.
std::vector<std::byte> comm_record(std::uint32_t n, std::string_view name, std::size_t trailer) {
  Bytes body;
  body.u32(n).u32(n).str(name);
  for (std::size_t i = 0; i < trailer; ++i) body.u8(0);
  return rec(3, 0, body);
}

std::string temp_path(const char* name) {
  return std::string("/tmp/perfspec-test-") + name + "-" + std::to_string(::getpid());
}

}  // namespace

TEST_CASE("perf.data: what PerfDataWriter writes, PerfData reads back") {
  Attr a = attr_with(sample_ip | sample_tid | sample_time | sample_period);
  a.type = 1;
  a.config = 1;
  a.sample_period = 4000;
  a.freq = 1;
  auto path = temp_path("writer");
  {
    auto out = PerfDataWriter::create(path, {{a, {11, 12}, "task-clock"}});
    out.write(comm_record(7, "worker", sample_id_size(a)));
    out.write(kept_sample(a, 0x401000, 7, 1000));
    out.finish_round();
    out.set_string(Feature::hostname, "host-1");
    out.set_cmdline({"perfspec", "record", "--", "true"});
    out.set_nr_cpus(4, 2);
    out.set_total_mem(1234);
    out.finish();
  }
  auto f = PerfData::open(path);
  CHECK(!f.pipe());
  REQUIRE(f.events().size() == 1);
  CHECK(f.events()[0].name == "task-clock");
  CHECK(f.events()[0].ids == std::vector<std::uint64_t>{11, 12});
  CHECK(f.events()[0].attr.sample_period == 4000);
  CHECK(f.events()[0].attr.freq == 1);
  CHECK(f.feature_string(Feature::hostname) == "host-1");
  CHECK(f.cmdline() == std::vector<std::string>{"perfspec", "record", "--", "true"});
  CHECK(f.nr_cpus() == std::pair<std::uint32_t, std::uint32_t>{4, 2});
  CHECK(f.total_mem() == 1234);
  Record r;
  REQUIRE(f.next(r));
  CHECK(r.get<Comm>()->comm == "worker");
  REQUIRE(f.next(r));
  CHECK(r.get<Sample>()->ip == 0x401000);
  CHECK(r.get<Sample>()->period == 1000);
  REQUIRE(f.next(r));
  CHECK(r.kind() == Type::finished_round);
  CHECK(!f.next(r));
  ::unlink(path.c_str());
}

// The sections as perf.data-file-format.txt lays them out: u32 counts, perf_header_strings (u32 length
// of the string padded with NULs to a multiple of 64), u32 and u64 numbers. The machine is the
// two_socket fixture (2 sockets x 4 cores x 2 threads, CPUs round-robin over the sockets).
TEST_CASE("perf.data: CPU and NUMA topology, PMU mappings and groups, as perf record writes them") {
  spec::Machine m(test::fixture("two_socket"), test::no_libpfm4());
  Attr a = attr_with(sample_ip);
  auto path = temp_path("topology");
  {
    auto out = PerfDataWriter::create(path, {{a, {1}, "task-clock"}});
    out.set_nr_cpus(17, 16);  // one CPU more than sysfs describes: its numbers are -1
    out.set_cpu_topology(m.sibling_lists(), m.cpu_topology(), 17);
    out.set_numa_topology(m.numa_nodes());
    out.set_pmu_mappings({{4, "cpu"}, {1, "software"}});
    out.set_group_desc({{"{anon_group}", 0, 2}});
    out.finish();
  }
  auto f = PerfData::open(path);
  struct Reader {
    std::span<const std::byte> b;
    std::size_t at = 0;
    std::uint32_t u32() {
      std::uint32_t v = 0;
      REQUIRE(at + 4 <= b.size());
      std::memcpy(&v, b.data() + at, 4);
      at += 4;
      return v;
    }
    std::uint64_t u64() {
      std::uint64_t v = 0;
      REQUIRE(at + 8 <= b.size());
      std::memcpy(&v, b.data() + at, 8);
      at += 8;
      return v;
    }
    std::string str() {
      const std::uint32_t len = u32();
      CHECK(len % 64 == 0);
      REQUIRE(at + len <= b.size());
      std::string s(reinterpret_cast<const char*>(b.data() + at), len);
      at += len;
      CHECK(s.find('\0') != std::string::npos);
      return s.substr(0, s.find('\0'));
    }
    std::vector<std::string> list() {
      std::vector<std::string> out(u32());
      for (auto& s : out) s = str();
      return out;
    }
  };
  Reader t{f.feature(Feature::cpu_topology)};
  const std::vector<std::string> sockets{"0,2,4,6,8,10,12,14", "1,3,5,7,9,11,13,15"};
  CHECK(t.list() == sockets);
  CHECK(t.list() == std::vector<std::string>{"0,8", "1,9", "2,10", "3,11", "4,12", "5,13", "6,14", "7,15"});
  for (std::uint32_t cpu = 0; cpu < 17; ++cpu) {
    CAPTURE(cpu);
    CHECK(t.u32() == (cpu < 16 ? cpu / 2 % 4 : ~0u));  // core
    CHECK(t.u32() == (cpu < 16 ? cpu % 2 : ~0u));      // socket
  }
  CHECK(t.list() == sockets);  // dies: one per socket
  for (std::uint32_t cpu = 0; cpu < 17; ++cpu) CHECK(t.u32() == (cpu < 16 ? 0u : ~0u));
  CHECK(t.at == t.b.size());

  Reader n{f.feature(Feature::numa_topology)};
  CHECK(n.u32() == 2);
  CHECK(n.u32() == 0);
  CHECK(n.u64() == 65830188);
  CHECK(n.u64() == 61023408);
  CHECK(n.str() == "0,2,4,6,8,10,12,14");
  CHECK(n.u32() == 1);
  CHECK(n.u64() == 66055532);
  CHECK(n.u64() == 63891216);
  CHECK(n.str() == "1,3,5,7,9,11,13,15");
  CHECK(n.at == n.b.size());

  Reader p{f.feature(Feature::pmu_mappings)};
  CHECK(p.u32() == 2);
  CHECK(p.u32() == 4);
  CHECK(p.str() == "cpu");
  CHECK(p.u32() == 1);
  CHECK(p.str() == "software");
  CHECK(p.at == p.b.size());

  Reader g{f.feature(Feature::group_desc)};
  CHECK(g.u32() == 1);
  CHECK(g.str() == "{anon_group}");
  CHECK(g.u32() == 0);
  CHECK(g.u32() == 2);
  CHECK(g.at == g.b.size());
  ::unlink(path.c_str());
}

TEST_CASE("machine: sibling lists and NUMA nodes as sysfs words them; no node folder, no nodes") {
  spec::Machine m(test::fixture("two_socket"), test::no_libpfm4());
  const auto lists = m.sibling_lists();
  CHECK(lists.packages.size() == 2);
  CHECK(lists.dies == lists.packages);
  CHECK(lists.cores.size() == 8);
  const auto nodes = m.numa_nodes();
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[1] == spec::NumaNode{1, 66055532, 63891216, "1,3,5,7,9,11,13,15"});
  spec::Machine bare(test::fixture("intel_spr"), test::no_libpfm4());
  CHECK(bare.numa_nodes().empty());
}

TEST_CASE(
    "perf.data: a writer not finished by its owner is finished by its destructor (a moved-from one does "
    "nothing)") {
  Attr a = attr_with(sample_ip);
  auto path = temp_path("unfinished");
  {
    auto out = PerfDataWriter::create(path, {{a, {1}, "x"}});
    out.write(kept_sample(a, 1, 1, 1));
    auto moved = std::move(out);  // `out`, moved from, has nothing to finish; `moved` finishes the file
  }
  auto f = PerfData::open(path);
  Record r;
  REQUIRE(f.next(r));
  CHECK(r.get<Sample>()->ip == 1);
  ::unlink(path.c_str());
}

TEST_CASE("perf.data: COMPRESSED records (perf record -z), a record cut between two") {
  Attr a = attr_with(sample_ip | sample_tid | sample_time);
  // three records, compressed as one zstd stream flushed twice, cut in the middle of the second
  std::vector<std::byte> plain;
  for (auto& part : {comm_record(5, "first", sample_id_size(a)), kept_sample(a, 0x10, 5, 0),
                     comm_record(6, "third", sample_id_size(a))})
    plain.insert(plain.end(), part.begin(), part.end());
  std::size_t cut = plain.size() / 2 + 3;
  ZSTD_CStream* z = ZSTD_createCStream();
  ZSTD_initCStream(z, 3);
  std::vector<std::vector<std::byte>> frames;
  for (auto [from, to] : {std::pair<std::size_t, std::size_t>{0, cut}, {cut, plain.size()}}) {
    std::vector<std::byte> out(ZSTD_compressBound(to - from) + 64);
    ZSTD_inBuffer in{plain.data() + from, to - from, 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    ZSTD_compressStream(z, &o, &in);
    ZSTD_flushStream(z, &o);
    out.resize(o.pos);
    frames.push_back(out);
  }
  ZSTD_freeCStream(z);
  auto path = temp_path("compressed");
  {
    auto w = PerfDataWriter::create(path, {{a, {}, "e"}});
    for (const auto& fr : frames) {
      // perf's COMPRESSED record: the header, then exactly the compressed bytes (no padding)
      Bytes r;
      r.u32(81).u16(0).u16(static_cast<std::uint16_t>(8 + fr.size())).raw(fr.data(), fr.size());
      w.write(r.b);
    }
    w.finish();
  }
  auto f = PerfData::open(path);
  Record r;
  std::vector<std::string> seen;
  while (f.next(r)) {
    if (auto* c = r.get<Comm>()) seen.push_back(std::string(c->comm));
    if (auto* s = r.get<Sample>()) seen.push_back(fmt::format("sample {:#x}", s->ip));
  }
  CHECK(seen == std::vector<std::string>{"first", "sample 0x10", "third"});
  // decode_at finds a decompressed record again by its offset (past the end of the file)
  f.rewind();
  std::vector<std::uint64_t> offsets;
  while (f.next(r)) offsets.push_back(r.offset);
  REQUIRE(offsets.size() == 3);
  f.decode_at(offsets[1], r);
  CHECK(r.get<Sample>()->ip == 0x10);
  ::unlink(path.c_str());
}

TEST_CASE("perf.data: decode_at refuses an offset that is no record's, however large") {
  // fuzz/regressions/perf_data/decode_at-offset-wraps: offset + 8 wrapped past the end check for an
  // offset near 2^64, and the data section's span was cut at that offset (a read past the file).
  std::ifstream in(std::string(PERFSPEC_SOURCE_DIR) + "/tests/fixtures/perf_data/callchain.data",
                   std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!chars.empty());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  auto file = PerfData::from_bytes(std::move(bytes));
  Record r;
  REQUIRE(file.next(r));
  const std::uint64_t first = r.offset, end = file.data_offset() + file.data_size();
  file.decode_at(first, r);
  CHECK(r.offset == first);
  for (std::uint64_t bad : {std::uint64_t{0}, file.data_offset() - 1, end - 7, end, end + 1,
                            ~std::uint64_t{0} - 4, ~std::uint64_t{0} - 7, ~std::uint64_t{0}})
    CHECK_THROWS_AS(file.decode_at(bad, r), DecodeError);
}

TEST_CASE("record: a Record decoded into again keeps nothing of the sample before") {
  // decode() fills the Sample its Record holds in place: every field must be written, present or not.
  Formats f;
  Attr full = attr_with(sample_identifier | sample_ip | sample_tid | sample_time | sample_addr | sample_cpu |
                        sample_period | sample_callchain | sample_raw | sample_data_src | sample_phys_addr);
  Attr few = attr_with(sample_identifier | sample_time);
  f.add(full, std::vector<std::uint64_t>{1});
  f.add(few, std::vector<std::uint64_t>{2});
  Bytes a;
  a.u64(1).u64(0x401000).u32(7).u32(8).u64(100).u64(0xdead).u32(1).u32(0).u64(5000);
  a.u64(2).u64(0xffffffff81000000).u64(0x401000).u32(4).u32(0xabcdef01).u64(0x42).u64(0x7000);
  Bytes b;
  b.u64(2).u64(200);
  auto first = rec(9, misc_user, a), second = rec(9, misc_user, b);
  Record r;
  f.decode(first, 0, r);
  REQUIRE(r.get<Sample>());
  CHECK(r.get<Sample>()->callchain.size() == 2);
  f.decode(second, 0x40, r);
  REQUIRE(r.get<Sample>());
  const Sample& s = *r.get<Sample>();
  CHECK(r.attr == 1);
  CHECK(s.type == few.sample_type);
  CHECK(s.time == 200);
  CHECK(s.ip == 0);
  CHECK(s.pid == 0);
  CHECK(s.tid == 0);
  CHECK(s.addr == 0);
  CHECK(s.cpu == 0);
  CHECK(s.period == 0);
  CHECK(s.callchain.empty());
  CHECK(s.raw.empty());
  CHECK(s.data_src == 0);
  CHECK(s.phys_addr == 0);
  CHECK(r.sample_id.tid == 0);
  CHECK(r.sample_id.time == 200);
}

TEST_CASE("attr_name: the name perf gives an attr it has no name for") {
  auto name = [](std::uint32_t type, std::uint64_t config, auto&& more) {
    Attr a;
    a.type = type;
    a.config = config;
    a.exclude_guest = 1;  // perf record's default: no modifier for it
    more(a);
    return attr_name(a);
  };
  auto none = [](Attr&) {};
  CHECK(name(0, 0, none) == "cycles");
  CHECK(name(0, 4, none) == "branches");
  CHECK(name(0, 77, none) == "unknown-hardware:77");
  CHECK(name(1, 1, none) == "task-clock");
  CHECK(name(1, 2, none) == "page-faults");
  CHECK(name(3, 0x10000, none) == "L1-dcache-load-misses");
  CHECK(name(4, 0x1a8, none) == "r1a8");
  CHECK(name(5, 0, [](Attr& a) { a.config1 = 0x1000, a.bp_type = 2; }) == "mem:0x1000:w");
  // after a privilege level or a precision the guest excluded is said (H), as perf 6.12's evlist names
  // perf record's cycles:u and cycles:pp (exclude_guest 1) where it falls back: task-clock:uH, :ppH
  CHECK(name(0, 0, [](Attr& a) { a.exclude_kernel = 1, a.exclude_hv = 1; }) == "cycles:uH");
  CHECK(name(0, 0, [](Attr& a) { a.precise_ip = 2; }) == "cycles:ppH");
  CHECK(name(0, 0, [](Attr& a) { a.exclude_kernel = 1, a.exclude_hv = 1, a.exclude_guest = 0; }) ==
        "cycles:u");
  CHECK(name(1, 1, [](Attr& a) { a.precise_ip = 3, a.exclude_guest = 0; }) == "task-clock:ppp");
  CHECK(name(1, 1, [](Attr& a) { a.exclude_guest = 0; }) == "task-clock:HG");
  CHECK(name(1, 1, [](Attr& a) { a.exclude_host = 1; }) == "task-clock");
  CHECK(name(1, 1, [](Attr& a) { a.exclude_host = 1, a.exclude_guest = 0; }) == "task-clock:G");
  CHECK(name(42, 0, none) == "unknown attr type: 42");
}

TEST_CASE("attr_size_needed: the smallest PERF_ATTR_SIZE_VER* that holds the attr's non-zero fields") {
  Attr a;
  a.type = 1;
  a.config = 2;
  a.sample_period = 1;
  a.disabled = a.inherit = a.sample_id_all = 1;
  a.config1 = 7;
  CHECK(attr_size_needed(a) == 64);
  Attr b = a;
  b.config2 = 1;
  CHECK(attr_size_needed(b) == 72);
  b.branch_sample_type = 1;
  CHECK(attr_size_needed(b) == 80);
  for (auto [set, want] : std::initializer_list<std::pair<void (*)(Attr&), std::uint32_t>>{
           {[](Attr& x) { x.sample_regs_user = 1; }, 96},
           {[](Attr& x) { x.sample_stack_user = 8; }, 96},
           {[](Attr& x) { x.clockid = 1; }, 96},
           {[](Attr& x) { x.sample_regs_intr = 1; }, 104},
           {[](Attr& x) { x.aux_watermark = 1; }, 112},
           {[](Attr& x) { x.sample_max_stack = 1; }, 112},
           {[](Attr& x) { x.aux_sample_size = 1; }, 120},
           {[](Attr& x) { x.sig_data = 1; }, 128},
           {[](Attr& x) { x.config3 = 1; }, 136}}) {
    Attr c = a;
    set(c);
    CHECK(attr_size_needed(c) == want);
    // the first `want` bytes hold it all: read back from them alone, it is the same attr
    auto bytes = attr_to_bytes(c, want);
    Attr back = attr_from_bytes(std::span(bytes).first(want));
    CHECK(back.size == want);
    back.size = 0;
    CHECK(back == c);
  }
}

TEST_CASE(
    "perf.data: each attr has the smallest size that holds every attr of the file (perf 6.1 reads it)") {
  auto header_attr_size = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::uint64_t h[3] = {};
    in.read(reinterpret_cast<char*>(h), sizeof h);
    return h[2];
  };
  auto own_size = [](const std::string& path) {  // the first attr's size field
    std::ifstream in(path, std::ios::binary);
    std::uint64_t attrs_at = 0;
    in.seekg(24);
    in.read(reinterpret_cast<char*>(&attrs_at), 8);
    std::uint32_t size = 0;
    in.seekg(static_cast<std::streamoff>(attrs_at + 4));
    in.read(reinterpret_cast<char*>(&size), 4);
    return size;
  };
  Attr a = attr_with(sample_identifier | sample_ip | sample_tid | sample_time);
  a.type = 1;
  a.sample_period = 1;
  Attr regs = a;
  regs.sample_type |= sample_regs_user;
  regs.sample_regs_user = 0xff;
  auto path = temp_path("attr-size");
  for (auto [events, want] : std::initializer_list<std::pair<std::vector<FileEvent>, std::uint64_t>>{
           {{{a, {1}, "a"}}, 64}, {{{a, {1}, "a"}, {regs, {2}, "regs"}}, 96}}) {
    {
      auto out = PerfDataWriter::create(path, events);
      out.finish();
    }
    CHECK(header_attr_size(path) == want + 16);
    CHECK(own_size(path) == want);
    auto f = PerfData::open(path);
    REQUIRE(f.events().size() == events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      Attr got = f.events()[i].attr;
      CHECK(got.size == want);
      got.size = events[i].attr.size;
      CHECK(got == events[i].attr);
      CHECK(f.events()[i].name == events[i].name);  // HEADER_EVENT_DESC, with attrs of the same size
    }
  }
  ::unlink(path.c_str());
}

TEST_CASE("perf.data: pipe mode (perf record -o -): attrs, features, names and tracing data as records") {
  Attr a = attr_with(sample_ip | sample_tid | sample_time);
  a.type = 1;
  a.config = 2;
  a.sample_period = 1;
  auto path = temp_path("pipe");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  std::vector<std::byte> tracing = {std::byte{1}, std::byte{2}, std::byte{3}};
  {
    auto out = PerfDataWriter::create_pipe(fd, {{a, {21, 22}, "page-faults"}}, "a pipe");
    CHECK(out.pipe());
    out.set_string(Feature::hostname, "host-2");
    out.set_tracing_data(tracing);
    out.write(comm_record(7, "worker", sample_id_size(a)));
    out.write(kept_sample(a, 0x401000, 7, 0));
    // after the first record: the tracing data is refused, a feature follows in the stream
    CHECK_THROWS_WITH_AS(out.set_tracing_data(tracing),
                         "'a pipe': the tracing data must be given before the first record", Error);
    out.set_sample_time(5, 6);
    out.finish();
  }
  CHECK(::fcntl(fd, F_GETFD) == 0);  // not closed: the caller's
  ::close(fd);
  auto f = PerfData::open(path);
  CHECK(f.pipe());
  Record r;
  std::vector<std::string> kinds;
  while (f.next(r)) {
    std::string k(type_name(r.type));
    if (auto* h = r.get<HeaderFeature>()) k += fmt::format(" {}", h->feature);
    kinds.push_back(k);
  }
  // ATTR, the features in bit order (hostname 3, event_desc 12), the name, the tracing data, the data,
  // then the feature set late
  CHECK(kinds == std::vector<std::string>{"ATTR", "FEATURE 3", "FEATURE 12", "EVENT_UPDATE", "TRACING_DATA",
                                          "COMM", "SAMPLE", "FEATURE 21"});
  REQUIRE(f.events().size() == 1);
  CHECK(f.events()[0].name == "page-faults");
  CHECK(f.events()[0].ids == std::vector<std::uint64_t>{21, 22});
  // the attr has 136 bytes in a pipe (perf's readers take a whole struct from the record)
  CHECK(f.events()[0].attr.size == 136);
  CHECK(f.events()[0].attr.config == 2);
  CHECK(f.feature_string(Feature::hostname) == "host-2");
  auto td = f.tracing_data();  // padded with zeros to a multiple of 8, as perf sends it
  std::vector<std::byte> padded = tracing;
  padded.resize(8);
  CHECK(std::vector<std::byte>(td.begin(), td.end()) == padded);
  ::unlink(path.c_str());
}

TEST_CASE("perf.data: a recording whose writer died is refused as unfinished, never read as empty") {
  Attr a = attr_with(sample_ip | sample_tid | sample_time);
  auto path = temp_path("died");
  for (bool wrote_records : {false, true}) {
    CAPTURE(wrote_records);
    pid_t child = ::fork();
    if (child == 0) {  // writes, then dies before finish()
      auto out = PerfDataWriter::create(path, {{a, {1}, "x"}});
      if (wrote_records)
        for (int i = 0; i < 40000; ++i) out.write(kept_sample(a, 0x10, 1, 0));  // past the 1 MiB buffer
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK_THROWS_WITH_AS((void)PerfData::open(path),
                         doctest::Contains("the header's data size is 0, as perf record leaves it until the "
                                           "recording ends: the recording was not finished"),
                         DecodeError);
  }
  // finished with no record at all: data size 0 is then the truth, and the file reads (empty)
  { PerfDataWriter::create(path, {{a, {1}, "x"}}).finish(); }
  auto f = PerfData::open(path);
  Record r;
  CHECK(!f.next(r));
  CHECK(f.events().at(0).name == "x");
  ::unlink(path.c_str());
}

TEST_CASE("perf.data: COMPRESSED records that expand past 256 MiB and 200 times their size are refused") {
  // A zstd bomb: 1 MiB of one sample record again and again, from a few bytes, 400 times: 400 MiB
  // from about 20 KB.
  Attr a = attr_with(sample_ip);
  std::vector<std::byte> zeros;
  const auto one = kept_sample(a, 0x10, 1, 1);
  while (zeros.size() + one.size() <= (std::size_t{1} << 20))
    zeros.insert(zeros.end(), one.begin(), one.end());
  ZSTD_CStream* z = ZSTD_createCStream();
  ZSTD_initCStream(z, 19);
  auto path = temp_path("bomb");
  {
    auto w = PerfDataWriter::create(path, {{a, {}, "e"}});
    for (int i = 0; i < 400; ++i) {
      std::vector<std::byte> out(ZSTD_compressBound(zeros.size()));
      ZSTD_inBuffer in{zeros.data(), zeros.size(), 0};
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      ZSTD_compressStream(z, &o, &in);
      ZSTD_flushStream(z, &o);
      out.resize(o.pos);
      Bytes r;
      r.u32(81).u16(0).u16(static_cast<std::uint16_t>(8 + out.size())).raw(out.data(), out.size());
      w.write(r.b);
    }
    w.finish();
  }
  ZSTD_freeCStream(z);
  auto f = PerfData::open(path);
  Record r;
  try {
    while (f.next(r)) {
    }
    FAIL("read to the end");
  } catch (const DecodeError& e) {
    CHECK(std::string(e.what()).find("the compressed records decompress to more than 256 MiB and 200 times "
                                     "their size (a zstd bomb?)") != std::string::npos);
  }
  ::unlink(path.c_str());
}

TEST_CASE(
    "perf.data: a file truncated while it is read is an error, not SIGBUS; what is not perf.data is "
    "refused from its first bytes") {
  auto path = temp_path("truncated");
  Attr a = attr_with(sample_ip | sample_tid | sample_time);
  auto write = [&] {
    auto w = PerfDataWriter::create(path, {{a, {}, "e"}});
    for (std::uint64_t i = 0; i < 20000; ++i) w.write(kept_sample(a, 0x1000 + i, 5, i));
    w.finish();
  };
  write();
  auto f = PerfData::open(path);
  Record r;
  REQUIRE(f.next(r));
  // Its pages are mapped: cut the file under the reader at a page's start (the next page touched
  // raises SIGBUS), then at a page's middle (the rest of that page reads as zeros).
  REQUIRE(f.data_offset() < 8192);
  REQUIRE(::truncate(path.c_str(), 8192) == 0);
  std::string error;
  try {
    while (f.next(r)) {
    }
  } catch (const Error& e) {
    error = e.message();
  }
  CHECK(error == "'" + path + "' was truncated while it was read");
  write();
  auto g = PerfData::open(path);
  REQUIRE(g.next(r));
  REQUIRE(::truncate(path.c_str(), 6000) == 0);
  CHECK_THROWS_WITH(([&] {
                      while (g.next(r)) {
                      }
                    }()),
                    ("'" + path + "' was truncated while it was read").c_str());
  ::unlink(path.c_str());
  // /dev/zero (endless): refused from its first 16 bytes.
  CHECK_THROWS_WITH_AS(PerfData::open("/dev/zero"), "/dev/zero: not a perf.data file (no PERFILE2 magic)",
                       DecodeError);
}
