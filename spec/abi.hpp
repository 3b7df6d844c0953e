// SPDX-License-Identifier: MIT
#pragma once
// The kernel ABI constants perfspec uses (include/uapi/linux/perf_event.h and hw_breakpoint.h), in one
// place. Written out so that values newer than the build machine's headers are there too (Debian
// 12's headers are Linux 6.1's: no PERF_SAMPLE_BRANCH_COUNTERS); each one the installed header also
// defines is checked against it at compile time.
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include <cstdint>

#include "perfspec/attr.hpp"

namespace perfspec::spec {

// perf_type_id
inline constexpr std::uint32_t type_hardware = 0;
inline constexpr std::uint32_t type_software = 1;
inline constexpr std::uint32_t type_tracepoint = 2;
inline constexpr std::uint32_t type_hw_cache = 3;
inline constexpr std::uint32_t type_raw = 4;
inline constexpr std::uint32_t type_breakpoint = 5;

// perf_event_sample_format: attr.hpp's (every bit, public), checked against the system header below
using perfspec::sample_ip, perfspec::sample_tid, perfspec::sample_time, perfspec::sample_addr,
    perfspec::sample_read, perfspec::sample_callchain, perfspec::sample_id, perfspec::sample_cpu,
    perfspec::sample_period, perfspec::sample_stream_id, perfspec::sample_raw, perfspec::sample_branch_stack,
    perfspec::sample_regs_user, perfspec::sample_stack_user, perfspec::sample_aux;

// perf_event_read_format
inline constexpr std::uint64_t format_total_time_enabled = 1U << 0, format_total_time_running = 1U << 1,
                               format_id = 1U << 2, format_group = 1U << 3, format_lost = 1U << 4;

// perf_branch_sample_type: the bits of `branch_type=` (tools/perf/util/parse-branch-options.c)
inline constexpr std::uint64_t branch_user = 1U << 0, branch_kernel = 1U << 1, branch_hv = 1U << 2,
                               branch_any = 1U << 3, branch_any_call = 1U << 4, branch_any_return = 1U << 5,
                               branch_ind_call = 1U << 6, branch_abort_tx = 1U << 7, branch_in_tx = 1U << 8,
                               branch_no_tx = 1U << 9, branch_cond = 1U << 10, branch_call_stack = 1U << 11,
                               branch_ind_jump = 1U << 12, branch_call = 1U << 13, branch_no_flags = 1U << 14,
                               branch_no_cycles = 1U << 15, branch_type_save = 1U << 16,
                               branch_hw_index = 1U << 17, branch_priv_save = 1U << 18,
                               branch_counters = 1U << 19;  // Linux 6.8

// HW_BREAKPOINT_*
inline constexpr std::uint32_t breakpoint_r = 1, breakpoint_w = 2, breakpoint_rw = 3, breakpoint_x = 4;

static_assert(type_hardware == PERF_TYPE_HARDWARE && type_software == PERF_TYPE_SOFTWARE &&
              type_tracepoint == PERF_TYPE_TRACEPOINT && type_hw_cache == PERF_TYPE_HW_CACHE &&
              type_raw == PERF_TYPE_RAW && type_breakpoint == PERF_TYPE_BREAKPOINT);
static_assert(sample_ip == PERF_SAMPLE_IP && sample_tid == PERF_SAMPLE_TID &&
              sample_time == PERF_SAMPLE_TIME && sample_addr == PERF_SAMPLE_ADDR &&
              sample_read == PERF_SAMPLE_READ && sample_callchain == PERF_SAMPLE_CALLCHAIN &&
              sample_id == PERF_SAMPLE_ID && sample_cpu == PERF_SAMPLE_CPU &&
              sample_period == PERF_SAMPLE_PERIOD && sample_stream_id == PERF_SAMPLE_STREAM_ID &&
              sample_raw == PERF_SAMPLE_RAW && sample_branch_stack == PERF_SAMPLE_BRANCH_STACK &&
              sample_regs_user == PERF_SAMPLE_REGS_USER && sample_stack_user == PERF_SAMPLE_STACK_USER &&
              sample_aux == PERF_SAMPLE_AUX);
static_assert(format_total_time_enabled == PERF_FORMAT_TOTAL_TIME_ENABLED &&
              format_total_time_running == PERF_FORMAT_TOTAL_TIME_RUNNING && format_id == PERF_FORMAT_ID &&
              format_group == PERF_FORMAT_GROUP);
#ifdef PERF_FORMAT_LOST
static_assert(format_lost == PERF_FORMAT_LOST);
#endif
static_assert(
    branch_user == PERF_SAMPLE_BRANCH_USER && branch_kernel == PERF_SAMPLE_BRANCH_KERNEL &&
    branch_hv == PERF_SAMPLE_BRANCH_HV && branch_any == PERF_SAMPLE_BRANCH_ANY &&
    branch_any_call == PERF_SAMPLE_BRANCH_ANY_CALL && branch_any_return == PERF_SAMPLE_BRANCH_ANY_RETURN &&
    branch_ind_call == PERF_SAMPLE_BRANCH_IND_CALL && branch_abort_tx == PERF_SAMPLE_BRANCH_ABORT_TX &&
    branch_in_tx == PERF_SAMPLE_BRANCH_IN_TX && branch_no_tx == PERF_SAMPLE_BRANCH_NO_TX &&
    branch_cond == PERF_SAMPLE_BRANCH_COND && branch_call_stack == PERF_SAMPLE_BRANCH_CALL_STACK &&
    branch_ind_jump == PERF_SAMPLE_BRANCH_IND_JUMP && branch_call == PERF_SAMPLE_BRANCH_CALL &&
    branch_no_flags == PERF_SAMPLE_BRANCH_NO_FLAGS && branch_no_cycles == PERF_SAMPLE_BRANCH_NO_CYCLES &&
    branch_type_save == PERF_SAMPLE_BRANCH_TYPE_SAVE && branch_hw_index == PERF_SAMPLE_BRANCH_HW_INDEX &&
    branch_priv_save == PERF_SAMPLE_BRANCH_PRIV_SAVE);
static_assert(breakpoint_r == HW_BREAKPOINT_R && breakpoint_w == HW_BREAKPOINT_W &&
              breakpoint_rw == HW_BREAKPOINT_RW && breakpoint_x == HW_BREAKPOINT_X);

}  // namespace perfspec::spec
