#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets (build-fuzz/, Debug, clang, ASan+UBSan) and fuzz each for SECONDS.
#
#   fuzz/run.sh [SECONDS]           fuzz every target for SECONDS (default 60); fail on any crash, leak,
#                                   timeout or out-of-memory, whose input is copied to fuzz/regressions/<target>/
#   fuzz/run.sh --replay            run every target once over fuzz/regressions/<target>/ (CI, after fixes)
#   FUZZ_TARGETS="events json" ...  only these targets (default: events format alias json decode index
#                                   metric_parse record_decode perf_data config)
#
# New corpus units go to build-fuzz/fuzz/work/<target>/ (the seeds in fuzz/corpus/ are only read),
# logs to build-fuzz/fuzz/logs/<target>.log. Options of the targets (environment): PERFSPEC_FUZZ_EVENTS_DIR
# (vendor tables for the events and decode targets; slow: suggestions for unknown names scan every
# table name), PERFSPEC_FUZZ_REUSE=1 (events: one Machine per tree per process), PERFSPEC_FUZZ_LIBPFM4=1,
# PERFSPEC_FUZZ_DECODE_ORACLE=0 (decode), PERFSPEC_FUZZ_SCRIPT=0 (perf_data: leave out the script printer).
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build-fuzz
TARGETS=${FUZZ_TARGETS:-events format alias json decode index metric_parse record_decode perf_data config}
MODE=fuzz
SECS=60
# An input running longer than this (wall time) is a hang. Hangs never end, so a long timeout finds them
# all the same; 5 s made spurious "timeouts" of a slow input under ASan on a machine loaded by other work.
TIMEOUT=${FUZZ_TIMEOUT:-30}
case "${1:-}" in
  --replay) MODE=replay ;;
  "") ;;
  *[!0-9]*) echo "usage: fuzz/run.sh [SECONDS] | --replay" >&2; exit 2 ;;
  *) SECS=$1 ;;
esac

# clang and libFuzzer (Debian: clang ships libclang_rt.fuzzer*.a with the default clang).
if ! command -v clang++ >/dev/null || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq clang >/dev/null; } || { echo "fuzz/run.sh: cannot install clang" >&2; exit 2; }
fi

# ccache as scripts/build.sh uses it (PERFSPEC_CCACHE=0 compiles everything): the fuzz build is the
# slowest of CI's, and most of its objects are those of the run before.
launcher=()
if command -v ccache >/dev/null && [ "${PERFSPEC_CCACHE:-1}" = 1 ]; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
fi
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DPERFSPEC_FUZZ=ON \
      "${launcher[@]}" -DBUILD_TESTING=OFF >/dev/null || exit 2
cmake --build "$BUILD" -j2 --target $(for t in $TARGETS; do printf 'fuzz_%s ' "$t"; done) || exit 2

dict_for() {
  case $1 in
    events|alias) echo "$ROOT/fuzz/events.dict" ;;
    decode) echo "$ROOT/fuzz/decode.dict" ;;
    *) echo "$ROOT/fuzz/$1.dict" ;;
  esac
}

# Inputs up to 4 kB, but perf.data files and record streams (a file's header, attrs and feature sections
# alone take 2-3 kB), configurations and metrics: up to 256 kB, where deep nesting, long chains of
# metrics and many COMPRESSED records live (issue 34's faults needed 100 kB and more).
max_len_for() {
  case $1 in
    record_decode) echo 8192 ;;
    perf_data|config|metric_parse) echo 262144 ;;
    *) echo 4096 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}
# What libtraceevent 1.7.1 loses parsing a bad format file is not perfspec's (tests/lsan.supp says which).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
mkdir -p "$BUILD/fuzz/logs"
for t in $TARGETS; do
  bin=$BUILD/fuzz/fuzz_$t
  log=$BUILD/fuzz/logs/$t.log
  if [ "$MODE" = replay ]; then
    # Each input alone, so that every failing one is named.
    n=0; bad=0; : >"$log"
    for f in "$ROOT"/fuzz/regressions/"$t"/*; do
      [ -f "$f" ] || continue
      n=$((n + 1))
      if ! "$bin" -timeout="$TIMEOUT" -rss_limit_mb=2048 "$f" >>"$log" 2>&1; then
        echo "$t: FAILS on fuzz/regressions/$t/$(basename "$f")"; bad=$((bad + 1))
      fi
    done
    if [ $bad -eq 0 ]; then echo "$t: $n regression inputs pass"; else failed+=("$t"); fi
    continue
  fi
  work=$BUILD/fuzz/work/$t
  artifacts=$BUILD/fuzz/artifacts/$t
  mkdir -p "$work" "$artifacts"
  find "$artifacts" -type f -delete
  echo "== $t: ${SECS}s"
  "$bin" -max_total_time="$SECS" -max_len="$(max_len_for "$t")" -timeout="$TIMEOUT" -rss_limit_mb=2048 -dict="$(dict_for "$t")" \
         -artifact_prefix="$artifacts/" -print_final_stats=1 "$work" "$ROOT/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    mkdir -p "$ROOT/fuzz/regressions/$t"
    for f in $found; do cp "$f" "$ROOT/fuzz/regressions/$t/"; done
    echo "$t: FAILED (exit $rc) after ${execs:-?} runs; inputs copied to fuzz/regressions/$t/:"
    for f in $found; do echo "  $(basename "$f")"; done
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "$log" | sed 's/^/  /'
    echo "  log: $log"
    # CI keeps no files: the end of the log (the report and the stack) goes to its output.
    if [ -n "${CI:-}" ]; then
      tail -n 60 "$log" | sed 's/^/  | /'
      for f in $found; do echo "  input $(basename "$f") (base64): $(base64 -w0 "$f")"; done
    fi
    failed+=("$t")
  else
    echo "$t: ok, ${execs:-?} runs, corpus $(ls "$work" | wc -l) new units"
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz/run.sh: failed: ${failed[*]}"
  exit 1
fi
echo "fuzz/run.sh: all targets passed"
