#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# record and top under a kernel that allows fewer samples a second than perf's default 4000 Hz
# (kernel.perf_event_max_sample_rate, which the kernel lowers itself when sampling interrupts take long:
# an emulated arm64 guest under load went to 3250). As perf's record_opts__config_freq: the default
# frequency lowered to the limit and said, an -F above it too unless --strict-freq (then an error), -F
# max the limit. The limit is lowered to 3000 for the run and put back (ctest runs this alone: no
# other test samples meanwhile). Status 77 (skipped) where the sysctl cannot be written (not root, a
# read-only /proc/sys, or perf_cpu_time_max_percent 0 or 100, where the kernel refuses to set it), or
# where the kernel changed the limit itself during the run (then nothing can be judged).
set -uo pipefail
bin=${PERFSPEC:?PERFSPEC names the perfspec binary}
rate=/proc/sys/kernel/perf_event_max_sample_rate
skipped=77
old=$(cat "$rate" 2>/dev/null) || { echo "sample-rate: skipped: no $rate"; exit 77; }
limit=3000
work=$(mktemp -d)
cleanup() {
  echo "$old" >"$rate" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! { echo "$limit" >"$rate"; } 2>/dev/null || [ "$(cat "$rate")" != "$limit" ]; then
  echo "sample-rate: skipped: cannot set $rate (it needs root, a writable /proc/sys and perf_cpu_time_max_percent from 1 to 99)"
  exit $skipped
fi
if ! "$bin" record -q -e task-clock -c 100000 -o "$work/probe.data" -- true 2>"$work/err"; then
  echo "sample-rate: skipped: cannot sample here: $(head -n 1 "$work/err")"
  exit $skipped
fi
fail=0
pass=0
ok() { pass=$((pass + 1)); }
failed() { echo "FAIL sample-rate: $*"; fail=1; }
# expect NAME STATUS STDERR-LINE... -- ARGS: the exit status and standard error exactly (but record's
# summary, "[ perfspec record: ... ]", and its word on throttling, which a slow kernel gives even at
# these rates: the emulated arm64 guest throttles a frequency's first samples)
expect() {
  local name=$1 status=$2
  shift 2
  local want=()
  while [ "$1" != -- ]; do want+=("$1"); shift; done
  shift
  "$bin" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  [ "$got" = "$status" ] && ok || failed "$name: status $got, expected $status ($(head -n 2 "$work/err"))"
  local expected
  expected=$(printf '%s\n' "${want[@]}")
  local said
  said=$(grep -v '^\[ perfspec record: \|^perfspec record: sampling was throttled ' "$work/err")
  [ "$said" = "$expected" ] && ok || failed "$name: stderr: $said // expected: $expected"
}
# The frequency the file's events were opened with, as the header says it.
freq_of() {
  "$bin" report --header-only -i "$1" 2>/dev/null |
    sed -n 's/^# event : name = \([^,]*\),.*{ sample_period, sample_freq } = \([0-9]*\),.*/\1 \2/p'
}
why="the kernel allows at most $limit samples a second"

expect default 0 "perfspec record: sampling at $limit Hz, not the default 4000: $why (kernel.perf_event_max_sample_rate, which it lowers itself when sampling takes long)" \
  -- record -e task-clock,page-faults -o "$work/default.data" -- true
[ "$(freq_of "$work/default.data")" = "task-clock $limit
page-faults $limit" ] && ok || failed "default: $(freq_of "$work/default.data")"
expect asked-over 0 "perfspec record: -F 3500: sampling at $limit Hz, the most the kernel allows (kernel.perf_event_max_sample_rate); --strict-freq refuses instead" \
  -- record -F 3500 -e task-clock -o "$work/asked.data" -- true
[ "$(freq_of "$work/asked.data")" = "task-clock $limit" ] && ok || failed "asked-over: $(freq_of "$work/asked.data")"
expect asked-under 0 -- record -q -F 2999 -e task-clock -o "$work/under.data" -- true
[ "$(freq_of "$work/under.data")" = "task-clock 2999" ] && ok || failed "asked-under: $(freq_of "$work/under.data")"
expect quiet 0 -- record -q -e task-clock -o "$work/quiet.data" -- true
[ "$(freq_of "$work/quiet.data")" = "task-clock $limit" ] && ok || failed "quiet: $(freq_of "$work/quiet.data")"
expect strict 2 "perfspec: error: -F 3500 with --strict-freq: $why (kernel.perf_event_max_sample_rate)" \
  -- record --strict-freq -F 3500 -e task-clock -o "$work/strict.data" -- true
[ ! -e "$work/strict.data" ] && ok || failed "strict: a file was written"
expect strict-at-limit 0 -- record -q --strict-freq -F $limit -e task-clock -o "$work/at.data" -- true
[ "$(freq_of "$work/at.data")" = "task-clock $limit" ] && ok || failed "strict-at-limit: $(freq_of "$work/at.data")"
# --strict-freq leaves perf's default to be lowered: only an asked frequency is refused
expect strict-default 0 -- record -q --strict-freq -e task-clock -o "$work/sd.data" -- true
[ "$(freq_of "$work/sd.data")" = "task-clock $limit" ] && ok || failed "strict-default: $(freq_of "$work/sd.data")"
expect max 0 "perfspec record: -F max: $limit samples a second (kernel.perf_event_max_sample_rate)" \
  -- record -F max -e task-clock -o "$work/max.data" -- true
[ "$(freq_of "$work/max.data")" = "task-clock $limit" ] && ok || failed "max: $(freq_of "$work/max.data")"
# an event's own freq= is the kernel's to judge: refused with the limit in the hint, as perf leaves it
"$bin" record -q -e task-clock/freq=3500/ -o "$work/term.data" -- true 2>"$work/err"
[ $? = 3 ] && ok || failed "term: status"
grep -qF "the kernel allows at most $limit samples per second" "$work/err" && ok || failed "term: $(cat "$work/err")"
# a period is not a frequency: nothing said
expect period 0 -- record -c 1000000 -e task-clock -o "$work/period.data" -- true
[ "$(freq_of "$work/period.data")" = "task-clock 1000000" ] && ok || failed "period: $(freq_of "$work/period.data")"

if [ "$(cat "$rate")" != "$limit" ]; then
  echo "sample-rate: skipped: the kernel changed the limit to $(cat "$rate") during the run"
  exit 77
fi
echo "sample-rate: $pass passed"
exit $fail
