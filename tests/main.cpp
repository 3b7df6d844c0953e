// SPDX-License-Identifier: MIT
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // perf's build-id cache (~/.debug, which perf fills as it records on this machine) is not the
  // tests': a binary cached there would give symbols to recordings the tests expect to have none. A
  // test that wants one sets its own.
  ::setenv("PERF_BUILDID_DIR", "/nonexistent/perfspec-tests-build-id-cache", 1);
  doctest::Context context(argc, argv);
  return context.run();
}
