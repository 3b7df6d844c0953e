// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "perfspec/attr.hpp"

namespace perfspec {
namespace {

constexpr std::string_view no_alias[] = {""};
constexpr std::string_view period_alias[] = {"sample_freq"};
constexpr std::string_view wakeup_alias[] = {"wakeup_watermark"};
constexpr std::string_view config1_alias[] = {"bp_addr", "kprobe_func", "uprobe_path"};
constexpr std::string_view config2_alias[] = {"bp_len", "kprobe_addr", "probe_offset"};

template <unsigned Bits> constexpr std::uint64_t truncate(std::uint64_t v) {
  if constexpr (Bits >= 64)
    return v;
  else
    return v & ((std::uint64_t{1} << Bits) - 1);
}

#define PERFSPEC_FIELD(member, bits, aliases)                                                             \
  AttrField {                                                                                             \
#member, std::span<const std::string_view>(aliases).first(aliases[0].empty() ? 0 : std::size(aliases)), \
        bits, false, [](const Attr& a) -> std::uint64_t { return a.member; },                       \
        [](Attr& a, std::uint64_t v) { a.member = static_cast<decltype(a.member)>(truncate<bits>(v)); } \
  }
#define PERFSPEC_FLAG(member) PERFSPEC_FIELD(member, 1, no_alias)

const std::array fields = {
    PERFSPEC_FIELD(type, 32, no_alias),
    PERFSPEC_FIELD(size, 32, no_alias),
    PERFSPEC_FIELD(config, 64, no_alias),
    PERFSPEC_FIELD(sample_period, 64, period_alias),
    PERFSPEC_FIELD(sample_type, 64, no_alias),
    PERFSPEC_FIELD(read_format, 64, no_alias),
    PERFSPEC_FLAG(disabled),
    PERFSPEC_FLAG(inherit),
    PERFSPEC_FLAG(pinned),
    PERFSPEC_FLAG(exclusive),
    PERFSPEC_FLAG(exclude_user),
    PERFSPEC_FLAG(exclude_kernel),
    PERFSPEC_FLAG(exclude_hv),
    PERFSPEC_FLAG(exclude_idle),
    PERFSPEC_FLAG(mmap),
    PERFSPEC_FLAG(comm),
    PERFSPEC_FLAG(freq),
    PERFSPEC_FLAG(inherit_stat),
    PERFSPEC_FLAG(enable_on_exec),
    PERFSPEC_FLAG(task),
    PERFSPEC_FLAG(watermark),
    PERFSPEC_FIELD(precise_ip, 2, no_alias),
    PERFSPEC_FLAG(mmap_data),
    PERFSPEC_FLAG(sample_id_all),
    PERFSPEC_FLAG(exclude_host),
    PERFSPEC_FLAG(exclude_guest),
    PERFSPEC_FLAG(exclude_callchain_kernel),
    PERFSPEC_FLAG(exclude_callchain_user),
    PERFSPEC_FLAG(mmap2),
    PERFSPEC_FLAG(comm_exec),
    PERFSPEC_FLAG(use_clockid),
    PERFSPEC_FLAG(context_switch),
    PERFSPEC_FLAG(write_backward),
    PERFSPEC_FLAG(namespaces),
    PERFSPEC_FLAG(ksymbol),
    PERFSPEC_FLAG(bpf_event),
    PERFSPEC_FLAG(aux_output),
    PERFSPEC_FLAG(cgroup),
    PERFSPEC_FLAG(text_poke),
    PERFSPEC_FLAG(build_id),
    PERFSPEC_FLAG(inherit_thread),
    PERFSPEC_FLAG(remove_on_exec),
    PERFSPEC_FLAG(sigtrap),
    PERFSPEC_FIELD(wakeup_events, 32, wakeup_alias),
    PERFSPEC_FIELD(bp_type, 32, no_alias),
    PERFSPEC_FIELD(config1, 64, config1_alias),
    PERFSPEC_FIELD(config2, 64, config2_alias),
    PERFSPEC_FIELD(branch_sample_type, 64, no_alias),
    PERFSPEC_FIELD(sample_regs_user, 64, no_alias),
    PERFSPEC_FIELD(sample_stack_user, 32, no_alias),
    // clockid is __s32: stored sign-extended so -1 prints as -1, not 4294967295
    AttrField{"clockid",
              {},
              32,
              true,
              [](const Attr& a) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(a.clockid)); },
              [](Attr& a, std::uint64_t v) {
                a.clockid = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
              }},
    PERFSPEC_FIELD(sample_regs_intr, 64, no_alias),
    PERFSPEC_FIELD(aux_watermark, 32, no_alias),
    PERFSPEC_FIELD(sample_max_stack, 16, no_alias),
    PERFSPEC_FIELD(aux_sample_size, 32, no_alias),
    PERFSPEC_FIELD(sig_data, 64, no_alias),
    PERFSPEC_FIELD(config3, 64, no_alias),
};

#undef PERFSPEC_FLAG
#undef PERFSPEC_FIELD

}  // namespace

std::span<const AttrField> attr_fields() { return fields; }

const AttrField* find_attr_field(std::string_view name) {
  for (const auto& f : fields) {
    if (f.name == name || std::ranges::find(f.aliases, name) != f.aliases.end()) return &f;
  }
  return nullptr;
}

namespace {
// perf_event.h: enum perf_event_sample_format, perf_event_read_format and perf_branch_sample_type.
constexpr std::string_view sample_bits[] = {"IP",
                                            "TID",
                                            "TIME",
                                            "ADDR",
                                            "READ",
                                            "CALLCHAIN",
                                            "ID",
                                            "CPU",
                                            "PERIOD",
                                            "STREAM_ID",
                                            "RAW",
                                            "BRANCH_STACK",
                                            "REGS_USER",
                                            "STACK_USER",
                                            "WEIGHT",
                                            "DATA_SRC",
                                            "IDENTIFIER",
                                            "TRANSACTION",
                                            "REGS_INTR",
                                            "PHYS_ADDR",
                                            "AUX",
                                            "CGROUP",
                                            "DATA_PAGE_SIZE",
                                            "CODE_PAGE_SIZE",
                                            "WEIGHT_STRUCT"};
constexpr std::string_view read_bits[] = {"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST"};
constexpr std::string_view branch_bits[] = {"USER",       "KERNEL",     "HV",       "ANY",       "ANY_CALL",
                                            "ANY_RETURN", "IND_CALL",   "ABORT_TX", "IN_TX",     "NO_TX",
                                            "COND",       "CALL_STACK", "IND_JUMP", "CALL",      "NO_FLAGS",
                                            "NO_CYCLES",  "TYPE_SAVE",  "HW_INDEX", "PRIV_SAVE", "COUNTERS"};
}  // namespace

std::span<const std::string_view> attr_bit_names(std::string_view field) {
  if (field == "sample_type") return sample_bits;
  if (field == "read_format") return read_bits;
  if (field == "branch_sample_type") return branch_bits;
  return {};
}

std::string flag_names(std::string_view field, std::uint64_t value) {
  // (perf's -vv names branch_sample_type's bits too)
  std::span<const std::string_view> names = attr_bit_names(field);
  if (names.empty()) return {};
  std::string out;
  std::uint64_t unnamed = 0;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(value >> bit & 1)) continue;
    if (bit < names.size()) {
      if (!out.empty()) out += '|';
      out += names[bit];
    } else {
      unnamed |= std::uint64_t{1} << bit;
    }
  }
  if (unnamed) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%s%#llx", out.empty() ? "" : "|",
                  static_cast<unsigned long long>(unnamed));
    out += buf;
  }
  return out;
}

std::uint64_t attr_flags_word(const Attr& attr) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "flag packing assumes little-endian bit-fields");
  std::uint64_t word = 0;
  unsigned bit = 0;
  bool in_flags = false;
  for (const auto& f : attr_fields()) {
    if (f.name == "disabled") in_flags = true;
    if (!in_flags) continue;
    word |= (f.get(attr) & ((std::uint64_t{1} << f.bits) - 1)) << bit;
    bit += f.bits;
    if (f.name == "sigtrap") break;
  }
  return word;
}

void set_attr_flags_word(Attr& attr, std::uint64_t word) {
  unsigned bit = 0;
  bool in_flags = false;
  for (const auto& f : attr_fields()) {
    if (f.name == "disabled") in_flags = true;
    if (!in_flags) continue;
    f.set(attr, (word >> bit) & ((std::uint64_t{1} << f.bits) - 1));
    bit += f.bits;
    if (f.name == "sigtrap") break;
  }
}

namespace {
// The offsets of struct perf_event_attr (include/uapi/linux/perf_event.h), PERF_ATTR_SIZE_VER8.
template <typename T> void put(std::array<std::byte, 136>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
template <typename T> T take(const std::array<std::byte, 136>& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
}  // namespace

std::uint32_t attr_size_needed(const Attr& a) {
  if (a.config3) return 136;                                              // PERF_ATTR_SIZE_VER8
  if (a.sig_data) return 128;                                             // VER7
  if (a.aux_sample_size) return 120;                                      // VER6
  if (a.aux_watermark || a.sample_max_stack) return 112;                  // VER5
  if (a.sample_regs_intr) return 104;                                     // VER4
  if (a.sample_regs_user || a.sample_stack_user || a.clockid) return 96;  // VER3
  if (a.branch_sample_type) return 80;                                    // VER2
  if (a.config2) return 72;                                               // VER1
  return 64;                                                              // VER0
}

std::array<std::byte, 136> attr_to_bytes(const Attr& a, std::uint32_t size) {
  std::array<std::byte, 136> b{};
  put<std::uint32_t>(b, 0, a.type);
  put<std::uint32_t>(b, 4, size);
  put<std::uint64_t>(b, 8, a.config);
  put<std::uint64_t>(b, 16, a.sample_period);
  put<std::uint64_t>(b, 24, a.sample_type);
  put<std::uint64_t>(b, 32, a.read_format);
  put<std::uint64_t>(b, 40, attr_flags_word(a));
  put<std::uint32_t>(b, 48, a.wakeup_events);
  put<std::uint32_t>(b, 52, a.bp_type);
  put<std::uint64_t>(b, 56, a.config1);
  put<std::uint64_t>(b, 64, a.config2);
  put<std::uint64_t>(b, 72, a.branch_sample_type);
  put<std::uint64_t>(b, 80, a.sample_regs_user);
  put<std::uint32_t>(b, 88, a.sample_stack_user);
  put<std::int32_t>(b, 92, a.clockid);
  put<std::uint64_t>(b, 96, a.sample_regs_intr);
  put<std::uint32_t>(b, 104, a.aux_watermark);
  put<std::uint16_t>(b, 108, a.sample_max_stack);
  put<std::uint32_t>(b, 112, a.aux_sample_size);
  put<std::uint64_t>(b, 120, a.sig_data);
  put<std::uint64_t>(b, 128, a.config3);
  return b;
}

Attr attr_from_bytes(std::span<const std::byte> bytes) {
  std::array<std::byte, 136> b{};
  std::uint32_t size = 0;
  if (bytes.size() >= 8) std::memcpy(&size, bytes.data() + 4, 4);
  if (size == 0) size = 64;  // PERF_ATTR_SIZE_VER0
  std::memcpy(b.data(), bytes.data(), std::min<std::size_t>({size, bytes.size(), b.size()}));
  Attr a;
  a.type = take<std::uint32_t>(b, 0);
  a.size = size;
  a.config = take<std::uint64_t>(b, 8);
  a.sample_period = take<std::uint64_t>(b, 16);
  a.sample_type = take<std::uint64_t>(b, 24);
  a.read_format = take<std::uint64_t>(b, 32);
  set_attr_flags_word(a, take<std::uint64_t>(b, 40));
  a.wakeup_events = take<std::uint32_t>(b, 48);
  a.bp_type = take<std::uint32_t>(b, 52);
  a.config1 = take<std::uint64_t>(b, 56);
  a.config2 = take<std::uint64_t>(b, 64);
  a.branch_sample_type = take<std::uint64_t>(b, 72);
  a.sample_regs_user = take<std::uint64_t>(b, 80);
  a.sample_stack_user = take<std::uint32_t>(b, 88);
  a.clockid = take<std::int32_t>(b, 92);
  a.sample_regs_intr = take<std::uint64_t>(b, 96);
  a.aux_watermark = take<std::uint32_t>(b, 104);
  a.sample_max_stack = take<std::uint16_t>(b, 108);
  a.aux_sample_size = take<std::uint32_t>(b, 112);
  a.sig_data = take<std::uint64_t>(b, 120);
  a.config3 = take<std::uint64_t>(b, 128);
  return a;
}

}  // namespace perfspec
