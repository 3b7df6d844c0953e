// SPDX-License-Identifier: MIT
// Decoding PERF_RECORD_* over byte spans: the layouts of include/uapi/linux/perf_event.h (kernel
// records, the sample in its field order) and of perf's own records (tools/perf/util/event.h).
#include <linux/perf_event.h>

#include <algorithm>
#include <bit>

#include "perfspec/record.hpp"
#include "record/cursor.hpp"
#include "record/decode_bodies.hpp"
#include "spec/abi.hpp"

namespace perfspec::record {

using detail::Cursor, detail::kernel_body, detail::read_values, detail::user_body;

static_assert(static_cast<std::uint32_t>(Type::mmap) == PERF_RECORD_MMAP &&
              static_cast<std::uint32_t>(Type::lost) == PERF_RECORD_LOST &&
              static_cast<std::uint32_t>(Type::sample) == PERF_RECORD_SAMPLE &&
              static_cast<std::uint32_t>(Type::mmap2) == PERF_RECORD_MMAP2 &&
              static_cast<std::uint32_t>(Type::lost_samples) == PERF_RECORD_LOST_SAMPLES &&
              static_cast<std::uint32_t>(Type::cgroup) == PERF_RECORD_CGROUP &&
              static_cast<std::uint32_t>(Type::text_poke) == PERF_RECORD_TEXT_POKE);
static_assert(sample_weight_struct == PERF_SAMPLE_WEIGHT_STRUCT &&
              sample_code_page_size == PERF_SAMPLE_CODE_PAGE_SIZE &&
              sample_identifier == PERF_SAMPLE_IDENTIFIER && sample_regs_intr == PERF_SAMPLE_REGS_INTR);

namespace {

using spec::branch_counters, spec::branch_hw_index, spec::format_group, spec::format_id, spec::format_lost;
constexpr std::uint64_t format_time_enabled = spec::format_total_time_enabled,
                        format_time_running = spec::format_total_time_running;
constexpr std::uint64_t format_known =
    format_time_enabled | format_time_running | format_id | format_group | format_lost;

constexpr std::string_view kernel_names[] = {"",
                                             "MMAP",
                                             "LOST",
                                             "COMM",
                                             "EXIT",
                                             "THROTTLE",
                                             "UNTHROTTLE",
                                             "FORK",
                                             "READ",
                                             "SAMPLE",
                                             "MMAP2",
                                             "AUX",
                                             "ITRACE_START",
                                             "LOST_SAMPLES",
                                             "SWITCH",
                                             "SWITCH_CPU_WIDE",
                                             "NAMESPACES",
                                             "KSYMBOL",
                                             "BPF_EVENT",
                                             "CGROUP",
                                             "TEXT_POKE",
                                             "AUX_OUTPUT_HW_ID"};
constexpr std::string_view user_names[] = {"ATTR",           "EVENT_TYPE", "TRACING_DATA",  "BUILD_ID",
                                           "FINISHED_ROUND", "ID_INDEX",   "AUXTRACE_INFO", "AUXTRACE",
                                           "AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP",       "STAT_CONFIG",
                                           "STAT",           "STAT_ROUND", "EVENT_UPDATE",  "TIME_CONV",
                                           "FEATURE",        "COMPRESSED", "FINISHED_INIT"};

// The bytes of the sample_id trailer for a sample_type.
std::size_t sample_id_size(std::uint64_t type) {
  return 8u *
         static_cast<std::size_t>(std::popcount(type & (sample_tid | sample_time | sample_id |
                                                        sample_stream_id | sample_cpu | sample_identifier)));
}

// Where the id sits: in a sample body, the u64 index from its start; in a trailer, counted from its
// end (1 = the last u64). -1 when the sample_type carries no id.
int id_pos(std::uint64_t type) {
  if (type & sample_identifier) return 0;
  if (!(type & sample_id)) return -1;
  int i = 0;
  for (auto bit : {sample_ip, sample_tid, sample_time, sample_addr})
    if (type & bit) ++i;
  return i;
}
int is_pos(std::uint64_t type) {
  if (type & sample_identifier) return 1;
  if (!(type & sample_id)) return -1;
  int i = 1;
  for (auto bit : {sample_cpu, sample_stream_id})
    if (type & bit) ++i;
  return i;
}

SampleId read_sample_id(Cursor& c, std::uint64_t type) {
  SampleId s;
  s.fields =
      type & (sample_tid | sample_time | sample_id | sample_stream_id | sample_cpu | sample_identifier);
  if (type & sample_tid) {
    s.pid = c.u32("sample_id pid");
    s.tid = c.u32("sample_id tid");
  }
  if (type & sample_time) s.time = c.u64("sample_id time");
  if (type & sample_id) s.id = c.u64("sample_id id");
  if (type & sample_stream_id) s.stream_id = c.u64("sample_id stream_id");
  if (type & sample_cpu) {
    s.cpu = c.u32("sample_id cpu");
    c.u32("sample_id res");
  }
  if (type & sample_identifier) s.id = c.u64("sample_id identifier");
  return s;
}

Registers read_registers(Cursor& c, std::uint64_t mask, std::string_view what) {
  Registers r;
  r.mask = mask;
  r.abi = c.u64(what);
  if (r.abi != 0) r.values = c.u64s(static_cast<std::uint64_t>(std::popcount(mask)), what);
  return r;
}

// Every field of `s` is written, present or not (0 or empty when its bit is clear): a reader decodes
// into the Sample its Record already holds, and neither clears nor copies the whole struct per record
// (a few hundred bytes: a quarter of the time of decoding a small sample, when it did).
void sample_body(Cursor& c, const Attr& attr, Sample& s) {
  const std::uint64_t t = attr.sample_type;
  s.type = t;
  s.identifier = (t & sample_identifier) ? c.u64("IDENTIFIER") : 0;
  s.ip = (t & sample_ip) ? c.u64("IP") : 0;
  if (t & sample_tid) {
    s.pid = c.u32("TID pid");
    s.tid = c.u32("TID tid");
  } else {
    s.pid = s.tid = 0;
  }
  s.time = (t & sample_time) ? c.u64("TIME") : 0;
  s.addr = (t & sample_addr) ? c.u64("ADDR") : 0;
  s.id = (t & sample_id) ? c.u64("ID") : 0;
  s.stream_id = (t & sample_stream_id) ? c.u64("STREAM_ID") : 0;
  if (t & sample_cpu) {
    s.cpu = c.u32("CPU");
    s.cpu_reserved = c.u32("CPU res");
  } else {
    s.cpu = s.cpu_reserved = 0;
  }
  s.period = (t & sample_period) ? c.u64("PERIOD") : 0;
  s.read = (t & sample_read) ? read_values(c, attr.read_format) : ReadValues{};
  s.callchain = (t & sample_callchain) ? c.u64s(c.u64("CALLCHAIN nr"), "CALLCHAIN ips") : U64s{};
  s.raw = (t & sample_raw) ? c.take(c.u32("RAW size"), "RAW data") : std::span<const std::byte>{};
  s.branches = {};
  if (t & sample_branch_stack) {
    std::uint64_t nr = c.u64("BRANCH_STACK nr");
    if (attr.branch_sample_type & branch_hw_index) s.branches.hw_idx = c.u64("BRANCH_STACK hw_idx");
    if (nr > c.left() / 24) c.fail(fmt::format("BRANCH_STACK of {} entries does not fit in the record", nr));
    s.branches.words = c.u64s(nr * 3, "BRANCH_STACK entries");
    if (attr.branch_sample_type & branch_counters) s.branches.counters = c.u64s(nr, "BRANCH_STACK counters");
  }
  s.regs_user = (t & sample_regs_user) ? read_registers(c, attr.sample_regs_user, "REGS_USER") : Registers{};
  s.stack_user = {};
  if (t & sample_stack_user) {
    s.stack_user.offset = static_cast<std::uint32_t>(8 + c.position());
    std::uint64_t size = c.u64("STACK_USER size");
    s.stack_user.data = c.take(size, "STACK_USER data");
    if (size != 0) s.stack_user.dyn_size = c.u64("STACK_USER dyn_size");
    if (s.stack_user.dyn_size > size)
      c.fail(fmt::format("STACK_USER dyn_size {} is more than its size {}", s.stack_user.dyn_size, size));
  }
  s.weight.full = (t & (sample_weight | sample_weight_struct)) ? c.u64("WEIGHT") : 0;
  s.data_src = (t & sample_data_src) ? c.u64("DATA_SRC") : 0;
  s.transaction = (t & sample_transaction) ? c.u64("TRANSACTION") : 0;
  s.regs_intr = (t & sample_regs_intr) ? read_registers(c, attr.sample_regs_intr, "REGS_INTR") : Registers{};
  s.phys_addr = (t & sample_phys_addr) ? c.u64("PHYS_ADDR") : 0;
  s.cgroup = (t & sample_cgroup) ? c.u64("CGROUP") : 0;
  s.data_page_size = (t & sample_data_page_size) ? c.u64("DATA_PAGE_SIZE") : 0;
  s.code_page_size = (t & sample_code_page_size) ? c.u64("CODE_PAGE_SIZE") : 0;
  s.aux = (t & sample_aux) ? c.take(c.u64("AUX size"), "AUX data") : std::span<const std::byte>{};
}

}  // namespace

namespace detail {

ReadValues read_values(Cursor& c, std::uint64_t format) {
  if (format & ~format_known)
    c.fail(fmt::format("read_format {:#x} has bits this decoder does not know", format));
  ReadValues r;
  r.format = format;
  if (format & format_group) {
    std::uint64_t nr = c.u64("read_format nr");
    if (format & format_time_enabled) r.time_enabled = c.u64("read_format time_enabled");
    if (format & format_time_running) r.time_running = c.u64("read_format time_running");
    std::uint64_t per = 1 + ((format & format_id) ? 1 : 0) + ((format & format_lost) ? 1 : 0);
    if (nr > c.left() / (8 * per))
      c.fail(fmt::format("read_format group of {} members needs {} bytes, {} are left", nr,
                         nr > (std::uint64_t{1} << 56) ? nr : nr * 8 * per, c.left()));
    U64s words = c.u64s(nr * per, "read_format values");
    r.group_ = words.bytes().data();
    r.count_ = static_cast<std::size_t>(nr);
    return r;
  }
  r.single_.value = c.u64("read_format value");
  if (format & format_time_enabled) r.time_enabled = c.u64("read_format time_enabled");
  if (format & format_time_running) r.time_running = c.u64("read_format time_running");
  if (format & format_id) r.single_.id = c.u64("read_format id");
  if (format & format_lost) r.single_.lost = c.u64("read_format lost");
  r.count_ = 1;
  return r;
}

}  // namespace detail

std::string_view type_name(std::uint32_t type) {
  if (type > 0 && type < std::size(kernel_names)) return kernel_names[type];
  if (type >= user_type_start && type - user_type_start < std::size(user_names))
    return user_names[type - user_type_start];
  return {};
}

char cpumode_letter(std::uint16_t misc) {
  switch (misc & misc_cpumode_mask) {
    case misc_kernel: return 'k';
    case misc_user: return 'u';
    case misc_hypervisor: return 'H';
    case misc_guest_kernel: return 'G';
    case misc_guest_user: return 'g';
    default: return '?';
  }
}

ReadValue ReadValues::operator[](std::size_t i) const {
  if (!(format & format_group)) return single_;
  std::size_t per = 1 + ((format & format_id) ? 1 : 0) + ((format & format_lost) ? 1 : 0);
  U64s w(group_ + i * per * 8, per);
  ReadValue v;
  v.value = w[0];
  std::size_t k = 1;
  if (format & format_id) v.id = w[k++];
  if (format & format_lost) v.lost = w[k];
  return v;
}

std::optional<std::uint64_t> Registers::get(unsigned reg) const {
  if (reg >= 64 || !(mask >> reg & 1) || values.empty()) return std::nullopt;
  return values[static_cast<std::size_t>(std::popcount(mask & ((std::uint64_t{1} << reg) - 1)))];
}

ThreadMapEntry ThreadMap::operator[](std::size_t i) const {
  ThreadMapEntry e;
  std::memcpy(&e.pid, entries.data() + i * 24, 8);
  const auto* comm = reinterpret_cast<const char*>(entries.data() + i * 24 + 8);
  e.comm = std::string_view(comm, strnlen(comm, 16));
  return e;
}

std::size_t sample_id_size(const Attr& attr) {
  return attr.sample_id_all ? sample_id_size(attr.sample_type) : 0;
}

Sample decode_sample(std::span<const std::byte> body, const Attr& attr, std::uint64_t offset) {
  Cursor c(body, offset, static_cast<std::uint32_t>(Type::sample));
  Sample s;
  sample_body(c, attr, s);
  return s;
}

std::size_t Formats::add(const Attr& attr, std::span<const std::uint64_t> ids) {
  if (attr.sample_type & ~sample_known)
    throw Error(ErrorKind::bad_value,
                fmt::format("sample_type {:#x} has bits this decoder does not know ({:#x})", attr.sample_type,
                            attr.sample_type & ~sample_known));
  if (attr.read_format & ~format_known)
    throw Error(ErrorKind::bad_value,
                fmt::format("read_format {:#x} has bits this decoder does not know", attr.read_format));
  int ip = id_pos(attr.sample_type), sp = is_pos(attr.sample_type);
  if (!attrs_.empty()) {
    if (attr.sample_id_all != attrs_.front().sample_id_all)
      throw Error(ErrorKind::bad_value, "the attrs of one stream disagree on sample_id_all");
    if (ip != id_pos_ || sp != is_pos_ || ip < 0 || sp < 0)
      throw Error(ErrorKind::bad_value,
                  "the attrs of one stream cannot be told apart: each needs SAMPLE_IDENTIFIER, or "
                  "SAMPLE_ID at the same position");
  }
  id_pos_ = ip, is_pos_ = sp;
  attrs_.push_back(attr);
  std::size_t index = attrs_.size() - 1;
  for (std::uint64_t id : ids) ids_.push_back({id, index});
  std::sort(ids_.begin(), ids_.end(), [](const Entry& a, const Entry& b) { return a.id < b.id; });
  return index;
}

std::size_t Formats::attr_of_id(std::uint64_t id) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id,
                             [](const Entry& e, std::uint64_t v) { return e.id < v; });
  return it != ids_.end() && it->id == id ? it->attr : Record::npos;
}

const Attr* Formats::format_of(std::span<const std::byte> bytes, std::uint32_t type, std::uint64_t offset,
                               std::size_t& index) const {
  index = Record::npos;
  if (attrs_.empty())
    throw DecodeError(offset, fmt::format("record at offset {:#x}: no attr describes the stream", offset));
  if (attrs_.size() == 1 ||
      (!attrs_.front().sample_id_all && type != static_cast<std::uint32_t>(Type::sample))) {
    index = 0;
    return &attrs_.front();
  }
  std::uint64_t id;
  std::size_t size = bytes.size();
  if (type == static_cast<std::uint32_t>(Type::sample)) {
    std::size_t at = 8 + static_cast<std::size_t>(id_pos_) * 8;
    if (at + 8 > size)
      throw DecodeError(offset, fmt::format("SAMPLE record at offset {:#x}: its id needs {} bytes, it has {}",
                                            offset, at + 8, size));
    std::memcpy(&id, bytes.data() + at, 8);
  } else {
    std::size_t back = static_cast<std::size_t>(is_pos_) * 8;
    if (back + 8 > size)
      throw DecodeError(offset,
                        fmt::format("{} record at offset {:#x}: its sample_id needs {} bytes, it has {}",
                                    type_name(type), offset, back + 8, size));
    std::memcpy(&id, bytes.data() + size - back, 8);
    if (id == 0) {  // perf synthesizes records with a zeroed trailer: they belong to the first attr
      index = 0;
      return &attrs_.front();
    }
  }
  index = attr_of_id(id);
  return index == Record::npos ? nullptr : &attrs_[index];
}

Record Formats::decode(std::span<const std::byte> bytes, std::uint64_t offset) const {
  Record r;
  decode(bytes, offset, r);
  return r;
}

void Formats::decode(std::span<const std::byte> bytes, std::uint64_t offset, Record& r) const {
  if (bytes.size() < 8)
    throw DecodeError(
        offset, fmt::format("record at offset {:#x}: {} bytes, a header needs 8", offset, bytes.size()));
  std::memcpy(&r.type, bytes.data(), 4);
  std::memcpy(&r.misc, bytes.data() + 4, 2);
  std::memcpy(&r.size, bytes.data() + 6, 2);
  r.offset = offset;
  r.attr = Record::npos;
  r.sample_id = {};
  if (r.size < 8 || r.size > bytes.size()) {
    auto name = type_name(r.type);
    throw DecodeError(
        offset, fmt::format("{} record at offset {:#x}: header size {} {}",
                            name.empty() ? fmt::format("type {}", r.type) : std::string(name), offset, r.size,
                            r.size < 8 ? "is less than the header itself"
                                       : fmt::format("runs past the {} bytes there", bytes.size())));
  }
  r.bytes = bytes.first(r.size);
  auto body = r.bytes.subspan(8);
  if (r.type >= user_type_start) {
    Cursor c(body, offset, r.type);
    user_body(c, r.type, r.misc, r.body);
    return;
  }
  const Attr* attr = format_of(r.bytes, r.type, offset, r.attr);
  if (!attr) {  // an id no attr has: its layout is unknown, so it is kept whole
    r.body = Opaque{body};
    return;
  }
  if (r.type == static_cast<std::uint32_t>(Type::sample)) {
    Cursor c(body, offset, r.type);
    // Into the Sample the record holds already (a stream of samples switches the variant once).
    Sample* sp = std::get_if<Sample>(&r.body);
    if (!sp) sp = &r.body.emplace<Sample>();
    Sample& s = *sp;
    try {
      sample_body(c, *attr, s);
    } catch (...) {
      r.body = Opaque{body};  // no half-decoded sample left behind
      throw;
    }
    r.sample_id = {attr->sample_type & (sample_tid | sample_time | sample_id | sample_stream_id | sample_cpu |
                                        sample_identifier),
                   s.pid,
                   s.tid,
                   s.time,
                   (attr->sample_type & sample_identifier) ? s.identifier : s.id,
                   s.stream_id,
                   s.cpu};
    return;
  }
  std::size_t trailer = attr->sample_id_all ? sample_id_size(attr->sample_type) : 0;
  if (trailer > body.size()) {
    Cursor(body, offset, r.type)
        .fail(fmt::format("its sample_id needs {} bytes, the body has {}", trailer, body.size()));
  }
  if (trailer) {
    Cursor t(body.last(trailer), offset, r.type);
    r.sample_id = read_sample_id(t, attr->sample_type);
  }
  Cursor c(body.first(body.size() - trailer), offset, r.type);
  kernel_body(c, r.type, r.misc, *attr, r.body);
}

}  // namespace perfspec::record
