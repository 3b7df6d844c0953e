#!/bin/sh
# SPDX-License-Identifier: MIT
# The unit suite built for arm64, inside scripts/vm-arm64.sh's guest (started with --with-source, so
# that the source tree's fixtures and ../shared/pmu-events are at their own paths):
#   sh unit.sh BUILD_DIR SOURCE_DIR
# perfspec_tests (but four walks of every table, below), the libpfm4 tests of arm64's model (libpfm4
# has the models of the architecture it was built for: Neoverse N1 here, Skylake-X and Zen 3 on x86)
# and the C API test.
build=${1:?build folder}
src=${2:?source folder}
status=0
echo "== arm64 unit suite: perfspec_tests"
# But four walks of every table, pure computation that needs no PMU: every name of every model
# resolved twice and in lower case, the three closest names to unknown ones among all of them (11 s
# and 23 s natively, about 35 times that under the guest's emulation, past its time alone), and every
# metric of every model parsed and planned (10 s natively). The first two run in the x86 builds
# (release, sanitizers) and the arm64 binary's resolving is compared with perf 6.12's answers under
# qemu-user; the metric walks run under qemu-user (scripts/test.sh --arm64), three times faster
# than here.
walks="every table name resolves the same*,suggestions for unknown names are the closest three*"
walks="$walks,every metric of perf's tables against a fixture*,metric grammar: every MetricExpr*"
"$build/tests/perfspec_tests" --no-colors=true --test-case-exclude="$walks" ||
  status=1
echo "== arm64 unit suite: libpfm4 forced to Neoverse N1"
LIBPFM_FORCE_PMU=arm_n1 "$build/tests/perfspec_pfm_tests" --no-colors=true --source-file='*test_libpfm4_n1.cpp' || status=1
echo "== arm64 unit suite: the C API"
out=$("$build/tests/perfspec_c_test" "$src/tests/fixtures/intel_skx" "$src/../shared/pmu-events/x86" 2>&1) || status=1
printf '%s\n' "$out" | tail -n 3
exit $status
