// SPDX-License-Identifier: MIT
// Fuzz target: the exporter's configuration (exporter::parse_config, TOML), then its [[metric]]
// definitions planned against a fixture machine, each by name, with one metric::Planner as the exporter
// plans a set's metrics: deep or cyclic references, long chains and nested expressions reach the
// folding's bounds.
//
// A ConfigError must point into the file (its line exists); a MetricError or perfspec::Error is the
// expected rejection of a metric. Anything else (a crash, a stack overflow, an exception of another
// kind) is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "exporter/config.hpp"
#include "fuzz/common.hpp"
#include "perfspec/perfspec.hpp"

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "config invariant violated: %s\n", what);
    std::abort();
  }
}

const perfspec::spec::Machine& machine() {
  static const perfspec::spec::Machine m(fuzz::fixture("intel_skx"), [] {
    perfspec::spec::MachineOptions o;
    o.libpfm4 = false;
    return o;
  }());
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  perfspec::exporter::Config config;
  try {
    config = perfspec::exporter::parse_config(text, "fuzz.toml");
  } catch (const perfspec::exporter::ConfigError& e) {
    const std::string what = e.what();
    check(what.starts_with("fuzz.toml:"), "a configuration error names the file and a position");
    return 0;
  }
  perfspec::metric::Options options;
  options.extra = config.metrics;
  perfspec::metric::Planner planner(machine(), options);
  std::size_t n = 0;
  for (const auto& d : config.metrics) {
    if (++n > 64) break;  // a few plans an input: the folding of each is what is fuzzed
    try {
      auto plan = planner.plan(d.name);
      std::vector<double> values(plan.events.events.size(), 1.0);
      (void)perfspec::metric::evaluate(plan, values);
    } catch (const perfspec::Error&) {
    }
  }
  return 0;
}
