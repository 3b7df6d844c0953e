#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perfspec report against perf 6.12's perf report --stdio (issue 31: "report on 2 million samples at
# least 5x faster than perf report"), on the large recording bench/record.sh makes (perf 6.12,
# task-clock every 10 us with callchains, ~4 million samples, in perf's chroot; never committed):
#   1. both print the same bytes (perf's closing tip cut off), for each setting below;
#   2. farm-bench times them in turn (perfspec, perf, perfspec, perf, ...), output to /dev/null, and
#      gives the ratio run pair by run pair;
#   3. the same for perf script with its default fields (symbols on every callchain frame).
# Needs root (perf 6.12 runs from a chroot: ../shared/tools/perf-current) and a Release build.
#
#   bench/report.sh                        record the file if missing (minutes), then compare and time
#   RUNS=3 BUILD=build bench/report.sh     fewer runs, an existing Release build
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
perf=${PERF_CURRENT:-$root/../shared/tools/perf-current}
chroot_root=${PERF_CURRENT_ROOT:-/opt/perf-current}
dir=${BUILD:-build-bench}
runs=${RUNS:-5}
name=perfspec-bench-record.data
file=$chroot_root/tmp/$name

if [ "$dir" = build-bench ]; then
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DPERFSPEC_BENCHMARKS=ON >/dev/null
fi
cmake --build "$dir" -j"${JOBS:-2}" --target perfspec_cli >/dev/null
cli=$root/$dir/perfspec
if [ ! -s "$file" ]; then
  echo "== recording 250 MB with perf 6.12 (bench/record.sh's file)"
  timeout 1800 "$perf" record -q -e task-clock -c 10000 -g --max-size=250M -o "/tmp/$name" \
    -- sh -c 'while :; do :; done' >/dev/null 2>&1 || true
fi
"$cli" script -i "$file" --summary | grep -E '^(SAMPLE|total)'

# perf report's settings: its default (Children with graphs), and -g none --no-children (the table)
settings=("" "--no-children -g none")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in "${settings[@]}"; do
  # shellcheck disable=SC2086
  "$cli" report --symfs "$chroot_root" -i "$file" $s >"$tmp/perfspec.txt"
  # shellcheck disable=SC2086
  "$perf" report --stdio -i "/tmp/$name" $s 2>/dev/null |
    python3 -c 'import sys; t = sys.stdin.read(); i = t.rfind("#\n# (Tip: "); sys.stdout.write(t[:i] if i >= 0 else t)' \
      >"$tmp/perf.txt"
  if cmp -s "$tmp/perfspec.txt" "$tmp/perf.txt"; then
    echo "report ${s:-(default)}: identical ($(wc -c <"$tmp/perf.txt") bytes)"
  else
    echo "report ${s:-(default)}: DIFFERENT"
    diff "$tmp/perf.txt" "$tmp/perfspec.txt" | head -10
  fi
  echo "== timing report ${s:-(default)}: perfspec against perf 6.12, $runs pairs, output to /dev/null"
  farm-bench -n "$runs" --timeout 3000 --pin 1 --vs "sh -c 'exec $perf report --stdio -i /tmp/$name $s >/dev/null 2>&1'" \
    -- sh -c "exec $cli report --symfs $chroot_root -i $file $s >/dev/null"
done

# perf script with symbols (issue 31: "script with symbols at least 10x perf script's records per
# second"): perf's default fields on the same file, checked identical, then timed in pairs
"$cli" script --samples --symfs "$chroot_root" -i "$file" >"$tmp/perfspec.txt"
"$perf" script -i "/tmp/$name" >"$tmp/perf.txt" 2>/dev/null
if cmp -s "$tmp/perfspec.txt" "$tmp/perf.txt"; then
  echo "script (default fields): identical ($(wc -c <"$tmp/perf.txt") bytes)"
else
  echo "script (default fields): DIFFERENT"
fi
rm -f "$tmp/perfspec.txt" "$tmp/perf.txt"
echo "== timing script (default fields): perfspec against perf 6.12, $runs pairs, output to /dev/null"
farm-bench -n "$runs" --timeout 3000 --pin 1 --vs "sh -c 'exec $perf script -i /tmp/$name >/dev/null 2>&1'" \
  -- sh -c "exec $cli script --samples --symfs $chroot_root -i $file >/dev/null"
