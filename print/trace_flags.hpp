// SPDX-License-Identifier: MIT
#pragma once
// perf trace's names of flags and values (the kernel's UAPI constants, without their prefixes, as perf
// prints them), and the printers perf's beautifiers use for them.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfspec::trace_detail {

// Values by number from `first` (perf's strarrays); names[i] may be empty for a hole.
struct Values {
  long first;
  std::vector<std::string_view> names;
};
// Flags in the order perf prints them. `per_bit`: perf's strarray of bits (lowest first, each bit
// without a name printed alone); otherwise its P_FLAG lists (what no name took, as one hex number).
struct Bits {
  std::vector<std::pair<std::uint64_t, std::string_view>> names;
  bool per_bit = false;
};

extern const Values rlimit_resources;
extern const Values sighow;
extern const Values whences;
extern const Values clockids;
extern const Values itimers;
extern const Values epoll_ctl_ops;
extern const Values socket_families;
extern const Values arch_prctl_1;
extern const Values arch_prctl_2;
extern const Values arch_prctl_3;
extern const Bits mmap_prot;
extern const Bits mmap_flags;
extern const Bits mremap_flags;
extern const Bits fs_at_flags;
extern const Bits clone_flags;
extern const Bits open_flags;
extern const Bits getrandom_flags;
extern const Bits waitid_options;
extern const Bits pipe_flags;
extern const Bits mode_bits;
constexpr std::uint64_t o_sync = 04010000, o_dsync = 010000, o_trunc = 01000, o_wronly = 01;

/// Named flags in `bits`' order, then what is left (perf's P_FLAG printers), or each unnamed bit alone.
std::string flags_text(std::uint64_t value, const Bits& bits);
/// open(2)'s flags as perf's open__scnprintf_flags prints them.
std::string open_flags_text(std::uint64_t value);
/// access(2)'s mode: F for 0, else R, W, X.
std::string access_mode_text(std::uint64_t value);
/// A value's name, else the number (hex or decimal).
std::string value_text(long value, const Values& values, bool hex);
/// A signal's name without SIG (`INT`), else its number in hex.
std::string signal_text(long sig);
/// futex(2)'s op; `mask` gains the arguments the command ignores (bit per argument).
std::string futex_op_text(std::uint64_t op, std::uint8_t& mask);
/// madvise(2)'s behavior as `MADV_NAME`.
std::string madvise_text(long behavior);

}  // namespace perfspec::trace_detail
