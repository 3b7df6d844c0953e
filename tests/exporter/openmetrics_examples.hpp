// SPDX-License-Identifier: MIT
#pragma once
// The metric families of tests/test_openmetrics.cpp, shared with print_openmetrics (their text, for
// check_openmetrics.py and Python's OpenMetrics parser).
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace perfspec::test {

struct OpenMetricsExample {
  std::string_view name;
  std::vector<prometheus::MetricFamily> families;
};

/// Every example, by name: counter, gauge, info, escaping, empty, histogram, summary, unknown.
const std::vector<OpenMetricsExample>& openmetrics_examples();

/// The families of one example (an empty list for an unknown name).
const std::vector<prometheus::MetricFamily>& openmetrics_example(std::string_view name);

}  // namespace perfspec::test
