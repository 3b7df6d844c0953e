#!/usr/bin/env bash
# The whole test suite: install dependencies, build, run every test.
#   scripts/test.sh             release build: unit, golden, CLI and perf-agreement tests
#   scripts/test.sh --sanitize  the same under AddressSanitizer + UndefinedBehaviorSanitizer (Debug)
#   scripts/test.sh --all       both
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
run() {
  local kind=$1
  echo "== $kind build"
  scripts/build.sh "$kind" | tail -n 1 >/tmp/perfspec-builddir.$$
  local dir
  dir=$(cat /tmp/perfspec-builddir.$$)
  rm -f /tmp/perfspec-builddir.$$
  echo "== $kind tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
}
case "${1:-}" in
  "") run release ;;
  --sanitize) run sanitize ;;
  --all) run release; run sanitize ;;
  *) echo "usage: scripts/test.sh [--sanitize|--all]" >&2; exit 2 ;;
esac
