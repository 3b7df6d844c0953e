// SPDX-License-Identifier: MIT
#pragma once
// Test helpers: fixture paths, temporary sysfs trees, short attr summaries.
#include <filesystem>
#include <functional>

#include <fmt/format.h>
#include <string>
#include <string_view>

#include "perfspec/perfspec.hpp"

namespace test {

std::string source_dir();
/// `tests/fixtures/<name>` in the source tree.
std::string fixture(std::string_view name);
/// The standard output in an expected file of the CLI tests (tests/cli/expected/NAME, perf 6.12's
/// own output there): what comes before its `--- stderr` line. Throws std::runtime_error when the
/// file or that line is missing.
std::string expected_stdout(std::string_view name);

/// A throwaway sysfs-like tree under /tmp, removed on destruction.
class TempTree {
 public:
  TempTree();
  ~TempTree();
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  const std::string& root() const { return root_; }
  /// Write `content` to `root/relative`, creating folders.
  void write(std::string_view relative, std::string_view content) const;
  /// A PMU folder with a type file: devices/<pmu>/type.
  void pmu(std::string_view name, unsigned type) const;

 private:
  std::string root_;
};

/// Every non-zero attr field but `size`, as `name=value` (hex for config words), in field-table order:
/// the exact form golden files use.
std::string attr_summary(const perfspec::Attr& attr);

/// Machine options for deterministic tests: no libpfm4 (its model depends on the host CPU).
/// A count that was counted: `raw` over `enabled` ns, running `running` of them.
inline perfspec::runtime::Count counted(std::uint64_t raw, std::uint64_t enabled = 100,
                                        std::uint64_t running = 100) {
  perfspec::runtime::Count c;
  c.state = perfspec::runtime::Count::State::counted;
  c.raw = raw;
  c.time_enabled = enabled;
  c.time_running = running;
  return c;
}

/// The ENOSPC hint for breakpoints on this architecture (spec/errno_facts.cpp).
#if defined(__aarch64__)
inline constexpr const char* no_debug_register_hint =
    "the CPU has no free breakpoint or watchpoint register (arm64 has 2 to 16 of each: the kernel log's "
    "'hw-breakpoint: found' line says how many): use fewer breakpoint events at once";
#else
inline constexpr const char* no_debug_register_hint =
    "the CPU has no free debug register (x86 has 4): use fewer breakpoint events at once";
#endif

/// A note as the runtime writes it.
inline perfspec::runtime::Note note(perfspec::runtime::Note::Kind kind, int error, int cpu = -1) {
  return {.kind = kind, .error = error, .cpu = cpu};
}

inline perfspec::spec::MachineOptions no_libpfm4() {
  perfspec::spec::MachineOptions o;
  o.libpfm4 = false;
  return o;
}

/// The message of the error decode's input reader (parse_attr_input) gives `text`, or "no error".
std::string attr_input_error(std::string_view text);
/// The rendered diagnostic of parse+resolve, or "" when it resolves.
std::string error_of(std::string_view text, const perfspec::spec::Machine& machine,
                     const perfspec::ResolveOptions& options = {});
/// The kind of the error resolving `text` gives, by name ("machine description"), or "resolved".
inline std::string error_kind_of(std::string_view text, const perfspec::spec::Machine& machine) {
  try {
    perfspec::resolve(text, machine);
  } catch (const perfspec::Error& e) {
    return std::string(perfspec::error_kind_name(e.kind()));
  }
  return "resolved";
}

/// Runs `body` in a forked child and returns the string it returned: doctest checks in a child would not
/// reach this process, so the child reports and the parent checks. A child that exits otherwise gives
/// "child exited with status N" or "child killed by signal N"; one that throws, "child threw: ...".
/// Writes to a variable, 10 times, counted by a write breakpoint opened with the raw syscall (not
/// through perfspec): 10 where this machine's hardware breakpoints fire, 0 where they open but never
/// trigger (some hypervisors: a Firecracker guest on Linux 6.18, where `perf stat -e mem:ADDR:w` counts
/// 0 too), -1 when the breakpoint cannot be opened. Measured once per process.
long breakpoint_probe_count();

std::string in_child(const std::function<std::string()>& body);

/// The function symbol of this test program whose range [value, value + size) holds the run-time
/// address `address`, read from the program's own ELF symbol table (/proc/self/exe, with libelf) and
/// moved by its load bias: `_ZN...write_k_timesEi.constprop.0` for an ip in a clone the compiler made.
/// Empty when no function symbol holds it.
std::string function_symbol_at(std::uintptr_t address);

/// Drops root for uid and gid 65534 (nobody) with no supplementary groups, for checks of what an
/// unprivileged user meets (root reads anything). False when that fails or this is not root.
bool become_nobody();

}  // namespace test
