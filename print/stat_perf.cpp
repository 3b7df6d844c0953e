// SPDX-License-Identifier: MIT
// `stat` in perf 6.12's layouts: the terminal table (util/stat-display.c's std output), `-x SEP`
// and `-j`, with the derived figures of util/stat-shadow.c beside the counts.
#include <linux/perf_event.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/printf.h>
#include <nlohmann/json.hpp>

#include "perfspec/errno_facts.hpp"
#include "perfspec/fmt.hpp"
#include "perfspec/print.hpp"
#include "spec/builtin.hpp"
#include "spec/printable.hpp"

namespace perfspec {

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
constexpr std::string_view color_reset = "\033[m";

// A derived figure: its value, perf's printf format for the terminal, its unit, and the colour perf
// gives its value.
struct Metric {
  double value = 0;
  const char* format = nullptr;  // nullptr: none
  std::string unit;
  const char* color = nullptr;  // nullptr: none
  explicit operator bool() const { return format != nullptr; }
};

// stat-shadow.c's get_ratio_color: red, magenta or yellow above each limit, else normal.
const char* ratio_color(const std::array<double, 3>& limits, double percent) {
  if (percent > limits[0]) return color_red;
  if (percent > limits[1]) return color_magenta;
  if (percent > limits[2]) return color_yellow;
  return color_normal;
}

// perf's colour limits for the miss ratios, in percent (the stalled cycles have their own).
constexpr std::array<double, 3> miss_color_limits{20.0, 10.0, 5.0};

// A -M metric as perf prints it: "%8.1f" and "UNIT  NAME" with a ScaleUnit, else "%8.2f" and the
// name; green or red by its MetricThreshold (stat-shadow.c's generic_metric). None when it has no
// value.
Metric metric_figure(const StatMetric& m) {
  Metric out{m.value, m.unit.empty() ? "%8.2f" : "%8.1f", m.unit.empty() ? m.name : m.unit + "  " + m.name,
             m.thresholded ? (m.over_threshold ? color_red : color_green) : nullptr};
  if (std::isnan(m.value)) out.format = nullptr, out.color = nullptr;
  return out;
}

// The figures beside a counted event, as perf_stat__print_shadow_stats computes them; for
// instructions the second is the stalled-cycles figure perf prints on a line of its own.
std::pair<Metric, Metric> shadow_metric(const Inputs& in, std::size_t i, double value) {
  auto ratio = [&](StatType of, std::string_view unit,
                   const std::array<double, 3>& limits = miss_color_limits) -> Metric {
    double total = find_stat(in, i, of);
    if (value == 0 || total == 0) return {};
    double percent = value / total * 100.0;
    return {percent, "%7.2f%%", std::string(unit), ratio_color(limits, percent)};
  };
  switch (stat_type(in.set.events[i].attr)) {
    case StatType::nsecs:
      if (in.wall_ns == 0) return {};
      return {{perf_count(in.cells[i].count, in.mean) / in.wall_ns, "%8.3f", "CPUs utilized"}, {}};
    case StatType::cycles: {
      double nsecs = find_stat(in, i, StatType::nsecs);
      if (value == 0 || nsecs == 0) return {};
      return {{value / nsecs, "%8.3f", "GHz"}, {}};
    }
    case StatType::instructions: {
      double cycles = find_stat(in, i, StatType::cycles);
      double stalled =
          std::max(find_stat(in, i, StatType::stalled_front), find_stat(in, i, StatType::stalled_back));
      Metric ipc = cycles == 0 ? Metric{} : Metric{value / cycles, "%7.2f ", "insn per cycle"};
      if (stalled == 0 || value == 0) return {ipc, {}};
      return {ipc, Metric{stalled / value, "%7.2f ", "stalled cycles per insn"}};
    }
    case StatType::stalled_front: return {ratio(StatType::cycles, "frontend cycles idle", {50, 30, 10}), {}};
    case StatType::stalled_back: return {ratio(StatType::cycles, "backend cycles idle", {75, 50, 20}), {}};
    case StatType::branch_miss: return {ratio(StatType::branches, "of all branches"), {}};
    case StatType::cache_misses: return {ratio(StatType::cache_refs, "of all cache refs"), {}};
    case StatType::l1d_miss: return {ratio(StatType::l1d, "of all L1-dcache accesses"), {}};
    case StatType::l1i_miss: return {ratio(StatType::l1i, "of all L1-icache accesses"), {}};
    case StatType::ll_miss: return {ratio(StatType::ll, "of all LL-cache accesses"), {}};
    case StatType::dtlb_miss: return {ratio(StatType::dtlb, "of all dTLB cache accesses"), {}};
    case StatType::itlb_miss: return {ratio(StatType::itlb, "of all iTLB cache accesses"), {}};
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

// The derived figures of event `e` in unit `u`: none unless it was counted.
std::pair<Metric, Metric> figures(const EventSet& set, const StatUnit& u, std::size_t e, bool mean,
                                  const StatRun& run) {
  const Count& c = u.cells[e].count;
  if (c.state != Count::State::counted) return {};
  return shadow_metric(Inputs{set, u.cells, mean, wall_ns_of(run)}, e,
                       perf_count(c, mean) * perf_scale(set.events[e]));
}

// A string as a JSON string literal, quotes included (nlohmann's escaping; bad UTF-8 replaced).
std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// perf prints a figure with printf and, in CSV, keeps the leading digits and dots of it: "  12.34%"
// is "12.34", and a negative or NaN ratio is an empty field.
std::string metric_text(const Metric& m) { return fmt::sprintf(m.format, m.value); }
std::string metric_digits(const Metric& m) {
  std::string text = metric_text(m);
  text.erase(0, text.find_first_not_of(' '));
  return text.substr(0, text.find_first_not_of("0123456789."));
}

enum class Layout { std, csv, json };

// One printed line's parts, computed once for all three layouts.
struct Row {
  const StatUnit* unit;
  std::size_t event;
  bool ok;       // counted (perf: run and ena non-zero)
  double value;  // scaled, in the event's unit
  Metric first, second;
};

// perf's name for the event in this report: -A adds the PMU to names that do not say it
// (util/stat-display.c uniquify_event_name: "cs [software]"), tracepoints and tool events excepted.
std::string display_name(const ResolvedEvent& e, Aggregation a) {
  std::string name = spec::printable(e.name);
  if (a != Aggregation::cpu || e.pmu.empty() || e.pmu == "tracepoint" || e.pmu == "tool") return name;
  if (name.find('/') != std::string::npos || name.starts_with(e.pmu)) return name;
  return fmt::format("{} [{}]", name, e.pmu);
}

// --metric-only: one column per figure.
struct Column {
  std::string header;  // perf's unit: "insn per cycle", "branch-misses of all branches", "%  tma_retiring"
  Metric figure;       // none: an empty column
};

// perf's narrowest --metric-only column (builtin-stat.c's METRIC_ONLY_LEN).
constexpr std::size_t metric_only_width = 20;

std::string pad_left(std::string_view text, std::size_t width) {
  return std::string(width > text.size() ? width - text.size() : 0, ' ') + std::string(text);
}

// The header of the figure perf's --metric-only shows for an event of this type, "" for none:
// "CPUs utilized" and the rates per second are left out (valid_only_metric), the stalled cycles per
// instruction too (perf's header never has it), and a ratio "of all ..." is headed by its event's
// name too (fixunit).
std::string metric_only_header(const ResolvedEvent& e) {
  std::string_view unit;
  switch (stat_type(e.attr)) {
    case StatType::cycles: unit = "GHz"; break;
    case StatType::instructions: unit = "insn per cycle"; break;
    case StatType::stalled_front: unit = "frontend cycles idle"; break;
    case StatType::stalled_back: unit = "backend cycles idle"; break;
    case StatType::branch_miss: unit = "of all branches"; break;
    case StatType::cache_misses: unit = "of all cache refs"; break;
    case StatType::l1d_miss: unit = "of all L1-dcache accesses"; break;
    case StatType::l1i_miss: unit = "of all L1-icache accesses"; break;
    case StatType::ll_miss: unit = "of all LL-cache accesses"; break;
    case StatType::dtlb_miss: unit = "of all dTLB cache accesses"; break;
    case StatType::itlb_miss: unit = "of all iTLB cache accesses"; break;
    default: return "";
  }
  return unit.starts_with("of all") ? spec::printable(e.name) + " " + std::string(unit) : std::string(unit);
}

// The --metric-only columns of event `e` in aggregate `u`, as perf_stat__print_shadow_stats hands
// them to print_metric_only: its figure, then its -M metrics. The headers do not depend on the counts;
// an event not counted there has each of its columns empty.
std::vector<Column> metric_only_columns(const EventSet& set, const StatUnit& u, std::size_t e, bool mean,
                                        const StatRun& run) {
  std::vector<Column> out;
  const bool here = e < u.cells.size() && u.cells[e].here;
  const bool counted = here && u.cells[e].count.state == Count::State::counted;
  if (std::string header = metric_only_header(set.events[e]); !header.empty())
    out.push_back({std::move(header), counted ? figures(set, u, e, mean, run).first : Metric{}});
  if (e < u.cells.size())
    for (const auto& m : u.cells[e].metrics) {
      Metric figure = metric_figure(m);
      if (!counted) figure.format = nullptr, figure.color = nullptr;
      out.push_back({figure.unit, std::move(figure)});
    }
  return out;
}

// The width of the aggregate's column in the table (util/stat-display.c's aggr_header_lens).
std::size_t aggregate_width(Aggregation a) {
  switch (a) {
    case Aggregation::core: return 18;
    case Aggregation::die: return 12;
    case Aggregation::socket:
    case Aggregation::node:
    case Aggregation::cpu: return 6;
    case Aggregation::thread: return 16;
    case Aggregation::global: return 0;
  }
  return 0;
}

// The aggregate's fields in a --metric-only CSV header, ',' standing for the separator
// (aggr_header_csv; the node's has no cpus field although its lines have one, as in perf).
std::string_view aggregate_fields_csv(Aggregation a) {
  switch (a) {
    case Aggregation::core: return "core,cpus,";
    case Aggregation::die: return "die,cpus,";
    case Aggregation::socket: return "socket,cpus,";
    case Aggregation::node: return "node,";
    case Aggregation::cpu: return "cpu,";
    case Aggregation::thread: return "comm-pid,";
    case Aggregation::global: return "";
  }
  return "";
}

class PerfPrinter {
 public:
  PerfPrinter(const EventSet& set, const StatReport& report, const StatRun& run, Layout layout,
              std::string_view sep)
      : set_(set), report_(report), run_(run), layout_(layout), sep_(sep) {
    for (const auto& e : set.events) unit_width_ = std::max(unit_width_, perf_unit(e).size());
    if (run.interval_end) {
      // perf's interval time: whole seconds and nanoseconds.
      auto ns = static_cast<std::uint64_t>(std::llround(*run.interval_end * 1e9));
      std::string t = fmt::format("{}.{:09}", ns / 1000000000, ns % 1000000000);
      prefix_ = layout == Layout::std   ? fmt::format("{:>16} ", t)
                : layout == Layout::csv ? t + sep_
                                        : fmt::format("{{\"interval\" : {}, ", t);
    }
  }

  std::string print() {
    if (run_.metric_only) return print_metric_only();
    if (layout_ == Layout::std) header();
    const auto a = report_.aggregation;
    bool per_unit_first =
        a == Aggregation::core || a == Aggregation::die || a == Aggregation::socket || a == Aggregation::node;
    if (per_unit_first) {
      for (const auto& u : report_.units)
        for (std::size_t e = 0; e < set_.events.size(); ++e) row(u, e);
    } else {
      for (std::size_t e = 0; e < set_.events.size(); ++e)
        for (const auto& u : report_.units) row(u, e);
    }
    if (layout_ == Layout::std) footer();
    return std::move(out_);
  }

 private:
  const EventSet& set_;
  const StatReport& report_;
  const StatRun& run_;
  Layout layout_;
  std::string sep_;
  std::string prefix_;
  std::size_t unit_width_ = 4;
  std::string out_;

  void header() {
    if (run_.interval_end) {
      if (!run_.print_interval_header) return;
      // perf's interval header: time, the aggregate's column, then counts, unit and events.
      out_ += fmt::format("#{:>15}", "time");
      switch (report_.aggregation) {
        case Aggregation::core: out_ += fmt::format(" {:<18} cpus", "core"); break;
        case Aggregation::die: out_ += fmt::format(" {:<12} cpus", "die"); break;
        case Aggregation::socket: out_ += fmt::format(" {:<6} cpus", "socket"); break;
        case Aggregation::node: out_ += fmt::format(" {:<6} cpus", "node"); break;
        case Aggregation::cpu: out_ += fmt::format(" {:<6}", "cpu"); break;
        case Aggregation::thread: out_ += fmt::format(" {:>16}-{:<7}", "comm", "pid"); break;
        case Aggregation::global: break;
      }
      if (run_.metric_only) {
        out_ += " ";
        column_headers();
        return;
      }
      out_ += fmt::format(" {:>18} {:>{}} events\n", "counts", "unit", unit_width_);
      return;
    }
    out_ += fmt::format("\n Performance counter stats for {}", run_.target);
    if (report_.runs > 1) out_ += fmt::format(" ({} runs)", report_.runs);
    out_ += ":\n\n";
    if (run_.metric_only) {
      // Indented past the aggregate's column (print_metric_headers_std).
      out_ += " " + std::string(aggregate_width(report_.aggregation), ' ');
      column_headers();
    }
  }

  // --metric-only (util/stat-display.c with metric_only): a line of column headers, then one line per
  // aggregate holding its figures, each in its column.
  std::string print_metric_only() {
    if (layout_ == Layout::std) header();
    if (layout_ == Layout::csv && (!run_.interval_end || run_.print_interval_header)) {
      // print_metric_headers_csv: the time, the aggregate's fields, then one field per column.
      if (run_.interval_end) out_ += "time" + sep_;
      std::string_view fields = aggregate_fields_csv(report_.aggregation);
      for (char c : fields) out_ += c == ',' ? sep_ : std::string(1, c);
      column_headers();
    }
    for (const auto& u : report_.units) {
      // -A: a CPU none of the events counts on has no line (print_no_aggr_metric).
      if (report_.aggregation == Aggregation::cpu &&
          std::none_of(u.cells.begin(), u.cells.end(), [](const StatCell& c) { return c.here; }))
        continue;
      metric_only_row(u);
    }
    if (layout_ == Layout::std) footer();
    return std::move(out_);
  }

  // The columns of every event, in order, in aggregate `u`.
  std::vector<Column> columns(const StatUnit& u) const {
    std::vector<Column> out;
    for (std::size_t e = 0; e < set_.events.size(); ++e) {
      auto more = metric_only_columns(set_, u, e, report_.runs > 1, run_);
      std::move(more.begin(), more.end(), std::back_inserter(out));
    }
    return out;
  }

  // The header of each column (of the first aggregate's: they are the same in every one), then the
  // end of the line; none in JSON.
  void column_headers() {
    std::vector<Column> cols = report_.units.empty() ? std::vector<Column>{} : columns(report_.units[0]);
    if (layout_ == Layout::json) return;
    for (const auto& c : cols)
      out_ += layout_ == Layout::csv ? c.header + sep_ : pad_left(c.header, metric_only_width) + " ";
    out_ += "\n";
  }

  void metric_only_row(const StatUnit& u) {
    // print_metric_begin: the interval and the aggregate (its CPUs counted by the first event).
    out_ += prefix_;
    out_ += aggregate_id(u, u.cells.empty() ? StatCell{} : u.cells.front());
    bool first = true;
    for (const auto& c : columns(u)) {
      switch (layout_) {
        case Layout::std: {
          // print_metric_only: at least 20 wide, or the header's length and one; the escapes of a
          // colour are counted in, whether they are printed or not, as perf counts them.
          std::size_t width = metric_only_width;
          if (width < c.header.size()) width = c.header.size() + 1;
          if (c.figure.color) width += std::strlen(c.figure.color) + color_reset.size();
          out_ += pad_left(c.figure ? painted(metric_text(c.figure), c.figure.color) : "", width) + " ";
          break;
        }
        case Layout::csv: out_ += (c.figure ? metric_digits(c.figure) : "") + sep_; break;
        case Layout::json: {
          // print_metric_only_json: a figure without digits (none, negative, NaN) is left out.
          std::string digits = c.figure ? metric_digits(c.figure) : "";
          if (c.header.empty() || digits.empty()) break;
          out_ += fmt::format("{}{} : \"{}\"", first ? "" : ", ", json_string(c.header), digits);
          first = false;
          break;
        }
      }
    }
    if (layout_ == Layout::json) out_ += first ? "\"metric-value\" : \"none\"}" : "}";
    out_ += "\n";
  }

  void footer() {
    if (run_.interval_end) return;
    if (!run_.null_run) out_ += "\n";
    if (report_.runs <= 1) {
      out_ += fmt::format(" {:17.9f} seconds time elapsed", run_.elapsed_seconds);
      if (run_.user_seconds && run_.system_seconds) {
        out_ += "\n\n";
        out_ += fmt::format(" {:17.9f} seconds user\n", *run_.user_seconds);
        out_ += fmt::format(" {:17.9f} seconds sys\n", *run_.system_seconds);
      }
    } else {
      // At most two more significant digits than the deviation's first (perf's get_precision).
      double sd = run_.elapsed_stddev;
      int precision = (sd > 1 || sd <= 0 ? 0 : static_cast<int>(std::lround(std::ceil(-std::log10(sd))))) + 2;
      out_ += fmt::format(" {:17.{}f} +- {:.{}f} seconds time elapsed", run_.elapsed_seconds, precision, sd,
                          precision);
      double pct = run_.elapsed_seconds != 0 ? 100.0 * sd / run_.elapsed_seconds : 0.0;
      if (pct != 0) out_ += fmt::format("  ( +-{:6.2f}% )", pct);
    }
    out_ += "\n\n";
  }

  // perf's aggregate column(s) before the count.
  std::string aggregate_id(const StatUnit& u, const StatCell& c) const {
    const auto a = report_.aggregation;
    if (a == Aggregation::global) return layout_ == Layout::json && !run_.interval_end ? "{" : "";
    if (layout_ == Layout::std) {
      switch (a) {
        case Aggregation::cpu: return fmt::format("CPU{:<3} ", u.cpu);
        case Aggregation::thread: {
          auto dash = u.label.rfind('-');
          return fmt::format("{:>16}-{:<7} ", u.label.substr(0, dash), u.label.substr(dash + 1));
        }
        case Aggregation::core: return fmt::format("{:<18} {:>4} ", u.label, c.members);
        case Aggregation::die: return fmt::format("{:<12} {:>4} ", u.label, c.members);
        default: return fmt::format("{:<6} {:>4} ", u.label, c.members);
      }
    }
    if (layout_ == Layout::csv) {
      if (a == Aggregation::cpu || a == Aggregation::thread) return u.label + sep_;
      return fmt::format("{}{}{}{}", u.label, sep_, c.members, sep_);
    }
    std::string open = run_.interval_end ? "" : "{";
    switch (a) {
      case Aggregation::cpu: return fmt::format("{}\"cpu\" : \"{}\", ", open, u.cpu);
      case Aggregation::thread: return fmt::format("{}\"thread\" : {}, ", open, json_string(u.label));
      default:
        return fmt::format("{}\"{}\" : \"{}\", \"aggregate-number\" : {}, ", open, aggregation_name(a),
                           u.label, c.members);
    }
  }

  void row(const StatUnit& u, std::size_t e) {
    const StatCell& cell = u.cells[e];
    if (!cell.here) return;  // perf: an event with no CPU of this aggregate is not shown there
    const auto& ev = set_.events[e];
    const Count& c = cell.count;
    const bool mean = report_.runs > 1;
    const bool ok = c.state == Count::State::counted;
    const double value = perf_count(c, mean) * perf_scale(ev);
    // perf's figure(s) for the event, then the -M metrics whose first event it is: the first on the
    // event's line, each other on a line of its own.
    std::vector<Metric> extra;
    {
      auto [first, second] = figures(set_, u, e, mean, run_);
      if (first) extra.push_back(std::move(first));
      if (second) extra.push_back(std::move(second));
      for (const auto& m : cell.metrics)
        if (Metric figure = metric_figure(m)) extra.push_back(std::move(figure));  // none without a value
    }
    const Metric none{};
    const Metric& first_figure = extra.empty() ? none : extra.front();
    const std::string id = aggregate_id(u, cell);
    const std::string name = display_name(ev, report_.aggregation);
    const bool scaled = std::floor(perf_scale(ev)) != perf_scale(ev);
    const std::string bad = fmt::format("{:v}", c.state);
    const std::string unit(perf_unit(ev));
    // perf's percentage running is integer arithmetic in CSV and JSON, a double in the table.
    const double pct_int = c.time_enabled != 0 && c.time_running != c.time_enabled
                               ? static_cast<double>(100 * c.time_running / c.time_enabled)
                               : 100.0;
    const bool noise = report_.runs > 1 && report_.aggregation == Aggregation::global;
    out_ += prefix_;
    out_ += id;
    switch (layout_) {
      case Layout::std: {
        if (ok)
          out_ += scaled ? fmt::format("{:>18.2f} ", value) : fmt::format("{:>18.0f} ", value);
        else
          out_ += fmt::format("{:>18} ", bad);
        out_ += fmt::format("{:<{}} {:<32}", unit, unit_width_, name);
        if (!run_.cgroups.empty()) out_ += fmt::format(" {:<16}", cgroup(e));
        std_metric(first_figure);
        if (noise && cell.noise != 0) out_ += fmt::format("  ( +-{:6.2f}% )", cell.noise);
        if (c.time_running != c.time_enabled && c.time_enabled != 0)
          out_ += fmt::format("  ({:.2f}%)", 100.0 * static_cast<double>(c.time_running) /
                                                 static_cast<double>(c.time_enabled));
        out_ += "\n";
        for (std::size_t k = 1; k < extra.size(); ++k) {
          out_ += prefix_ + id;
          if (report_.aggregation == Aggregation::cpu) out_ += std::string(8, ' ');
          out_ += std::string(49, ' ');
          std_metric(extra[k]);
          out_ += "\n";
        }
        break;
      }
      case Layout::csv: {
        if (ok)
          out_ += scaled ? fmt::format("{:.2f}", value) : fmt::format("{:.0f}", value);
        else
          out_ += bad;
        out_ += fmt::format("{0}{1}{0}{2}", sep_, unit, name);
        if (!run_.cgroups.empty()) out_ += sep_ + cgroup(e);
        if (report_.runs > 1) out_ += fmt::format("{}{:.2f}%", sep_, cell.noise);
        out_ += fmt::format("{0}{1}{0}{2:.2f}", sep_, c.time_running, pct_int);
        if (first_figure)
          out_ += fmt::format("{0}{1}{0}{2}\n", sep_, metric_digits(first_figure), first_figure.unit);
        else
          out_ += sep_ + sep_ + "\n";
        // perf's new_line_csv: the prefix, the aggregate, empty fields, then the next figure.
        for (std::size_t k = 1; k < extra.size(); ++k) {
          std::size_t fields = 5 + (run_.cgroups.empty() ? 0 : 1);
          out_ += prefix_ + id;
          for (std::size_t f = 0; f < fields; ++f) out_ += sep_;
          out_ += fmt::format("{}{}{}\n", metric_digits(extra[k]), sep_, extra[k].unit);
        }
        break;
      }
      case Layout::json: {
        out_ += ok ? fmt::format("\"counter-value\" : \"{:.6f}\", ", value)
                   : fmt::format("\"counter-value\" : \"{}\", ", bad);
        out_ += fmt::format("\"unit\" : {}, \"event\" : {}, ", json_string(unit), json_string(name));
        if (!run_.cgroups.empty()) out_ += fmt::format("\"cgroup\" : {}, ", json_string(cgroup(e)));
        if (report_.runs > 1) out_ += fmt::format("\"variance\" : {:.2f}, ", cell.noise);
        out_ += fmt::format("\"event-runtime\" : {}, \"pcnt-running\" : {:.2f}, ", c.time_running, pct_int);
        out_ += fmt::format("\"metric-value\" : \"{:.6f}\", \"metric-unit\" : {}}}\n",
                            first_figure ? first_figure.value : 0.0, json_string(first_figure.unit));
        for (std::size_t k = 1; k < extra.size(); ++k)
          out_ += fmt::format("{}{}\"metric-value\" : \"{:.6f}\", \"metric-unit\" : {}}}\n", prefix_, id,
                              extra[k].value, json_string(extra[k].unit));
        break;
      }
    }
  }

  void std_metric(const Metric& m) {
    if (!m) {
      out_ += std::string(38, ' ');
      return;
    }
    std::string value = metric_text(m);
    int n = 3 + static_cast<int>(value.size());  // what shows: the escapes take no room
    out_ += " # " + painted(value, m.color) + fmt::format(" {:<{}}", m.unit, std::max(0, 38 - n - 1));
  }

  std::string cgroup(std::size_t e) const { return e < run_.cgroups.size() ? run_.cgroups[e] : ""; }

  // `text` between perf's escapes for `color` when colouring is on (util/color.c): plain for no
  // colour and for the normal one.
  std::string painted(const std::string& text, const char* color) const {
    if (!run_.color || !color || !*color) return text;
    return color + text + std::string(color_reset);
  }
};

}  // namespace

std::string stat_text(const EventSet& set, const StatReport& report, const StatRun& run) {
  std::string out = PerfPrinter(set, report, run, Layout::std, " ").print();
  if (!run.interval_end) out += stat_problems(set, report, run.cgroups);
  return out;
}

std::string stat_text(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  return stat_text(set, global_report(counts), run);
}

std::string stat_perf_csv(const EventSet& set, const StatReport& report, const StatRun& run,
                          std::string_view separator) {
  return PerfPrinter(set, report, run, Layout::csv, separator).print();
}

std::string stat_perf_csv(const EventSet& set, const std::vector<Count>& counts, const StatRun& run,
                          std::string_view separator) {
  return stat_perf_csv(set, global_report(counts), run, separator);
}

std::string stat_perf_json(const EventSet& set, const StatReport& report, const StatRun& run) {
  return PerfPrinter(set, report, run, Layout::json, "").print();
}

namespace {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A cell's value as perfspec's own formats give it: whole numbers exact, others with six decimals.
std::string own_value(const ResolvedEvent& e, const Count& c, bool mean) {
  auto d = display_value(e, c);
  if (d.integral && !mean) return std::to_string(static_cast<std::uint64_t>(std::llround(d.value)));
  return fmt::format("{:.6f}", d.value);
}

// Every event of every unit where it counted, in perfspec's order: per event, then per unit.
template <typename Fn> void for_each_cell(const EventSet& set, const StatReport& report, Fn&& fn) {
  for (std::size_t e = 0; e < set.events.size(); ++e)
    for (const auto& u : report.units)
      if (e < u.cells.size() && u.cells[e].here) fn(u, e);
}

}  // namespace

std::string stat_csv(const EventSet& set, const StatReport& report, const StatRun& run, bool header) {
  std::string out;
  if (header)
    out +=
        "time,aggregate,members,value,unit,event,time_enabled,time_running,running_percent,noise_percent,"
        "state,errno,metric_value,metric_unit\n";
  const bool mean = report.runs > 1;
  for_each_cell(set, report, [&](const StatUnit& u, std::size_t e) {
    const auto& cell = u.cells[e];
    const auto& c = cell.count;
    const auto& ev = set.events[e];
    std::string value =
        c.state == Count::State::counted ? own_value(ev, c, mean) : fmt::format("{:v}", c.state);
    std::string unit = c.state == Count::State::counted ? display_value(ev, c).unit : "";
    const Metric m = figures(set, u, e, mean, run).first;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{:.2f},{},{},{},{},{}\n",
        run.interval_end ? fmt::format("{:.9f}", *run.interval_end) : "", csv_field(u.label),
        report.aggregation == Aggregation::global ? "" : std::to_string(cell.members), csv_field(value),
        csv_field(unit), csv_field(spec::printable(ev.name)), c.time_enabled, c.time_running,
        100.0 * c.running_fraction(), mean ? fmt::format("{:.2f}", cell.noise) : "", c.state,
        c.failure ? c.failure->name : "", m ? fmt::format("{:.6f}", m.value) : "", csv_field(m.unit));
    // The -M metrics computed in this aggregate whose first event this is: a line each, state `metric`.
    for (const auto& sm : cell.metrics)
      out += fmt::format("{},{},{},{:.6f},{},{},,,,,metric,,,\n",
                         run.interval_end ? fmt::format("{:.9f}", *run.interval_end) : "", csv_field(u.label),
                         report.aggregation == Aggregation::global ? "" : std::to_string(cell.members),
                         sm.value, csv_field(sm.unit), csv_field(spec::printable(sm.name)));
  });
  return out;
}

std::string stat_csv(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  return stat_csv(set, global_report(counts), run, true);
}

std::string stat_json(const EventSet& set, const StatReport& report, const StatRun& run) {
  nlohmann::ordered_json j;
  j["schema"] = "perfspec-stat/1";
  j["target"] = run.target;
  if (run.interval_end) j["interval"] = *run.interval_end;
  j["elapsed_seconds"] = run.elapsed_seconds;
  if (report.runs > 1) {
    j["runs"] = report.runs;
    j["elapsed_stddev"] = run.elapsed_stddev;
  }
  if (run.user_seconds) j["user_seconds"] = *run.user_seconds;
  if (run.system_seconds) j["system_seconds"] = *run.system_seconds;
  if (run.exit_status) j["exit_status"] = *run.exit_status;
  j["aggregation"] = aggregation_name(report.aggregation);
  const bool mean = report.runs > 1;
  auto arr = nlohmann::ordered_json::array();
  for_each_cell(set, report, [&](const StatUnit& u, std::size_t i) {
    const auto& cell = u.cells[i];
    const auto& c = cell.count;
    const auto& e = set.events[i];
    nlohmann::ordered_json x;
    if (report.aggregation != Aggregation::global) {
      x["aggregate"] = u.label;
      x["members"] = cell.members;
    }
    x["event"] = e.name;
    x["pmu"] = e.pmu;
    x["span"] = {e.span.begin, e.span.end};  // where the event stands in its -e list
    if (i < run.cgroups.size()) x["cgroup"] = run.cgroups[i];
    x["state"] = fmt::to_string(c.state);
    if (c.state == Count::State::counted) {
      auto d = display_value(e, c);
      x["value"] = d.value;
      x["unit"] = d.unit;
    } else {
      x["value"] = nullptr;
      x["unit"] = "";
    }
    x["raw"] = c.raw;
    x["time_enabled"] = c.time_enabled;
    x["time_running"] = c.time_running;
    x["running_fraction"] = c.running_fraction();
    if (mean) x["noise_percent"] = cell.noise;
    const auto m = figures(set, u, i, mean, run);
    if (m.first) x["metric"] = {{"value", m.first.value}, {"unit", m.first.unit}};
    if (m.second) x["metric2"] = {{"value", m.second.value}, {"unit", m.second.unit}};
    auto metrics = nlohmann::json::array();
    for (const auto& sm : cell.metrics)
      if (!std::isnan(sm.value))  // one without a value is not shown
        metrics.push_back({{"name", sm.name},
                           {"value", sm.value},
                           {"unit", sm.unit},
                           {"over_threshold", sm.over_threshold}});
    if (!metrics.empty()) x["metrics"] = std::move(metrics);
    if (c.failure) {
      x["error"] = {{"errno", c.failure->error}, {"name", c.failure->name}, {"meaning", c.failure->meaning},
                    {"hint", c.failure->hint},   {"cpu", c.failure->cpu},   {"detail", c.failure->detail}};
    }
    if (!c.notes.empty()) x["note"] = describe(c.notes);
    arr.push_back(std::move(x));
  });
  j["counts"] = std::move(arr);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string stat_json(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  return stat_json(set, global_report(counts), run);
}

std::string stat_problems(const EventSet& set, const StatReport& report,
                          const std::vector<std::string>& cgroups) {
  // One paragraph per distinct reason, naming every event it stopped: perf repeats nothing either.
  struct Reason {
    std::string text;
    std::vector<std::string> events;
  };
  std::vector<Reason> reasons;
  auto add = [&](std::string text, const std::string& event) {
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& r) { return r.text == text; });
    if (it == reasons.end()) it = reasons.insert(reasons.end(), Reason{std::move(text), {}});
    if (std::find(it->events.begin(), it->events.end(), event) == it->events.end())
      it->events.push_back(event);
  };
  for (const auto& u : report.units)
    for (std::size_t e = 0; e < u.cells.size() && e < set.events.size(); ++e) {
      const auto& c = u.cells[e].count;
      if (!u.cells[e].here) continue;
      const std::string name = spec::printable(set.events[e].name);
      if (c.failure && c.state != Count::State::counted) {
        std::string text = fmt::format("{}: {}", c.failure->name, spec::printable(c.failure->hint));
        if (!c.failure->detail.empty()) text += fmt::format(" ({})", spec::printable(c.failure->detail));
        add(std::move(text), name);
      } else if (c.state == Count::State::not_counted && e < cgroups.size() && !cgroups[e].empty()) {
        add(fmt::format("no task of cgroup '{}' ran while it was enabled (time_running is 0): an event of a "
                        "cgroup counts only while the cgroup's tasks run",
                        spec::printable(cgroups[e])),
            name);
      } else if (c.state == Count::State::not_counted) {
        add("never scheduled on a counter (time_running is 0): the event was enabled but did not run", name);
      }
      if (!c.notes.empty()) add(fmt::format("note: {}", spec::printable(describe(c.notes))), name);
    }
  std::string out;
  for (const auto& r : reasons) {
    std::string names;
    for (const auto& n : r.events) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("{}:\n    {}\n", names, r.text);
  }
  if (!out.empty()) out += "\n";
  return out;
}

}  // namespace perfspec
