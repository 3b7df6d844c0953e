#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole benchmark suite (issue 6): builds Release in build-bench/, runs the Google Benchmark binary
# (in-process figures, with the libpfm4 peer in the same run), then the whole-process figures with
# hyperfine (cold-start `perfspec resolve`, `perfspec stat` vs `perf stat`) and peak RSS, and prints a
# summary of medians and ratios. Results are kept in build-bench/bench-results/.
#
#   bench/run.sh                 everything (about 3-4 minutes on 2 cores, build excluded)
#   REPS=3 MIN_TIME=0.2 RUNS=30 bench/run.sh     quicker, noisier
#   JOBS=2                       build parallelism (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=build-bench
out=$dir/bench-results
reps=${REPS:-5}
min_time=${MIN_TIME:-0.5}   # Google Benchmark 1.7.1: plain seconds
runs=${RUNS:-100}
jobs=${JOBS:-2}
fixture=tests/fixtures/intel_skx

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v perf >/dev/null || need+=(linux-perf)
command -v python3 >/dev/null || need+=(python3)
[ -x /usr/bin/time ] || need+=(time)
[ -f /usr/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
[ -f /usr/include/perfmon/pfmlib_perf_event.h ] || need+=(libpfm4-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]}"
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

echo "== Release build in $dir"
# -g only adds debug info (same code at -O3) so callgrind can name file:function.
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O3 -DNDEBUG -g" \
      -DPERFSPEC_BENCHMARKS=ON >/dev/null
cmake --build "$dir" -j"$jobs" --target perfspec_cli perfspec_bench >/dev/null
mkdir -p "$out"
cli=$dir/perfspec
{
  echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
  echo "source: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"
if awk '{exit !($1 > 0.5)}' /proc/loadavg; then
  echo "warning: load average $(cut -d' ' -f1 /proc/loadavg): other work is running; figures will be noisy" >&2
fi

echo "== in-process benchmarks ($reps repetitions, min time ${min_time}s each)"
"$dir/bench/perfspec_bench" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true \
  --benchmark_min_time="$min_time" --benchmark_out="$out/bench.json" --benchmark_out_format=json \
  | grep -E '_median|^-|^Benchmark' || true

# Event lists for the whole-process runs: n events cycling over the corpus lines that hold one event
# (no group), as perfspec::bench::mixed_list does for BM_Scaling_mixed.
python3 - "$root/bench/corpus.txt" "$out" <<'PY'
import sys
lines = [l.rstrip('\n') for l in open(sys.argv[1]) if l.strip() and not l.startswith('#')]
singles = [l for l in lines if '{' not in l]
for n in (100, 1000):
    open(f"{sys.argv[2]}/list{n}.txt", "w").write(",".join(singles[i % len(singles)] for i in range(n)))
PY
list100=$(cat "$out/list100.txt")
list1000=$(cat "$out/list1000.txt")
raw='cpu/event=0x2,inv,ldlat=3/u'

echo "== whole process: cold-start resolve ($runs runs each)"
hyperfine -N --warmup 5 --runs "$runs" --export-json "$out/resolve.json" \
  -n version "$cli --version" \
  -n raw "$cli resolve --sysfs $fixture '$raw'" \
  -n list100 "$cli resolve --sysfs $fixture '$list100'" \
  -n list1000 "$cli resolve --sysfs $fixture '$list1000'" 2>&1 | grep -vE '^\s*$' | grep -E 'Benchmark|Time|Range' || true

events=$root/../shared/pmu-events/x86
if [ -f "$events/mapfile.csv" ]; then
  echo "== whole process: a named event from the icelakex table vs the raw event ($runs runs each)"
  export PERFSPEC_CACHE_DIR=$out/index-cache
  "$cli" resolve --sysfs "$fixture" --events-dir "$events" --cpuid GenuineIntel-6-6A-6 inst_retired.any >/dev/null
  hyperfine -N --warmup 5 --runs "$runs" --export-json "$out/named.json" \
    -n named "$cli resolve --sysfs $fixture --events-dir $events --cpuid GenuineIntel-6-6A-6 --no-libpfm4 inst_retired.any" \
    -n raw "$cli resolve --sysfs $fixture '$raw'" 2>&1 | grep -vE '^\s*$' | grep -E 'Benchmark|Time|Range' || true
fi

echo "== whole process: perfspec stat vs perf stat ($runs runs each)"
hyperfine -N --warmup 5 --runs "$runs" --export-json "$out/stat.json" \
  -n perfspec "$cli stat -e task-clock,page-faults -- true" \
  -n perf "perf stat -e task-clock,page-faults -- true" 2>&1 | grep -vE '^\s*$' | grep -E 'Benchmark|Time|Range|faster' || true

echo "== peak RSS (/usr/bin/time, median of 5)"
rss() {  # label, command...
  local label=$1; shift
  for _ in 1 2 3 4 5; do /usr/bin/time -f '%M' -o "$out/rss.tmp" "$@" >/dev/null 2>&1; cat "$out/rss.tmp"; done |
    sort -n | sed -n 3p | sed "s/^/$label /"
}
{
  rss raw "$cli" resolve --sysfs "$fixture" "$raw"
  rss list1000 "$cli" resolve --sysfs "$fixture" "$list1000"
  rss perfspec_stat "$cli" stat -e task-clock,page-faults -- true
  rss perf_stat perf stat -e task-clock,page-faults -- true
  if [ -f "$events/mapfile.csv" ]; then
    rss named_icelakex "$cli" resolve --sysfs "$fixture" --events-dir "$events" --cpuid GenuineIntel-6-6A-6 inst_retired.any
    rss list_icelakex "$cli" list --sysfs "$fixture" --events-dir "$events" --cpuid GenuineIntel-6-6A-6
  fi
} >"$out/rss.txt"

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
python3 "$root/bench/summary.py" "$out"
