// SPDX-License-Identifier: MIT
// `stat` in perf 6.12's layouts: the terminal table (util/stat-display.c's std output), `-x SEP`
// and `-j`, with perf's derived figures (stat_shadow.hpp) beside the counts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <fmt/printf.h>
#include <nlohmann/json.hpp>

#include "perfspec/fmt.hpp"
#include "perfspec/print.hpp"
#include "print/stat_shadow.hpp"
#include "spec/printable.hpp"

namespace perfspec {

std::string grouped_digits(std::string_view plain, const DigitStyle& style) {
  std::size_t begin = !plain.empty() && (plain[0] == '-' || plain[0] == '+') ? 1 : 0;
  std::size_t end = begin;
  while (end < plain.size() && plain[end] >= '0' && plain[end] <= '9') ++end;
  // The integer digits' groups from the right: each size of `grouping` in turn, its last repeated
  // (a size of 0 repeats the one before; CHAR_MAX or a size past the digits ends the grouping).
  std::vector<std::size_t> cuts;  // digits from the right before which a separator goes
  std::size_t at = 0, k = 0, size = 0;
  while (!style.separator.empty()) {
    if (k < style.grouping.size()) {
      const auto g = static_cast<unsigned char>(style.grouping[k++]);
      if (g == 0 && k == 1) break;
      if (g != 0) size = g;
      if (g >= 127) break;
    }
    if (size == 0) break;
    at += size;
    if (at >= end - begin) break;
    cuts.push_back(at);
  }
  std::string out(plain.substr(0, begin));
  for (std::size_t i = begin; i < end; ++i) {
    out += plain[i];
    const std::size_t left = end - i - 1;  // digits after this one
    if (left != 0 && std::find(cuts.begin(), cuts.end(), left) != cuts.end()) out += style.separator;
  }
  for (std::size_t i = end; i < plain.size(); ++i)
    if (plain[i] == '.')
      out += style.point;
    else
      out += plain[i];
  return out;
}

namespace {

using runtime::Count;
using namespace stat_shadow;

// A string as a JSON string literal, quotes included (nlohmann's escaping; bad UTF-8 replaced).
std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
    case Aggregation::cache: return 22;
    case Aggregation::cluster: return 20;
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
    case Aggregation::cache: return "cache,cpus,";
    case Aggregation::cluster: return "cluster,cpus,";
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
    bool per_unit_first = a == Aggregation::core || a == Aggregation::die || a == Aggregation::socket ||
                          a == Aggregation::node || a == Aggregation::cache || a == Aggregation::cluster;
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
        case Aggregation::cache: out_ += fmt::format(" {:<22} cpus", "cache"); break;
        case Aggregation::cluster: out_ += fmt::format(" {:<20} cpus", "cluster"); break;
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
    if (run_.summary) return;  // the intervals' header said it all
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
    if (layout_ == Layout::csv && !run_.summary && (!run_.interval_end || run_.print_interval_header)) {
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
      out_ += point(fmt::format(" {:17.9f} seconds time elapsed", run_.elapsed_seconds));
      if (run_.user_seconds && run_.system_seconds) {
        out_ += "\n\n";
        out_ += point(fmt::format(" {:17.9f} seconds user\n", *run_.user_seconds));
        out_ += point(fmt::format(" {:17.9f} seconds sys\n", *run_.system_seconds));
      }
    } else {
      // At most two more significant digits than the deviation's first (perf's get_precision).
      double sd = run_.elapsed_stddev;
      int precision = (sd > 1 || sd <= 0 ? 0 : static_cast<int>(std::lround(std::ceil(-std::log10(sd))))) + 2;
      if (!run_.run_seconds.empty()) run_table(precision);
      out_ += point(fmt::format(" {:17.{}f} +- {:.{}f} seconds time elapsed", run_.elapsed_seconds, precision,
                                sd, precision));
      double pct = run_.elapsed_seconds != 0 ? 100.0 * sd / run_.elapsed_seconds : 0.0;
      if (pct != 0) out_ += point(fmt::format("  ( +-{:6.2f}% )", pct));
    }
    out_ += "\n\n";
  }

  // perf's print_table (--table): each run's time and its difference from the mean, a bar of one '#'
  // and one more per 5 % of difference, under a title indented as the mean's figure
  void run_table(int precision) {
    const double avg = run_.elapsed_seconds;
    const std::string mean = fmt::format(" {:17.{}f}", avg, precision);
    const std::size_t indent = mean.find_first_not_of(' ');
    out_ += fmt::format("{:{}}# Table of individual measurements:\n", "", indent);
    for (double run : run_.run_seconds) {
      const int bar = 1 + std::abs(static_cast<int>(100.0 * (run - avg) / run) / 5);
      out_ += fmt::format(" {:17.{}f} ({:+.{}f}) {}\n", run, precision, run - avg, precision,
                          std::string(bar, '#'));
    }
    out_ += fmt::format("\n{:{}}# Final result:\n", "", indent);
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
        default: return fmt::format("{:<{}} {:>4} ", u.label, aggregate_width(a), c.members);
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

  // What every layout shows of one event in one aggregate.
  struct Row {
    const StatCell& cell;
    std::size_t e;
    const Count& c;
    bool ok;           // counted
    double value;      // perf's count, scaled
    bool scaled;       // shown with decimals
    std::string id;    // the aggregate's columns
    std::string name;  // the event
    std::string bad;   // <not counted>, ... when not ok
    std::string unit;
    double pct_int;  // perf's percentage running in CSV and JSON: integer arithmetic
    // perf's figure(s) for the event, then the -M metrics whose first event it is: the first on the
    // event's line, each other on a line of its own.
    std::vector<Metric> extra;
    const Metric& first() const {
      static const Metric none{};
      return extra.empty() ? none : extra.front();
    }
  };

  void row(const StatUnit& u, std::size_t e) {
    const StatCell& cell = u.cells[e];
    if (!cell.here) return;  // perf: an event with no CPU of this aggregate is not shown there
    const auto& ev = set_.events[e];
    const Count& c = cell.count;
    const bool mean = report_.runs > 1;
    Row r{cell,
          e,
          c,
          c.state == Count::State::counted,
          perf_count(c, mean) * perf_scale(ev),
          std::floor(perf_scale(ev)) != perf_scale(ev),
          aggregate_id(u, cell),
          display_name(ev, report_.aggregation),
          fmt::format("{:v}", c.state),
          std::string(perf_unit(ev)),
          c.time_enabled != 0 && c.time_running != c.time_enabled
              ? static_cast<double>(100 * c.time_running / c.time_enabled)
              : 100.0,
          {}};
    auto [first, second] = figures(set_, u, e, mean, run_);
    if (first) r.extra.push_back(std::move(first));
    if (second) r.extra.push_back(std::move(second));
    for (const auto& m : cell.metrics)
      if (Metric figure = metric_figure(m)) r.extra.push_back(std::move(figure));  // none without a value
    out_ += prefix_;
    // --summary in -x: "summary" first on a count's line (not on its further figures' lines)
    if (layout_ == Layout::csv && run_.summary && !run_.no_csv_summary) out_ += "summary" + sep_;
    out_ += r.id;
    switch (layout_) {
      case Layout::std: return std_row(r);
      case Layout::csv: return csv_row(r);
      case Layout::json: return json_row(r);
    }
  }

  void std_row(const Row& r) {
    const bool noise = report_.runs > 1 && report_.aggregation == Aggregation::global;
    const Count& c = r.c;
    if (r.ok) {
      std::string count = r.scaled ? fmt::format("{:.2f}", r.value) : fmt::format("{:.0f}", r.value);
      if (run_.digits) count = grouped_digits(count, *run_.digits);
      out_ += fmt::format("{:>18} ", count);
    } else {
      out_ += fmt::format("{:>18} ", r.bad);
    }
    out_ += fmt::format("{:<{}} {:<32}", r.unit, unit_width_, r.name);
    if (!run_.cgroups.empty()) out_ += fmt::format(" {:<16}", cgroup(r.e));
    std_metric(r.first());
    if (noise && r.cell.noise != 0) out_ += point(fmt::format("  ( +-{:6.2f}% )", r.cell.noise));
    if (c.time_running != c.time_enabled && c.time_enabled != 0)
      out_ += point(fmt::format(
          "  ({:.2f}%)", 100.0 * static_cast<double>(c.time_running) / static_cast<double>(c.time_enabled)));
    out_ += "\n";
    for (std::size_t k = 1; k < r.extra.size(); ++k) {
      out_ += prefix_ + r.id;
      if (report_.aggregation == Aggregation::cpu) out_ += std::string(8, ' ');
      out_ += std::string(49, ' ');
      std_metric(r.extra[k]);
      out_ += "\n";
    }
  }

  void csv_row(const Row& r) {
    if (r.ok)
      out_ += r.scaled ? fmt::format("{:.2f}", r.value) : fmt::format("{:.0f}", r.value);
    else
      out_ += r.bad;
    out_ += fmt::format("{0}{1}{0}{2}", sep_, r.unit, r.name);
    if (!run_.cgroups.empty()) out_ += sep_ + cgroup(r.e);
    if (report_.runs > 1) out_ += fmt::format("{}{:.2f}%", sep_, r.cell.noise);
    out_ += fmt::format("{0}{1}{0}{2:.2f}", sep_, r.c.time_running, r.pct_int);
    if (const Metric& f = r.first())
      out_ += fmt::format("{0}{1}{0}{2}\n", sep_, metric_digits(f), f.unit);
    else
      out_ += sep_ + sep_ + "\n";
    // perf's new_line_csv: the prefix, the aggregate, empty fields, then the next figure.
    for (std::size_t k = 1; k < r.extra.size(); ++k) {
      std::size_t fields = 5 + (run_.cgroups.empty() ? 0 : 1);
      out_ += prefix_ + r.id;
      for (std::size_t f = 0; f < fields; ++f) out_ += sep_;
      out_ += fmt::format("{}{}{}\n", metric_digits(r.extra[k]), sep_, r.extra[k].unit);
    }
  }

  void json_row(const Row& r) {
    out_ += r.ok ? fmt::format("\"counter-value\" : \"{:.6f}\", ", r.value)
                 : fmt::format("\"counter-value\" : \"{}\", ", r.bad);
    out_ += fmt::format("\"unit\" : {}, \"event\" : {}, ", json_string(r.unit), json_string(r.name));
    if (!run_.cgroups.empty()) out_ += fmt::format("\"cgroup\" : {}, ", json_string(cgroup(r.e)));
    if (report_.runs > 1) out_ += fmt::format("\"variance\" : {:.2f}, ", r.cell.noise);
    out_ += fmt::format("\"event-runtime\" : {}, \"pcnt-running\" : {:.2f}, ", r.c.time_running, r.pct_int);
    const Metric& f = r.first();
    out_ += fmt::format("\"metric-value\" : \"{:.6f}\", \"metric-unit\" : {}}}\n", f ? f.value : 0.0,
                        json_string(f.unit));
    for (std::size_t k = 1; k < r.extra.size(); ++k)
      out_ += fmt::format("{}{}\"metric-value\" : \"{:.6f}\", \"metric-unit\" : {}}}\n", prefix_, r.id,
                          r.extra[k].value, json_string(r.extra[k].unit));
  }

  void std_metric(const Metric& m) {
    if (!m) {
      out_ += std::string(38, ' ');
      return;
    }
    std::string value = point(metric_text(m));
    int n = 3 + static_cast<int>(value.size());  // what shows: the escapes take no room
    out_ += " # " + painted(value, m.color) + fmt::format(" {:<{}}", m.unit, std::max(0, 38 - n - 1));
  }

  // A figure of the text layout with the locale's decimal point (perf's printf after setlocale), when
  // -B gave a locale's digits.
  std::string point(std::string text) const {
    if (!run_.digits || run_.digits->point == ".") return text;
    std::string out;
    for (char c : text)
      if (c == '.')
        out += run_.digits->point;
      else
        out += c;
    return out;
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

std::string stat_target_words(const StatTarget& t) {
  auto listed = [&](const auto& items, std::string_view by, auto&& text) {
    std::string out;
    for (const auto& x : items) out += (out.empty() ? "" : std::string(by)) + text(x);
    return out;
  };
  if (t.pid) return fmt::format("process id '{}'", *t.pid);
  if (!t.threads.empty())
    return fmt::format("thread id '{}'",
                       !t.as_written.empty() ? t.as_written : listed(t.threads, ",", [](int tid) {
                         return std::to_string(tid);
                       }));
  // perf names CPUs in the header when it counts them, the command otherwise.
  if (t.system_wide && t.cpus.empty()) return "'system wide'";
  if (t.system_wide && t.aggregation != Aggregation::thread)
    return fmt::format("'CPU(s) {}'", !t.as_written.empty() ? t.as_written : spec::cpu_list_text(t.cpus));
  if (t.system_wide) return "'system wide'";
  return fmt::format("'{}'", listed(t.command, " ", [](const std::string& w) { return w; }));
}

}  // namespace perfspec
