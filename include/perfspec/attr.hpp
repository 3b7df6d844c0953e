// SPDX-License-Identifier: MIT
#pragma once
// perfspec's value type for `struct perf_event_attr` and the field table used to print, serialise and
// decode it. Field names are the kernel's (include/uapi/linux/perf_event.h); the table lists every field
// of the newest perf_event_open(2) plus config3 (Linux 6.3).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace perfspec {

/// The bits of sample_type (the uapi header's perf_event_sample_format; checked against it in
/// spec/abi.hpp). What a sample holds, in the order record.hpp decodes it.
inline constexpr std::uint64_t sample_ip = 1U << 0, sample_tid = 1U << 1, sample_time = 1U << 2,
                               sample_addr = 1U << 3, sample_read = 1U << 4, sample_callchain = 1U << 5,
                               sample_id = 1U << 6, sample_cpu = 1U << 7, sample_period = 1U << 8,
                               sample_stream_id = 1U << 9, sample_raw = 1U << 10,
                               sample_branch_stack = 1U << 11, sample_regs_user = 1U << 12,
                               sample_stack_user = 1U << 13, sample_weight = 1U << 14,
                               sample_data_src = 1U << 15, sample_identifier = 1U << 16,
                               sample_transaction = 1U << 17, sample_regs_intr = 1U << 18,
                               sample_phys_addr = 1U << 19, sample_aux = 1U << 20, sample_cgroup = 1U << 21,
                               sample_data_page_size = 1U << 22, sample_code_page_size = 1U << 23,
                               sample_weight_struct = 1U << 24;
/// Every bit the decoder knows; a sample_type with others cannot be decoded (their fields' sizes are
/// unknown).
inline constexpr std::uint64_t sample_known = (std::uint64_t{1} << 25) - 1;

struct Attr {
  std::uint32_t type = 0;
  std::uint32_t size = 0;
  std::uint64_t config = 0;
  std::uint64_t sample_period = 0;  ///< union with sample_freq (freq selects which)
  std::uint64_t sample_type = 0;
  std::uint64_t read_format = 0;
  // the flag bits, in kernel order
  std::uint8_t disabled = 0, inherit = 0, pinned = 0, exclusive = 0;
  std::uint8_t exclude_user = 0, exclude_kernel = 0, exclude_hv = 0, exclude_idle = 0;
  std::uint8_t mmap = 0, comm = 0, freq = 0, inherit_stat = 0, enable_on_exec = 0, task = 0, watermark = 0;
  std::uint8_t precise_ip = 0;  ///< 2 bits
  std::uint8_t mmap_data = 0, sample_id_all = 0, exclude_host = 0, exclude_guest = 0;
  std::uint8_t exclude_callchain_kernel = 0, exclude_callchain_user = 0, mmap2 = 0, comm_exec = 0;
  std::uint8_t use_clockid = 0, context_switch = 0, write_backward = 0, namespaces = 0, ksymbol = 0;
  std::uint8_t bpf_event = 0, aux_output = 0, cgroup = 0, text_poke = 0, build_id = 0, inherit_thread = 0;
  std::uint8_t remove_on_exec = 0, sigtrap = 0;
  std::uint32_t wakeup_events = 0;  ///< union with wakeup_watermark
  std::uint32_t bp_type = 0;
  std::uint64_t config1 = 0;  ///< union with bp_addr, kprobe_func, uprobe_path
  std::uint64_t config2 = 0;  ///< union with bp_len, kprobe_addr, probe_offset
  std::uint64_t branch_sample_type = 0;
  std::uint64_t sample_regs_user = 0;
  std::uint32_t sample_stack_user = 0;
  std::int32_t clockid = 0;
  std::uint64_t sample_regs_intr = 0;
  std::uint32_t aux_watermark = 0;
  std::uint16_t sample_max_stack = 0;
  std::uint32_t aux_sample_size = 0;
  std::uint64_t sig_data = 0;
  std::uint64_t config3 = 0;

  friend bool operator==(const Attr&, const Attr&) = default;
};

/// Size of the attr layout perfspec fills (PERF_ATTR_SIZE_VER8, with config3).
inline constexpr std::uint32_t attr_size_ver8 = 136;

/// One row of the field table.
struct AttrField {
  std::string_view name;                      ///< kernel name
  std::span<const std::string_view> aliases;  ///< other names of the same union member (bp_addr, ...)
  unsigned bits;                              ///< width: 1 for flags, 2 for precise_ip, 16/32/64 for words
  bool is_signed;
  std::uint64_t (*get)(const Attr&);  ///< signed fields are returned sign-extended
  void (*set)(Attr&, std::uint64_t);  ///< truncates to the field's width
};

/// The flag bits (`disabled` .. `sigtrap`) as the kernel packs them into the u64 after read_format
/// (bit-fields from the least significant bit, on the little-endian ABIs perf runs on), and back.
///
/// Example: `attr_flags_word(a) & 1  // disabled`
std::uint64_t attr_flags_word(const Attr& attr);
void set_attr_flags_word(Attr& attr, std::uint64_t word);

/// A perf_event_attr from its bytes as the kernel and perf.data lay it out: the first `size` bytes
/// (the attr's own `size` field, 0 meaning 64); an older, shorter attr leaves the rest zero, the extra
/// bytes of a newer, longer one are ignored. `bytes` must hold `size` bytes (the caller checks).
///
/// Example: `Attr a = attr_from_bytes(file.subspan(at, attr_size));`
Attr attr_from_bytes(std::span<const std::byte> bytes);
/// The kernel layout of `attr` in 136 bytes (PERF_ATTR_SIZE_VER8), its `size` field `size`: 136 for
/// perf_event_open, or a smaller PERF_ATTR_SIZE_VER* (attr_size_needed) whose first `size` bytes are
/// what a file holds.
///
/// Example: `auto bytes = attr_to_bytes(event.attr);  // as perf_event_open takes it`
std::array<std::byte, 136> attr_to_bytes(const Attr& attr, std::uint32_t size = attr_size_ver8);

/// The smallest PERF_ATTR_SIZE_VER* (64, 72, 80, 96, 104, 112, 120, 128, 136) whose bytes hold every
/// non-zero field of `attr`: a reader zero-fills what a shorter attr leaves out, and one that knows an
/// older layout (perf 6.1: 128 bytes) refuses an attr whose size is beyond it.
///
/// Example: `attr_size_needed(resolve("task-clock", m).events[0].attr) == 64`
std::uint32_t attr_size_needed(const Attr& attr);

/// All fields in kernel order.
///
/// Example: `for (const auto& f : attr_fields()) std::printf("%s=%llu\n", f.name.data(), (unsigned long
/// long)f.get(attr));`
std::span<const AttrField> attr_fields();

/// Field by kernel name or union alias (`bp_addr` finds config1); nullptr when unknown.
///
/// Example: `find_attr_field("bp_addr")->set(attr, 0x1000);  // config1`
const AttrField* find_attr_field(std::string_view name);

/// Bit-flag words spelled as perf prints them (`sample_type` 0x104 -> `TID|PERIOD`); unnamed bits
/// follow as hex. Returns an empty string for fields that are not bit sets (everything but
/// sample_type, read_format and branch_sample_type) and for 0.
///
/// Example: `flag_names("read_format", 0xf) == "TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|GROUP"`.
std::string flag_names(std::string_view field, std::uint64_t value);

/// The names of the bits of a bit-set field, indexed by bit, as perf prints them: `sample_type`
/// (PERF_SAMPLE_*), `read_format` (PERF_FORMAT_*) and `branch_sample_type` (PERF_SAMPLE_BRANCH_*,
/// through COUNTERS); empty for any other field.
///
/// Example: `attr_bit_names("read_format")[2] == "ID"`.
std::span<const std::string_view> attr_bit_names(std::string_view field);

}  // namespace perfspec
