#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install what is needed, build, resolve real example event strings (against a
# Skylake-X server's PMU description and against this machine), and count a command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release >/dev/null
bin=build/perfspec
skx=tests/fixtures/intel_skx

run() { printf '\n$ %s\n' "$*"; "$@"; }
run $bin resolve --sysfs $skx 'cpu/event=0x2,inv,ldlat=3/u'
run $bin resolve --sysfs $skx '{cycles,instructions}:u'
run $bin resolve --sysfs $skx 'L1D.READ.MISS' 'mem-loads:pp' 'uncore_imc/cas_count_read/'
run $bin resolve 'sched:sched_switch' 'mem:0x1000:rw'
# Vendor event names from perf's JSON tables, for a Skylake-X server (whatever this machine is).
events=../shared/pmu-events/x86
if [ -f $events/mapfile.csv ]; then
  run $bin resolve --sysfs $skx --events-dir $events --cpuid GenuineIntel-6-55-4 'mem_load_retired.l1_miss:pp' 'cpu/inst_retired.any,cmask=2/u'
  run $bin list --sysfs $skx --events-dir $events --cpuid GenuineIntel-6-55-4 --source json 'mem_load_retired.l1*'
fi
# A typo gets a positioned diagnostic (and a non-zero status, which this demo expects).
run $bin resolve --sysfs $skx 'cpu/event=0x3c,umsk=1/' || true
run $bin stat -e task-clock,page-faults,context-switches,cycles -- ls /usr
# Metrics in perf's language: an ad hoc one counted here, and a Top-down metric's plan on Skylake-X.
run $bin stat -M 'faults_per_msec = page\-faults / task\-clock * 1e6' -- ls /usr
if [ -f $events/mapfile.csv ]; then
  run $bin resolve --sysfs $skx --events-dir $events --cpuid GenuineIntel-6-55-4 -M tma_frontend_bound
fi
# Sampling: a perf.data file perf report reads, printed back as perf script prints it, with the
# functions and binaries of each callchain (perf's default fields).
data=$(mktemp -d)/perf.data
run $bin record -e task-clock,page-faults -g -o "$data" -- sh -c 'ls -R /usr/share/doc >/dev/null'
# (the first lines of it: into a file first, as `| head` would end perfspec with SIGPIPE, status 141)
run $bin script --samples -i "$data" >"$data.txt"
head -n 12 "$data.txt"
run $bin script --summary -i "$data"
# The same samples as perf report --stdio tables them (the first rows, without graphs), and as folded
# stacks for a flame graph
run $bin report -i "$data" --no-children -g none --percent-limit 2 >"$data.txt"
head -n 20 "$data.txt"
printf '\n$ %s\n' "$bin report -i $data --format folded   # the three largest stacks"
$bin report -i "$data" --format folded >"$data.txt"
# (sed reads all of sort's output: a `head` that stopped early would end sort with SIGPIPE, status 141,
# once the stacks pass the pipe's 64 KiB, as they do on a machine with much in /usr/share/doc)
sort -t' ' -k2 -n -r "$data.txt" | sed -n '1,3p'
rm -rf "$(dirname "$data")"
