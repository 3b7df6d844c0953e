// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "print/openmetrics.hpp"
#include "tests/exporter/openmetrics_examples.hpp"

using perfspec::OpenMetricsSerializer;
using perfspec::wants_openmetrics;

namespace {
std::string openmetrics(std::string_view example) {
  std::ostringstream out;
  OpenMetricsSerializer().Serialize(out, perfspec::test::openmetrics_example(example));
  return out.str();
}
}  // namespace

TEST_CASE("openmetrics: a counter family is named without _total, its samples with it") {
  CHECK(openmetrics("counter") ==
        "# TYPE perfspec_events counter\n"
        "# HELP perfspec_events Events counted.\n"
        "perfspec_events_total{event=\"cycles\",cpu=\"0\"} 12345\n"
        "perfspec_events_total{event=\"instructions\",cpu=\"0\"} 9007199254740992\n"
        "perfspec_events_total{event=\"ref-cycles\",cpu=\"0\"} 1e+20\n"
        "perfspec_events_total{event=\"task-clock\",cpu=\"0\"} 0.1 1520879607.789\n"
        "# TYPE perfspec_samples counter\n"
        "perfspec_samples_total 7\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: gauges with NaN, +Inf and -Inf, timestamps in seconds") {
  CHECK(openmetrics("gauge") ==
        "# TYPE perfspec_ratio gauge\n"
        "# HELP perfspec_ratio A ratio.\n"
        "perfspec_ratio{event=\"a\"} NaN\n"
        "perfspec_ratio{event=\"b\"} +Inf\n"
        "perfspec_ratio{event=\"c\"} -Inf\n"
        "perfspec_ratio{event=\"d\"} -3\n"
        "perfspec_ratio{event=\"e\"} 0.25 1.5\n"
        "perfspec_ratio{event=\"f\"} 1.5e-07 3\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: a gauge named _info whose values are all 1 is an info family") {
  CHECK(openmetrics("info") ==
        "# TYPE perfspec_build info\n"
        "# HELP perfspec_build perfspec's version.\n"
        "perfspec_build_info{version=\"0.1.0\",compiler=\"g++ 12\"} 1\n"
        "# TYPE perfspec_level_info gauge\n"
        "# HELP perfspec_level_info Not all 1: a gauge.\n"
        "perfspec_level_info{level=\"a\"} 1\n"
        "perfspec_level_info{level=\"b\"} 2\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: backslash, double quote and line feed escaped in HELP and label values") {
  CHECK(openmetrics("escaping") ==
        "# TYPE perfspec_escapes gauge\n"
        "# HELP perfspec_escapes A \\\\ backslash, a \\\"quote\\\" and a\\nline.\n"
        "perfspec_escapes{path=\"C:\\\\dir \\\"x\\\"\\nnext\"} 1\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: no families, just # EOF; the inherited string overload") {
  CHECK(openmetrics("empty") == "# EOF\n");
  CHECK(OpenMetricsSerializer().Serialize(perfspec::test::openmetrics_example("unknown")) ==
        "# TYPE perfspec_thing unknown\n"
        "perfspec_thing 42\n"
        "# EOF\n");
}

TEST_CASE(
    "openmetrics: histograms, le in the spec's canonical form, +Inf added, no sum with negative bounds") {
  // The first family is the spec's own histogram example, less its _created sample.
  CHECK(openmetrics("histogram") ==
        "# TYPE foo histogram\n"
        "foo_bucket{le=\"0.0\"} 0\n"
        "foo_bucket{le=\"1e-05\"} 0\n"
        "foo_bucket{le=\"0.0001\"} 5\n"
        "foo_bucket{le=\"0.1\"} 8\n"
        "foo_bucket{le=\"1.0\"} 10\n"
        "foo_bucket{le=\"10.0\"} 11\n"
        "foo_bucket{le=\"100000.0\"} 11\n"
        "foo_bucket{le=\"1e+06\"} 15\n"
        "foo_bucket{le=\"1e+23\"} 16\n"
        "foo_bucket{le=\"1.1e+23\"} 17\n"
        "foo_bucket{le=\"+Inf\"} 17\n"
        "foo_count 17\n"
        "foo_sum 324789.3\n"
        "# TYPE perfspec_latency_seconds histogram\n"
        "# HELP perfspec_latency_seconds Latency.\n"
        "perfspec_latency_seconds_bucket{op=\"read\",le=\"0.001\"} 1\n"
        "perfspec_latency_seconds_bucket{op=\"read\",le=\"0.5\"} 3\n"
        "perfspec_latency_seconds_bucket{op=\"read\",le=\"1.234567e+06\"} 4\n"
        "perfspec_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 5\n"
        "perfspec_latency_seconds_count{op=\"read\"} 5\n"
        "perfspec_latency_seconds_sum{op=\"read\"} 2.75\n"
        "perfspec_latency_seconds_bucket{op=\"write\",le=\"-1.0\"} 0\n"
        "perfspec_latency_seconds_bucket{op=\"write\",le=\"10.0\"} 2\n"
        "perfspec_latency_seconds_bucket{op=\"write\",le=\"+Inf\"} 2\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: summaries, quantiles then _count and _sum") {
  CHECK(openmetrics("summary") ==
        "# TYPE perfspec_run_seconds summary\n"
        "# HELP perfspec_run_seconds Run time.\n"
        "perfspec_run_seconds{quantile=\"0.5\"} 0.25\n"
        "perfspec_run_seconds{quantile=\"0.9\"} 1.5\n"
        "perfspec_run_seconds{quantile=\"0.99\"} NaN\n"
        "perfspec_run_seconds_count 7\n"
        "perfspec_run_seconds_sum 3.5\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: negative timestamps, to the smallest") {
  prometheus::MetricFamily family{"x", "", prometheus::MetricType::Gauge, {}};
  for (std::int64_t ms : {std::int64_t{-1500}, std::int64_t{-20}, std::numeric_limits<std::int64_t>::min()}) {
    family.metric.emplace_back();
    family.metric.back().gauge.value = 1;
    family.metric.back().timestamp_ms = ms;
  }
  CHECK(OpenMetricsSerializer().Serialize({family}) ==
        "# TYPE x gauge\n"
        "x 1 -1.5\n"
        "x 1 -0.02\n"
        "x 1 -9223372036854775.808\n"
        "# EOF\n");
}

TEST_CASE("openmetrics: the content type") {
  CHECK(perfspec::openmetrics_content_type == "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST_CASE("wants_openmetrics: what scrapers send") {
  // Prometheus 2.42.
  CHECK(wants_openmetrics(
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
      "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
  // Prometheus 3's kind: other parameters, and a text/plain version this server does not give.
  CHECK(
      wants_openmetrics("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
                        "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;"
                        "escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"));
  CHECK(wants_openmetrics("application/openmetrics-text;version=0.0.1"));
  CHECK(wants_openmetrics("application/openmetrics-text"));
  CHECK(wants_openmetrics("application/*"));
  CHECK_FALSE(wants_openmetrics("text/plain"));
  CHECK_FALSE(wants_openmetrics("text/plain;version=0.0.4"));
  CHECK_FALSE(wants_openmetrics(""));
  CHECK_FALSE(wants_openmetrics("*/*"));
  CHECK_FALSE(wants_openmetrics("application/json"));
}

TEST_CASE("wants_openmetrics: weights, specificity, ties, case, quoting") {
  CHECK(wants_openmetrics("text/plain;q=0.5, application/openmetrics-text"));
  CHECK(wants_openmetrics("*/*;q=0.9, application/openmetrics-text"));
  CHECK(wants_openmetrics(" APPLICATION/OpenMetrics-Text ; Version=\"1.0.0\" ; Q=0.9 , text/plain;q=0.8"));
  // The comma and q=0 are inside a quoted value.
  CHECK(wants_openmetrics("application/openmetrics-text;x=\"a,q=0\",text/plain;q=0.5"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text, text/plain"));  // a tie: text
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;q=0"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;version=2.0.0"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;version=2.0.0,text/plain;q=0.1"));
  // The most specific range counts: 1.0.0 refused, even though 0.0.1 and the type are welcome.
  CHECK_FALSE(wants_openmetrics(
      "application/openmetrics-text;version=1.0.0;q=0,application/openmetrics-text;version=0.0.1,"
      "application/openmetrics-text"));
  CHECK_FALSE(wants_openmetrics("text/plain;version=0.0.4;q=1, application/openmetrics-text;q=0.999"));
  CHECK(wants_openmetrics("text/plain;version=0.0.4;q=0.001, application/openmetrics-text;q=0.002"));
  // Parameters after q= are accept-extensions, not the media type's.
  CHECK(wants_openmetrics("application/openmetrics-text;q=1;version=2.0.0"));
}

TEST_CASE("wants_openmetrics: malformed parts are skipped, never read past") {
  CHECK_FALSE(wants_openmetrics(";;;,,q="));
  CHECK_FALSE(wants_openmetrics(",,,,"));
  CHECK_FALSE(wants_openmetrics("\""));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;q=abc"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;q=0.7500"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;q=1.5"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;q="));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;q"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;version=1.0.0;version=1.0.0"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;x=\"unterminated"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;x=\"a\\"));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;x=a b"));
  CHECK_FALSE(wants_openmetrics("/openmetrics-text"));
  CHECK_FALSE(wants_openmetrics("application/"));
  CHECK_FALSE(wants_openmetrics("*/openmetrics-text"));
  CHECK_FALSE(wants_openmetrics(std::string_view("application/openmetrics-text\0", 29)));
  // A malformed range does not spoil the others.
  CHECK(wants_openmetrics(
      "application/openmetrics-text;q=abc, application/openmetrics-text;q=0.5, text/plain;q=0.4"));
  CHECK(wants_openmetrics("text/plain;q=0.3;;, ;;;, application/openmetrics-text;version=1.0.0;;"));
}

TEST_CASE("wants_openmetrics: 10 KB headers") {
  CHECK_FALSE(wants_openmetrics(std::string(10240, ';')));
  CHECK_FALSE(wants_openmetrics(std::string(10240, '"')));
  CHECK_FALSE(wants_openmetrics(std::string(10240, '\\')));
  CHECK_FALSE(wants_openmetrics("application/openmetrics-text;x=\"" + std::string(10240, 'a') + "\\"));
  std::string ranges;
  while (ranges.size() < 10240) ranges += "text/plain;q=0.1,";
  CHECK(wants_openmetrics(ranges + "application/openmetrics-text;q=0.2"));
  CHECK_FALSE(wants_openmetrics(ranges + "application/openmetrics-text;q=0.1"));
  // Every byte value, in an order of a linear congruential generator's.
  std::string bytes;
  std::uint32_t state = 12345;
  for (int i = 0; i < 10240; ++i) {
    state = state * 1103515245u + 12345u;
    bytes.push_back(static_cast<char>(state >> 16));
  }
  CHECK_FALSE(wants_openmetrics(bytes));
}
