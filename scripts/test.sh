#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite: install dependencies, build, run every test.
#   scripts/test.sh             release build: unit, golden, CLI and perf-agreement tests
#   scripts/test.sh --sanitize  the same under AddressSanitizer + UndefinedBehaviorSanitizer (Debug)
#   scripts/test.sh --tsan      the concurrency tests and the exporter under load, under ThreadSanitizer
#   scripts/test.sh --arm64     the arm64 cross build, its suites in an emulated arm64 machine with a
#                               real PMU driver (scripts/vm-arm64.sh --tests)
#   scripts/test.sh --package   the Debian package of this release (scripts/package.sh), installed with apt in
#                               a clean root of this release and used there (tests/package/package_test.py)
#   scripts/test.sh --all       all five
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The sanitizer build leaves out the agreement tests (label `agreement`): they compare encodings with
# perf's over thousands of strings, which the release build checks; under ASan they took a quarter of
# CI's time and find nothing the unit, CLI and fuzz runs under the sanitizers do not. The same for the
# walk of every table (label `tables`, 170 s under ASan): its reading of JSON and index files is the
# unit suite's and the json and index fuzzers' under the sanitizers; and for the search of the closest
# names among all of the tables' (47 s under ASan), an edit distance over strings the suite resolves.
run() {
  local kind=$1 only=${2:-} target=${3:-} skip=
  [ "$kind" = sanitize ] && skip='agreement|tables'
  echo "== $kind build ($(date +%T))"
  scripts/build.sh "$kind" $target | tail -n 1 >/tmp/perfspec-builddir.$$
  local dir
  dir=$(cat /tmp/perfspec-builddir.$$)
  rm -f /tmp/perfspec-builddir.$$
  echo "== $kind tests ($(date +%T))"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp \
    ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" ${only:+-R "$only"} ${skip:+-LE "$skip"}
}
# The examples, built as a separate project against the installed package (CMake config + headers).
examples() {
  local prefix
  prefix=$(mktemp -d)
  echo "== examples against an installed perfspec ($(date +%T))"
  cmake --install build --prefix "$prefix" >/dev/null
  cmake -S examples -B "$prefix/examples-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$prefix/examples-build" -j"$(nproc)" >/dev/null
  local lib=$prefix/lib
  [ -d "$prefix/lib64" ] && lib=$prefix/lib64
  LD_LIBRARY_PATH=$lib "$prefix/examples-build/count_function" 'task-clock,page-faults'
  LD_LIBRARY_PATH=$lib "$prefix/examples-build/count_c" 'task-clock,page-faults'
  examples_metrics "$prefix" "$lib" || return 1
  local out
  if out=$("$prefix/examples-build/config_events" examples/events.conf tests/fixtures/intel_skx 2>"$prefix/err"); then
    echo "config_events: expected the broken lines to fail" >&2; return 1
  fi
  grep -q "^examples/events.conf:8:25: error: unknown term 'evnt' for pmu" "$prefix/err" ||
    { echo "config_events: wrong diagnostic:" >&2; cat "$prefix/err" >&2; return 1; }
  # The broken metric: its diagnostic at the file's line and column of the unknown event.
  local want
  want=$(cat <<'EOF'
examples/events.conf:12:41: error: unknown event 'cyclez'
metric 'broken_ipc': 'instructions / cyclez'
                                     \___ unknown event 'cyclez'
help: did you mean 'cycles'?
EOF
)
  [ "$(sed -n '/^examples\/events.conf:12:/,$p' "$prefix/err")" = "$want" ] ||
    { echo "config_events: wrong metric diagnostic:" >&2; cat "$prefix/err" >&2; return 1; }
  # The other metrics planned, counted around the example's work, each with a value (not 0, not NaN).
  want=$(cat <<'EOF'
cache: 2 events
sched: 2 events
metric faults_per_msec: 2 events
metric faults_per_sec: 2 events
metric cpus_utilized: 2 events
faults_per_msec = N
faults_per_sec = N
cpus_utilized = N
EOF
)
  [ "$(sed -E '/ = 0\.000$/d; s/ = [0-9]+\.[0-9]{3}$/ = N/' <<<"$out")" = "$want" ] ||
    { echo "config_events: wrong output:" >&2; echo "$out" >&2; return 1; }
  PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --libs perfspec | grep -q -- "-L$prefix/lib.* -lperfspec" ||
    { echo "pkg-config: perfspec.pc does not point into the install prefix" >&2; return 1; }
  # The license goes with the package: its text in the documentation folder, its name in the CMake
  # package and the pkg-config file.
  [ -f "$prefix/share/doc/perfspec/LICENSE" ] || { echo "install: no LICENSE in share/doc/perfspec" >&2; return 1; }
  [ -f "$prefix/share/doc/perfspec/output-formats.md" ] ||
    { echo "install: no output-formats.md (the man page points to it) in share/doc/perfspec" >&2; return 1; }
  # The exporter's example configuration and systemd unit; the example as installed passes --check.
  [ -f "$prefix/etc/perfspec/exporter.toml" ] || { echo "install: no etc/perfspec/exporter.toml" >&2; return 1; }
  grep -qx 'ARGS=""' "$prefix/etc/default/perfspec-exporter" ||
    { echo "install: no etc/default/perfspec-exporter with ARGS" >&2; return 1; }
  grep -qxF "EnvironmentFile=-$prefix/etc/default/perfspec-exporter" "$prefix/lib/systemd/system/perfspec-exporter.service" ||
    { echo "install: the unit does not read $prefix/etc/default/perfspec-exporter" >&2; return 1; }
  [ -f "$prefix/lib/systemd/system/perfspec-exporter.service" ] ||
    { echo "install: no lib/systemd/system/perfspec-exporter.service" >&2; return 1; }
  # the unit names this install's perfspec and configuration, not the configure-time prefix's
  grep -qxF "ExecStart=$prefix/bin/perfspec exporter --config $prefix/etc/perfspec/exporter.toml \$ARGS" \
      "$prefix/lib/systemd/system/perfspec-exporter.service" ||
    { echo "install: the unit does not name $prefix/bin/perfspec:" >&2;
      grep ExecStart "$prefix/lib/systemd/system/perfspec-exporter.service" >&2; return 1; }
  "$prefix/bin/perfspec" exporter --check --config "$prefix/etc/perfspec/exporter.toml" >/dev/null ||
    { echo "install: the example exporter configuration does not pass --check" >&2; return 1; }
  grep -q '^set(perfspec_LICENSE "MIT")' "$lib/cmake/perfspec/perfspecConfig.cmake" ||
    { echo "install: perfspecConfig.cmake does not name the license" >&2; return 1; }
  grep -qx 'License: MIT' "$lib/pkgconfig/perfspec.pc" || { echo "install: perfspec.pc does not name the license" >&2; return 1; }
  installed_tables "$prefix" || return 1
  rm -rf "$prefix" "$prefix.copy"
  echo "examples: 11 passed, 0 failed"
}
# metrics_c: an ad hoc metric counted here has a value; a bad one draws the caret under its text.
examples_metrics() {
  local prefix=$1 lib=$2 out
  out=$(env -u PERFSPEC_EVENTS_DIR LD_LIBRARY_PATH="$lib" "$prefix/examples-build/metrics_c")
  grep -qE '^faults_per_msec = [0-9]+\.[0-9]{3}$' <<<"$out" && ! grep -q ' = 0\.000$' <<<"$out" ||
    { echo "metrics_c: no value: $out" >&2; return 1; }
  if env -u PERFSPEC_EVENTS_DIR LD_LIBRARY_PATH="$lib" "$prefix/examples-build/metrics_c" \
       'ipc = instructions / cyclez' 2>"$prefix/err"; then
    echo "metrics_c: expected 'cyclez' to fail" >&2; return 1
  fi
  local want
  want=$(cat <<'EOF'
metric 'ipc': 'instructions / cyclez'
                              \___ unknown event 'cyclez'
EOF
)
  [ "$(head -n 2 "$prefix/err")" = "$want" ] || { echo "metrics_c: wrong diagnostic:" >&2; cat "$prefix/err" >&2; return 1; }
}
# perf's event tables installed from Debian's linux-source (scripts/setup.sh installs it): a table
# name resolves with no --events-dir, from the installed index (the first run writes no cache), in a
# copy of the installation too (other paths, other file times); without them it is unknown.
installed_tables() {
  local prefix=$1 tables=$1/share/perfspec/events
  [ -f "$tables/x86/perfspec-index/skylakex.idx" ] ||
    { echo "install: no event tables with their index in share/perfspec/events (is linux-source installed?)" >&2; return 1; }
  [ -f "$tables/COPYING" ] && grep -qF "version 2 only (GPL-2.0" "$tables/README" ||
    { echo "install: the event tables have no license note (README) and COPYING beside them" >&2; return 1; }
  local want
  want=$(cat <<'EOF'
event 0: mem_load_retired.l1_miss
  pmu: cpu; not grouped
------------------------------------------------------------
perf_event_attr:
  type                             4
  size                             136
  config                           0x8d1
  { sample_period, sample_freq }   100003
------------------------------------------------------------
EOF
)
  resolve_skx() {  # resolve_skx PREFIX: mem_load_retired.l1_miss on the Skylake-X fixture, default tables
    env -u PERFSPEC_EVENTS_DIR PERFSPEC_CACHE_DIR="$prefix/cache" "$1/bin/perfspec" resolve \
      --sysfs tests/fixtures/intel_skx --cpuid GenuineIntel-6-55-4 --no-libpfm4 mem_load_retired.l1_miss 2>&1
  }
  local got where
  for where in "$prefix" "$prefix.copy"; do
    [ "$where" = "$prefix" ] || cp -r "$prefix" "$where"  # other paths, other file times
    got=$(resolve_skx "$where")
    [ "$got" = "$want" ] ||
      { echo "install: $where: a table name without --events-dir:" >&2; diff <(echo "$want") <(echo "$got") >&2; return 1; }
    [ ! -e "$prefix/cache" ] || { echo "install: $where: the first run wrote a table index into PERFSPEC_CACHE_DIR" >&2; return 1; }
  done
  # Without them: unknown (unless the build's configured prefix holds tables of an earlier install).
  rm -rf "$prefix.copy/share/perfspec/events"
  local fallback
  fallback=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' build/CMakeCache.txt)/share/perfspec/events
  if [ -e "$fallback" ]; then
    echo "install: $fallback exists: not checking an installation without tables" >&2
  else
    got=$(resolve_skx "$prefix.copy")
    grep -qF "unknown event 'mem_load_retired.l1_miss'" <<<"$got" ||
      { echo "install: without tables, mem_load_retired.l1_miss is not unknown:" >&2; echo "$got" >&2; return 1; }
  fi
}

# arm64: the cross build, then its suites in QEMU's emulated arm64 machine, on Linux's armv8_pmuv3
# driver (scripts/vm-arm64.sh --tests). Only what the guest runs is built.
arm64() {
  echo "== arm64 build ($(date +%T))"
  scripts/setup-arm64.sh
  scripts/build.sh arm64 perfspec_cli perfspec_event_tables perfspec_tests perfspec_pfm_tests perfspec_c_test \
    perfspec_arm64_tests perfspec_arm64_spin perfspec_workload | tail -n 1
  echo "== arm64 tests ($(date +%T))"
  scripts/vm-arm64.sh --no-build --tests
  # What needs no PMU runs under qemu-user too: the arm64 binary against perf 6.12's recorded answers.
  echo "== arm64: agreement with perf 6.12, under qemu-user ($(date +%T))"
  local wrap
  wrap=$(mktemp -d)
  printf '#!/bin/sh\nexec qemu-aarch64-static -L / %s "$@"\n' "$PWD/build-arm64/perfspec" >"$wrap/perfspec"
  chmod +x "$wrap/perfspec"
  local status=0
  PERFSPEC_EVENTS_DIR= python3 tests/perf_agreement/agree.py --perfspec "$wrap/perfspec" --no-perf \
    --cache tests/perf_agreement/perf_oracle.json >"$wrap/log" 2>&1 || status=$?
  if [ $status = 0 ]; then grep -E '^agreement: ' "$wrap/log"; else tail -n 40 "$wrap/log"; fi
  rm -rf "$wrap"
  [ $status = 0 ] || return "$status"
  # The unit suite's walks of every table's metrics, left out of the guest's run (tests/arm64/unit.sh).
  echo "== arm64: every table's metrics, under qemu-user ($(date +%T))"
  qemu-aarch64-static -L / build-arm64/tests/perfspec_tests --no-colors=true \
    --test-case="every metric of perf's tables against a fixture*,metric grammar: every MetricExpr*" | tail -n 3
}

# The Debian package, built here and installed in a clean root of this machine's release (debootstrap's
# minbase, kept in /var/cache/perfspec/roots after the first use).
package() {
  echo "== package ($(date +%T))"
  local deb codename sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  deb=$(scripts/package.sh | tail -n 1)
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  $sudo env PERFSPEC_REQUIRE_ALL="${PERFSPEC_REQUIRE_ALL:-}" python3 tests/package/package_test.py --deb "$deb" \
    --release "$codename"
}

case "${1:-}" in
  "") run release; examples ;;
  --package) package ;;
  --arm64) arm64 ;;
  --sanitize) run sanitize ;;
  --tsan) run tsan 'unit\.concurrency|exporter_load' 'perfspec_tests perfspec_cli' ;;
  --all) run release; examples; package; run sanitize; run tsan 'unit\.concurrency|exporter_load' 'perfspec_tests perfspec_cli'; arm64 ;;
  *) echo "usage: scripts/test.sh [--sanitize|--tsan|--arm64|--package|--all]" >&2; exit 2 ;;
esac
