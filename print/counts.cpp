// SPDX-License-Identifier: MIT
#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <utility>

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

std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string value_text(const DisplayValue& v) {
  if (v.integral) return grouped(static_cast<std::uint64_t>(std::llround(v.value)));
  return fmt::format("{:.2f}", v.value);
}

}  // namespace

std::string describe(const runtime::Note& n) {
  using Kind = runtime::Note::Kind;
  // " on CPU 3" for a per-CPU counter; nothing for a task's (cpu -1: it counts wherever the task runs).
  const std::string on_cpu = n.cpu < 0 ? std::string{} : fmt::format(" on CPU {}", n.cpu);
  switch (n.kind) {
    case Kind::user_only:
      return fmt::format("counted user space only (':u'): kernel counting was refused with {}",
                         spec::errno_name(n.error));
    case Kind::weak_group_alone:
      return fmt::format("weak group fell back to counting its events alone ({} on '{}')",
                         spec::errno_name(n.error), n.event);
    case Kind::enable_failed: return fmt::format("enable failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::disable_failed: return fmt::format("disable failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::reset_failed: return fmt::format("reset failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::read_failed: return fmt::format("read failed{}: {}", on_cpu, spec::errno_name(n.error));
    case Kind::short_read: return fmt::format("short read{}: {} of {} bytes", on_cpu, n.bytes, n.wanted);
  }
  return fmt::format("note of kind {}", static_cast<int>(n.kind));
}

std::string describe(const std::vector<runtime::Note>& notes) {
  std::string out;
  for (const auto& n : notes) fmt::format_to(std::back_inserter(out), "{}{}", out.empty() ? "" : "; ", n);
  return out;
}

DisplayValue display_value(const ResolvedEvent& e, const Count& c) {
  DisplayValue d;
  double scaled = c.scaled();
  if (is_software_clock(e.attr)) {
    d.value = scaled / 1e6;  // nanoseconds
    d.unit = "msec";
    d.integral = false;
  } else if (e.scale != 1.0 || !e.unit.empty()) {
    d.value = scaled * e.scale;
    d.unit = e.unit;
    d.integral = false;
  } else {
    d.value = scaled;
  }
  return d;
}

std::string stat_text(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  std::string out;
  if (run.interval_end) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const auto& c = counts[i];
      const auto& e = set.events[i];
      std::string value =
          c.state == Count::State::counted ? value_text(display_value(e, c)) : fmt::format("{:v}", c.state);
      out += fmt::format("{:>14.6f} {:>18} {:<8} {}\n", *run.interval_end, value,
                         c.state == Count::State::counted ? display_value(e, c).unit : "",
                         spec::printable(e.name));
    }
    return out;
  }
  out += fmt::format("\n Performance counter stats for {}:\n\n", run.target);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto& c = counts[i];
    const auto& e = set.events[i];
    if (c.state == Count::State::counted) {
      auto d = display_value(e, c);
      std::string line = fmt::format("{:>18} {:<8} {}", value_text(d), d.unit, spec::printable(e.name));
      if (c.running_fraction() < 1.0) line += fmt::format("  ({:.2f}%)", 100.0 * c.running_fraction());
      out += line + "\n";
    } else {
      out += fmt::format("{:>18v} {:<8} {}\n", c.state, "", spec::printable(e.name));
    }
    if (c.failure && c.state != Count::State::counted) {
      out += fmt::format("{:>29}{}: {}", "", c.failure->name, spec::printable(c.failure->hint));
      if (!c.failure->detail.empty()) out += fmt::format(" ({})", spec::printable(c.failure->detail));
      out += "\n";
    } else if (c.state == Count::State::not_counted) {
      out += fmt::format("{:>29}the event was never scheduled on a counter (time_running is 0)\n", "");
    }
    if (!c.notes.empty()) out += fmt::format("{:>29}note: {}\n", "", spec::printable(describe(c.notes)));
  }
  out += fmt::format("\n{:>18.9f} seconds time elapsed\n", run.elapsed_seconds);
  if (run.user_seconds) out += fmt::format("\n{:>18.9f} seconds user\n", *run.user_seconds);
  if (run.system_seconds) out += fmt::format("{:>18.9f} seconds sys\n", *run.system_seconds);
  out += "\n";
  return out;
}

std::string stat_csv(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  std::string out;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto& c = counts[i];
    const auto& e = set.events[i];
    std::string value, unit;
    if (c.state == Count::State::counted) {
      auto d = display_value(e, c);
      value = d.integral ? std::to_string(static_cast<std::uint64_t>(std::llround(d.value)))
                         : fmt::format("{:.6f}", d.value);
      unit = d.unit;
    } else {
      value = fmt::format("{:v}", c.state);
    }
    if (run.interval_end) out += fmt::format("{:.6f},", *run.interval_end);
    out += fmt::format("{},{},{},{},{},{:.2f},{},{}\n", csv_field(value), csv_field(unit),
                       csv_field(spec::printable(e.name)), c.time_enabled, c.time_running,
                       100.0 * c.running_fraction(), c.state, c.failure ? c.failure->name : "");
  }
  return out;
}

namespace {

// ---- perf stat -x: the layout of perf 6.12's util/stat-display.c, metrics of util/stat-shadow.c ----

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

// perf's count: scaled for multiplexing and truncated to an integer; 0 when it did not run.
double perf_count(const Count& c) { return c.state == Count::State::counted ? std::floor(c.scaled()) : 0.0; }

// The modifiers perf requires a metric's events to share (stat-shadow.c's evsel_context).
unsigned context(const Attr& a) {
  return a.exclude_kernel << 1 | a.exclude_user | a.exclude_hv << 2 | a.exclude_host << 3 |
         a.exclude_idle << 4;
}

// stat-shadow.c's find_stat: the first other event of this type with the same modifiers, in the same
// group when the event is in a group of several, on the same PMU except for the clocks. Clocks give
// their nanoseconds, the others their scaled value; 0 when there is none.
double find_stat(const EventSet& set, const std::vector<Count>& counts, std::size_t i, StatType type) {
  const auto& e = set.events[i];
  bool grouped = set.groups[e.group].members.size() > 1;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    const auto& other = set.events[j];
    if (j == i || (grouped && other.leader != e.leader) || context(other.attr) != context(e.attr) ||
        stat_type(other.attr) != type || (type != StatType::nsecs && other.pmu != e.pmu))
      continue;
    return type == StatType::nsecs ? perf_count(counts[j]) : perf_count(counts[j]) * perf_scale(other);
  }
  return 0.0;
}

// perf formats a metric with printf and keeps the leading digits and dots of it: "  12.34%" is
// "12.34", and a negative or NaN ratio prints as an empty field.
std::string metric_digits(double value, int precision) {
  std::string text = fmt::format("{:.{}f}", value, precision);
  return text.substr(0, text.find_first_not_of("0123456789."));
}

struct Metric {
  std::string value, unit;  // both empty: perf's empty pair of fields
};

// The metric fields beside a counted event, as perf_stat__print_shadow_stats prints them; and for
// instructions, the stalled-cycles metric perf prints on a line of its own.
std::pair<Metric, std::optional<Metric>> shadow_metric(const EventSet& set, const std::vector<Count>& counts,
                                                       std::size_t i, double value, double wall_ns) {
  auto ratio = [&](StatType of, std::string_view unit) -> Metric {
    double total = find_stat(set, counts, i, of);
    if (value == 0 || total == 0) return {};
    return {metric_digits(value / total * 100.0, 2), std::string(unit)};
  };
  switch (stat_type(set.events[i].attr)) {
    case StatType::nsecs:
      if (wall_ns == 0) return {};
      return {{metric_digits(perf_count(counts[i]) / wall_ns, 3), "CPUs utilized"}, {}};
    case StatType::cycles: {
      double nsecs = find_stat(set, counts, i, StatType::nsecs);
      if (value == 0 || nsecs == 0) return {};
      return {{metric_digits(value / nsecs, 3), "GHz"}, {}};
    }
    case StatType::instructions: {
      double cycles = find_stat(set, counts, i, StatType::cycles);
      double stalled = std::max(find_stat(set, counts, i, StatType::stalled_front),
                                find_stat(set, counts, i, StatType::stalled_back));
      Metric ipc = cycles == 0 ? Metric{} : Metric{metric_digits(value / cycles, 2), "insn per cycle"};
      if (stalled == 0 || value == 0) return {ipc, {}};
      return {ipc, Metric{metric_digits(stalled / value, 2), "stalled cycles per insn"}};
    }
    case StatType::stalled_front: return {ratio(StatType::cycles, "frontend cycles idle"), {}};
    case StatType::stalled_back: return {ratio(StatType::cycles, "backend cycles idle"), {}};
    case StatType::branch_miss: return {ratio(StatType::branches, "of all branches"), {}};
    case StatType::cache_misses: return {ratio(StatType::cache_refs, "of all cache refs"), {}};
    case StatType::l1d_miss: return {ratio(StatType::l1d, "of all L1-dcache accesses"), {}};
    case StatType::l1i_miss: return {ratio(StatType::l1i, "of all L1-icache accesses"), {}};
    case StatType::ll_miss: return {ratio(StatType::ll, "of all LL-cache accesses"), {}};
    case StatType::dtlb_miss: return {ratio(StatType::dtlb, "of all dTLB cache accesses"), {}};
    case StatType::itlb_miss: return {ratio(StatType::itlb, "of all iTLB cache accesses"), {}};
    default: {
      // Any other event: its rate per second of a clock's time, with perf's K/M/G steps.
      double nsecs = find_stat(set, counts, i, StatType::nsecs);
      if (nsecs == 0) return {};
      double rate = 1e9 * value / nsecs;
      std::string unit = "/sec";
      for (const char* prefix : {"K", "M", "G"}) {
        if (rate <= 1000.0) break;
        rate /= 1000.0;
        unit = prefix + std::string("/sec");
      }
      return {{metric_digits(rate, 3), unit}, {}};
    }
  }
}

}  // namespace

std::string stat_perf_csv(const EventSet& set, const std::vector<Count>& counts, const StatRun& run,
                          std::string_view separator) {
  const std::string sep(separator);
  const std::string prefix = run.interval_end ? fmt::format("{:.9f}{}", *run.interval_end, sep) : "";
  // perf's wall time: the whole run, or in interval mode the interval asked for (not the one measured).
  const double wall_ns =
      1e9 * (run.interval_end && run.interval_seconds ? *run.interval_seconds : run.elapsed_seconds);
  std::string out;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto& c = counts[i];
    const auto& e = set.events[i];
    const double scale = perf_scale(e);
    const double value = perf_count(c) * scale;
    out += prefix;
    if (c.state == Count::State::counted) {
      out += std::floor(scale) != scale ? fmt::format("{:.2f}", value) : fmt::format("{:.0f}", value);
    } else {
      fmt::format_to(std::back_inserter(out), "{:v}", c.state);
    }
    // Percentage running in perf's integer arithmetic: a multiplexed event shows whole percents.
    double percent = c.time_enabled != 0 && c.time_running != c.time_enabled
                         ? static_cast<double>(100 * c.time_running / c.time_enabled)
                         : 100.0;
    out += fmt::format("{0}{1}{0}{2}{0}{3}{0}{4:.2f}", sep, perf_unit(e), spec::printable(e.name),
                       c.time_running, percent);
    std::pair<Metric, std::optional<Metric>> metric;
    if (c.state == Count::State::counted) metric = shadow_metric(set, counts, i, value, wall_ns);
    out += fmt::format("{0}{1}{0}{2}\n", sep, metric.first.value, metric.first.unit);
    // perf's new_line_csv: the prefix, four empty fields, then the second metric in the last two.
    if (metric.second)
      out += fmt::format("{0}{1}{1}{1}{1}{1}{2}{1}{3}\n", prefix, sep, metric.second->value,
                         metric.second->unit);
  }
  return out;
}

std::string stat_json(const EventSet& set, const std::vector<Count>& counts, const StatRun& run) {
  nlohmann::ordered_json j;
  j["target"] = run.target;
  if (run.interval_end) j["interval"] = *run.interval_end;
  j["elapsed_seconds"] = run.elapsed_seconds;
  if (run.user_seconds) j["user_seconds"] = *run.user_seconds;
  if (run.system_seconds) j["system_seconds"] = *run.system_seconds;
  if (run.exit_status) j["exit_status"] = *run.exit_status;
  auto arr = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto& c = counts[i];
    const auto& e = set.events[i];
    nlohmann::ordered_json x;
    x["event"] = e.name;
    x["pmu"] = e.pmu;
    x["span"] = {e.span.begin, e.span.end};  // where the event stands in its -e list
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
    if (c.failure) {
      x["error"] = {{"errno", c.failure->error}, {"name", c.failure->name}, {"meaning", c.failure->meaning},
                    {"hint", c.failure->hint},   {"cpu", c.failure->cpu},   {"detail", c.failure->detail}};
    }
    if (!c.notes.empty()) x["note"] = describe(c.notes);
    arr.push_back(std::move(x));
  }
  j["counts"] = std::move(arr);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace perfspec
