#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perfspec/print.hpp"
#include "spec/builtin.hpp"

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

std::string_view state_name(Count::State s) {
  switch (s) {
    case Count::State::counted: return "counted";
    case Count::State::not_counted: return "not counted";
    case Count::State::not_supported: return "not supported";
  }
  return "";
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
      std::string value = c.state == Count::State::counted ? value_text(display_value(e, c))
                          : c.state == Count::State::not_counted ? "<not counted>" : "<not supported>";
      out += fmt::format("{:>14.6f} {:>18} {:<8} {}\n", *run.interval_end, value,
                         c.state == Count::State::counted ? display_value(e, c).unit : "", e.name);
    }
    return out;
  }
  out += fmt::format("\n Performance counter stats for {}:\n\n", run.target);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto& c = counts[i];
    const auto& e = set.events[i];
    if (c.state == Count::State::counted) {
      auto d = display_value(e, c);
      std::string line = fmt::format("{:>18} {:<8} {}", value_text(d), d.unit, e.name);
      if (c.running_fraction() < 1.0) line += fmt::format("  ({:.2f}%)", 100.0 * c.running_fraction());
      out += line + "\n";
    } else {
      out += fmt::format("{:>18} {:<8} {}\n", c.state == Count::State::not_counted ? "<not counted>" : "<not supported>",
                         "", e.name);
    }
    if (c.failure && c.state != Count::State::counted) {
      out += fmt::format("{:>29}{}: {}", "", c.failure->name, c.failure->hint);
      if (!c.failure->detail.empty()) out += fmt::format(" ({})", c.failure->detail);
      out += "\n";
    } else if (c.state == Count::State::not_counted) {
      out += fmt::format("{:>29}the event was never scheduled on a counter (time_running is 0)\n", "");
    }
    if (!c.note.empty()) out += fmt::format("{:>29}note: {}\n", "", c.note);
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
      value = d.integral ? std::to_string(static_cast<std::uint64_t>(std::llround(d.value))) : fmt::format("{:.6f}", d.value);
      unit = d.unit;
    } else {
      value = c.state == Count::State::not_counted ? "<not counted>" : "<not supported>";
    }
    if (run.interval_end) out += fmt::format("{:.6f},", *run.interval_end);
    out += fmt::format("{},{},{},{},{},{:.2f},{},{}\n", csv_field(value), csv_field(unit), csv_field(e.name),
                       c.time_enabled, c.time_running, 100.0 * c.running_fraction(), state_name(c.state),
                       c.failure ? c.failure->name : "");
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
    x["state"] = state_name(c.state);
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
                    {"hint", c.failure->hint}, {"cpu", c.failure->cpu}, {"detail", c.failure->detail}};
    }
    if (!c.note.empty()) x["note"] = c.note;
    arr.push_back(std::move(x));
  }
  j["counts"] = std::move(arr);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace perfspec
