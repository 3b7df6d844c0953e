// SPDX-License-Identifier: MIT
#pragma once
// The pieces of the header block (print/report_header.cpp) that are perf 6.12's helpers: its attr
// printout with the type and config named, its CPU lists, bitmaps, units and clock names.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfspec/attr.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::header {

/// perf_event_attr__fprintf's fields of `attr`, as (label, value): type and config always, named as on
/// `machine` (its PMU of the type, an alias of that PMU with the same config, a tracepoint's
/// `sys:name`, else perf's PERF_* names; nullptr: the PERF_* names only), the others when not 0.
std::vector<std::pair<std::string, std::string>> attr_fields(const Attr& attr, const spec::Machine* machine);
/// perf's unit_number__scnprintf: `24G`, `512M`, `3K`, `900B`.
std::string unit_number(std::uint64_t n);
/// perf's bitmap_scnprintf of `bits` bits, as `0-23,32-199`, cut at perf's 99 characters.
std::string bitmap_list(const std::vector<std::uint64_t>& words, std::uint64_t bits);
/// perf's clockid_name: `monotonic`, `realtime`, ..., `(not found)`.
std::string_view clockid_name(std::uint32_t clockid);
/// `# PMU pmu capabilities: a=1, b=2` (or `: not available`).
std::string caps_line(std::string_view pmu, const std::vector<std::string>& caps);
/// `# cmdline : ` and each word with `'` written `\'`, each followed by a blank.
std::string cmdline_line(const std::vector<std::string>& words);
/// A CPU list read and printed again as perf's cpu maps print it (`1,0-1` is `0-1`; empty is `-1`).
/// Throws Error (io) for text that is no CPU list.
std::string cpu_list(std::string_view list);
/// `# pmu mappings: cpu = 4, breakpoint = 5` (or `: not available`).
std::string pmu_mappings_line(const std::vector<std::pair<std::uint32_t, std::string>>& pmus);
/// The three lines of HEADER_SAMPLE_TIME: first and last sample (seconds with 6 decimals) and the
/// duration in ms.
std::string sample_time_lines(std::pair<std::uint64_t, std::uint64_t> first_last);

}  // namespace perfspec::header
