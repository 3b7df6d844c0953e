// SPDX-License-Identifier: MIT
#pragma once
// perf's derived figures beside stat's counts (util/stat-shadow.c), shared by perf's layouts
// (stat_perf.cpp) and perfspec's own CSV and JSON (stat_own.cpp).
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "perfspec/print.hpp"
#include "perfspec/stat.hpp"

namespace perfspec::stat_shadow {

// perf's end of a coloured figure (util/color.h's PERF_COLOR_RESET).
inline constexpr std::string_view color_reset = "\033[m";

// A derived figure: its value, perf's printf format for the terminal, its unit, and the colour perf
// gives its value.
struct Metric {
  double value = 0;
  const char* format = nullptr;  // nullptr: none
  std::string unit;
  const char* color = nullptr;  // nullptr: none
  explicit operator bool() const { return format != nullptr; }
};

// perf's evsel scale and unit: software clocks count nanoseconds and show milliseconds.
double perf_scale(const ResolvedEvent& e);
std::string_view perf_unit(const ResolvedEvent& e);
// perf's count: scaled for multiplexing and truncated to an integer; 0 when it did not run. A mean
// of several runs keeps its fraction.
double perf_count(const runtime::Count& c, bool mean);
// A -M metric as perf prints it; none when it has no value.
Metric metric_figure(const StatMetric& m);
// The derived figures of event `e` in unit `u` (the second: the stalled cycles per instruction perf
// prints on a line of its own); none unless it was counted.
std::pair<Metric, Metric> figures(const EventSet& set, const StatUnit& u, std::size_t e, bool mean,
                                  const StatRun& run);
// A figure as perf's printf writes it, and the leading digits and dots of that (its CSV field).
std::string metric_text(const Metric& m);
std::string metric_digits(const Metric& m);
// The header of the figure perf's --metric-only shows for an event of this type, "" for none.
std::string metric_only_header(const ResolvedEvent& e);

}  // namespace perfspec::stat_shadow
