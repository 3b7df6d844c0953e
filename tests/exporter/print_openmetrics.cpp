// SPDX-License-Identifier: MIT
// Prints one example of tests/exporter/openmetrics_examples.cpp as OpenMetrics text, or with
// --list the examples' names, one a line: for check_openmetrics.py.
//
// Example: print_openmetrics counter | tests/exporter/check_openmetrics.py
#include <cstdio>
#include <iostream>
#include <string_view>

#include "print/openmetrics.hpp"
#include "tests/exporter/openmetrics_examples.hpp"

int main(int argc, char** argv) {
  std::string_view arg = argc == 2 ? argv[1] : "";
  if (arg == "--list") {
    for (const auto& e : perfspec::test::openmetrics_examples()) std::cout << e.name << '\n';
    return 0;
  }
  for (const auto& e : perfspec::test::openmetrics_examples()) {
    if (e.name == arg) {
      perfspec::OpenMetricsSerializer().Serialize(std::cout, e.families);
      return 0;
    }
  }
  std::fprintf(stderr, "usage: print_openmetrics --list | EXAMPLE\n");
  return 2;
}
