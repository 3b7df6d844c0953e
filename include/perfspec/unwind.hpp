// SPDX-License-Identifier: MIT
#pragma once
// The user-space frames of a sample recorded with `--call-graph dwarf`: its user registers and a copy
// of its user stack (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER) unwound with the binaries' call
// frame information, through elfutils' libdwfl, as perf's unwind-libdw.c does.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "perfspec/record.hpp"
#include "perfspec/symbols.hpp"

namespace perfspec::record {

/// Example (perf's order: the kernel's frames of the callchain, then these):
/// ```
/// Unwinder unwinder(symbols);
/// std::vector<std::uint64_t> user;
/// unwinder.unwind(sample, file.feature_string(Feature::arch).value_or(""), 127, user);
/// ```
class Unwinder {
 public:
  /// `symbols` says which binary is mapped where in each process, and finds their files (--symfs,
  /// build ids); it must outlive the unwinder and have followed the records up to the sample.
  explicit Unwinder(Symbolizer& symbols);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  /// Appends to `frames` the sample's user-space frames, innermost first: the address user space was
  /// interrupted at (its registers' instruction pointer: for a sample in the kernel, where it was
  /// entered), then each caller's return address less one (the call, as perf shows it), at most `max`
  /// of them. `arch` is the recording's (perf's HEADER_ARCH: `x86_64`, `aarch64`; empty: this
  /// machine's). Nothing when the sample has no user registers or stack, or the arch is neither
  /// x86_64 nor arm64; as many as could be unwound when a frame has no call frame information (perf's
  /// rule).
  void unwind(const Sample& sample, std::string_view arch, std::size_t max,
              std::vector<std::uint64_t>& frames);

  struct Impl;  // internal (libdwfl's callbacks reach it)

 private:
  std::unique_ptr<Impl> impl_;
};

/// Whether the attr's samples can be unwound: they hold user registers and user stack.
inline bool unwindable(std::uint64_t sample_type) {
  return (sample_type & sample_regs_user) && (sample_type & sample_stack_user);
}

}  // namespace perfspec::record
