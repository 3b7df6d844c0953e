// SPDX-License-Identifier: MIT
#include "tests/exporter/openmetrics_examples.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace perfspec::test {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double inf = std::numeric_limits<double>::infinity();

MetricFamily family(std::string name, std::string help, MetricType type, std::vector<ClientMetric> metrics) {
  return MetricFamily{std::move(name), std::move(help), type, std::move(metrics)};
}

ClientMetric labelled(std::vector<ClientMetric::Label> labels, std::int64_t timestamp_ms = 0) {
  ClientMetric m;
  m.label = std::move(labels);
  m.timestamp_ms = timestamp_ms;
  return m;
}

ClientMetric counter(std::vector<ClientMetric::Label> labels, double value, std::int64_t timestamp_ms = 0) {
  auto m = labelled(std::move(labels), timestamp_ms);
  m.counter.value = value;
  return m;
}

ClientMetric gauge(std::vector<ClientMetric::Label> labels, double value, std::int64_t timestamp_ms = 0) {
  auto m = labelled(std::move(labels), timestamp_ms);
  m.gauge.value = value;
  return m;
}

ClientMetric histogram(std::vector<ClientMetric::Label> labels,
                       std::vector<std::pair<double, std::uint64_t>> buckets, std::uint64_t count,
                       double sum) {
  auto m = labelled(std::move(labels));
  for (auto [bound, cumulative] : buckets) m.histogram.bucket.push_back({cumulative, bound});
  m.histogram.sample_count = count;
  m.histogram.sample_sum = sum;
  return m;
}

std::vector<OpenMetricsExample> make_examples() {
  std::vector<OpenMetricsExample> examples;
  examples.push_back({"counter",
                      {family("perfspec_events_total", "Events counted.", MetricType::Counter,
                              {counter({{"event", "cycles"}, {"cpu", "0"}}, 12345),
                               counter({{"event", "instructions"}, {"cpu", "0"}}, 9007199254740992.0),
                               counter({{"event", "ref-cycles"}, {"cpu", "0"}}, 1e20),
                               counter({{"event", "task-clock"}, {"cpu", "0"}}, 0.1, 1520879607789)}),
                       family("perfspec_samples", "", MetricType::Counter, {counter({}, 7)})}});
  examples.push_back(
      {"gauge",
       {family("perfspec_ratio", "A ratio.", MetricType::Gauge,
               {gauge({{"event", "a"}}, std::numeric_limits<double>::quiet_NaN()),
                gauge({{"event", "b"}}, inf), gauge({{"event", "c"}}, -inf), gauge({{"event", "d"}}, -3),
                gauge({{"event", "e"}}, 0.25, 1500), gauge({{"event", "f"}}, 1.5e-7, 3000)})}});
  examples.push_back({"info",
                      {family("perfspec_build_info", "perfspec's version.", MetricType::Gauge,
                              {gauge({{"version", "0.1.0"}, {"compiler", "g++ 12"}}, 1)}),
                       family("perfspec_level_info", "Not all 1: a gauge.", MetricType::Gauge,
                              {gauge({{"level", "a"}}, 1), gauge({{"level", "b"}}, 2)})}});
  examples.push_back({"escaping",
                      {family("perfspec_escapes", "A \\ backslash, a \"quote\" and a\nline.",
                              MetricType::Gauge, {gauge({{"path", "C:\\dir \"x\"\nnext"}}, 1)})}});
  examples.push_back({"empty", {}});
  // The spec's histogram example (its section "Histogram"), without _created, and one with a
  // negative bound and no +Inf bucket.
  examples.push_back(
      {"histogram",
       {family("foo", "", MetricType::Histogram,
               {histogram({},
                          {{0.0, 0},
                           {1e-05, 0},
                           {0.0001, 5},
                           {0.1, 8},
                           {1.0, 10},
                           {10.0, 11},
                           {100000.0, 11},
                           {1e+06, 15},
                           {1e+23, 16},
                           {1.1e+23, 17},
                           {inf, 17}},
                          17, 324789.3)}),
        family("perfspec_latency_seconds", "Latency.", MetricType::Histogram,
               {histogram({{"op", "read"}}, {{0.001, 1}, {0.5, 3}, {1234567, 4}, {inf, 5}}, 5, 2.75),
                histogram({{"op", "write"}}, {{-1, 0}, {10, 2}}, 2, 4)})}});
  ClientMetric summary;
  summary.summary.quantile = {{0.5, 0.25}, {0.9, 1.5}, {0.99, std::numeric_limits<double>::quiet_NaN()}};
  summary.summary.sample_count = 7;
  summary.summary.sample_sum = 3.5;
  examples.push_back(
      {"summary", {family("perfspec_run_seconds", "Run time.", MetricType::Summary, {summary})}});
  ClientMetric untyped;
  untyped.untyped.value = 42;
  examples.push_back({"unknown", {family("perfspec_thing", "", MetricType::Untyped, {untyped})}});
  return examples;
}

}  // namespace

const std::vector<OpenMetricsExample>& openmetrics_examples() {
  static const std::vector<OpenMetricsExample> examples = make_examples();
  return examples;
}

const std::vector<prometheus::MetricFamily>& openmetrics_example(std::string_view name) {
  for (const auto& e : openmetrics_examples())
    if (e.name == name) return e.families;
  static const std::vector<prometheus::MetricFamily> none;
  return none;
}

}  // namespace perfspec::test
