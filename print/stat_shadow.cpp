// SPDX-License-Identifier: MIT
// perf's derived figures beside stat's counts (util/stat-shadow.c): CPUs utilized, GHz, insn per
// cycle, the stalled-cycle and miss ratios, rates per second, and -M metrics as perf prints them.
#include "print/stat_shadow.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <fmt/printf.h>

#include "spec/builtin.hpp"
#include "spec/printable.hpp"

namespace perfspec::stat_shadow {

namespace {

using runtime::Count;

bool is_software_clock(const Attr& a) {
  return a.type == spec::type_software && (a.config == 0 || a.config == 1);  // cpu-clock, task-clock
}

// perf's kinds of event for the metric beside a count (stat-shadow.c's enum stat_type).
enum class StatType {
  none,
  nsecs,
  cycles,
  instructions,
  stalled_front,
  stalled_back,
  branches,
  branch_miss,
  cache_refs,
  cache_misses,
  l1d,
  l1i,
  ll,
  dtlb,
  itlb,
  l1d_miss,
  l1i_miss,
  ll_miss,
  dtlb_miss,
  itlb_miss
};

StatType stat_type(const Attr& a) {
  if (is_software_clock(a)) return StatType::nsecs;
  std::uint64_t config = a.config & 0xffffffff;  // perf matches without the extended (hybrid PMU) type
  if (a.type == spec::type_hardware) {
    switch (config) {
      case PERF_COUNT_HW_CPU_CYCLES: return StatType::cycles;
      case PERF_COUNT_HW_INSTRUCTIONS: return StatType::instructions;
      case PERF_COUNT_HW_STALLED_CYCLES_FRONTEND: return StatType::stalled_front;
      case PERF_COUNT_HW_STALLED_CYCLES_BACKEND: return StatType::stalled_back;
      case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return StatType::branches;
      case PERF_COUNT_HW_BRANCH_MISSES: return StatType::branch_miss;
      case PERF_COUNT_HW_CACHE_REFERENCES: return StatType::cache_refs;
      case PERF_COUNT_HW_CACHE_MISSES: return StatType::cache_misses;
      default: return StatType::none;
    }
  }
  if (a.type == spec::type_hw_cache) {
    // perf compares the whole config: the plain cache id is its read accesses, and only read misses
    // have a ratio.
    constexpr auto read_miss = [](std::uint64_t cache) {
      return cache | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
    };
    switch (config) {
      case PERF_COUNT_HW_CACHE_L1D: return StatType::l1d;
      case PERF_COUNT_HW_CACHE_L1I: return StatType::l1i;
      case PERF_COUNT_HW_CACHE_LL: return StatType::ll;
      case PERF_COUNT_HW_CACHE_DTLB: return StatType::dtlb;
      case PERF_COUNT_HW_CACHE_ITLB: return StatType::itlb;
      case read_miss(PERF_COUNT_HW_CACHE_L1D): return StatType::l1d_miss;
      case read_miss(PERF_COUNT_HW_CACHE_L1I): return StatType::l1i_miss;
      case read_miss(PERF_COUNT_HW_CACHE_LL): return StatType::ll_miss;
      case read_miss(PERF_COUNT_HW_CACHE_DTLB): return StatType::dtlb_miss;
      case read_miss(PERF_COUNT_HW_CACHE_ITLB): return StatType::itlb_miss;
      default: return StatType::none;
    }
  }
  return StatType::none;
}

// The unit of the figure perf prints beside an event of this type ("" for the clocks' CPUs utilized
// and the rates per second, whose units depend on the counts).
std::string_view figure_unit(StatType t) {
  switch (t) {
    case StatType::cycles: return "GHz";
    case StatType::instructions: return "insn per cycle";
    case StatType::stalled_front: return "frontend cycles idle";
    case StatType::stalled_back: return "backend cycles idle";
    case StatType::branch_miss: return "of all branches";
    case StatType::cache_misses: return "of all cache refs";
    case StatType::l1d_miss: return "of all L1-dcache accesses";
    case StatType::l1i_miss: return "of all L1-icache accesses";
    case StatType::ll_miss: return "of all LL-cache accesses";
    case StatType::dtlb_miss: return "of all dTLB cache accesses";
    case StatType::itlb_miss: return "of all iTLB cache accesses";
    default: return "";
  }
}

// The modifiers perf requires a metric's events to share (stat-shadow.c's evsel_context).
unsigned context(const Attr& a) {
  return a.exclude_kernel << 1 | a.exclude_user | a.exclude_hv << 2 | a.exclude_host << 3 |
         a.exclude_idle << 4;
}

// What the derived figures of one event are computed from: its aggregate's counts.
struct Inputs {
  const EventSet& set;
  const std::vector<StatCell>& cells;
  bool mean;       // an average of runs
  double wall_ns;  // the wall time the counts cover
};

// stat-shadow.c's find_stat: the first other event of this type with the same modifiers, in the same
// group when the event is in a group of several, on the same PMU except for the clocks. Clocks give
// their nanoseconds, the others their scaled value; 0 when there is none.
double find_stat(const Inputs& in, std::size_t i, StatType type) {
  const auto& e = in.set.events[i];
  bool grouped = in.set.groups[e.group].members.size() > 1;
  for (std::size_t j = 0; j < in.cells.size(); ++j) {
    const auto& other = in.set.events[j];
    if (j == i || (grouped && other.leader != e.leader) || context(other.attr) != context(e.attr) ||
        stat_type(other.attr) != type || (type != StatType::nsecs && other.pmu != e.pmu))
      continue;
    double v = perf_count(in.cells[j].count, in.mean);
    return type == StatType::nsecs ? v : v * perf_scale(other);
  }
  return 0.0;
}

// perf's colours (util/color.h). "" is PERF_COLOR_NORMAL: no escape, but a colour all the same where
// --metric-only sizes a column.
constexpr const char* color_normal = "";
constexpr const char* color_red = "\033[31m";
constexpr const char* color_green = "\033[32m";
constexpr const char* color_yellow = "\033[33m";
constexpr const char* color_magenta = "\033[35m";

// stat-shadow.c's get_ratio_color: red, magenta or yellow above each limit, else normal.
const char* ratio_color(const std::array<double, 3>& limits, double percent) {
  if (percent > limits[0]) return color_red;
  if (percent > limits[1]) return color_magenta;
  if (percent > limits[2]) return color_yellow;
  return color_normal;
}

// perf's colour limits for the miss ratios, in percent (the stalled cycles have their own).
constexpr std::array<double, 3> miss_color_limits{20.0, 10.0, 5.0};

// The figures beside a counted event, as perf_stat__print_shadow_stats computes them; for
// instructions the second is the stalled-cycles figure perf prints on a line of its own.
std::pair<Metric, Metric> shadow_metric(const Inputs& in, std::size_t i, double value) {
  const StatType type = stat_type(in.set.events[i].attr);
  auto ratio = [&](StatType of, const std::array<double, 3>& limits = miss_color_limits) -> Metric {
    double total = find_stat(in, i, of);
    if (value == 0 || total == 0) return {};
    double percent = value / total * 100.0;
    return {percent, "%7.2f%%", std::string(figure_unit(type)), ratio_color(limits, percent)};
  };
  switch (type) {
    case StatType::nsecs:
      if (in.wall_ns == 0) return {};
      return {{perf_count(in.cells[i].count, in.mean) / in.wall_ns, "%8.3f", "CPUs utilized"}, {}};
    case StatType::cycles: {
      double nsecs = find_stat(in, i, StatType::nsecs);
      if (value == 0 || nsecs == 0) return {};
      return {{value / nsecs, "%8.3f", std::string(figure_unit(type))}, {}};
    }
    case StatType::instructions: {
      double cycles = find_stat(in, i, StatType::cycles);
      double stalled =
          std::max(find_stat(in, i, StatType::stalled_front), find_stat(in, i, StatType::stalled_back));
      Metric ipc = cycles == 0 ? Metric{} : Metric{value / cycles, "%7.2f ", std::string(figure_unit(type))};
      if (stalled == 0 || value == 0) return {ipc, {}};
      return {ipc, Metric{stalled / value, "%7.2f ", "stalled cycles per insn"}};
    }
    case StatType::stalled_front: return {ratio(StatType::cycles, {50, 30, 10}), {}};
    case StatType::stalled_back: return {ratio(StatType::cycles, {75, 50, 20}), {}};
    case StatType::branch_miss: return {ratio(StatType::branches), {}};
    case StatType::cache_misses: return {ratio(StatType::cache_refs), {}};
    case StatType::l1d_miss: return {ratio(StatType::l1d), {}};
    case StatType::l1i_miss: return {ratio(StatType::l1i), {}};
    case StatType::ll_miss: return {ratio(StatType::ll), {}};
    case StatType::dtlb_miss: return {ratio(StatType::dtlb), {}};
    case StatType::itlb_miss: return {ratio(StatType::itlb), {}};
    default: {
      // Any other event: its rate per second of a clock's time, with perf's K/M/G steps.
      double nsecs = find_stat(in, i, StatType::nsecs);
      if (nsecs == 0) return {};
      double rate = 1e9 * value / nsecs;
      std::string unit = "/sec";
      for (const char* prefix : {"K", "M", "G"}) {
        if (rate <= 1000.0) break;
        rate /= 1000.0;
        unit = prefix + std::string("/sec");
      }
      return {{rate, "%8.3f", unit}, {}};
    }
  }
}

// perf's wall time: the whole run, or in interval mode the interval asked for (not the one measured).
double wall_ns_of(const StatRun& run) {
  return 1e9 * (run.interval_end && run.interval_seconds ? *run.interval_seconds : run.elapsed_seconds);
}

}  // namespace

// perf's evsel scale: software clocks count nanoseconds and show milliseconds.
double perf_scale(const ResolvedEvent& e) { return is_software_clock(e.attr) ? 1e-6 : e.scale; }
std::string_view perf_unit(const ResolvedEvent& e) {
  return is_software_clock(e.attr) ? std::string_view("msec") : std::string_view(e.unit);
}

// perf's count: scaled for multiplexing and truncated to an integer; 0 when it did not run. A mean
// of several runs keeps its fraction.
double perf_count(const Count& c, bool mean) {
  if (c.state != Count::State::counted) return 0.0;
  return mean ? c.scaled() : std::floor(c.scaled());
}

// A -M metric as perf prints it: "%8.1f" and "UNIT  NAME" with a ScaleUnit, else "%8.2f" and the
// name; green or red by its MetricThreshold (stat-shadow.c's generic_metric). None when it has no
// value.
Metric metric_figure(const StatMetric& m) {
  Metric out{m.value, m.unit.empty() ? "%8.2f" : "%8.1f", m.unit.empty() ? m.name : m.unit + "  " + m.name,
             m.thresholded ? (m.over_threshold ? color_red : color_green) : nullptr};
  if (std::isnan(m.value)) out.format = nullptr, out.color = nullptr;
  return out;
}

// The derived figures of event `e` in unit `u`: none unless it was counted.
std::pair<Metric, Metric> figures(const EventSet& set, const StatUnit& u, std::size_t e, bool mean,
                                  const StatRun& run) {
  const Count& c = u.cells[e].count;
  if (c.state != Count::State::counted) return {};
  return shadow_metric(Inputs{set, u.cells, mean, wall_ns_of(run)}, e,
                       perf_count(c, mean) * perf_scale(set.events[e]));
}

// perf prints a figure with printf and, in CSV, keeps the leading digits and dots of it: "  12.34%"
// is "12.34", and a negative or NaN ratio is an empty field.
std::string metric_text(const Metric& m) { return fmt::sprintf(m.format, m.value); }
std::string metric_digits(const Metric& m) {
  std::string text = metric_text(m);
  text.erase(0, text.find_first_not_of(' '));
  return text.substr(0, text.find_first_not_of("0123456789."));
}

// The header of the figure perf's --metric-only shows for an event of this type, "" for none:
// "CPUs utilized" and the rates per second are left out (valid_only_metric), the stalled cycles per
// instruction too (perf's header never has it), and a ratio "of all ..." is headed by its event's
// name too (fixunit).
std::string metric_only_header(const ResolvedEvent& e) {
  const std::string_view unit = figure_unit(stat_type(e.attr));
  if (unit.empty()) return "";
  return unit.starts_with("of all") ? spec::printable(e.name) + " " + std::string(unit) : std::string(unit);
}

}  // namespace perfspec::stat_shadow
