// SPDX-License-Identifier: MIT
// The layouts of records other than samples: the kernel's (include/uapi/linux/perf_event.h), each
// read by one small reader, and perf's own (tools/perf/util/event.h).
#include "record/decode_bodies.hpp"

#include <cstring>

namespace perfspec::record::detail {

namespace {

Mmap mmap(Cursor& c) {
  Mmap m;
  m.pid = c.u32("pid"), m.tid = c.u32("tid");
  m.addr = c.u64("addr"), m.len = c.u64("len"), m.pgoff = c.u64("pgoff");
  m.filename = c.rest_string("filename");
  return m;
}

Mmap2 mmap2(Cursor& c, std::uint16_t misc) {
  Mmap2 m;
  m.pid = c.u32("pid"), m.tid = c.u32("tid");
  m.addr = c.u64("addr"), m.len = c.u64("len"), m.pgoff = c.u64("pgoff");
  if (misc & misc_mmap_build_id) {
    auto size = c.get<std::uint8_t>("build_id_size");
    c.take(3, "reserved");
    auto id = c.take(20, "build_id");
    if (size > 20) c.fail(fmt::format("build_id_size {} is more than 20", size));
    m.build_id = id.first(size);
  } else {
    m.maj = c.u32("maj"), m.min = c.u32("min");
    m.ino = c.u64("ino"), m.ino_generation = c.u64("ino_generation");
  }
  m.prot = c.u32("prot"), m.flags = c.u32("flags");
  m.filename = c.rest_string("filename");
  return m;
}

Comm comm(Cursor& c, std::uint16_t misc) {
  Comm m;
  m.pid = c.u32("pid"), m.tid = c.u32("tid");
  m.comm = c.rest_string("comm");
  m.exec = (misc & misc_comm_exec) != 0;
  return m;
}

Task task(Cursor& c) {
  Task t;
  t.pid = c.u32("pid"), t.ppid = c.u32("ppid"), t.tid = c.u32("tid"), t.ptid = c.u32("ptid");
  t.time = c.u64("time");
  return t;
}

Read read(Cursor& c, const Attr& attr) {
  Read r;
  r.pid = c.u32("pid"), r.tid = c.u32("tid");
  r.values = read_values(c, attr.read_format);
  return r;
}

Switch switch_(Cursor& c, std::uint32_t type, std::uint16_t misc) {
  Switch s;
  s.out = (misc & misc_switch_out) != 0;
  s.preempt = (misc & misc_switch_out_preempt) != 0;
  if (type == static_cast<std::uint32_t>(Type::switch_cpu_wide)) {
    s.next_prev_pid = c.u32("next_prev_pid");
    s.next_prev_tid = c.u32("next_prev_tid");
  }
  return s;
}

Namespaces namespaces(Cursor& c) {
  Namespaces n;
  n.pid = c.u32("pid"), n.tid = c.u32("tid");
  std::uint64_t nr = c.u64("nr_namespaces");
  if (nr > c.left() / 16) c.fail(fmt::format("{} namespaces do not fit in the record", nr));
  n.words = c.u64s(nr * 2, "namespaces");
  return n;
}

Ksymbol ksymbol(Cursor& c) {
  Ksymbol k;
  k.addr = c.u64("addr"), k.len = c.u32("len");
  k.ksym_type = c.u16("ksym_type"), k.flags = c.u16("flags");
  k.name = c.rest_string("name");
  return k;
}

BpfEvent bpf_event(Cursor& c) {
  BpfEvent b;
  b.type = c.u16("type"), b.flags = c.u16("flags"), b.id = c.u32("id");
  auto tag = c.take(8, "tag");
  std::memcpy(b.tag.data(), tag.data(), 8);
  return b;
}

TextPoke text_poke(Cursor& c) {
  TextPoke t;
  t.addr = c.u64("addr");
  std::uint16_t old_len = c.u16("old_len"), new_len = c.u16("new_len");
  t.old_bytes = c.take(old_len, "old bytes");
  t.new_bytes = c.take(new_len, "new bytes");
  return t;
}

// The attr's size as its bytes say (0: PERF_ATTR_SIZE_VER0, 64).
std::uint32_t attr_size_of(std::span<const std::byte> bytes) {
  std::uint32_t size = 0;
  if (bytes.size() >= 8) std::memcpy(&size, bytes.data() + 4, 4);
  return size == 0 ? 64 : size;
}

HeaderAttr header_attr(Cursor& c) {
  HeaderAttr h;
  auto rest = c.take(c.left(), "attr");
  std::uint32_t size = attr_size_of(rest);
  if (size % 8 != 0 || size > rest.size())
    c.fail(fmt::format("attr size {} does not fit the record's {} bytes (or is not a multiple of 8)", size,
                       rest.size()));
  h.attr = attr_from_bytes(rest.first(size));
  h.ids = U64s(rest.data() + size, (rest.size() - size) / 8);
  return h;
}

BuildId build_id(Cursor& c, std::uint16_t misc) {
  BuildId b;
  b.pid = c.u32("pid");
  auto id = c.take(24, "build_id");
  std::size_t size = 20;
  if (misc & misc_ext_reserved) {  // PERF_RECORD_MISC_BUILD_ID_SIZE: byte 20 holds the size
    size = std::to_integer<std::size_t>(id[20]);
    if (size > 20) c.fail(fmt::format("build id size {} is more than 20", size));
  }
  b.build_id = id.first(size);
  b.filename = c.rest_string("filename");
  return b;
}

IdIndex id_index(Cursor& c) {
  IdIndex x;
  std::uint64_t nr = c.u64("nr");
  if (nr > c.left() / 32) c.fail(fmt::format("{} id index entries do not fit in the record", nr));
  x.words = c.u64s(nr * 4, "entries");
  c.take(c.left(), "machine pid and vcpu");  // id_index_entry_2 follows in newer perf
  return x;
}

TimeConv time_conv(Cursor& c) {
  TimeConv t;
  t.time_shift = c.u64("time_shift"), t.time_mult = c.u64("time_mult"), t.time_zero = c.u64("time_zero");
  if (c.left() >= 24) {
    t.time_cycles = c.u64("time_cycles");
    t.time_mask = c.u64("time_mask");
    t.cap_user_time_zero = c.get<std::uint8_t>("cap_user_time_zero") != 0;
    t.cap_user_time_short = c.get<std::uint8_t>("cap_user_time_short") != 0;
  }
  return t;
}

ThreadMap thread_map(Cursor& c) {
  ThreadMap m;
  m.nr = c.u64("nr");
  if (m.nr > c.left() / 24) c.fail(fmt::format("{} thread map entries do not fit in the record", m.nr));
  m.entries = c.take(m.nr * 24, "entries");
  return m;
}

HeaderFeature header_feature(Cursor& c) {
  HeaderFeature f;
  f.feature = c.u64("feat_id");
  f.data = c.take(c.left(), "data");
  return f;
}

}  // namespace

void kernel_body(Cursor& c, std::uint32_t type, std::uint16_t misc, const Attr& attr, Body& body) {
  switch (static_cast<Type>(type)) {
    case Type::mmap: body = mmap(c); return;
    case Type::mmap2: body = mmap2(c, misc); return;
    case Type::lost: body = Lost{c.u64("id"), c.u64("lost")}; return;
    case Type::comm: body = comm(c, misc); return;
    case Type::exit:
    case Type::fork: body = task(c); return;
    case Type::throttle:
    case Type::unthrottle: body = Throttle{c.u64("time"), c.u64("id"), c.u64("stream_id")}; return;
    case Type::read: body = read(c, attr); return;
    case Type::aux: body = Aux{c.u64("aux_offset"), c.u64("aux_size"), c.u64("flags")}; return;
    case Type::itrace_start: body = ItraceStart{c.u32("pid"), c.u32("tid")}; return;
    case Type::lost_samples: body = LostSamples{c.u64("lost")}; return;
    case Type::switch_:
    case Type::switch_cpu_wide: body = switch_(c, type, misc); return;
    case Type::namespaces: body = namespaces(c); return;
    case Type::ksymbol: body = ksymbol(c); return;
    case Type::bpf_event: body = bpf_event(c); return;
    case Type::cgroup: body = Cgroup{c.u64("id"), c.rest_string("path")}; return;
    case Type::text_poke: body = text_poke(c); return;
    case Type::aux_output_hw_id: body = AuxOutputHwId{c.u64("hw_id")}; return;
    default: body = Opaque{c.take(c.left(), "body")}; return;
  }
}

void user_body(Cursor& c, std::uint32_t type, std::uint16_t misc, Body& body) {
  switch (static_cast<Type>(type)) {
    case Type::header_attr: body = header_attr(c); return;
    case Type::header_tracing_data: body = TracingData{c.u32("size")}; return;
    case Type::header_build_id: body = build_id(c, misc); return;
    case Type::id_index: body = id_index(c); return;
    case Type::time_conv: body = time_conv(c); return;
    case Type::thread_map: body = thread_map(c); return;
    case Type::header_feature: body = header_feature(c); return;
    default: body = Opaque{c.take(c.left(), "body")}; return;
  }
}

}  // namespace perfspec::record::detail
