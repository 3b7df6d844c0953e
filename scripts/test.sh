#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: install dependencies, build, run every test.
#   scripts/test.sh             release build: unit, golden, CLI and perf-agreement tests
#   scripts/test.sh --sanitize  the same under AddressSanitizer + UndefinedBehaviorSanitizer (Debug)
#   scripts/test.sh --tsan      the concurrency tests under ThreadSanitizer
#   scripts/test.sh --all       all three
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
run() {
  local kind=$1 only=${2:-}
  echo "== $kind build"
  scripts/build.sh "$kind" | tail -n 1 >/tmp/perfspec-builddir.$$
  local dir
  dir=$(cat /tmp/perfspec-builddir.$$)
  rm -f /tmp/perfspec-builddir.$$
  echo "== $kind tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" ${only:+-R "$only"}
}
# The examples, built as a separate project against the installed package (CMake config + headers).
examples() {
  local prefix
  prefix=$(mktemp -d)
  echo "== examples against an installed perfspec"
  cmake --install build --prefix "$prefix" >/dev/null
  cmake -S examples -B "$prefix/examples-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$prefix/examples-build" -j"$(nproc)" >/dev/null
  local lib=$prefix/lib
  [ -d "$prefix/lib64" ] && lib=$prefix/lib64
  LD_LIBRARY_PATH=$lib "$prefix/examples-build/count_function" 'task-clock,page-faults'
  LD_LIBRARY_PATH=$lib "$prefix/examples-build/count_c" 'task-clock,page-faults'
  if "$prefix/examples-build/config_events" examples/events.conf tests/fixtures/intel_skx 2>"$prefix/err"; then
    echo "config_events: expected the broken line to fail" >&2; return 1
  fi
  grep -q "^examples/events.conf:4:25: error: unknown term 'evnt' for pmu" "$prefix/err" ||
    { echo "config_events: wrong diagnostic:" >&2; cat "$prefix/err" >&2; return 1; }
  PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --libs perfspec | grep -q -- "-L$prefix/lib.* -lperfspec" ||
    { echo "pkg-config: perfspec.pc does not point into the install prefix" >&2; return 1; }
  # The license goes with the package: its text in the documentation folder, its name in the CMake
  # package and the pkg-config file.
  [ -f "$prefix/share/doc/perfspec/LICENSE" ] || { echo "install: no LICENSE in share/doc/perfspec" >&2; return 1; }
  [ -f "$prefix/share/doc/perfspec/output-formats.md" ] ||
    { echo "install: no output-formats.md (the man page points to it) in share/doc/perfspec" >&2; return 1; }
  grep -q '^set(perfspec_LICENSE "MIT")' "$lib/cmake/perfspec/perfspecConfig.cmake" ||
    { echo "install: perfspecConfig.cmake does not name the license" >&2; return 1; }
  grep -qx 'License: MIT' "$lib/pkgconfig/perfspec.pc" || { echo "install: perfspec.pc does not name the license" >&2; return 1; }
  rm -rf "$prefix"
  echo "examples: 4 passed, 0 failed"
}

case "${1:-}" in
  "") run release; examples ;;
  --sanitize) run sanitize ;;
  --tsan) run tsan 'unit\.concurrency' ;;
  --all) run release; examples; run sanitize; run tsan 'unit\.concurrency' ;;
  *) echo "usage: scripts/test.sh [--sanitize|--tsan|--all]" >&2; exit 2 ;;
esac
