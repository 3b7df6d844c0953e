// SPDX-License-Identifier: MIT
#pragma once
// perf 6.12's names of the perf_event_attr enums (tools/perf/util/perf_event_attr_fprintf.c's
// stringify_perf_type_id, _hw_id, _sw_id, _hw_cache_*_id), indexed by value: what perf prints after a
// type or config, and what `perfspec decode` reads back from such a printout.
#include <cstdint>
#include <optional>
#include <string_view>

namespace perfspec::spec {

inline constexpr std::string_view perf_type_names[] = {"PERF_TYPE_HARDWARE",   "PERF_TYPE_SOFTWARE",
                                                       "PERF_TYPE_TRACEPOINT", "PERF_TYPE_HW_CACHE",
                                                       "PERF_TYPE_RAW",        "PERF_TYPE_BREAKPOINT"};
inline constexpr std::string_view perf_hw_names[] = {"PERF_COUNT_HW_CPU_CYCLES",
                                                     "PERF_COUNT_HW_INSTRUCTIONS",
                                                     "PERF_COUNT_HW_CACHE_REFERENCES",
                                                     "PERF_COUNT_HW_CACHE_MISSES",
                                                     "PERF_COUNT_HW_BRANCH_INSTRUCTIONS",
                                                     "PERF_COUNT_HW_BRANCH_MISSES",
                                                     "PERF_COUNT_HW_BUS_CYCLES",
                                                     "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND",
                                                     "PERF_COUNT_HW_STALLED_CYCLES_BACKEND",
                                                     "PERF_COUNT_HW_REF_CPU_CYCLES"};
inline constexpr std::string_view perf_sw_names[] = {
    "PERF_COUNT_SW_CPU_CLOCK",        "PERF_COUNT_SW_TASK_CLOCK",
    "PERF_COUNT_SW_PAGE_FAULTS",      "PERF_COUNT_SW_CONTEXT_SWITCHES",
    "PERF_COUNT_SW_CPU_MIGRATIONS",   "PERF_COUNT_SW_PAGE_FAULTS_MIN",
    "PERF_COUNT_SW_PAGE_FAULTS_MAJ",  "PERF_COUNT_SW_ALIGNMENT_FAULTS",
    "PERF_COUNT_SW_EMULATION_FAULTS", "PERF_COUNT_SW_DUMMY",
    "PERF_COUNT_SW_BPF_OUTPUT",       "PERF_COUNT_SW_CGROUP_SWITCHES"};
inline constexpr std::string_view perf_cache_names[] = {
    "PERF_COUNT_HW_CACHE_L1D",  "PERF_COUNT_HW_CACHE_L1I",  "PERF_COUNT_HW_CACHE_LL",
    "PERF_COUNT_HW_CACHE_DTLB", "PERF_COUNT_HW_CACHE_ITLB", "PERF_COUNT_HW_CACHE_BPU",
    "PERF_COUNT_HW_CACHE_NODE"};
inline constexpr std::string_view perf_cache_op_names[] = {
    "PERF_COUNT_HW_CACHE_OP_READ", "PERF_COUNT_HW_CACHE_OP_WRITE", "PERF_COUNT_HW_CACHE_OP_PREFETCH"};
inline constexpr std::string_view perf_cache_result_names[] = {"PERF_COUNT_HW_CACHE_RESULT_ACCESS",
                                                               "PERF_COUNT_HW_CACHE_RESULT_MISS"};

/// The name of `value` in one of the tables above; empty when it has none.
template <std::size_t N>
constexpr std::string_view perf_name(const std::string_view (&names)[N], std::uint64_t value) {
  return value < N ? names[value] : std::string_view{};
}
/// The value a name stands for in one of the tables above; nullopt when it is not there.
template <std::size_t N>
constexpr std::optional<std::uint64_t> perf_value(const std::string_view (&names)[N], std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return i;
  return std::nullopt;
}

}  // namespace perfspec::spec
