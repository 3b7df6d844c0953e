// SPDX-License-Identifier: MIT
#pragma once
// The PERF_RECORD_* stream: every record the kernel writes into a ring buffer (types 1-21 of
// include/uapi/linux/perf_event.h) and the ones perf adds to perf.data files (64 and up), decoded
// over a byte span, however the bytes arrived (a live ring buffer, a file, a pipe).
//
// Decoding is zero-copy: a Record's strings, arrays and payloads are views into the bytes it was
// decoded from, which must outlive it. It is defensive: a record shorter than its fields, a count
// that would run past the record, a string without its terminator, is an Error naming the offset of
// the record, never a read past the span.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "perfspec/attr.hpp"
#include "perfspec/error.hpp"

namespace perfspec::record {

/// Record types (perf_event_type in the uapi header; perf's own from tools/perf/util/event.h).
enum class Type : std::uint32_t {
  mmap = 1,
  lost = 2,
  comm = 3,
  exit = 4,
  throttle = 5,
  unthrottle = 6,
  fork = 7,
  read = 8,
  sample = 9,
  mmap2 = 10,
  aux = 11,
  itrace_start = 12,
  lost_samples = 13,
  switch_ = 14,
  switch_cpu_wide = 15,
  namespaces = 16,
  ksymbol = 17,
  bpf_event = 18,
  cgroup = 19,
  text_poke = 20,
  aux_output_hw_id = 21,
  // perf's records (PERF_RECORD_USER_TYPE_START): never in a ring buffer, no sample_id trailer
  header_attr = 64,
  header_event_type = 65,
  header_tracing_data = 66,
  header_build_id = 67,
  finished_round = 68,
  id_index = 69,
  auxtrace_info = 70,
  auxtrace = 71,
  auxtrace_error = 72,
  thread_map = 73,
  cpu_map = 74,
  stat_config = 75,
  stat = 76,
  stat_round = 77,
  event_update = 78,
  time_conv = 79,
  header_feature = 80,
  compressed = 81,
  finished_init = 82,
};

/// The first type perf uses for its own records.
inline constexpr std::uint32_t user_type_start = 64;

/// perf's name of a record type without the `PERF_RECORD_` prefix ("MMAP2", "FINISHED_ROUND", "ATTR");
/// empty for a type no kernel or perf defines.
///
/// Example: `type_name(9) == "SAMPLE"`.
std::string_view type_name(std::uint32_t type);

// perf_event_header.misc
inline constexpr std::uint16_t misc_cpumode_mask = 7, misc_cpumode_unknown = 0, misc_kernel = 1,
                               misc_user = 2, misc_hypervisor = 3, misc_guest_kernel = 4, misc_guest_user = 5;
inline constexpr std::uint16_t misc_proc_map_parse_timeout = 1U << 12;
inline constexpr std::uint16_t misc_mmap_data = 1U << 13, misc_comm_exec = 1U << 13,
                               misc_fork_exec = 1U << 13, misc_switch_out = 1U << 13;
inline constexpr std::uint16_t misc_exact_ip = 1U << 14, misc_switch_out_preempt = 1U << 14,
                               misc_mmap_build_id = 1U << 14;
inline constexpr std::uint16_t misc_ext_reserved = 1U << 15;

/// The cpumode of a header's misc as perf abbreviates it: "k", "u", "H", "G", "g" (guest user), "?".
///
/// Example: `cpumode_letter(misc_user) == 'u'`.
char cpumode_letter(std::uint16_t misc);

// The sample_type bits (attr.hpp), by their names here too: record::sample_ip.
using perfspec::sample_ip, perfspec::sample_tid, perfspec::sample_time, perfspec::sample_addr,
    perfspec::sample_read, perfspec::sample_callchain, perfspec::sample_id, perfspec::sample_cpu,
    perfspec::sample_period, perfspec::sample_stream_id, perfspec::sample_raw, perfspec::sample_branch_stack,
    perfspec::sample_regs_user, perfspec::sample_stack_user, perfspec::sample_weight,
    perfspec::sample_data_src, perfspec::sample_identifier, perfspec::sample_transaction,
    perfspec::sample_regs_intr, perfspec::sample_phys_addr, perfspec::sample_aux, perfspec::sample_cgroup,
    perfspec::sample_data_page_size, perfspec::sample_code_page_size, perfspec::sample_weight_struct,
    perfspec::sample_known;

/// A view of `count` native-endian u64 values at any alignment (the bytes of a record).
///
/// Example: `for (std::uint64_t ip : sample.callchain) std::printf("%llx\n", (unsigned long long)ip);`
class U64s {
 public:
  U64s() = default;
  U64s(const std::byte* data, std::size_t count) : data_(data), count_(count) {}
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::uint64_t operator[](std::size_t i) const {
    std::uint64_t v;
    std::memcpy(&v, data_ + i * 8, 8);
    return v;
  }
  std::span<const std::byte> bytes() const { return {data_, count_ * 8}; }
  class iterator {
   public:
    using value_type = std::uint64_t;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const U64s* s, std::size_t i) : s_(s), i_(i) {}
    std::uint64_t operator*() const { return (*s_)[i_]; }
    iterator& operator++() { return ++i_, *this; }
    iterator operator++(int) { return {s_, i_++}; }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }

   private:
    const U64s* s_ = nullptr;
    std::size_t i_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, count_}; }

 private:
  const std::byte* data_ = nullptr;
  std::size_t count_ = 0;
};

/// The sample_id trailer of a non-sample record (attr.sample_id_all), and the same fields of a
/// sample. `fields` holds the sample_type bits present (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER).
struct SampleId {
  std::uint64_t fields = 0;
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t time = 0;
  std::uint64_t id = 0;  ///< from ID or IDENTIFIER
  std::uint64_t stream_id = 0;
  std::uint32_t cpu = 0;
  bool has(std::uint64_t bit) const { return (fields & bit) != 0; }
};

/// One value of a read_format body.
struct ReadValue {
  std::uint64_t value = 0;
  std::uint64_t id = 0;    ///< read_format ID
  std::uint64_t lost = 0;  ///< read_format LOST (Linux 6.0)
};

/// A read_format body (PERF_RECORD_READ, PERF_SAMPLE_READ): one value, or a group's.
struct ReadValues {
  std::uint64_t format = 0;  ///< the attr's read_format
  std::uint64_t time_enabled = 0, time_running = 0;
  /// One for a single event, the group's members (leader first) with read_format GROUP.
  std::size_t size() const { return count_; }
  ReadValue operator[](std::size_t i) const;
  // internal: read through operator[]
  ReadValue single_{};                ///< without GROUP
  const std::byte* group_ = nullptr;  ///< with GROUP: the first member's value
  std::size_t count_ = 0;
};

/// One PERF_SAMPLE_BRANCH_STACK entry.
struct Branch {
  std::uint64_t from = 0, to = 0;
  std::uint64_t flags = 0;  ///< mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4 spec:2 ...
};

/// PERF_SAMPLE_BRANCH_STACK.
struct BranchStack {
  std::optional<std::uint64_t> hw_idx;  ///< with branch_sample_type HW_INDEX
  U64s words;                           ///< 3 per entry: from, to, flags
  U64s counters;                        ///< branch_sample_type COUNTERS (Linux 6.8): one per entry
  std::size_t size() const { return words.size() / 3; }
  Branch operator[](std::size_t i) const { return {words[3 * i], words[3 * i + 1], words[3 * i + 2]}; }
};

/// PERF_SAMPLE_REGS_USER / REGS_INTR: one value per bit of the attr's mask, lowest bit first.
struct Registers {
  std::uint64_t abi = 0;  ///< PERF_SAMPLE_REGS_ABI_NONE (0: no registers), _32, _64
  std::uint64_t mask = 0;
  U64s values;
  /// The value of register number `reg` (a bit of `mask`), nullopt when not sampled.
  std::optional<std::uint64_t> get(unsigned reg) const;
};

/// PERF_SAMPLE_STACK_USER.
struct UserStack {
  std::span<const std::byte> data;  ///< `size` bytes as the kernel reserved them
  std::uint64_t dyn_size = 0;       ///< how many of them were really copied
  std::uint32_t offset = 0;         ///< where its size field is in the record (perf's -D prints it)
};

/// PERF_SAMPLE_WEIGHT (full) or PERF_SAMPLE_WEIGHT_STRUCT (var1_dw, var2_w, var3_w).
struct Weight {
  std::uint64_t full = 0;
  std::uint32_t var1_dw() const { return static_cast<std::uint32_t>(full); }
  std::uint16_t var2_w() const { return static_cast<std::uint16_t>(full >> 32); }
  std::uint16_t var3_w() const { return static_cast<std::uint16_t>(full >> 48); }
};

/// PERF_RECORD_SAMPLE: the fields whose bits are set in `type` (the attr's sample_type).
struct Sample {
  std::uint64_t type = 0;
  std::uint64_t identifier = 0;
  std::uint64_t ip = 0;
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t time = 0;
  std::uint64_t addr = 0;
  std::uint64_t id = 0;
  std::uint64_t stream_id = 0;
  std::uint32_t cpu = 0, cpu_reserved = 0;
  std::uint64_t period = 0;
  ReadValues read;
  U64s callchain;  ///< with PERF_CONTEXT_* markers (>= 0xfffffffffffff000) as the kernel wrote them
  std::span<const std::byte> raw;  ///< `size` bytes (a tracepoint's: its tracefs format)
  BranchStack branches;
  Registers regs_user;
  UserStack stack_user;
  Weight weight;
  std::uint64_t data_src = 0;
  std::uint64_t transaction = 0;
  Registers regs_intr;
  std::uint64_t phys_addr = 0;
  std::uint64_t cgroup = 0;
  std::uint64_t data_page_size = 0;
  std::uint64_t code_page_size = 0;
  std::span<const std::byte> aux;
  bool has(std::uint64_t bit) const { return (type & bit) != 0; }
};

// callchain context markers (enum perf_callchain_context)
inline constexpr std::uint64_t context_hv = static_cast<std::uint64_t>(-32),
                               context_kernel = static_cast<std::uint64_t>(-128),
                               context_user = static_cast<std::uint64_t>(-512),
                               context_guest = static_cast<std::uint64_t>(-2048),
                               context_guest_kernel = static_cast<std::uint64_t>(-2176),
                               context_guest_user = static_cast<std::uint64_t>(-2560),
                               context_max = static_cast<std::uint64_t>(-4095);

/// What for_each_frame() found.
enum class Chain {
  read,     ///< every frame visited (or `visit` stopped it)
  corrupt,  ///< a marker perf does not know: perf shows none of the chain (script) or drops the sample
            ///< (report)
};

/// perf's reading of a callchain (thread__resolve_callchain_sample): PERF_CONTEXT_* markers are not
/// frames but set the cpumode (misc_kernel, misc_user, ...) of those after them, starting in user
/// space; `visit(ip, cpumode)` is called for each frame and returns false to stop.
///
/// Example: `for_each_frame(s.callchain, [&](std::uint64_t ip, std::uint16_t mode) { ...; return true; });`
template <typename Visit> Chain for_each_frame(const U64s& callchain, Visit&& visit) {
  std::uint16_t mode = misc_user;
  for (std::uint64_t ip : callchain) {
    if (ip >= context_max) {
      switch (ip) {
        case context_hv: mode = misc_hypervisor; continue;
        case context_kernel: mode = misc_kernel; continue;
        case context_user: mode = misc_user; continue;
        case context_guest_kernel: mode = misc_guest_kernel; continue;
        case context_guest_user: mode = misc_guest_user; continue;
        default: return Chain::corrupt;
      }
    }
    if (!visit(ip, mode)) break;
  }
  return Chain::read;
}

struct Mmap {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t addr = 0, len = 0, pgoff = 0;
  std::string_view filename;
};
struct Mmap2 {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t addr = 0, len = 0, pgoff = 0;
  /// misc has MMAP_BUILD_ID: `build_id` is set, maj/min/ino/ino_generation are not.
  std::uint32_t maj = 0, min = 0;
  std::uint64_t ino = 0, ino_generation = 0;
  std::span<const std::byte> build_id;
  std::uint32_t prot = 0, flags = 0;
  std::string_view filename;
};
struct Lost {
  std::uint64_t id = 0, lost = 0;
};
struct Comm {
  std::uint32_t pid = 0, tid = 0;
  std::string_view comm;
  bool exec = false;  ///< misc COMM_EXEC: the name changed because of exec
};
/// PERF_RECORD_EXIT and PERF_RECORD_FORK.
struct Task {
  std::uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  std::uint64_t time = 0;
};
/// PERF_RECORD_THROTTLE and UNTHROTTLE.
struct Throttle {
  std::uint64_t time = 0, id = 0, stream_id = 0;
};
struct Read {
  std::uint32_t pid = 0, tid = 0;
  ReadValues values;
};
struct Aux {
  std::uint64_t aux_offset = 0, aux_size = 0,
                flags = 0;  ///< flags: PERF_AUX_FLAG_TRUNCATED 1, OVERWRITE 2, ...
};
struct ItraceStart {
  std::uint32_t pid = 0, tid = 0;
};
struct LostSamples {
  std::uint64_t lost = 0;
};
/// PERF_RECORD_SWITCH and SWITCH_CPU_WIDE (which names the other task).
struct Switch {
  bool out = false;      ///< misc SWITCH_OUT
  bool preempt = false;  ///< misc SWITCH_OUT_PREEMPT: switched out while runnable
  std::uint32_t next_prev_pid = 0, next_prev_tid = 0;  ///< SWITCH_CPU_WIDE only
};
struct Namespaces {
  std::uint32_t pid = 0, tid = 0;
  U64s words;  ///< 2 per namespace: dev, inode (NET_NS_INDEX 0, UTS 1, IPC 2, PID 3, USER 4, MNT 5, CGROUP 6)
  std::size_t size() const { return words.size() / 2; }
};
struct Ksymbol {
  std::uint64_t addr = 0;
  std::uint32_t len = 0;
  std::uint16_t ksym_type = 0, flags = 0;  ///< type: 1 BPF, 2 OOL; flags: 1 UNREGISTER
  std::string_view name;
};
struct BpfEvent {
  std::uint16_t type = 0, flags = 0;  ///< type: 1 PROG_LOAD, 2 PROG_UNLOAD
  std::uint32_t id = 0;
  std::array<std::uint8_t, 8> tag{};
};
struct Cgroup {
  std::uint64_t id = 0;
  std::string_view path;
};
struct TextPoke {
  std::uint64_t addr = 0;
  std::span<const std::byte> old_bytes, new_bytes;
};
struct AuxOutputHwId {
  std::uint64_t hw_id = 0;
};
/// PERF_RECORD_HEADER_ATTR (pipe mode): an attr and its ids.
struct HeaderAttr {
  Attr attr;
  U64s ids;
};
struct IdIndexEntry {
  std::uint64_t id = 0, idx = 0, cpu = 0, tid = 0;
};
struct IdIndex {
  U64s words;  ///< 4 per entry (5 when a machine pid/vcpu part follows: see entry_words)
  std::size_t entry_words = 4;
  std::size_t size() const { return words.size() / entry_words; }
  IdIndexEntry operator[](std::size_t i) const {
    return {words[i * entry_words], words[i * entry_words + 1], words[i * entry_words + 2],
            words[i * entry_words + 3]};
  }
};
struct TimeConv {
  std::uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  std::optional<std::uint64_t> time_cycles, time_mask;  ///< newer perf
  bool cap_user_time_zero = false, cap_user_time_short = false;
};
struct ThreadMapEntry {
  std::uint64_t pid = 0;
  std::string_view comm;
};
struct ThreadMap {
  std::uint64_t nr = 0;
  std::span<const std::byte> entries;  ///< 24 bytes each: u64 pid, char comm[16]
  ThreadMapEntry operator[](std::size_t i) const;
};
struct HeaderFeature {
  std::uint64_t feature = 0;
  std::span<const std::byte> data;
};
struct TracingData {
  std::uint32_t size = 0;  ///< bytes of tracing data that follow this record in the stream
};
struct BuildId {
  std::uint32_t pid = 0;
  std::span<const std::byte> build_id;  ///< 20 bytes, or `size` of them (misc BUILD_ID_SIZE)
  std::string_view filename;
};
/// A record the decoder keeps as bytes: FINISHED_ROUND, FINISHED_INIT (empty) and the perf records
/// whose bodies only perf's own tools interpret (AUXTRACE_INFO, STAT, CPU_MAP, ...), and COMPRESSED.
struct Opaque {
  std::span<const std::byte> body;
};

using Body = std::variant<Opaque, Sample, Mmap, Mmap2, Lost, Comm, Task, Throttle, Read, Aux, ItraceStart,
                          LostSamples, Switch, Namespaces, Ksymbol, BpfEvent, Cgroup, TextPoke, AuxOutputHwId,
                          HeaderAttr, IdIndex, TimeConv, ThreadMap, HeaderFeature, TracingData, BuildId>;

/// One decoded record.
struct Record {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::uint16_t size = 0;
  std::uint64_t offset = 0;          ///< of its header in the stream or file
  std::span<const std::byte> bytes;  ///< the whole record, header included
  /// Which attr of the Formats it belongs to (samples, and records with a sample_id trailer whose id
  /// is known); npos when it belongs to none.
  std::size_t attr = npos;
  SampleId sample_id;  ///< a non-sample record's trailer (empty without sample_id_all)
  Body body;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  Type kind() const { return static_cast<Type>(type); }
  template <typename T> const T* get() const { return std::get_if<T>(&body); }
};

/// A record or a stream that does not follow the format: `offset()` is the byte (of the stream or
/// file) of the record at fault. ErrorKind::io (exit status 3: an input file that cannot be read).
class DecodeError : public Error {
 public:
  DecodeError(std::uint64_t offset, std::string message)
      : Error(ErrorKind::io, std::move(message)), offset_(offset) {}
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::uint64_t offset_;
};

/// The attrs of one record stream, with their ids: what is needed to know how each record is laid
/// out. With several attrs, a record names its attr by id (SAMPLE_IDENTIFIER, else SAMPLE_ID at a
/// position every attr agrees on), as perf requires.
///
/// Example:
/// ```
/// record::Formats formats;
/// formats.add(attr, ids);
/// auto r = formats.decode(bytes, offset);  // throws DecodeError
/// if (auto* s = r.get<record::Sample>()) std::printf("%d %llx\n", s->pid, (unsigned long long)s->ip);
/// ```
class Formats {
 public:
  /// Add an attr (as opened) and the kernel ids of its fds. Returns its index. Throws Error when the
  /// attrs cannot share one stream: they disagree on sample_id_all, or on where the id is with no
  /// SAMPLE_IDENTIFIER, or the sample_type has bits this decoder does not know.
  std::size_t add(const Attr& attr, std::span<const std::uint64_t> ids = {});
  std::size_t size() const { return attrs_.size(); }
  const Attr& attr(std::size_t i) const { return attrs_[i]; }
  /// The attr an id belongs to, npos when none.
  std::size_t attr_of_id(std::uint64_t id) const;

  /// Decode the record at the start of `bytes` (whose size must be at least the header's size; more
  /// is ignored). `offset` is where it sits in the stream, for errors. Throws DecodeError.
  Record decode(std::span<const std::byte> bytes, std::uint64_t offset = 0) const;
  /// The same into `out`, reusing nothing but avoiding a return copy (the hot path of a reader).
  void decode(std::span<const std::byte> bytes, std::uint64_t offset, Record& out) const;

 private:
  struct Entry {
    std::uint64_t id;
    std::size_t attr;
  };
  std::vector<Attr> attrs_;
  std::vector<Entry> ids_;  // sorted by id
  int id_pos_ = -1;         // u64 index of the id in a sample body (-1: none)
  int is_pos_ = -1;         // u64 index of the id from the end of a trailer (1 = last; -1: none)
  const Attr* format_of(std::span<const std::byte> bytes, std::uint32_t type, std::uint64_t offset,
                        std::size_t& index) const;
};

/// The bytes of the sample_id trailer `attr` gives every non-sample record (0 without sample_id_all):
/// what a writer of synthesized records (perf's COMM and MMAP2 of processes that already ran) pads them
/// with.
///
/// Example: `record::sample_id_size(attr) == 16` for sample_type TID|TIME with sample_id_all.
std::size_t sample_id_size(const Attr& attr);

/// The PERF_RECORD_SAMPLE of `attr` from its body alone (after the 8-byte header): for a caller that
/// knows the attr already. `offset` is the record's, for errors. Throws DecodeError.
///
/// Example: `auto s = record::decode_sample(body, attr, offset);`
Sample decode_sample(std::span<const std::byte> body, const Attr& attr, std::uint64_t offset = 0);

}  // namespace perfspec::record
