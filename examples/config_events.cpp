// SPDX-License-Identifier: MIT
// Event sets and metrics kept in a config file, with diagnostics that point into that file:
//   config_events examples/events.conf [SYSFS_ROOT]
// resolves each event set, plans each metric (perf's metric language: metric::plan with the file's
// definitions), counts the metrics' events around some work of its own and prints their values. A bad
// line prints `events.conf:8:25: error: ...` and the caret under the right character.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <perfspec/perfspec.hpp>

namespace {

// The work counted: touch `pages` fresh pages, one page fault each.
void work(std::size_t pages) {
  std::vector<char> memory(pages * 4096);
  for (std::size_t i = 0; i < memory.size(); i += 4096) static_cast<volatile char&>(memory[i]) = 1;
}

std::string trim_right(std::string s) {
  s.erase(s.find_last_not_of(" \t\r") + 1);
  return s;
}

// Count the plan's events around work() and compute its metrics, as `perfspec stat -M` does: a count
// scaled for multiplexing, NaN (and why) for an event not counted, duration_time filled in here.
void count_metrics(const perfspec::metric::Plan& plan) {
  using perfspec::runtime::Count;
  auto counters = perfspec::runtime::Counters::open(plan.events, perfspec::runtime::Target::self_thread());
  auto start = std::chrono::steady_clock::now();
  counters.enable();
  work(1024);
  counters.disable();
  const double elapsed_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  auto counts = counters.read();
  std::vector<double> values;
  std::vector<std::string> why;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const Count& c = counts[i];
    if (plan.events.events[i].tool == perfspec::ToolEvent::duration_time) {  // the program's to count
      values.push_back(elapsed_ns);
      why.emplace_back();
      continue;
    }
    const bool ok = c.state == Count::State::counted;
    values.push_back(ok ? c.scaled() : std::numeric_limits<double>::quiet_NaN());
    why.push_back(ok || !c.failure ? "" : c.failure->name + ": " + c.failure->hint);
  }
  auto results = perfspec::metric::evaluate(plan, values, why);
  for (std::size_t k = 0; k < plan.metrics.size(); ++k) {
    const auto& m = plan.metrics[k];
    if (std::isnan(results[k].value))
      std::printf("%s: no value (%s)\n", m.definition.name.c_str(), results[k].why.c_str());
    else
      std::printf("%s = %.3f%s%s\n", m.definition.name.c_str(), results[k].value,
                  m.scale.unit.empty() ? "" : " ", m.scale.unit.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "events.conf";
  const char* sysfs = argc > 2 ? argv[2] : "/sys";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  perfspec::spec::Machine machine(sysfs);
  std::vector<perfspec::metric::Definition> metrics;
  std::string line;
  std::uint32_t lineno = 0;
  int status = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string name = line.substr(0, line.find_last_not_of(" \t", eq - 1) + 1);
    std::size_t start = line.find_first_not_of(" \t", eq + 1);
    if (start == std::string::npos) start = line.size();
    std::string text = trim_right(line.substr(start));
    // The origin is where the event string or expression starts in the file (1-based column);
    // rendering adds the byte offset of the error within it.
    perfspec::Origin origin{path, lineno, static_cast<std::uint32_t>(start + 1)};
    // `metric NAME = EXPR`: kept for metric::plan, which resolves a metric with the others it uses.
    if (name.rfind("metric", 0) == 0 && name.size() > 6 && (name[6] == ' ' || name[6] == '\t')) {
      perfspec::metric::Definition d;
      d.name = name.substr(name.find_first_not_of(" \t", 6));
      d.expr = text;
      d.origin = origin;
      metrics.push_back(std::move(d));
      continue;
    }
    try {
      auto set = perfspec::resolve(text, machine);
      std::printf("%s: %zu events\n", name.c_str(), set.events.size());
    } catch (const perfspec::Error& e) {
      std::fputs(perfspec::render(e, text, origin).c_str(), stderr);
      status = 1;
    }
  }

  // Each metric planned on its own, so that a bad one is reported and the others still counted; a
  // MetricError is rendered under the text of the metric at fault (which may be another one this one
  // uses), at its line and column in the file.
  perfspec::metric::Options options;
  options.extra = metrics;
  std::string good;
  for (const auto& d : metrics) {
    try {
      auto plan = perfspec::metric::plan(d.name, machine, options);
      std::printf("metric %s: %zu events\n", d.name.c_str(), plan.events.events.size());
      good += (good.empty() ? "" : ",") + d.name;
    } catch (const perfspec::metric::MetricError& e) {
      std::fputs(e.rendered().c_str(), stderr);
      status = 1;
    } catch (const perfspec::Error& e) {
      std::fputs(perfspec::render(e, d.name).c_str(), stderr);
      status = 1;
    }
  }
  // The metrics that planned, together (events they share are opened once), counted here.
  if (!good.empty()) {
    try {
      count_metrics(perfspec::metric::plan(good, machine, options));
    } catch (const perfspec::Error& e) {
      std::fputs(perfspec::render(e, good).c_str(), stderr);
      status = 1;
    }
  }
  return status;
}
