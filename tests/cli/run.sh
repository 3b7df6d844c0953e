#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CLI tests: run `perfspec` as a user does and compare stdout, stderr and exit status exactly.
set -u
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/../fixtures
bin=${PERFSPEC:?set PERFSPEC to the perfspec binary}
workload=${PERFSPEC_WORKLOAD:-$(dirname "$bin")/tests/perfspec_workload}
pass=0 fail=0

# check NAME EXPECTED_STATUS EXPECTED_FILE -- ARGS...   (EXPECTED_FILE holds stdout, then stderr after a line '--- stderr')
# The command is "${wrap[@]}" "$bin" ARGS...: wrap runs it elsewhere (another user, a mount namespace).
# `stdin_from=FILE check ...` gives it FILE on standard input.
wrap=()
# The command's output goes to two files kept for the run: a check forks nothing but the command (the
# suite runs in an emulated arm64 machine too, where each program started costs a tenth of a second).
check_out=$(mktemp) check_err=$(mktemp)
# perf's build-id cache (~/.debug, which perf fills as it records) holds this machine's libraries once
# perf has run here: symbols the checks expect not to find would be found there. The suite's is empty.
PERF_BUILDID_DIR=$(mktemp -d)
export PERF_BUILDID_DIR
check() {
  local name=$1 want_status=$2 want_file=$3
  shift 4
  local status
  if [ -n "${stdin_from:-}" ]; then
    "${wrap[@]}" "$bin" "$@" <"$stdin_from" >"$check_out" 2>"$check_err"
  else
    "${wrap[@]}" "$bin" "$@" >"$check_out" 2>"$check_err"
  fi
  status=$?
  # stdout as written, the marker right after it (on its last line when that has no newline), stderr;
  # the trailing newlines dropped
  local out err got want
  IFS= read -r -d '' out <"$check_out"
  IFS= read -r -d '' err <"$check_err"
  got="$out--- stderr"$'\n'"$err"
  got=${got%"${got##*[!$'\n']}"}
  got=${got//$fixtures/FIXTURES}
  want=$(<"$here/expected/$want_file")
  if [ "$status" != "$want_status" ] || [ "$got" != "$want" ]; then
    echo "FAIL $name (status $status, want $want_status)"
    diff <(echo "$want") <(echo "$got") | head -40
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

check text-group 0 text_group.txt -- resolve --sysfs "$fixtures/intel_skx" '{cpu/event=0x2,inv,ldlat=3/u,instructions}:k' 'uncore_imc_0/cas_count_read/'
check json-group 0 json_group.txt -- resolve --sysfs "$fixtures/intel_skx" --format json '{cycles,mem-loads}:u'
check json-breakpoint 0 json_breakpoint.txt -- resolve --sysfs "$fixtures/intel_skx" --format json 'mem:0x1000/8:w'
check syntax-error 1 syntax_error.txt -- resolve --sysfs "$fixtures/intel_skx" 'cpu/foo=1/'
check second-list-error 1 second_list_error.txt -- resolve --sysfs "$fixtures/intel_skx" cycles 'cycles:uu'
check bad-format-option 2 bad_format_option.txt -- resolve --format yaml cycles
check no-subcommand 2 no_subcommand.txt --
check tracepoint-suggest 1 tracepoint_suggest.txt -- resolve --sysfs "$fixtures/intel_skx" 'cycles,sched:sched_swich:u'
# A pattern in the form of a tracepoint lists tracepoints without --tracepoints.
check list-tracepoints-glob 0 list_tracepoints_glob.txt -- list --sysfs "$fixtures/intel_skx" 'sched:sched_sw*'
check list-tracepoints-sys 0 list_tracepoints_sys.txt -- list --sysfs "$fixtures/intel_skx" sched:
# Under --format json an error is one line of JSON on stderr (schema perfspec-error/1,
# docs/output-formats.md), with the exit status of its kind as in text.
check json-error-unknown-term 1 json_error_unknown_term.txt -- resolve --sysfs "$fixtures/intel_skx" --format json 'cpu/event=0x3c,umsk=1/'
check json-error-syntax 1 json_error_syntax.txt -- resolve --sysfs "$fixtures/intel_skx" --format json '{cycles,instructions'
check json-error-unknown-event 1 json_error_unknown_event.txt -- resolve --sysfs "$fixtures/intel_skx" --format json 'cycles,instructons:u'
check json-error-keep-going 1 json_error_keep_going.txt -- resolve -k --sysfs "$fixtures/intel_skx" --format json 'cpu/nosuch=1/' 'cycles:uu'
# CLI11's own errors come before --format is parsed: the words say JSON, in either spelling.
check json-error-usage 2 json_error_usage.txt -- resolve --format json --bogus cycles
check json-error-usage-equals 2 json_error_usage_equals.txt -- resolve --bogus --format=json cycles
check json-error-not-a-tree 2 json_error_not_a_tree.txt -- resolve --sysfs "$fixtures/intel_skx/bus" --format json cycles
check json-error-subcommand 2 json_error_subcommand.txt -- stats --format json
check json-error-list-pmu 1 json_error_list_pmu.txt -- list --sysfs "$fixtures/intel_skx" --format json --pmu uncore_imx
check json-error-decode-attr 2 json_error_decode_attr.txt -- decode --format json --attr nope
check json-decode 0 json_decode.txt -- decode --sysfs "$fixtures/intel_skx" --format json --type 4 --config 0x1cd --config1 3


# The JSON is machine-readable and complete: every attr field, union members under both names.
json=$("$bin" resolve --sysfs "$fixtures/intel_skx" --format json 'mem:0x1000')
if python3 - "$json" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
a = d["events"][0]["attr"]
assert a["config1"] == a["bp_addr"] == 4096, a
assert a["config2"] == a["bp_len"] == 4, a
assert a["sample_period"] == a["sample_freq"] == 1, a
assert len(a) == 57 + 8, len(a)   # 57 fields + 8 union aliases
PY
then pass=$((pass + 1)); else echo "FAIL json-fields"; fail=$((fail + 1)); fi

# ---- perfspec stat (real counting) ----
expect() {  # expect NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
# lacks [GREP-OPTION] PATTERN TEXT: no line of TEXT matches. A function, where `bash -c ... "$text"`
# made TEXT an argument of a program, which the kernel refuses past 128 KiB (E2BIG): a system-wide
# recording's script under load passed that, and the check failed without a matching line.
lacks() { ! grep -q "${@:1:$#-1}" <<<"${!#}"; }
# Signals to a perfspec stat started in the background must wait until it catches them: until then
# the SIGINT a non-interactive shell leaves ignored for a background job is lost, and a slow start (a
# sanitizer build on a loaded machine) outlasts any fixed sleep. perfspec starts the command (exec)
# only after it catches signals, so a child that runs COMMAND says it is ready.
wait_for_exec() {  # wait_for_exec PID COMMAND-NAME: at most 20 s
  local i
  for i in $(seq 200); do pgrep -P "$1" -x "$2" >/dev/null && return 0; sleep 0.1; done
  echo "no child '$2' of $1 after 20 s" >&2; return 1
}
# wait_for_lines FILE N: until FILE has N lines or more, at most 30 s.
wait_for_lines() {
  local i
  for i in $(seq 300); do [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0; sleep 0.1; done
  echo "$1: fewer than $2 lines after 30 s" >&2; return 1
}
# A sleep(1) started in the background is another program until it has exec'd (its comm is the
# shell's), and it runs until it is in its nanosleep; from then on it never runs again until it is
# signalled or its time is up. asleep PID: so it is now (comm sleep, state S, and the kernel's wait
# channel a nanosleep where it names one); wait_asleep PID: until it is, at most 30 s.
asleep() {
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] || return 1
  local stat wchan
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" = S ] || return 1
  wchan=$(cat "/proc/$1/wchan" 2>/dev/null)
  case $wchan in *nanosleep* | '' | 0) return 0 ;; *) return 1 ;; esac
}
wait_asleep() {
  local i
  for i in $(seq 300); do asleep "$1" && return 0; sleep 0.1; done
  echo "process $1 not asleep in sleep(1) after 30 s" >&2; return 1
}
# wait_polling PID: until PID has its perf_event fds open and waits in poll(2) on them (its read loop:
# set up and started), at most 60 s. Where the kernel names no wait channel, asleep with the fds open.
wait_polling() {
  local i stat wchan
  for i in $(seq 600); do
    if ls -l "/proc/$1/fd" 2>/dev/null | grep -q perf_event; then
      stat=$(cat "/proc/$1/stat" 2>/dev/null) && stat=${stat##*) }
      wchan=$(cat "/proc/$1/wchan" 2>/dev/null)
      [ "${stat%% *}" = S ] && case $wchan in *poll* | '' | 0) return 0 ;; esac
    fi
    sleep 0.1
  done
  echo "process $1 not waiting on its events after 60 s" >&2; return 1
}
# The CLOCK_MONOTONIC time, in seconds (perfspec's clock for elapsed times and intervals). Read before
# and after a run, it gives a time that every time the run prints fits in, loaded or not.
mono() { python3 -c 'import time; print("%.9f" % time.monotonic())'; }
# With no command (-a), stop signals are sent until perfspec has gone: each one after the first
# only repeats "stop".
interrupt_until_gone() {  # interrupt_until_gone PID: at most 20 s
  local i
  for i in $(seq 100); do kill -INT "$1" 2>/dev/null || return 0; sleep 0.2; done
  kill -KILL "$1" 2>/dev/null; return 1
}
# A core PMU, as perf finds one: 'cpu' (x86), or a PMU that lists the CPUs it counts on ('cpus':
# armv8_pmuv3, cpu_core on a hybrid). Without one, cycles is not supported and says why.
core_pmu() { [ -e /sys/bus/event_source/devices/cpu ] || compgen -G '/sys/bus/event_source/devices/*/cpus' >/dev/null; }
out=$("$bin" stat -e task-clock,page-faults,cycles -- true 2>&1); status=$?
expect stat-exit-0 [ "$status" = 0 ]
expect stat-task-clock grep -qE '^ +[0-9]+\.[0-9]{2} msec task-clock +# +[0-9.]+ CPUs utilized +$' <<<"$out"
expect stat-page-faults grep -qE '^ +[0-9]+      page-faults +# +[0-9.]+ [KM]?/sec +$' <<<"$out"
expect stat-header grep -qF " Performance counter stats for 'true':" <<<"$out"
expect stat-elapsed grep -qE '^ +[0-9]+\.[0-9]{9} seconds time elapsed$' <<<"$out"
if ! core_pmu; then
  expect stat-cycles-not-supported grep -qE '^   <not supported>      cycles {64}$' <<<"$out"
  expect stat-cycles-errno grep -qE "^ +ENOENT: this machine has no 'cpu' PMU" <<<"$out"
else
  expect stat-cycles-counted grep -qE '^ +[0-9,]+      cycles +# +[0-9.]+ GHz +$' <<<"$out"
fi
"$bin" stat -e task-clock -- sh -c 'exit 7' 2>/dev/null; status=$?
expect stat-exit-status [ "$status" = 7 ]
"$bin" stat -e task-clock -- sh -c 'kill -TERM $$' 2>/dev/null; status=$?
expect stat-killed-status [ "$status" = 143 ]
err=$("$bin" stat -e task-clock -- /nonexistent/command 2>&1); status=$?
expect stat-no-command-127 [ "$status" = 127 ]
expect stat-no-command-msg grep -qF "perfspec stat: cannot run '/nonexistent/command': No such file or directory" <<<"$err"
err=$("$bin" stat -e 'task-clock,cpu/foo/' -- true 2>&1); status=$?
expect stat-bad-event-status [ "$status" = 1 ]
expect stat-bad-event-caret grep -qF "event syntax error: 'task-clock,cpu/foo/'" <<<"$err"
# Nothing named to count (no command, -p, -t, -a or -C) is the whole system, as for perf, until a
# signal, which then ends perfspec too (perf stat's sig_atexit: status 128 + SIGINT)
tmp=$(mktemp)
"$bin" stat -e cpu-clock -o "$tmp" & p=$!
sleep 0.3; interrupt_until_gone $p; wait $p; status=$?
expect stat-no-target-status [ "$status" = 130 ]
expect stat-no-target-system-wide grep -qF "Performance counter stats for 'system wide':" "$tmp"
rm -f "$tmp"
# --timeout MSEC (perf's, which perf also takes as --time: any prefix naming one long option): the
# counts after that long, the command ended by SIGTERM (said as psignal says it), status 0 as perf's
t0=$(mono)
out=$("$bin" stat -e task-clock --time 200 -- sleep "30.$$" 2>&1); status=$?
t1=$(mono)
expect stat-timeout-status [ "$status" = 0 ]
expect stat-timeout-terminated grep -qxF "sleep: Terminated" <<<"$out"
expect stat-timeout-elapsed python3 -c 'import re, sys; t = float(re.search(r"([0-9.]+) seconds time elapsed", sys.argv[1]).group(1)); sys.exit(not 0.2 <= t <= float(sys.argv[3]) - float(sys.argv[2]))' "$out" "$t0" "$t1"
out=$("$bin" stat -e task-clock --timeout 100 -a 2>&1); status=$?
expect stat-timeout-a [ "$status" = 0 ] && expect stat-timeout-a-header grep -qF "for 'system wide':" <<<"$out"
err=$("$bin" stat -e task-clock --timeout 5 -a 2>&1); status=$?
expect stat-timeout-min [ "$status" = 2 ] && expect stat-timeout-min-msg grep -qF "timeout must be >= 10ms." <<<"$err"
err=$("$bin" stat -e task-clock --ti 200 -a 2>&1); status=$?
expect stat-ambiguous [ "$status" = 2 ] && expect stat-ambiguous-msg grep -qF "perfspec: ambiguous option: --ti (could be --tid or --timeout)" <<<"$err"
# an abbreviation in the command's own words is the command's
out=$("$bin" stat -e task-clock -- sh -c 'echo "$1"' sh --ti 2>/dev/null)
expect stat-command-words-kept [ "$out" = "--ti" ]
# -p with a command: the process is counted while the command runs (perf stat -p PID sleep 10)
sleep "30.$$" & sleeper=$!
out=$("$bin" stat -e task-clock -p "$sleeper" -- sleep 0.2 2>&1); status=$?
kill "$sleeper"; wait "$sleeper" 2>/dev/null
expect stat-p-command-status [ "$status" = 0 ]
expect stat-p-command-header grep -qF "Performance counter stats for process id '$sleeper':" <<<"$out"
expect stat-p-command-elapsed python3 -c 'import re, sys; t = float(re.search(r"([0-9.]+) seconds time elapsed", sys.argv[1]).group(1)); sys.exit(not 0.2 <= t < 30)' "$out"
# A zombie (exited, never reaped) has nothing to count: an error at once, not a wait for its reaping.
err=$(timeout 60 python3 -c '
import os, subprocess, sys
pid = os.fork()
if pid == 0:
    os._exit(0)
# until the child has exited, without reaping it: from here on it is a zombie
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
r = subprocess.run([sys.argv[1], "stat", "-e", "task-clock", "-p", str(pid)], capture_output=True, text=True)
print(r.returncode, r.stderr.replace(str(pid), "PID"), end="")
' "$bin")
expect stat-zombie [ "$err" = "2 perfspec: error: process PID has exited (a zombie its parent has not reaped): nothing to count" ]
# -p or -a where no event can be opened because the machine does not support it (no core PMU here):
# counted on as perf does (its stat_handle_error skips ENOENT), <not supported> with the reason, until
# the end: the command that times it, or the interval count
if ! core_pmu; then
  sleep 600 & sleeper=$!
  err=$(timeout 60 "$bin" stat -e cycles -p $sleeper -- sleep 0.3 2>&1); status=$?
  kill $sleeper; wait $sleeper 2>/dev/null
  expect stat-unsupported-p-status [ "$status" = 0 ]
  expect stat-unsupported-p-reason grep -qE "^ +ENOENT: this machine has no 'cpu' PMU" <<<"$err"
  expect stat-unsupported-p-row grep -qE '^ +<not supported> +cycles' <<<"$err"
  err=$(timeout 60 "$bin" stat -I 200 --interval-count 2 -e cycles -a 2>&1); status=$?
  expect stat-unsupported-a-intervals-status [ "$status" = 0 ]
  expect stat-unsupported-a-intervals-rows [ "$(grep -cE '^ +[0-9.]+ +<not supported> +cycles' <<<"$err")" = 2 ]
fi
# -d, -dd, -ddd: perf's detailed events after those asked for, each level adding to the one before
for d in d dd ddd; do
  names=$("$bin" stat -e task-clock -$d -x, true 2>&1 | cut -d, -f3 | tr '\n' ' ')
  want="task-clock L1-dcache-loads L1-dcache-load-misses LLC-loads LLC-load-misses "
  [ $d != d ] && want+="L1-icache-loads L1-icache-load-misses dTLB-loads dTLB-load-misses iTLB-loads iTLB-load-misses "
  [ $d = ddd ] && want+="L1-dcache-prefetches L1-dcache-prefetch-misses "
  expect "stat-detailed-$d" [ "$names" = "$want" ]
done
# Signals: the first is passed on as itself; a second one kills the command and prints the counts.
# signal_run COMMAND SIGNAL...: perfspec stat's exit status, stderr in $tmp_err. COMMAND writes a line
# to $mark once its traps are set (perfspec catches signals before it starts the command), and one
# for each signal its own trap takes; each signal after the first is sent once the one before it has
# reached the command, that is once perfspec has passed it on.
signal_run() {
  : >"$mark"
  "$bin" stat -e task-clock -- sh -c "$1" 2>"$tmp_err" & local p=$!
  shift
  # a watchdog, whose sleep ends with it (left behind, it would hold the test's output open)
  ( sleep 60 & s=$!; trap 'kill $s; exit' TERM; wait $s; kill -KILL $p ) >/dev/null 2>&1 & local watchdog=$!
  local sent=0 sig
  for sig in "$@"; do
    wait_for_lines "$mark" $((sent + 1)) || break
    kill -s "$sig" $p; sent=$((sent + 1))
  done
  wait $p; local status=$?
  kill $watchdog 2>/dev/null; wait $watchdog 2>/dev/null
  return $status
}
tmp_err=$(mktemp) mark=$(mktemp)
# The command outlives the first SIGTERM (its trap notes it, on the next turn of its loop); the second
# makes perfspec kill it.
signal_run "trap '' INT; trap 'echo TERM >>$mark' TERM; echo ready >>$mark; while :; do sleep 0.1; done" TERM TERM
status=$?
expect stat-sigterm-twice-status [ "$status" = 137 ]
expect stat-sigterm-twice-passed-on [ "$(cat "$mark")" = $'ready\nTERM' ]
expect stat-sigterm-twice-counts grep -qE '^ +[0-9.]+ msec task-clock ' "$tmp_err"
signal_run "trap '' INT; echo ready >>$mark; exec sleep 30" TERM; status=$?
expect stat-sigterm-passed-on [ "$status" = 143 ]
expect stat-sigterm-counts grep -qE '^ +[0-9.]+ msec task-clock ' "$tmp_err"
signal_run "echo ready >>$mark; exec sleep 30" INT; status=$?
expect stat-sigint-passed-on [ "$status" = 130 ]
rm -f "$tmp_err" "$mark"
json=$("$bin" stat --format json -e task-clock,page-faults,cycles -- true 2>&1)
expect stat-json python3 -c '
import json, sys
d = json.loads(sys.argv[1])
c = {x["event"]: x for x in d["counts"]}
assert d["exit_status"] == 0
assert c["task-clock"]["state"] == "counted" and c["task-clock"]["unit"] == "msec"
assert c["page-faults"]["raw"] > 0
assert c["cycles"]["state"] in ("counted", "not supported")
if c["cycles"]["state"] == "not supported":
    assert c["cycles"]["error"]["name"] == "ENOENT" and c["cycles"]["error"]["hint"]
' "$json"
csv=$("$bin" stat --format csv -e "task-clock,cpu-clock/name='a,b'/" -- true 2>&1)
expect stat-csv python3 -c '
import csv, io, sys
rows = list(csv.reader(io.StringIO(sys.argv[1])))
assert rows[0][:6] == ["time", "aggregate", "members", "value", "unit", "event"], rows
assert [r[5] for r in rows[1:]] == ["task-clock", "a,b"], rows
assert rows[1][4] == "msec" and rows[1][10] == "counted" and rows[1][13] == "CPUs utilized", rows
' "$csv"
# -I: the K-th interval ends K intervals after the start or later (never sooner), each after the one
# before, and all before the run has ended. (Whether the command ran in an interval is the machine's
# business: each line is its count or <not counted>.)
t0=$(mono); out=$(timeout 60 "$bin" stat -I 100 --interval-count 3 -e task-clock -- sleep 30 2>&1); t1=$(mono)
expect stat-interval python3 -c '
import re, sys
ns = [int(m.group(1) + m.group(2)) for m in re.finditer(r"^ +([0-9]+)\.([0-9]{9}) +(?:[0-9.]+|<not counted>) msec task-clock ", sys.argv[1], re.M)]
assert len(ns) == 3 and len(sys.argv[1].splitlines()) == 4, sys.argv[1]
assert all(t >= k * 100000000 for k, t in enumerate(ns, 1)) and ns == sorted(set(ns)), ns
assert ns[-1] <= (float(sys.argv[3]) - float(sys.argv[2])) * 1e9, (ns, sys.argv[2:])
' "$out" "$t0" "$t1"
# A run shorter than the interval still prints its one, partial, interval, as perf does: an interval of
# an hour (the longest -I takes), whose line ends when the command did.
t0=$(mono); out=$("$bin" stat -I 3600000 -e task-clock -- true 2>&1); t1=$(mono)
expect stat-interval-short-run python3 -c '
import re, sys
ends = re.findall(r"^ +([0-9]+\.[0-9]{9}) +[0-9.]+ msec task-clock ", sys.argv[1], re.M)
assert len(ends) == 1 and len(sys.argv[1].splitlines()) == 2, sys.argv[1]
assert float(ends[0]) <= float(sys.argv[3]) - float(sys.argv[2]), (ends, sys.argv[2:])
' "$out" "$t0" "$t1"
out=$("$bin" stat -a -e cpu-clock -- sleep 0.1 2>&1); status=$?
expect stat-system-wide [ "$status" = 0 ]
expect stat-system-wide-clock grep -qE "msec +cpu-clock" <<<"$out"
tmp=$(mktemp)
"$bin" stat -a -e cpu-clock -o "$tmp" & p=$!
sleep 0.3; interrupt_until_gone $p; wait $p; status=$?
expect stat-sigint-status [ "$status" = 130 ]  # ended by the SIGINT, as perf stat
expect stat-sigint-counts grep -qE "msec +cpu-clock" "$tmp"
# Ctrl-C sent to perfspec alone while it counts a command: passed on to the command, whose counts so
# far are printed; the exit status is the command's (128+SIGINT), and no child is left behind. (A
# duration of this run's own, $$: another run of these tests may be sleeping beside it.)
"$bin" stat -e task-clock -o "$tmp" -- sleep "60.$$" & p=$!
wait_for_exec $p sleep; kill -INT $p; wait $p; status=$?
expect stat-sigint-command-status [ "$status" = 130 ]
expect stat-sigint-command-counts grep -qE "msec +task-clock" "$tmp"
expect stat-sigint-command-header grep -qF " Performance counter stats for 'sleep 60.$$':" "$tmp"
expect stat-sigint-command-reaped [ -z "$(pgrep -x -f "sleep 60.$$")" ]
# -p: counting until the process ends. It is ended once perfspec counts: --control's ping is answered
# from the counting loop, after the events are enabled. Ended, it runs to its exit, so its counts are
# counted (not <not counted>) however late that is.
sleep 600 & sp=$!
ctl=$(mktemp -u); ack=$(mktemp -u); mkfifo "$ctl" "$ack"
exec 4<>"$ctl" 5<>"$ack"
"$bin" stat -p $sp --control "fifo:$ctl,$ack" -e task-clock,context-switches >"$tmp" 2>&1 & p=$!
echo ping >&4; reply=; read -r -t 60 reply <&5
kill $sp; wait $sp 2>/dev/null
wait $p; status=$?; out=$(cat "$tmp")
exec 4>&- 5>&-; rm -f "$ctl" "$ack"
expect stat-pid-ack [ "$reply" = ack ]
expect stat-pid-status [ "$status" = 0 ]
expect stat-pid-header grep -qF " Performance counter stats for process id '$sp':" <<<"$out"
expect stat-pid-switches grep -qE "^ +[0-9]+      context-switches " <<<"$out"
err=$("$bin" stat -p 999999999 -e task-clock 2>&1); status=$?
expect stat-pid-missing [ "$status" = 2 ]
expect stat-pid-missing-msg grep -qF "perfspec: error: no process with pid 999999999" <<<"$err"
rm -f "$tmp"
# A group past the kernel's 16 KiB read (perf_event_validate_size): its members from there fail with
# E2BIG, said as the group's size, not the attr's. 1,100 descriptors: the open-file limit raised for it
# (1,024 where the arm64 guest starts: EMFILE would come first).
big="{$(printf 'page-faults,%.0s' $(seq 1099))page-faults}"
out=$( (ulimit -Hn 4096 2>/dev/null; ulimit -n 4096 2>/dev/null; [ "$(ulimit -n)" -ge 1200 ] || exit 77
        "$bin" stat -v -e "$big" true) 2>&1); status=$?
[ "$status" != 77 ] || echo "skipped: a group past 16 KiB (the open-file limit cannot be raised to 1,200 here)"
[ "$status" = 77 ] || expect stat-group-too-large grep -qxF "    E2BIG: the group is too large: reading it whole would pass the kernel's 16 KiB (about 1,000 members fit): split it into smaller groups" <<<"$out"

# ---- perfspec stat's command line, as perf stat's: options end at the first word that is not one ----
tmp=$(mktemp)
out=$("$bin" stat -e task-clock ls -l / 2>"$tmp"); status=$?
expect stat-command-no-dashdash-status [ "$status" = 0 ]
# ls got its -l: 'total N', then one long line (mode first) per entry of /. (Not compared with a
# second ls -l /: link counts and times under / change between two runs.)
long_listing() {
  [ "$(head -n 1 <<<"$1" | grep -cE '^total [0-9]+$')" = 1 ] &&
    [ "$(tail -n +2 <<<"$1" | grep -cvE '^[-bcdlps][-rwxsStT]{9}')" = 0 ] &&
    [ "$(tail -n +2 <<<"$1" | wc -l)" = "$(ls / | wc -l)" ]
}
expect stat-command-no-dashdash-output long_listing "$out"
expect stat-command-no-dashdash-long grep -qE '^total [0-9]+$' <<<"$out"
expect stat-command-no-dashdash-header grep -qxF " Performance counter stats for 'ls -l /':" "$tmp"
out=$("$bin" stat -e task-clock -- ls -l / 2>"$tmp"); status=$?
expect stat-command-dashdash-status [ "$status" = 0 ]
expect stat-command-dashdash-output long_listing "$out"
expect stat-command-dashdash-header grep -qxF " Performance counter stats for 'ls -l /':" "$tmp"
# Options after the command's first word are the command's: here -a and -x, are echo's words, not
# system-wide counting and perf's CSV.
out=$("$bin" stat -e task-clock echo -a -x, -- -e 2>"$tmp"); status=$?
expect stat-command-options-status [ "$status" = 0 ]
expect stat-command-options-output [ "$out" = "-a -x, -- -e" ]
expect stat-command-options-header grep -qxF " Performance counter stats for 'echo -a -x, -- -e':" "$tmp"
expect stat-command-options-text grep -qE '^ +[0-9]+\.[0-9]{2} msec task-clock ' "$tmp"
# -e repeats; the lists are counted in the order given.
err=$("$bin" stat -e task-clock -e page-faults true 2>&1); status=$?
expect stat-repeated-e-status [ "$status" = 0 ]
expect stat-repeated-e-order [ "$(grep -oE ' (task-clock|page-faults) ' <<<"$err" | tr -d ' ' | tr '\n' ' ')" = "task-clock page-faults " ]
# A usage error before the command exits 2, and the command is not run.
err=$("$bin" stat --bogus true 2>&1); status=$?
expect stat-unknown-option-status [ "$status" = 2 ]
expect stat-unknown-option-msg grep -qxF "The following argument was not expected: --bogus" <<<"$err"
err=$("$bin" stat -e task-clock -Q ls -l / 2>&1); status=$?
expect stat-unknown-short-option-status [ "$status" = 2 ]
expect stat-unknown-short-option-msg grep -qxF "The following argument was not expected: -Q" <<<"$err"
expect stat-unknown-short-option-not-run [ -z "$(grep '^total ' <<<"$err")" ]
err=$("$bin" stat -e task-clock -x 2>&1); status=$?
expect stat-x-without-value-status [ "$status" = 2 ]
err=$("$bin" stat -x, --format csv -e task-clock true 2>&1); status=$?
expect stat-x-and-format-status [ "$status" = 2 ]
expect stat-x-and-format-msg [ "$err" = "perfspec: error: -x prints perf's CSV and --format picks perfspec's own output: give one of them" ]
err=$("$bin" stat -x, --format json -e task-clock true 2>&1)
expect stat-x-and-format-json [ "$err" = '{"schema":"perfspec-error/1","kind":"usage","message":"-x prints perf'"'"'s CSV and --format picks perfspec'"'"'s own output: give one of them","input":null,"span":null,"help":null}' ]
err=$("$bin" stat -A --per-core -a true 2>&1); status=$?
expect stat-two-aggregations [ "$status" = 2 ]
expect stat-two-aggregations-msg [ "$err" = "perfspec: error: -A, --per-core, --per-die, --per-socket, --per-node, --per-thread, --per-cache and --per-cluster exclude each other: give one" ]
err=$("$bin" stat -j -x, true 2>&1); status=$?
expect stat-j-and-x [ "$status" = 2 ]
err=$("$bin" stat --format json -e 'cpu/nosuch/' true 2>&1); status=$?
expect stat-event-error-json python3 -c '
import json, sys
e = json.loads(sys.argv[1])
assert e["schema"] == "perfspec-error/1" and e["input"] == "cpu/nosuch/" and e["span"][0] == 0, e
' "$err"

# ---- perfspec stat -x SEP: perf 6.12's CSV (perf stat -x), on stderr unless -o ----
# perf_csv NAME SEP OUTPUT LINE...: OUTPUT is exactly one line per LINE, with LINE's fields. A LINE
# lists its fields as shell words: N0 an integer, N2/N3/N9 a number with that many decimals, RATE
# perf's rate unit (/sec, K/sec, M/sec, G/sec), '' an empty field, anything else literal text; a
# LINE of several such lists joined by ' OR ' is one of them.
perf_csv() {
  local name=$1 sep=$2 text=$3; shift 3
  expect "$name" python3 -c '
import re, shlex, sys
sep, text, want = sys.argv[1], sys.argv[2], sys.argv[3:]
kinds = {"N0": r"[0-9]+", "N2": r"[0-9]+\.[0-9]{2}", "N3": r"[0-9]+\.[0-9]{3}", "N9": r"[0-9]+\.[0-9]{9}",
         "RATE": r"[KMG]?/sec"}
lines = text.split("\n")
assert lines.pop() == "", repr(text)
assert len(lines) == len(want), (lines, want)
def fits(fields, specs):
    return len(fields) == len(specs) and all(re.fullmatch(kinds.get(s, re.escape(s)), f) for f, s in zip(fields, specs))
for line, spec in zip(lines, want):
    assert any(fits(line.split(sep), shlex.split(one)) for one in spec.split(" OR ")), (line, spec)
' "$sep" "$text" "$@"
}
out=$("$bin" stat -x, -e task-clock,page-faults true 2>"$tmp"); status=$?
expect stat-x-status [ "$status" = 0 ]
expect stat-x-stdout-empty [ -z "$out" ]
perf_csv stat-x-lines , "$(cat "$tmp")"$'\n' \
  "N2 msec task-clock N0 100.00 N3 'CPUs utilized'" \
  "N0 '' page-faults N0 100.00 N3 RATE"
# A multi-character separator, as perf allows; -o writes the same lines to the file instead, after
# perf's line of when the count started (ctime's text) and a blank line
"$bin" stat -x ';;' -o "$tmp" -e task-clock,page-faults true 2>/dev/null
expect stat-o-started-on grep -qxE '# started on [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}' \
  <(head -1 "$tmp")
expect stat-o-started-on-blank [ -z "$(sed -n 2p "$tmp")" ]
perf_csv stat-x-multichar ';;' "$(tail -n +3 "$tmp")"$'\n' \
  "N2 msec task-clock N0 100.00 N3 'CPUs utilized'" \
  "N0 '' page-faults N0 100.00 N3 RATE"
# An empty separator, as perf allows: the fields run together.
err=$("$bin" stat -x '' -e task-clock true 2>&1)
expect stat-x-empty grep -qxE '[0-9]+\.[0-9]{2}msectask-clock[0-9]+100\.00[0-9]+\.[0-9]{3}CPUs utilized' <<<"$err"
# The option's other spellings: glued (-eX, -x:, -I3600000), --name=value and --name value. A run
# shorter than the interval (here an hour) still prints its one, partial, interval, as perf does.
err=$("$bin" stat -etask-clock -x: -I3600000 true 2>&1)
perf_csv stat-x-glued-interval : "$err"$'\n' "N9 N2 msec task-clock N0 100.00 N3 'CPUs utilized'"
err=$("$bin" stat --event=task-clock --field-separator=: true 2>&1)
perf_csv stat-x-long-equals : "$err"$'\n' "N2 msec task-clock N0 100.00 N3 'CPUs utilized'"
err=$("$bin" stat --event task-clock --field-separator : true 2>&1)
perf_csv stat-x-long-space : "$err"$'\n' "N2 msec task-clock N0 100.00 N3 'CPUs utilized'"
err=$("$bin" stat -x, -e cycles,task-clock true 2>&1)
if ! core_pmu; then
  # perf 6.12's line for an event that did not open, exactly; no errno text in this format.
  expect stat-x-not-supported [ "$(head -n 1 <<<"$err")" = "<not supported>,,cycles,0,100.00,," ]
  perf_csv stat-x-not-supported-lines , "$err"$'\n' \
    "'<not supported>' '' cycles 0 100.00 '' ''" "N2 msec task-clock N0 100.00 N3 'CPUs utilized'"
else
  perf_csv stat-x-cycles-lines , "$err"$'\n' \
    "N0 '' cycles N0 100.00 N3 GHz" "N2 msec task-clock N0 100.00 N3 'CPUs utilized'"
fi
# Intervals: the interval's end first, then the same fields. A process asleep all through (a sleep(1)
# in its nanosleep, counted with -p) never runs, so its clock runs in no interval: perf prints that as
# <not counted> with its unit, here three times.
sleep 600 & sleeper=$!
wait_asleep $sleeper
err=$(timeout 60 "$bin" stat -x, -I 100 --interval-count 3 -e task-clock -p $sleeper 2>&1)
kill $sleeper; wait $sleeper 2>/dev/null
perf_csv stat-x-interval , "$err"$'\n' \
  "N9 '<not counted>' msec task-clock 0 100.00 '' ''" \
  "N9 '<not counted>' msec task-clock 0 100.00 '' ''" \
  "N9 '<not counted>' msec task-clock 0 100.00 '' ''"
# A command that sleeps: its clock runs while it starts, in whichever intervals that falls (a loaded
# machine decides), and in no interval after.
err=$(timeout 60 "$bin" stat -x, -I 100 --interval-count 3 -e task-clock -- sleep 30 2>&1)
either="N9 N2 msec task-clock N0 100.00 N3 'CPUs utilized' OR N9 '<not counted>' msec task-clock 0 100.00 '' ''"
perf_csv stat-x-interval-command , "$err"$'\n' "$either" "$either" "$either"
err=$("$bin" stat -x, -a -e cpu-clock,context-switches sleep 0.1 2>&1)
perf_csv stat-x-system-wide , "$err"$'\n' \
  "N2 msec cpu-clock N0 100.00 N3 'CPUs utilized'" \
  "N0 '' context-switches N0 100.00 N3 RATE"
rm -f "$tmp"

# ---- named events, list, snapshot ----
events=$here/../../../shared/pmu-events/x86
if [ -f "$events/mapfile.csv" ]; then
  cache=$(mktemp -d)
  out=$(PERFSPEC_CACHE_DIR=$cache PERFSPEC_EVENTS_DIR=$events PERFSPEC_CPUID=GenuineIntel-6-55-4 \
        "$bin" resolve --sysfs "$fixtures/intel_skx" --no-libpfm4 --format json 'mem_load_retired.l1_miss:pp' 2>&1)
  expect tables-env python3 -c '
import json, sys
a = json.loads(sys.argv[1])["events"][0]["attr"]
assert (a["type"], a["config"], a["precise_ip"], a["sample_period"]) == (4, 0x8d1, 2, 100003), a
' "$out"
  # No tables: --no-tables (over $PERFSPEC_EVENTS_DIR, and not with --events-dir), or the variable set empty.
  err=$(PERFSPEC_CACHE_DIR=$cache PERFSPEC_EVENTS_DIR=$events "$bin" resolve --sysfs "$fixtures/intel_skx" --no-libpfm4 \
        --no-tables --cpuid GenuineIntel-6-55-4 mem_load_retired.l1_miss 2>&1); status=$?
  expect no-tables-status [ "$status" = 1 ]
  expect no-tables grep -qF "unknown event 'mem_load_retired.l1_miss'" <<<"$err"
  err=$(PERFSPEC_EVENTS_DIR= "$bin" resolve --sysfs "$fixtures/intel_skx" --no-libpfm4 --cpuid GenuineIntel-6-55-4 \
        mem_load_retired.l1_miss 2>&1); status=$?
  expect empty-events-dir-status [ "$status" = 1 ]
  expect empty-events-dir grep -qF "unknown event 'mem_load_retired.l1_miss'" <<<"$err"
  err=$("$bin" resolve --no-tables --events-dir "$events" cycles 2>&1); status=$?
  expect no-tables-with-events-dir [ "$status" = 2 ]
  expect no-tables-with-events-dir-msg grep -qxF -- "--events-dir excludes --no-tables" <<<"$err"
  err=$("$bin" resolve --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$events" --cpuid GenuineIntel-6-55-4 \
        'mem_load_retired.l1_mis' 2>&1); status=$?
  expect tables-suggest-status [ "$status" = 1 ]
  expect tables-suggest grep -qF "help: did you mean 'MEM_LOAD_RETIRED.L1_MISS'," <<<"$err"
  out=$("$bin" list --sysfs "$fixtures/intel_skx" --events-dir "$events" --cpuid GenuineIntel-6-55-4 --source json \
        '*l1_miss' 2>&1)
  expect list-json-source grep -qE '^  MEM_LOAD_RETIRED.L1_MISS +event=0xd1,period=100003,umask=8$' <<<"$out"
  out=$("$bin" list --sysfs "$fixtures/intel_skx" tracepoint 2>&1)
  expect list-tracepoint grep -qE '^  sched:sched_switch +2:[0-9]+$' <<<"$out"
  expect list-tracepoint-only [ "$(grep -cE '^builtin events|^  (cycles|task-clock) ' <<<"$out")" = 0 ]
  # perf list's keywords: kinds of events, not patterns (hw: the hardware events alone, sw: software and
  # tool, cache: the hardware cache ones, pmu: sysfs and tables, metricgroup: perf's list of groups)
  skx=(--sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$events" --cpuid GenuineIntel-6-55-4)
  out=$("$bin" list "${skx[@]}" hw 2>&1)
  expect list-hw [ "$(grep -cE '^  [a-z-]+ +0:0x[0-9a-f]+$' <<<"$out")" = "$(grep -c '^  [^ ]' <<<"$out")" ]
  expect list-hw-cycles grep -qE '^  cycles +0:0x0$' <<<"$out"
  out=$("$bin" list "${skx[@]}" sw 2>&1)
  expect list-sw grep -qE '^  task-clock +1:0x1$' <<<"$out" && expect list-sw-tool grep -qE '^  duration_time +tool$' <<<"$out"
  expect list-sw-only [ "$(grep -cE '^  [a-z]' <<<"$out")" = "$(grep -cE '^  [a-z_-]+ +(1:0x[0-9a-f]+|tool)$' <<<"$out")" ]
  out=$("$bin" list "${skx[@]}" cache 2>&1)
  expect list-cache grep -qE '^  L1-dcache-loads +3:0x0$' <<<"$out"
  expect list-cache-only [ "$(grep -cE '^  [A-Za-z]' <<<"$out")" = "$(grep -cE '^  [A-Za-z1-]+ +3:0x[0-9a-f]+$' <<<"$out")" ]
  out=$("$bin" list "${skx[@]}" pmu 2>&1)
  expect list-pmu grep -qE '^  MEM_LOAD_RETIRED.L1_MISS ' <<<"$out"
  expect list-pmu-no-builtin [ "$(grep -cE '^builtin events|^  (cycles|task-clock) ' <<<"$out")" = 0 ]
  out=$("$bin" list "${skx[@]}" metricgroup 2>&1)
  expect list-metricgroup python3 -c '
import sys
lines = sys.argv[1].split("\n")
assert lines[:3] == ["", "Metric Groups:", ""], lines[:3]
groups = [l for l in lines[3:] if l]
assert groups == sorted(set(groups)) and "TopdownL1" in groups, groups
' "$out"
  out=$("$bin" list --sysfs "$fixtures/intel_skx" --events-dir "$events" --cpuid GenuineIntel-6-55-4 --format json \
        --pmu uncore_imc_0 2>&1)
  expect list-json python3 -c '
import json, sys
d = json.loads(sys.argv[1])
names = {(e["source"], e["name"]) for e in d["events"]}
assert ("sysfs", "cas_count_read") in names, names
assert ("json", "UNC_M_CAS_COUNT.RD") in names, names
' "$out"
  # perf's own tree: the whole pmu-events folder picks the architecture from the CPU id.
  out=$("$bin" resolve --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$events/.." --cpuid GenuineIntel-6-55-4 \
        --format json inst_retired.any 2>&1)
  expect tables-whole-tree python3 -c '
import json, sys
a = json.loads(sys.argv[1])["events"][0]["attr"]
assert (a["config"], a["sample_period"]) == (0xc0, 2000003), a
' "$out"
  # --keep-going: every list resolves or is reported, the status says whether all did.
  out=$("$bin" resolve --keep-going --sysfs "$fixtures/intel_skx" --format json cycles 'cpu/nosuch/' instructions 2>/tmp/kg.$$)
  status=$?
  expect keep-going-status [ "$status" = 1 ]
  expect keep-going-events python3 -c '
import json, sys
assert [e["name"] for e in json.loads(sys.argv[1])["events"]] == ["cycles", "instructions"], sys.argv[1]
' "$out"
  expect keep-going-error grep -qF "unknown term 'nosuch' for pmu 'cpu'" /tmp/kg.$$
  rm -f /tmp/kg.$$
  # --stdin: a list a line, each answered in turn on its own line, errors too (as JSON documents).
  out=$(printf 'cycles\ncpu/nosuch/\r\n{instructions,cycles}:u\n' |
        "$bin" resolve --stdin --sysfs "$fixtures/intel_skx" --no-libpfm4 --format json 2>/tmp/kg.$$)
  status=$?
  expect stdin-status [ "$status" = 1 ]
  expect stdin-quiet [ ! -s /tmp/kg.$$ ]
  expect stdin-lines python3 -c '
import json, sys
docs = [json.loads(l) for l in sys.argv[1].split("\n")]
assert [d["schema"] for d in docs] == ["perfspec-resolve/1", "perfspec-error/1", "perfspec-resolve/1"], docs
assert [e["name"] for e in docs[0]["events"]] == ["cycles"], docs[0]
assert (docs[1]["input"], docs[1]["span"]) == ("cpu/nosuch/", [4, 10]), docs[1]
assert [(e["name"], e["group"], e["attr"]["exclude_kernel"]) for e in docs[2]["events"]] == \
    [("instructions", 0, 1), ("cycles", 0, 1)], docs[2]
' "$out"
  err=$("$bin" resolve --stdin cycles 2>&1 </dev/null)
  expect stdin-with-events [ "$?" = 2 ]
  expect stdin-with-events-text grep -qF -- "--stdin reads the event lists: give none, nor -M" <<<"$err"
  out=$(printf 'cycles\nbogus\n' | "$bin" resolve --stdin --sysfs "$fixtures/intel_skx" --no-libpfm4 2>/tmp/kg.$$)
  expect stdin-text [ "$(grep -c '^event 0: cycles$' <<<"$out")" = 1 ]
  expect stdin-text-error grep -qF "unknown event 'bogus'" /tmp/kg.$$
  rm -f /tmp/kg.$$
  # A table entry that cannot be used is skipped, and list -v says which and why; deprecated names
  # resolve but are listed only with --deprecated.
  tables=$(mktemp -d)
  mkdir -p "$tables/x86/m"
  printf 'Family-model,Version,Filename,EventType\nGenuineIntel-6-55-[01234],v1,m,core\n' >"$tables/x86/mapfile.csv"
  printf '[{"EventName": "GOOD", "EventCode": "0x1"}, {"EventName": "BAD", "UMask": "zz"},\n {"EventName": "OLD", "EventCode": "0x2", "Deprecated": "1"}]' >"$tables/x86/m/core.json"
  err=$("$bin" list -v --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$tables/x86" --cpuid GenuineIntel-6-55-4 \
        --source json 2>&1 >/dev/null)
  expect list-verbose-skipped grep -qxF "perfspec list: skipped $tables/x86/m/core.json: entry 1 (BAD): UMask 'zz' is not a number" <<<"$err"
  out=$("$bin" list --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$tables/x86" --cpuid GenuineIntel-6-55-4 --source json 2>&1)
  expect list-hides-deprecated [ "$(grep -cE '^  (GOOD|OLD) ' <<<"$out")" = 1 ]
  out=$("$bin" list --deprecated --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$tables/x86" --cpuid GenuineIntel-6-55-4 \
        --source json 2>&1)
  expect list-deprecated [ "$(grep -cE '^  (GOOD|OLD) ' <<<"$out")" = 2 ]
  out=$(PERFSPEC_CACHE_DIR=none "$bin" resolve --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$tables/x86" \
        --cpuid GenuineIntel-6-55-4 old 2>&1)
  expect deprecated-resolves grep -qE '^  config +0x2$' <<<"$out"
  # -j: perf's document; deprecated events in it, flagged; a table event without a description is
  # named by its PMU and name, as perf names it (PMU events only: `pmu`).
  out=$(PERFSPEC_CACHE_DIR=none "$bin" list -j pmu --sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$tables/x86" \
        --cpuid GenuineIntel-6-55-4 2>&1)
  expect list-j-table python3 -c '
import json, sys
doc = json.loads(sys.argv[1])
by_name = {o["EventName"]: o for o in doc}
assert by_name["good"] == {"Unit": "cpu", "Topic": "core", "EventName": "good", "EventAlias": "cpu/good/",
                           "EventType": "Kernel PMU event", "Encoding": "cpu/event=0x1/"}, by_name["good"]
assert by_name["old"]["Deprecated"] == "1", by_name["old"]
assert [o["EventName"] for o in doc if o["EventName"].startswith("uncore_imc_")][:2] == \
    ["uncore_imc_0/cas_count_read/", "uncore_imc_0/cas_count_write/"], doc
assert all(o["EventType"] == "Kernel PMU event" for o in doc)
' "$out"
  rm -rf "$tables" "$cache"
  # The tables' metrics: --details adds each one's threshold, --no-desc leaves descriptions out; -o
  # writes the list to a file; -j's metric and metricgroup keywords give the same pairs.
  if [ -f "$events/mapfile.csv" ]; then
    skx=(--sysfs "$fixtures/intel_skx" --no-libpfm4 --events-dir "$events" --cpuid GenuineIntel-6-55-4)
    out=$("$bin" list --metrics tma_core_bound --details --no-desc "${skx[@]}" 2>&1)
    expect list-details [ "$out" = "  tma_core_bound                           [Backend, Compute, TmaL2, TopdownL2, tma_L2_group, tma_backend_bound_group]
      = tma_backend_bound - tma_memory_bound  (100%)
      threshold: tma_core_bound > 0.1 & tma_backend_bound > 0.2" ]
    listed=$(mktemp)
    "$bin" list --metrics tma_core_bound "${skx[@]}" -o "$listed" >/dev/null 2>&1
    expect list-output-file [ "$(cat "$listed")" = "$("$bin" list --metrics tma_core_bound "${skx[@]}")" ]
    expect list-output-file-desc grep -qx '      This metric represents fraction of slots where Core non-memory issues were of a bottleneck' "$listed"
    rm -f "$listed"
    a=$("$bin" list -j metric "${skx[@]}" | md5sum)
    b=$("$bin" list -j metricgroup "${skx[@]}" | md5sum)
    expect list-j-metric-groups [ "$a" = "$b" ]
    expect list-j-metric-pairs [ "$("$bin" list -j metric "${skx[@]}" | grep -c '"MetricName"')" = 820 ]
  fi
  err=$("$bin" list -o /nonexistent/list.txt 2>&1)
  expect list-output-unwritable [ "$?:$err" = "3:perfspec: error: cannot write '/nonexistent/list.txt': No such file or directory" ]
fi
snap=$(mktemp -d)/snap
"$bin" snapshot --sysfs "$fixtures/hybrid_adl" --tracepoints --cpuid GenuineIntel-6-97-2 "$snap" 2>/dev/null; status=$?
expect snapshot-status [ "$status" = 0 ]
a=$("$bin" resolve --sysfs "$fixtures/hybrid_adl" --format json 'cycles,sched:sched_switch,uncore_imc_free_running/data_read/' 2>&1)
b=$("$bin" resolve --sysfs "$snap" --format json 'cycles,sched:sched_switch,uncore_imc_free_running/data_read/' 2>&1)
expect snapshot-same [ "$a" = "$b" ]
expect snapshot-cpuid grep -qx "GenuineIntel-6-97-2" "$snap/perfspec-snapshot/cpuid"
# A fixture without --cpuid: this host's CPU id is not the fixture's, so none is recorded.
snap2=$(mktemp -d)/snap
err=$("$bin" snapshot --sysfs "$fixtures/intel_skx" "$snap2" 2>&1); status=$?
expect snapshot-fixture-no-cpuid [ "$status" = 0 ] && expect snapshot-fixture-no-cpuid-file [ ! -e "$snap2/perfspec-snapshot/cpuid" ]
expect snapshot-fixture-no-cpuid-msg grep -qF "(no CPU id recorded: this host's is not the tree's; give --cpuid for tables)" <<<"$err"
# The CPU topology goes along: metrics' literals read the same from the snapshot (2 x 28 x 2 CPUs).
lit='x = #num_cpus_online + #num_cores * 1000 + #num_packages * 1e6 + #smt_on * 1e7 + page\-faults'
a=$("$bin" resolve --sysfs "$fixtures/intel_skx" -M "$lit" 2>&1 | head -1)
b=$("$bin" resolve --sysfs "$snap2" -M "$lit" 2>&1 | head -1)
expect snapshot-topology [ "$a" = "metric x = 12056112 + page\\-faults" ] && expect snapshot-topology-same [ "$a" = "$b" ]
expect snapshot-fixture-no-host-files [ ! -e "$snap2/perfspec-snapshot/nmi_watchdog" ]
rm -rf "$(dirname "$snap2")"
err=$("$bin" snapshot --sysfs "$fixtures/hybrid_adl" "$snap" 2>&1); status=$?
expect snapshot-exists [ "$status" = 2 ]
rm -rf "$(dirname "$snap")"
# This host's snapshot records its NMI watchdog (as 0 or 1), which NO_GROUP_EVENTS_NMI reads.
snap3=$(mktemp -d)/snap
"$bin" snapshot "$snap3" >/dev/null 2>&1
expect snapshot-host-nmi [ "$(cat "$snap3/perfspec-snapshot/nmi_watchdog")" = "$(grep -q '^0$' /proc/sys/kernel/nmi_watchdog && echo 0 || echo 1)" ]
rm -rf "$(dirname "$snap3")"

# ---- this machine's tracefs, as on a fresh machine: in a mount namespace without tracefs or debugfs ----
fresh() {  # fresh COMMAND...: COMMAND in a private mount namespace where tracefs is mounted nowhere
  unshare -m sh -c 'for m in $(awk '\''$3 == "tracefs" || $3 == "debugfs" { print $2 }'\'' /proc/mounts | sort -r); do
                      umount -l "$m" || exit 99
                    done
                    exec "$@"' sh "$@"
}
if [ "$(id -u)" = 0 ] && fresh true 2>/dev/null; then
  # As root, perfspec mounts tracefs at /sys/kernel/tracing, as perf does: config is that tracefs's id.
  out=$(fresh sh -c '"$1" resolve --format json sched:sched_switch && stat -f -c %T /sys/kernel/tracing &&
                     cat /sys/kernel/tracing/events/sched/sched_switch/id' sh "$bin" 2>&1)
  expect tracefs-mounted python3 -c '
import json, sys
text = sys.argv[1]
body, fstype, tp_id = text.rsplit("\n", 2)
assert fstype == "tracefs", text
assert json.loads(body)["events"][0]["attr"]["config"] == int(tp_id), text
' "$out"
  nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  wrap=(fresh "${nobody[@]}")
  check tracefs-not-mounted 3 tracefs_not_mounted.txt -- resolve sched:sched_switch
  check list-tracefs-not-mounted 0 list_tracefs_not_mounted.txt -- list sched:sched_sw
  # Root without CAP_SYS_ADMIN, as in a container: the mount fails and the error says why.
  wrap=(fresh setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin)
  check tracefs-mount-failed 3 tracefs_mount_failed.txt -- resolve sched:sched_switch
  wrap=()
  # Mounted, but not readable by another user (tracefs's root is 0700, its files 0440).
  err=$(fresh sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"' sh "${nobody[@]}" \
        "$bin" resolve sched:sched_switch 2>&1); status=$?
  expect tracefs-denied-status [ "$status" = 3 ]
  expect tracefs-denied grep -qF "cannot look up tracepoint 'sched:sched_switch': no permission to read '/sys/kernel/tracing/events" <<<"$err"
  expect tracefs-denied-help grep -qxF "help: run as root, or let a group this user is in read tracefs: 'mount -o remount,mode=755,gid=GROUP /sys/kernel/tracing'" <<<"$err"
else
  echo "skipped: tracefs tests (need root and unshare -m)"
fi

# ---- a hostile tree: event files that are folders or symlinks to nothing, control bytes in names ----
hostile=$(mktemp -d)
mkdir -p "$hostile/bus/event_source/devices/cpu/format" "$hostile/bus/event_source/devices/cpu/events/afolder"
echo 4 >"$hostile/bus/event_source/devices/cpu/type"
echo config:0-7 >"$hostile/bus/event_source/devices/cpu/format/event"
echo event=0x11 >"$hostile/bus/event_source/devices/cpu/events/good"
ln -s missing "$hostile/bus/event_source/devices/cpu/events/dangling"
printf 'event=0x1\033[31m' >"$hostile/bus/event_source/devices/cpu/events/esc$(printf '\033')x"
err=$("$bin" resolve --sysfs "$hostile" dangling:u 2>&1); status=$?
expect hostile-dangling-status [ "$status" = 3 ]
expect hostile-dangling-msg grep -qF "\\___ '$hostile/bus/event_source/devices/cpu/events/dangling' is a symlink to nothing ('missing')" <<<"$err"
# A machine's problem under --format json: kind machine, exit status 3.
err=$("$bin" resolve --sysfs "$hostile" --format json dangling:u 2>&1); status=$?
expect hostile-dangling-json-status [ "$status" = 3 ]
expect hostile-dangling-json python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert (d["schema"], d["kind"], d["input"], d["span"]) == ("perfspec-error/1", "machine", "dangling:u", [0, 10]), d
assert d["message"] == "%r is a symlink to nothing (%r)" % (sys.argv[2] + "/bus/event_source/devices/cpu/events/dangling", "missing"), d
' "$err" "$hostile"
out=$("$bin" list --sysfs "$hostile" --source sysfs 2>"$hostile.err"); status=$?
expect hostile-list-status [ "$status" = 0 ]
expect hostile-list-escaped [ "$out" = $'sysfs events on cpu:\n  esc\\x1bx                                 event=0x1\\x1b[31m\n  good                                     event=0x11' ]
expect hostile-list-note [ "$(cat "$hostile.err")" = "perfspec list: 2 event file(s) could not be read and are not listed (list -v says which)" ]
"$bin" list -v --sysfs "$hostile" --source sysfs >/dev/null 2>"$hostile.err"
expect hostile-list-v [ "$(cat "$hostile.err")" = "perfspec list: skipped '$hostile/bus/event_source/devices/cpu/events/afolder' is a folder, not a file
perfspec list: skipped '$hostile/bus/event_source/devices/cpu/events/dangling' is a symlink to nothing ('missing')" ]
rm -rf "$hostile" "$hostile.err"

# ---- decode from standard input: bounded size and depth (the timeouts guard against a hang: they are
# no bound on the time it takes, which a loaded machine makes what it will) ----
err=$(head -c 10000000 /dev/zero | tr '\0' '[' | timeout 120 "$bin" decode 2>&1); status=$?
expect decode-deep-status [ "$status" = 1 ]
expect decode-deep-msg [ "$err" = "perfspec: error: stdin: JSON nested deeper than 16 levels at byte 17" ]
err=$(head -c 67108865 /dev/zero | tr '\0' ' ' | timeout 120 "$bin" decode 2>&1); status=$?
expect decode-too-big-status [ "$status" = 1 ]
expect decode-too-big-msg [ "$err" = "perfspec: error: stdin: more than 64 MiB of input" ]
out=$("$bin" resolve --sysfs "$fixtures/intel_skx" --format json '{mem-loads:u,page-faults}' |
      "$bin" decode --sysfs "$fixtures/intel_skx" 2>&1); status=$?
expect decode-json-roundtrip [ "$status" = 0 ] && expect decode-json-roundtrip-text [ "$out" = $'mem-loads:u\npage-faults' ]

# ---- decode of perf's -vv text: perf 6.12's annotated forms, captured (tests/fixtures/perf_vv/make.sh) ----
# Each decodes to the event perf was asked for (or the same encoding written otherwise); the vm_*
# captures were made on another machine than the fixture, whose PMU types and tracepoint id perf_vv/vm
# holds.
vv=$fixtures/perf_vv
decode_skx=(decode --sysfs "$fixtures/intel_skx" --no-tables --no-libpfm4)
decode_vm=(decode --sysfs "$vv/vm" --no-tables --no-libpfm4)
# issue 28: perf-current stat -vv -e page-faults:u true 2>&1 | perfspec decode
stdin_from=$vv/issue28_page_faults_u.txt check decode-vv-issue28 0 decode_vv_issue28.txt -- "${decode_skx[@]}"
stdin_from=$vv/skx_stat.txt check decode-vv-skx-stat 0 decode_vv_skx_stat.txt -- "${decode_skx[@]}"
stdin_from=$vv/skx_record.txt check decode-vv-skx-record 0 decode_vv_skx_record.txt -- "${decode_skx[@]}"
stdin_from=$vv/vm_stat.txt check decode-vv-vm-stat 0 decode_vv_vm_stat.txt -- "${decode_vm[@]}"
stdin_from=$vv/vm_record_data.txt check decode-vv-vm-record 0 decode_vv_vm_record.txt -- "${decode_vm[@]}" --format json
# A text made on another machine: its tracepoint id is another tracepoint's here (status 1, the line)
stdin_from=$vv/vm_stat.txt check decode-vv-other-machine 1 decode_vv_other_machine.txt -- "${decode_skx[@]}"
# An annotation that disagrees with its number, and a value that cannot be read, under --format json too
tmp=$(mktemp)
sed 's/config                           0x2 (PERF_COUNT_SW_PAGE_FAULTS)/config                           0x3 (PERF_COUNT_SW_PAGE_FAULTS)/' \
  "$vv/issue28_page_faults_u.txt" >"$tmp"
stdin_from=$tmp check decode-vv-mismatch 1 decode_vv_mismatch.txt -- "${decode_skx[@]}"
sed 's/exclude_hv                       1/exclude_hv                       yes/' "$vv/issue28_page_faults_u.txt" >"$tmp"
stdin_from=$tmp check decode-vv-unreadable-json 1 decode_vv_unreadable_json.txt -- "${decode_skx[@]}" --format json
rm -f "$tmp"

# ---- the command line's own mistakes: a subcommand misspelt, --sysfs that is no sysfs tree, --pmu nosuch ----
err=$("$bin" stats 2>&1); status=$?
expect unknown-subcommand [ "$status" = 2 ] && expect unknown-subcommand-msg [ "$err" = $'perfspec: \'stats\' is not a subcommand; did you mean \'stat\'?\nRun with --help for more information.' ]
expect usage-names-program grep -q '^Usage: perfspec ' <<<"$("$bin" --help)"
# Every subcommand with its line, in order (only the one named gets its options: tools/perfspec.cpp).
check help-subcommands 0 help.txt -- --help
notree=$(mktemp -d)
err=$("$bin" resolve --sysfs "$notree" cycles 2>&1); status=$?
expect sysfs-not-a-tree [ "$status" = 2 ] && expect sysfs-not-a-tree-msg grep -qxF -- "--sysfs: '$notree' is not a sysfs tree: it has no bus/event_source/devices" <<<"$err"
rmdir "$notree"
err=$("$bin" list --sysfs "$fixtures/intel_skx" --pmu uncore_imx 2>&1); status=$?
expect list-pmu-unknown [ "$status" = 1 ] && expect list-pmu-unknown-msg [ "$err" = $'perfspec: error: --pmu \'uncore_imx\': no PMU of this machine has that name\nhelp: did you mean \'uncore_imc_0\', \'uncore_imc_1\' or \'uncore_imc_2\'?' ]
out=$("$bin" list --sysfs "$fixtures/intel_skx" --pmu uncore_imc 2>&1); status=$?
expect list-pmu-wildcard [ "$status" = 0 ] && expect list-pmu-wildcard-out grep -qF 'sysfs events on uncore_imc_0:' <<<"$out"

# ---- JSON documents and errors (docs/output-formats.md) ----
# Each JSON document names its schema first: resolve, list (with and without --pmus), decode.
schemas=$("$bin" resolve --sysfs "$fixtures/intel_skx" --format json cycles
          "$bin" list --sysfs "$fixtures/intel_skx" --format json --pmu msr
          "$bin" list --sysfs "$fixtures/intel_skx" --format json --pmus 'no such event'
          echo '{"events":[{"attr":{"type":1,"config":2}}]}' | "$bin" decode --sysfs "$fixtures/intel_skx" --format json)
expect json-schemas python3 -c '
import json, sys
docs = [json.loads(line) for line in sys.argv[1].splitlines()]
assert [next(iter(d)) for d in docs] == ["schema"] * 4, docs
assert [d["schema"] for d in docs] == ["perfspec-resolve/1", "perfspec-list/1", "perfspec-list/1", "perfspec-decode/1"], docs
assert docs[2]["events"] == [] and docs[2]["pmus"], docs[2]
assert docs[3]["events"] == [{"event": "page-faults", "how": "symbol", "leftovers": [], "notes": []}], docs[3]
' "$schemas"
# decode takes resolve's document and refuses its own (another schema), as JSON under --format json.
err=$("$bin" decode --sysfs "$fixtures/intel_skx" --format json --type 1 --config 2 | "$bin" decode --format json 2>&1); status=$?
expect decode-own-output-status [ "$status" = 1 ]
expect decode-own-output-msg [ "$err" = '{"schema":"perfspec-error/1","kind":"bad_value","message":"stdin: schema \"perfspec-decode/1\" is not one decode reads (perfspec-resolve/1, as '"'perfspec resolve --format json'"' prints)","input":null,"span":null,"help":null}' ]
# stat's errors before it counts, under its --format json.
err=$("$bin" stat --format json -e task-clock -r 2 -a 2>&1); status=$?
expect stat-json-error-status [ "$status" = 2 ]
expect stat-json-error-msg [ "$err" = '{"schema":"perfspec-error/1","kind":"usage","message":"-r repeats a command: give one (a process or CPUs cannot be run again)","input":null,"span":null,"help":null}' ]

# ---- libpfm4 names on a fixture of another CPU: LIBPFM_FORCE_PMU picks libpfm4's model ----
# libpfm4 has the models of the architecture it was built for: zen3 on x86, Neoverse N1 on arm64.
libpfm_knows() {  # libpfm_knows MODEL FIXTURE
  ! LIBPFM_FORCE_PMU=$1 "$bin" resolve --sysfs "$fixtures/$2" 'x::Y' 2>&1 | grep -qF "names no CPU model this libpfm4 knows"
}
attrs_of() {  # the events' name, PMU, type, config, exclude_kernel and period, a line each
  python3 -c '
import json, sys
for x in json.loads(sys.argv[1])["events"]:
    a = x["attr"]
    print(x["name"], x["pmu"], a["type"], hex(a["config"]), a["exclude_kernel"], a["sample_period"])' "$1"
}
if "$bin" resolve --sysfs "$fixtures/amd_zen3" 'x::Y' 2>&1 | grep -qF 'which this build lacks'; then
  echo "skipped: libpfm4 tests (built without libpfm4)"
else
  if ! libpfm_knows amd64_fam19h_zen3 amd_zen3; then
    echo "skipped: libpfm4's zen3 tests (this libpfm4 has no x86 models)"
  else
    out=$(LIBPFM_FORCE_PMU=amd64_fam19h_zen3 "$bin" resolve --sysfs "$fixtures/amd_zen3" --format json \
          RETIRED_INSTRUCTIONS 'IC_TAG_HIT_MISS:IC_MISS:u' 'cpu/OP_CACHE_HIT_MISS.OC_MISS,cmask=1/' 2>&1); status=$?
    expect libpfm4-zen3-status [ "$status" = 0 ]
    expect libpfm4-zen3 python3 -c '
import json, sys
e = json.loads(sys.argv[1])["events"]
got = [(x["name"], x["pmu"], x["attr"]["type"], hex(x["attr"]["config"]), x["attr"]["exclude_kernel"]) for x in e]
assert got == [("RETIRED_INSTRUCTIONS", "cpu", 4, "0xc0", 0), ("IC_TAG_HIT_MISS:IC_MISS:u", "cpu", 4, "0x10000188e", 1),
               ("cpu/OP_CACHE_HIT_MISS.OC_MISS,cmask=1/", "cpu", 4, "0x20100048f", 0)], got
' "$out"
    err=$(LIBPFM_FORCE_PMU=amd64_fam19h_zen3 "$bin" resolve --sysfs "$fixtures/amd_zen3" zen3::RETIRED_INSTRUCTIONS 2>&1); status=$?
    expect libpfm4-zen3-prefix-status [ "$status" = 1 ]
    expect libpfm4-zen3-prefix-help grep -qxF "help: perfspec takes libpfm4's core events of model 'amd64_fam19h_zen3' (LIBPFM_FORCE_PMU), and 'zen3' is not it" <<<"$err"
  fi
  err=$(LIBPFM_FORCE_PMU=zen3 "$bin" resolve --sysfs "$fixtures/amd_zen3" zen3::RETIRED_INSTRUCTIONS 2>&1)
  expect libpfm4-forced-nothing grep -qxF "help: LIBPFM_FORCE_PMU='zen3' names no CPU model this libpfm4 knows, so it has no core events" <<<"$err"
  if ! libpfm_knows arm_n1 arm_n1; then
    echo "skipped: libpfm4's Neoverse N1 tests (this libpfm4 has no arm64 models)"
  else
    # Names only libpfm4 has (the fixture's sysfs lists none of them), the Arm architecture's numbers.
    n1=(BUS_ACCESS_RD 'EXC_IRQ:u' 'armv8_pmuv3_0/L2D_CACHE_REFILL_RD,period=100/' arm_n1::MEM_ACCESS_RD)
    out=$(LIBPFM_FORCE_PMU=arm_n1 "$bin" resolve --sysfs "$fixtures/arm_n1" --format json "${n1[@]}" 2>&1); status=$?
    expect libpfm4-n1-status [ "$status" = 0 ]
    expect libpfm4-n1 [ "$(attrs_of "$out" 2>&1)" = "BUS_ACCESS_RD armv8_pmuv3_0 10 0x60 0 0
EXC_IRQ:u armv8_pmuv3_0 10 0x86 1 0
armv8_pmuv3_0/L2D_CACHE_REFILL_RD,period=100/ armv8_pmuv3_0 10 0x52 0 100
arm_n1::MEM_ACCESS_RD armv8_pmuv3_0 10 0x66 0 0" ]
    err=$(LIBPFM_FORCE_PMU=arm_n1 "$bin" resolve --sysfs "$fixtures/arm_n1" --no-libpfm4 BUS_ACCESS_RD 2>&1); status=$?
    expect libpfm4-n1-only-libpfm4 [ "$status:$(sed -n 2p <<<"$err")" = "1:                     \___ unknown event 'BUS_ACCESS_RD'" ]
    err=$(LIBPFM_FORCE_PMU=arm_n1 "$bin" resolve --sysfs "$fixtures/arm_n1" n1::MEM_ACCESS_RD 2>&1); status=$?
    expect libpfm4-n1-prefix [ "$status:$(tail -n 1 <<<"$err")" = "1:help: perfspec takes libpfm4's core events of model 'arm_n1' (LIBPFM_FORCE_PMU), and 'n1' is not it" ]
  fi
fi

# ---- stat as perf users type it (issue 15) ----
# Aggregation over a fixture 2-socket machine whose firmware numbers CPUs round-robin: this host's
# CPUs 0 and 1 are sockets 0 and 1 there.
two="$fixtures/two_socket"
out=$("$bin" stat --sysfs "$two" -a --per-socket -e task-clock,cs -- sleep 0.05 2>&1); status=$?
expect stat-per-socket-status [ "$status" = 0 ]
expect stat-per-socket-lines [ "$(grep -oE '^S[01] +1 ' <<<"$out" | tr -s ' ' | tr '\n' '|')" = "S0 1 |S0 1 |S1 1 |S1 1 |" ]
expect stat-per-socket-header grep -qxF " Performance counter stats for 'system wide':" <<<"$out"
out=$("$bin" stat --sysfs "$two" -a --per-core -x, -e task-clock -- sleep 0.05 2>&1)
expect stat-per-core-csv [ "$(cut -d, -f1,2,4,5 <<<"$out" | tr '\n' '|')" = "S0-D0-C0,1,msec,task-clock|S1-D0-C0,1,msec,task-clock|" ]
# task-clock counted on a CPU counts the time it was enabled there: in nanoseconds, the time it was
# running (event-runtime), all of the time enabled (never multiplexed). perfspec enables after the
# elapsed time starts and disables before it ends, so one CPU's clock is at most the time elapsed (CPUs
# utilized <= 1; the kernel's clock and CLOCK_MONOTONIC may run apart by NTP's 500 ppm at most).
out=$("$bin" stat --sysfs "$two" -a --per-node -j -e task-clock -- sleep 0.05 2>&1)
expect stat-per-node-json python3 -c '
import json, sys
from decimal import Decimal
rows = [json.loads(l) for l in sys.argv[1].splitlines()]
assert [(r["node"], r["aggregate-number"], r["event"]) for r in rows] == [("N0", 1, "task-clock"), ("N1", 1, "task-clock")], rows
assert all(r["metric-unit"] == "CPUs utilized" and 0 < float(r["metric-value"]) <= 1 + 1e-3 for r in rows), rows
assert all(Decimal(r["counter-value"]) * 1000000 == r["event-runtime"] and r["pcnt-running"] == 100 for r in rows), rows
' "$out"
out=$("$bin" stat -A -a -e task-clock,cs -- sleep 0.05 2>&1)
expect stat-no-aggr [ "$(grep -oE '^CPU[01] +[0-9.]+ +(msec )?[a-z-]+ \[software\]' <<<"$out" | awk '{print $1, $NF}' | tr '\n' '|')" = "CPU0 [software]|CPU1 [software]|CPU0 [software]|CPU1 [software]|" ]
# --no-merge is -A in perf 6.12 (OPT_SET_UINT of AGGR_NONE): the same lines
merged=$("$bin" stat --no-merge -a -e task-clock,cs -- sleep 0.05 2>&1)
expect stat-no-merge-is-A [ "$(grep -oE '^CPU[0-9]+ .*\]' <<<"$merged" | awk '{print $1, $NF}')" = "$(grep -oE '^CPU[0-9]+ .*\]' <<<"$out" | awk '{print $1, $NF}')" ]
err=$("$bin" stat --per-socket -e task-clock true 2>&1); status=$?
expect stat-per-socket-needs-cpus [ "$status" = 2 ]
expect stat-per-socket-needs-cpus-text grep -qF -- "--per-socket groups counts by CPU: it needs -a or -C" <<<"$err"
# --per-thread -p: each thread named by its comm (sleep's once it has exec'd; asleep, it did not run).
sleep 600 & sleeper=$!
wait_asleep $sleeper
out=$(timeout 60 "$bin" stat --per-thread -p "$sleeper" -I 100 --interval-count 1 -e task-clock 2>&1)
expect stat-per-thread grep -qxE " +[0-9]+\.[0-9]{9} +sleep-$sleeper +<not counted> msec task-clock +" <<<"$out"
kill "$sleeper" 2>/dev/null; wait "$sleeper" 2>/dev/null
# --per-thread -a: every thread of the system, only those that counted something (as perf); the
# command's own thread is among them, named by its comm. A busy loop cannot count 0 ms. A thread that
# ran for less than 5 us shows 0.00 msec, as perf shows it: what it counted is its run time, not 0.
# A thread asleep all through (a sleep(1) in its nanosleep) counted nothing, and is not shown.
sleep 600 & idle=$!
wait_asleep $idle
out=$("$bin" stat --per-thread -a -x, -e task-clock,cs -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' 2>&1); status=$?
asleep $idle; idle_still=$?
kill $idle; wait $idle 2>/dev/null
expect stat-per-thread-all-status [ "$status" = 0 ]
expect stat-per-thread-all-command grep -qE '^sh-[0-9]+,[0-9.]+,msec,task-clock,' <<<"$out"
expect stat-per-thread-all-no-zeros [ "$(grep -cE '^[^,]+,(0|<not counted>),|^[^,]+,[^,]*,msec,task-clock,0,' <<<"$out")" = 0 ]
expect stat-per-thread-all-not-idle [ "$idle_still:$(grep -c "^sleep-$idle," <<<"$out")" = 0:0 ]
err=$("$bin" stat --per-thread -C 0 -e cs true 2>&1); status=$?
expect stat-per-thread-cpus [ "$status:$err" = "2:perfspec: error: --per-thread counts threads wherever they run: give -a, not -C" ]
err=$("$bin" stat --per-thread -e cs true 2>&1); status=$?
expect stat-per-thread-target [ "$status:$err" = "2:perfspec: error: --per-thread counts each thread of a process (-p PID), of a list (-t TIDS) or of the whole system (-a)" ]
# -t: threads by id, named by their comm with --per-thread, and counting ends when they are gone. A
# thread's CPU times cannot be read after it has exited: user_time then says so instead of 0.
# (No timing is assumed: a sanitizer build on a loaded machine may take a second to start.)
sleep 600 & waiter=$!
wait_asleep $waiter
out=$(timeout 60 "$bin" stat -t "$waiter" --per-thread -x, -I 100 --interval-count 1 -e task-clock,cs 2>&1); status=$?
expect stat-tid-status [ "$status" = 0 ]
expect stat-tid-per-thread [ "$(cut -d, -f2,5 <<<"$out" | tr '\n' '|')" = "sleep-$waiter,task-clock|sleep-$waiter,cs|" ]
kill "$waiter" 2>/dev/null; wait "$waiter" 2>/dev/null
# A thread that ends while counted: it is released once stat holds its perf_event fd.
fifo=$(mktemp -u); mkfifo "$fifo"
sh -c "read x < '$fifo'" & waiter=$!
"$bin" stat -t "$waiter" -e user_time,task-clock >"$fifo.out" 2>&1 & counting=$!
for _ in $(seq 300); do ls -l "/proc/$counting/fd" 2>/dev/null | grep -q perf_event && break; sleep 0.1; done
echo go >"$fifo"
wait "$counting"; out=$(cat "$fifo.out"); rm -f "$fifo" "$fifo.out"
expect stat-tid-header grep -qxF " Performance counter stats for thread id '$waiter':" <<<"$out"
expect stat-tid-gone-times grep -qxF "    exited: the process or thread exited before its CPU times could be read from /proc" <<<"$out"
err=$("$bin" stat -t 12x -e cs 2>&1); status=$?
expect stat-tid-bad [ "$status:$err" = "2:perfspec: error: -t 12x: '12x' is not a thread id" ]
err=$("$bin" stat -t 1 -a -e cs 2>&1); status=$?
expect stat-tid-and-all [ "$status:$err" = "2:perfspec: error: -t cannot be combined with -p, -a or -C" ]
# perf's tool events: wall time and the command's CPU time, in ns, filled in by stat.
# duration_time runs from before the command starts to after it has ended: at least its 0.1 s of sleep,
# at most the time measured around perfspec.
t0=$(mono); out=$("$bin" stat -e duration_time,user_time,system_time,task-clock -- sleep 0.1 2>&1); status=$?; t1=$(mono)
expect stat-tool-events-status [ "$status" = 0 ]
ns=$(grep -oE '^ +[0-9]+ ns   duration_time ' <<<"$out" | grep -oE '[0-9]+' | head -1)
expect stat-duration-time python3 -c '
import sys
ns, t0, t1 = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
assert 0.1e9 <= ns <= (t1 - t0) * 1e9, sys.argv[1:]
' "${ns:-0}" "$t0" "$t1"
expect stat-user-time grep -qE '^ +[0-9]+ ns   user_time ' <<<"$out"
expect stat-system-time grep -qE '^ +[0-9]+ ns   system_time ' <<<"$out"
out=$("$bin" stat -a -A -e duration_time,task-clock -- sleep 0.05 2>&1)
expect stat-tool-events-first-cpu [ "$(grep -c 'duration_time' <<<"$out")" = 1 ]
expect resolve-tool-event grep -qxF '  pmu: tool; not grouped' <<<"$("$bin" resolve duration_time)"
# -r: the mean of N runs, the variation, and the time's deviation as perf prints them.
out=$("$bin" stat -r 3 -e task-clock,page-faults true 2>&1); status=$?
expect stat-repeat-status [ "$status" = 0 ]
expect stat-repeat-header grep -qxF " Performance counter stats for 'true' (3 runs):" <<<"$out"
expect stat-repeat-noise grep -qE '^ +[0-9.]+ msec task-clock +# +[0-9.]+ CPUs utilized +\( \+- +[0-9]+\.[0-9]{2}% \)$' <<<"$out"
expect stat-repeat-elapsed grep -qE '^ +[0-9.]+ \+- [0-9.]+ seconds time elapsed  \( \+- +[0-9]+\.[0-9]{2}% \)$' <<<"$out"
err=$("$bin" stat -r 0 true 2>&1); status=$?
expect stat-repeat-zero [ "$status" = 2 ]
# --interval-count: exactly N intervals, and the command is stopped (SIGTERM, whose status perfspec
# returns as the command's): it would otherwise sleep ten minutes. Whether the command ran in an
# interval (its count, or <not counted>) is the machine's business.
out=$(timeout 60 "$bin" stat -I 100 --interval-count 2 -e task-clock -- sleep 600 2>&1); status=$?
expect stat-interval-count [ "$(grep -cE '^ +[0-9]+\.[0-9]{9} +([0-9.]+|<not counted>) msec task-clock ' <<<"$out")" = 2 ]
expect stat-interval-count-stopped [ "$status" = 143 ]
out=$("$bin" stat -I 100 -e task-clock -- sleep 0.15 2>&1)
expect stat-interval-header grep -qxF "#           time             counts unit events" <<<"$out"
# --summary: after the intervals, the whole run (one process's page-faults: the sum of the intervals'),
# without the header; in -x each count's line begins with "summary" (--no-csv-summary: not)
out=$("$bin" stat -I 100 --summary -x, -e page-faults -- sleep 0.25 2>&1)
intervals=$(grep -E '^[0-9]+\.[0-9]{9},' <<<"$out" | awk -F, '{ s += $2 } END { print s }')
expect stat-summary-csv [ "$(grep -c '^summary,' <<<"$out")" = 1 ] &&
  expect stat-summary-is-the-sum [ "$(grep '^summary,' <<<"$out" | cut -d, -f2)" = "$intervals" ]
out=$("$bin" stat -I 100 --summary -x, --no-csv-summary -e page-faults -- sleep 0.15 2>&1)
expect stat-no-csv-summary [ "$(grep -cE '^[0-9]+,,page-faults,' <<<"$out")" = 1 ]
out=$("$bin" stat -I 100 --summary -e page-faults -- sleep 0.15 2>&1)
expect stat-summary-text [ "$(grep -cE '^ +[0-9]+      page-faults ' <<<"$out"):$(grep -c 'Performance counter stats' <<<"$out"):$(grep -c 'seconds time elapsed$' <<<"$out")" = 1:0:1 ]
out=$("$bin" stat --summary -e page-faults -- true 2>&1)
expect stat-summary-without-I grep -qF " Performance counter stats for 'true':" <<<"$out"
# -B is perf's default; with -x it is refused unless a later --no-big-num takes it back, as perf's
out=$("$bin" stat -B -x, -e page-faults true 2>&1); status=$?
expect stat-big-num-csv [ "$status:$out" = "2:perfspec: error: -B option not supported with -x" ]
out=$("$bin" stat -B --no-big-num -x, -e page-faults true 2>&1); status=$?
expect stat-no-big-num-csv [ "$status:$(grep -cE '^[0-9]+,,page-faults,' <<<"$out")" = 0:1 ]
out=$("$bin" stat --no-big-num --big-num -x, -e page-faults true 2>&1); status=$?
expect stat-big-num-last [ "$status" = 2 ]
out=$("$bin" stat -B -e page-faults true 2>&1); status=$?
expect stat-big-num-text [ "$status:$(grep -cE '^ +[0-9]+      page-faults ' <<<"$out")" = 0:1 ]
# The text layout's figures as the locale writes them, as perf's after setlocale: counts grouped (-B),
# every figure with the locale's decimal point; -x and C untouched. The locales are made here
# (localedef, from the locales package's sources), as a machine with only C has none.
if locales=$(mktemp -d) && localedef -i en_US -f UTF-8 "$locales/en_US.UTF-8" >/dev/null 2>&1 &&
   localedef -i de_DE -f UTF-8 "$locales/de_DE.UTF-8" >/dev/null 2>&1; then
  # burn: at least 1,100 ms of CPU time (however long it takes), so task-clock has four digits
  out=$(LOCPATH=$locales LC_ALL=en_US.UTF-8 "$bin" stat -e task-clock -- "$workload" burn 1100 2>&1)
  expect stat-locale-en [ "$(grep -cE '^ +[1-9],[0-9]{3}\.[0-9]{2} msec task-clock +# +[0-9]\.[0-9]{3} CPUs utilized' <<<"$out"):$(grep -cE '^ +[0-9]+\.[0-9]{9} seconds time elapsed$' <<<"$out")" = 1:1 ]
  out=$(LOCPATH=$locales LANG=de_DE.UTF-8 LC_ALL= "$bin" stat -e task-clock -- "$workload" burn 1100 2>&1)
  expect stat-locale-de [ "$(grep -cE '^ +[1-9]\.[0-9]{3},[0-9]{2} msec task-clock +# +[0-9],[0-9]{3} CPUs utilized' <<<"$out"):$(grep -cE '^ +[0-9]+,[0-9]{9} seconds time elapsed$' <<<"$out")" = 1:1 ]
  out=$(LOCPATH=$locales LC_ALL=de_DE.UTF-8 "$bin" stat --no-big-num -e task-clock -- "$workload" burn 1100 2>&1)
  expect stat-locale-de-no-big-num grep -qE '^ +[1-9][0-9]{3},[0-9]{2} msec task-clock ' <<<"$out"
  out=$(LOCPATH=$locales LC_ALL=de_DE.UTF-8 "$bin" stat -x, -e task-clock -- "$workload" burn 1100 2>&1)
  expect stat-locale-de-csv grep -qE '^[1-9][0-9]{3}\.[0-9]{2},msec,task-clock,' <<<"$out"
  out=$(LOCPATH=$locales LC_ALL=C "$bin" stat -e task-clock -- "$workload" burn 1100 2>&1)
  expect stat-locale-c grep -qE '^ +[1-9][0-9]{3}\.[0-9]{2} msec task-clock ' <<<"$out"
  out=$(LOCPATH=$locales LC_ALL=xx_NO.UTF-8 "$bin" stat -e task-clock -- "$workload" burn 1100 2>&1)
  expect stat-locale-missing grep -qE '^ +[1-9][0-9]{3}\.[0-9]{2} msec task-clock ' <<<"$out"
elif [ "${PERFSPEC_REQUIRE_ALL:-}" = 1 ]; then
  echo "FAIL stat-locale: localedef could not make en_US.UTF-8 and de_DE.UTF-8 (the locales package)"
  fail=$((fail + 1))
fi
rm -rf "$locales"
# An interval's "CPUs utilized" is its task-clock over the interval asked for, as perf's (each interval,
# not the time since the start: the third was a third of the first)
out=$("$bin" stat -x, -I 100 --interval-count 3 -a -e task-clock 2>&1)
expect stat-interval-cpus-utilized [ "$(awk -F, '{ d = $7 - $2 / 100; if (d < 0) d = -d; if (d > 0.001) bad++ } END { print NR ":" bad + 0 }' <<<"$out")" = "3:0" ]
# The header comes again after 26 intervals, as perf 6.12's print_header repeats it: 27 intervals are
# the header, 26 lines, the header, a line.
out=$(timeout 60 "$bin" stat -I 10 --interval-count 27 -e task-clock -- sleep 30 2>&1)
expect stat-interval-header-again [ "$(grep -n '^#' <<<"$out" | cut -d: -f1 | tr '\n' ' ')" = "1 28 " ]
expect stat-interval-header-again-lines [ "$(wc -l <<<"$out")" = 29 ]
# --null: the time only, which runs from before the command starts to after it has ended.
t0=$(mono); out=$("$bin" stat --null -- sleep 0.05 2>&1); t1=$(mono)
expect stat-null [ "$(grep -c . <<<"$out")" = 4 ]
secs=$(sed -nE 's/^ +([0-9]+\.[0-9]{9}) seconds time elapsed$/\1/p' <<<"$out")
expect stat-null-elapsed python3 -c '
import sys
s, t0, t1 = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
assert 0.05 <= s <= t1 - t0, sys.argv[1:]
' "${secs:-0}" "$t0" "$t1"
# --table with -r: each run's time and its difference from the mean (perf's layout: their sum is 0 and
# the mean is the one printed), then the result; not without -r
out=$("$bin" stat --null -r 3 --table -- sleep 0.02 2>&1); status=$?
expect stat-table-status [ "$status" = 0 ]
expect stat-table python3 -c '
import re, sys
lines = sys.argv[1].split("\n")
i = [k for k, l in enumerate(lines) if re.fullmatch(r" +# Table of individual measurements:", l)][0]
indent = lines[i].index("#")
runs = [re.fullmatch(r" +(\d+\.(\d+)) \(([+-]\d+\.\d+)\) #+", l) for l in lines[i + 1:i + 4]]
assert all(runs), lines
assert lines[i + 4:i + 6] == ["", " " * indent + "# Final result:"], lines
final = re.fullmatch(r"( +)(\d+\.\d+) \+- .* seconds time elapsed .*", lines[i + 6])
assert len(final.group(1)) == indent, lines  # the titles start where the mean does
mean, unit = float(final.group(2)), 10.0 ** -len(runs[0].group(2))
for m in runs:  # each difference is the run less the mean (each rounded to the last digit shown)
    assert abs(float(m.group(1)) - mean - float(m.group(3))) <= 1.5 * unit, (m.group(0), mean)
' "$out"
err=$("$bin" stat --null --table -- true 2>&1); status=$?
expect stat-table-needs-runs [ "$status" = 2 ] && expect stat-table-needs-runs-text grep -qxF \
  "perfspec: error: --table is only supported with -r" <<<"$err"
# --pre and --post around each run (a failing --pre ends stat with its status, before the run); -S;
# --append adds to -o; --quiet prints nothing
st_dir=$(mktemp -d)
"$bin" stat -S --null -r 2 --pre "echo pre >>$st_dir/log" --post "echo post >>$st_dir/log" -o "$st_dir/out" \
  -- sh -c "echo run >>$st_dir/log"
expect stat-pre-post [ "$(tr '\n' ' ' <"$st_dir/log")" = "pre run post pre run post " ]
"$bin" stat --null --pre "exit 7" -- sh -c "echo ran >>$st_dir/never" 2>/dev/null; status=$?
expect stat-pre-fails [ "$status" = 7 ] && expect stat-pre-fails-no-run [ ! -e "$st_dir/never" ]
"$bin" stat --null --append -o "$st_dir/out" -- true
expect stat-append [ "$(grep -c 'seconds time elapsed' "$st_dir/out")" = 2 ]
expect stat-quiet [ -z "$("$bin" stat --quiet -e task-clock -o "$st_dir/quiet" -- true 2>&1)" ] &&
  expect stat-quiet-no-file [ ! -e "$st_dir/quiet" ]
err=$("$bin" stat -I 100 --interval-clear -e task-clock -- true 2>&1); status=$?
expect stat-interval-clear-not-tty [ "$status" = 2 ] && expect stat-interval-clear-not-tty-text grep -qxF \
  "perfspec: error: --interval-clear does not work with output" <<<"$err"
rm -rf "$st_dir"
# -D: counting starts late, and perf's two messages say so. The command lives until perfspec has
# enabled the events (its second message is out), and ends by the SIGINT perfspec passes on to it:
# woken, it runs to its exit, so its clock is counted.
# delay_run ARGS...: perfspec stat ARGS -e task-clock -- sleep 600 in the background, stderr in $tmp,
# its pid in $p; delay_end: SIGINT once 'Events enabled' is out, then its exit status in $status.
delay_run() {
  "$bin" stat "$@" -e task-clock -- sleep 600 2>"$tmp" & p=$!
}
delay_end() {
  local i
  for i in $(seq 300); do grep -qx 'Events enabled' "$tmp" && break; sleep 0.1; done
  kill -INT $p; wait $p; status=$?
}
tmp=$(mktemp)
delay_run -D 100; delay_end
expect stat-delay [ "$status:$(head -n 2 "$tmp" | tr '\n' ' ')" = "130:Events disabled Events enabled " ]
expect stat-delay-counted grep -qE '^ +[0-9.]+ msec task-clock ' "$tmp"
# -D -1 with --control: enabled on command, acknowledged once enabled.
ctl=$(mktemp -u); ack=$(mktemp -u); mkfifo "$ctl" "$ack"
exec 4<>"$ctl" 5<>"$ack"
delay_run -D -1 --control "fifo:$ctl,$ack"
echo enable >&4; reply=; read -r -t 60 reply <&5
delay_end
exec 4>&- 5>&-
expect stat-control-ack [ "$reply" = ack ]
expect stat-control-enable [ "$status:$(head -n 2 "$tmp" | tr '\n' ' ')" = "130:Events disabled Events enabled " ]
expect stat-control-counted grep -qE '^ +[0-9.]+ msec task-clock ' "$tmp"
rm -f "$ctl" "$ack" "$tmp"
# --control of what never runs dry: fifo: takes FIFOs only; fd: reads at most 64 KiB a wakeup, drops
# lines past 4 KiB (said once), and stat ends with its command.
err=$("$bin" stat --control fifo:/dev/zero -e task-clock -- true 2>&1); status=$?
expect stat-control-not-fifo [ "$status" = 2 ] && expect stat-control-not-fifo-text [ "$(head -n 1 <<<"$err")" = "perfspec: error: --control: '/dev/zero' is not a FIFO" ]
err=$(timeout 60 "$bin" stat --control fd:0 -e task-clock -- sleep 0.3 2>&1 </dev/zero); status=$?
expect stat-control-endless [ "$status" = 0 ] && expect stat-control-endless-once [ "$(grep -c 'longer than 4096 bytes' <<<"$err")" = 1 ]
err=$("$bin" stat -D -1 -e task-clock true 2>&1); status=$?
expect stat-delay-needs-control [ "$status" = 2 ]
# --filter: on the tracepoints of the -e before it (the shell closes fd 7 once, then its other fds)
out=$("$bin" stat -x, -e syscalls:sys_enter_close --filter 'fd == 7' -e syscalls:sys_enter_close -- sh -c 'exec 7</dev/null; exec 7<&-' 2>&1); status=$?
expect stat-filter-status [ "$status" = 0 ]
counts=$(grep -E '^[0-9]+,,syscalls:sys_enter_close,' <<<"$out" | cut -d, -f1)
expect stat-filter-count [ "$(head -n 1 <<<"$counts")" = 1 ]
expect stat-filter-unfiltered [ "$(sed -n 2p <<<"$counts")" -gt 1 ]
[ "$(head -n 1 <<<"$counts")" = 1 ] || { echo "  stat --filter wrote:"; sed 's/^/  | /' <<<"$out"; }
err=$("$bin" stat -x, -e syscalls:sys_enter_close --filter 'no_such_field == 1' -- true 2>&1); status=$?
expect stat-filter-refused [ "$status" = 3 ] && expect stat-filter-refused-text [ "$(head -n 1 <<<"$err")" = "perfspec stat: cannot count 'syscalls:sys_enter_close': EINVAL: the kernel refused the filter \"no_such_field == 1\" (Invalid argument)" ]
err=$("$bin" stat -e task-clock --filter 'fd == 7' -- true 2>&1); status=$?
expect stat-filter-not-tracepoint [ "$status" = 2 ] && expect stat-filter-not-tracepoint-text grep -qF "'task-clock' is not a tracepoint" <<<"$err"
# -C with a CPU this machine does not have.
err=$("$bin" stat -C 4095 -e task-clock -- true 2>&1); status=$?
expect stat-missing-cpu [ "$status" = 2 ]
expect stat-missing-cpu-text grep -qE "^perfspec: error: -C 4095: CPU 4095 does not exist or is offline \(online CPUs: [0-9,-]+\)$" <<<"$err"
# --all-user / --all-kernel change what is counted (-v shows the raw values).
# -vv shows the attrs opened: --all-user sets exclude_kernel on every event, --all-kernel exclude_user.
out=$("$bin" stat -vv --all-user -e task-clock,cs -- true 2>&1); status=$?
expect stat-all-user [ "$status" = 0 ]
expect stat-all-user-attrs [ "$(grep -c '^  exclude_kernel  *1$' <<<"$out")" = 2 ]
expect stat-all-user-not-user [ "$(grep -c '^  exclude_user ' <<<"$out")" = 0 ]
out=$("$bin" stat -vv --all-kernel -e task-clock,cs -- true 2>&1)
expect stat-all-kernel-attrs [ "$(grep -c '^  exclude_user  *1$' <<<"$out")" = 2 ]
# over the events' own modifiers, as perf 6.12 (its -vv for `--all-user -e task-clock:k`: exclude_kernel
# alone; :k's exclude_user is cleared)
out=$("$bin" stat -vv --all-user -e task-clock:k -- true 2>&1)
expect stat-all-user-over-k [ "$(grep -cE '^  exclude_(user|kernel) ' <<<"$out")" = 1 ] &&
  expect stat-all-user-over-k-kernel grep -qE '^  exclude_kernel +1$' <<<"$out"
out=$("$bin" stat -vv --all-kernel -e task-clock:u -- true 2>&1)
expect stat-all-kernel-over-u [ "$(grep -cE '^  exclude_(user|kernel|hv) ' <<<"$out")" = 2 ] &&
  expect stat-all-kernel-over-u-user grep -qE '^  exclude_user +1$' <<<"$out"
err=$("$bin" stat --all-user --all-kernel true 2>&1); status=$?
expect stat-all-user-kernel [ "$status" = 2 ]
out=$("$bin" stat -v -e task-clock -- true 2>&1)
expect stat-verbose grep -qE '^task-clock: [0-9]+ [0-9]+ [0-9]+$' <<<"$out"
# -j: perf's JSON lines; one hint per reason.
out=$("$bin" stat -j -e task-clock,cycles,instructions -- true 2>&1)
expect stat-perf-json python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
assert [r["event"] for r in rows] == ["task-clock", "cycles", "instructions"], rows
assert rows[0]["unit"] == "msec" and rows[0]["metric-unit"] == "CPUs utilized", rows
' "$out"
out=$("$bin" stat -e cycles,instructions,branches -- true 2>&1)
if grep -qF '<not supported>' <<<"$out"; then
  # One hint for the events that failed for one reason, naming them all (here all fail with ENOENT).
  unsupported=$(sed -nE 's/^ +<not supported> +([a-z-]+) *$/\1/p' <<<"$out" | paste -sd, | sed 's/,/, /g')
  expect stat-one-hint-per-reason [ "$(grep -c 'ENOENT' <<<"$out")" = 1 ]
  expect stat-hint-names-events grep -qxF "$unsupported:" <<<"$out"
fi
# -G: counted only in a cgroup (cgroup v2 here; needs root to make one).
cg_root=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
# (A cgroup of this run's own: another run of these tests may make and remove its own beside it.)
cg=perfspec-test-$$
if [ -n "$cg_root" ] && [ -w "$cg_root" ] && mkdir -p "$cg_root/$cg" 2>/dev/null; then
  out=$("$bin" stat -a -G $cg -e task-clock,cs -- sh -c "echo \$\$ > $cg_root/$cg/cgroup.procs; i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done" 2>&1); status=$?
  expect stat-cgroup-status [ "$status" = 0 ]
  expect stat-cgroup-column grep -qE "^ +[0-9.]+ msec task-clock +$cg +#" <<<"$out"
  ms=$(grep -oE '^ +[0-9.]+ msec task-clock' <<<"$out" | grep -oE '[0-9.]+' | head -1)
  expect stat-cgroup-counted python3 -c 'import sys; assert 1 < float(sys.argv[1]) < 2000, sys.argv[1]' "$ms"
  out=$("$bin" stat -a --for-each-cgroup $cg,/ -x, -e task-clock -- sleep 0.05 2>&1)
  expect stat-for-each-cgroup [ "$(cut -d, -f3,4 <<<"$out" | tr '\n' '|')" = "task-clock,$cg|task-clock,/|" ]
  rmdir "$cg_root/$cg" 2>/dev/null
  err=$("$bin" stat -a -G nosuch-perfspec -e task-clock -- true 2>&1); status=$?
  expect stat-cgroup-missing [ "$status" = 2 ]
fi

# ---- metrics (stat -M) ----
# An ad hoc metric over software events, computed from the very counts printed beside it, on the line
# after its first event (perf's layout for a second figure).
out=$("$bin" stat -M 'faults_per_msec = page\-faults / task\-clock * 1e6' -- ls / 2>&1 >/dev/null); status=$?
expect metric-adhoc-status [ "$status" = 0 ]
expect metric-adhoc-value python3 -c '
import re, sys
text = sys.argv[1]
faults = int(re.search(r"^ +(\d+) +page-faults ", text, re.M).group(1))
msec = float(re.search(r"^ +([\d.]+) msec task-clock ", text, re.M).group(1))
shown = float(re.search(r"^ {49} # +([\d.]+) faults_per_msec +$", text, re.M).group(1))
assert abs(shown - faults / msec) <= 0.01 * shown + 0.01, (shown, faults, msec)
' "$out"
# Tool events reach metrics in seconds, as perf gives them (duration_time / 1e9 in its tables): at
# least the command's 0.2 s of sleep, at most the time measured around perfspec (2 decimals shown).
t0=$(mono); out=$("$bin" stat -M 'secs = duration_time' -- sleep 0.2 2>&1); t1=$(mono)
expect metric-tool-seconds python3 -c '
import re, sys
v = float(re.search(r"# +([\d.]+) secs", sys.argv[1]).group(1))
assert 0.2 <= v <= float(sys.argv[3]) - float(sys.argv[2]) + 0.005, (v, sys.argv[2:])
' "$out" "$t0" "$t1"
out=$("$bin" stat --format json -M 'twice = page\-faults * 2' true 2>&1)
expect metric-json python3 -c '
import json, sys
d = json.loads(sys.argv[1].splitlines()[0])
c = d["counts"][0]
assert c["event"] == "page-faults" and c["metrics"] == [{"name": "twice", "over_threshold": False, "unit": "", "value": 2 * c["raw"]}], c
' "$out"
# Interval mode: each interval's metric is computed from that interval's counts, not the totals. The
# command waits until an interval with page faults has been printed, then faults again (ls) and ends:
# so two intervals have page faults, whatever the machine's load, and a metric of the totals would
# show in the later one more than twice its count. (Its children count with it: perf's inherit.)
tmp=$(mktemp)
timeout 60 "$bin" stat -I 100 -x, -o "$tmp" -M 'twice = page\-faults * 2' -- \
  sh -c 'until grep -qE "^[0-9.]+,[1-9][0-9]*,,page-faults," "$1"; do sleep 0.01; done; ls / >/dev/null' sh "$tmp"
expect metric-interval python3 -c '
import sys
rows = [l.split(",") for l in open(sys.argv[1]).read().splitlines() if ",page-faults," in l]
for r in rows:  # a figure where page-faults was counted, twice its count; none where it was not
    assert (r[-1] == "twice" and float(r[-2]) == 2 * int(r[1])) if r[1].isdigit() else r[-1] != "twice", r
assert sum(1 for r in rows if r[1].isdigit() and int(r[1]) > 0) >= 2, rows
' "$tmp"
rm -f "$tmp"
# Not counted: no figure (never one made up from a failed event).
out=$("$bin" stat -M 'ipc = instructions / cycles' true 2>&1)
expect metric-not-counted [ "$(grep -c 'ipc' <<<"$out")" = 0 ]
# Errors point into the metric's text.
err=$("$bin" stat -M 'm = page-faults / task\-clock' true 2>&1); status=$?
expect metric-dash-status [ "$status" = 1 ]
expect metric-dash-text [ "$err" = "metric 'm': 'page-faults / task\-clock'
             \___ unknown event 'page'
help: in a metric '-' subtracts; an event named 'page-faults' is written 'page\-faults'" ]
err=$("$bin" stat -M 'x = (1 +' true 2>&1); status=$?
expect metric-syntax [ "$status:$err" = "1:metric 'x': '(1 +'
                 \___ expected an operand" ]
err=$("$bin" stat --sysfs "$fixtures/intel_skx" --events-dir "$events" --cpuid GenuineIntel-6-55-4 -M tma_info_thread_ipcc true 2>&1); status=$?
expect metric-unknown [ "$status" = 1 ]
expect metric-unknown-text grep -qF "unknown metric or metric group 'tma_info_thread_ipcc'" <<<"$err"
# perfspec's CSV carries -M metrics as lines of state `metric` after their first event's.
out=$("$bin" stat --format csv -M 'x = duration_time / duration_time' -- true 2>&1)
expect metric-own-csv [ "$(grep ',metric,' <<<"$out")" = ",,,1.000000,,x,,,,,metric,,," ]
# --topdown: the tables' TopdownL1 (or --td-level's) as --metric-only, as perf 6.12.
spr=(--sysfs "$fixtures/intel_spr" --events-dir "$events" --cpuid GenuineIntel-6-8F-8)
out=$("$bin" stat "${spr[@]}" --topdown -- true 2>&1); status=$?
expect topdown-header [ "$status:$(sed -n 4p <<<"$out")" = "0: %  tma_backend_bound %  tma_bad_speculation %  tma_frontend_bound      %  tma_retiring " ]
out=$("$bin" stat "${spr[@]}" --topdown --td-level 2 -- true 2>&1)
expect topdown-level2 grep -qF "%  tma_branch_mispredicts" <<<"$out"
err=$("$bin" stat "${spr[@]}" --topdown --td-level 7 -- true 2>&1); status=$?
expect topdown-level-max [ "$status:$err" = "2:perfspec: error: --td-level 7: the highest Top-down level of this machine's tables is 6" ]
err=$("$bin" stat --sysfs "$fixtures/intel_skx" --no-tables --topdown -- true 2>&1); status=$?
expect topdown-no-tables [ "$status:$err" = "3:perfspec: error: --topdown: this machine's tables have no Top-down metric groups (TopdownL1, ...)
help: see perfspec list --metrics" ]
# -T: the tables' transaction metrics, as -M transaction, without the default events; an error without them
skx_t=(--sysfs "$fixtures/intel_skx" --events-dir "$events" --cpuid GenuineIntel-6-55-4)
out=$("$bin" stat "${skx_t[@]}" -T -x, -- true 2>&1); status=$?
expect stat-T-status [ "$status" = 0 ]
expect stat-T-events [ "$(grep -E '^(<not|[0-9])' <<<"$out" | cut -d, -f3 | tr '\n' ' ')" = "cycles-t cycles-ct cycles cycles-t el-start cycles-t tx-start " ]
out=$("$bin" stat "${skx_t[@]}" -T -e task-clock -x, -- true 2>&1)
expect stat-T-beside-e [ "$(grep -E '^(<not|[0-9])' <<<"$out" | cut -d, -f3 | tr '\n' ' ')" = "task-clock cycles-t cycles-ct cycles cycles-t el-start cycles-t tx-start " ]
err=$("$bin" stat --sysfs "$fixtures/intel_skx" --no-tables -T -- true 2>&1); status=$?
expect stat-T-no-tables [ "$status:$err" = "3:perfspec: error: -T/--transaction: this machine's tables have no transaction metrics
help: see perfspec list --metrics" ]
# --cputype: the -e lists after it resolve across PMUs on that one only (a hybrid machine's core or
# atom); after an -e it is refused, and a machine without such a PMU is a usage error, as perf's
adl=(--sysfs "$fixtures/hybrid_adl" --no-tables)
out=$("$bin" stat "${adl[@]}" --cputype atom -vv -e mem-loads,cycles -- true 2>&1); status=$?
expect stat-cputype-status [ "$status" = 0 ]
expect stat-cputype-attrs [ "$(grep -oE '^  pmu: [a-z_]+|^  (type|config) +[0-9a-fx]+' <<<"$out" | tr -s ' ' | tr '\n' '|')" = " pmu: cpu_atom| type 10| config 0x5d0| pmu: cpu_atom| type 0| config 0xa00000000|" ]
err=$("$bin" stat "${adl[@]}" -e cycles --cputype atom -- true 2>&1); status=$?
expect stat-cputype-after-e [ "$status:$err" = "2:perfspec: error: --cputype goes before the events and metrics (-e, -M) it applies to" ]
err=$("$bin" stat "${adl[@]}" --cputype bogus -- true 2>&1); status=$?
expect stat-cputype-unknown [ "$status:$(head -n 1 <<<"$err")" = "2:perfspec: error: --cputype bogus: this machine has no PMU named 'bogus', 'cpu_bogus' or 'uncore_bogus'" ]
err=$("$bin" stat "${adl[@]}" --cputype atom -e topdown-heavy-ops -- true 2>&1); status=$?
expect stat-cputype-not-there [ "$status" = 1 ] && expect stat-cputype-not-there-text grep -qF "PMU 'cpu_atom' has no event 'topdown-heavy-ops' (--cputype)" <<<"$err"
err=$("$bin" stat --td-level 2 -- true 2>&1); status=$?
expect topdown-level-alone [ "$status:$err" = "2:perfspec: error: --td-level goes with --topdown" ]
# Default: with no -e on a machine whose tables have a Default group, its metrics join the default events.
out=$("$bin" resolve "${spr[@]}" -M Default --metric-no-threshold 2>/dev/null | grep -c '^event ')
expect default-metric-events [ "$out" = 10 ]
# --metric-only: only the figures, one column each (perf 6.12's util/stat-display.c layout: columns
# at least 20 wide, right-aligned, each followed by a blank). duration_time / duration_time is exactly 1.
one='x = duration_time / duration_time'
out=$("$bin" stat --metric-only -M "$one" -- true 2>&1); status=$?
expect metric-only-status [ "$status" = 0 ]
expect metric-only-table [ "$(head -n 5 <<<"$out")" = "
 Performance counter stats for 'true':

                    x 
                1.00 " ]
expect metric-only-footer grep -qE '^ +[0-9]+\.[0-9]{9} seconds time elapsed$' <<<"$out"
out=$("$bin" stat -x, --metric-only -M "$one" -- true 2>&1)
expect metric-only-csv [ "$out" = $'x,\n1.00,' ]
out=$("$bin" stat -x ';' --metric-only -M "$one" -e page-faults -- true 2>&1)
expect metric-only-csv-sep [ "$out" = $'x;\n1.00;' ]
out=$("$bin" stat -j --metric-only -M "$one" -- true 2>&1)
expect metric-only-json [ "$out" = '{"x" : "1.00"}' ]
# Without -M, perf's figures are the columns; software events have none that --metric-only shows
# (not CPUs utilized, not the rates per second): as perf 6.12's `perf stat --metric-only -e
# task-clock,page-faults -- true`, the header line is one blank and the line of figures is empty.
out=$("$bin" stat --metric-only -e task-clock,page-faults -- true 2>&1)
expect metric-only-no-figures [ "$(head -n 6 <<<"$out" | cat -A | tr '\n' '|')" = "$| Performance counter stats for 'true':$|$| $|$|$|" ]
expect metric-only-no-figures-json [ "$("$bin" stat -j --metric-only -e task-clock -- true 2>&1)" = '{"metric-value" : "none"}' ]
expect metric-only-no-figures-csv [ "$("$bin" stat -x, --metric-only -e task-clock -- true 2>&1 | cat -A | tr '\n' '|')" = '$|$|' ]
# The default events: hardware ones give the columns even where they cannot count (empty there).
out=$("$bin" stat -x, --metric-only -- true 2>&1)
expect metric-only-default [ "$(head -n 1 <<<"$out")" = "GHz,insn per cycle,branch-misses of all branches," ]
# -I: perf's "time" header over the columns, each interval's figure computed from its own counts.
out=$("$bin" stat -I 100 --metric-only -M "$one" -- sleep 0.25 2>&1)
expect metric-only-interval-header [ "$(head -n 1 <<<"$out")" = "#           time                    x " ]
expect metric-only-interval-lines [ "$(grep -cE '^ +[0-9]+\.[0-9]{9}                 1\.00 $' <<<"$out")" = "$(($(wc -l <<<"$out") - 1))" ]
out=$(timeout 60 "$bin" stat -I 100 --interval-count 2 -x, --metric-only -M "$one" -- sleep 30 2>&1)
expect metric-only-interval-csv python3 -c '
import re, sys
lines = sys.argv[1].splitlines()
assert lines[0] == "time,x,", lines
assert len(lines) == 3 and all(re.fullmatch(r"\d+\.\d{9},1\.00,", l) for l in lines[1:]), lines
' "$out"
out=$("$bin" stat -I 100 -j --metric-only -M "$one" -- sleep 0.15 2>&1)
expect metric-only-interval-json python3 -c '
import re, sys
lines = sys.argv[1].splitlines()
assert len(lines) >= 1 and all(re.fullmatch(r"\{\"interval\" : \d+\.\d{9}, \"x\" : \"1\.00\"\}", l) for l in lines), lines
' "$out"
# Per aggregate: a line each, its label first; duration_time is shown in the first only (as perf
# gives tool events), so the metric is computed there and its column is empty in the others.
out=$("$bin" stat -a -A -x, --metric-only -M "$one" -e task-clock -- true 2>&1)
expect metric-only-per-cpu python3 -c '
import re, sys
lines = sys.argv[1].splitlines()
assert lines[0] == "cpu,x,", lines
assert re.fullmatch(r"CPU\d+,1\.00,", lines[1]) and all(re.fullmatch(r"CPU\d+,,", l) for l in lines[2:]), lines
' "$out"
out=$("$bin" stat -a --per-socket --metric-only -M "$one" -e task-clock -- true 2>&1)
expect metric-only-per-socket python3 -c '
import re, sys
lines = sys.argv[1].splitlines()
assert lines[3] == " " + " " * 6 + "                   x ", lines
assert re.fullmatch(r"S0 +\d+                 1\.00 ", lines[4]), lines
' "$out"
# perf's refusals, as usage errors.
err=$("$bin" stat --metric-only -r 2 -M "$one" true 2>&1); status=$?
expect metric-only-repeat [ "$status:$err" = "2:perfspec: error: --metric-only is not supported with -r" ]
err=$("$bin" stat --metric-only --per-thread -p $$ -e task-clock 2>&1); status=$?
expect metric-only-per-thread [ "$status:$err" = "2:perfspec: error: --metric-only is not supported with --per-thread" ]
err=$("$bin" stat --metric-only --format csv true 2>&1); status=$?
expect metric-only-own-format [ "$status" = 2 ]
err=$("$bin" stat --color sometimes true 2>&1); status=$?
expect color-bad-value [ "$status" = 2 ]
# A MetricThreshold colours the value when colour is on (perf's util/stat-shadow.c): red where it
# holds, green where it does not, no escape otherwise; never in -x or -j, nor when the output is not
# a terminal (auto, the default).
tables=$(mktemp -d)
mkdir -p "$tables/x86/m"
printf 'Family-model,Version,Filename,EventType\nGenuineIntel-6-55-[01234],v1,m,core\n' >"$tables/x86/mapfile.csv"
printf '[{"MetricName": "over", "MetricExpr": "duration_time / duration_time", "MetricThreshold": "over > 0.5"},
 {"MetricName": "under", "MetricExpr": "duration_time / duration_time", "MetricThreshold": "under > 2", "ScaleUnit": "100%%"},
 {"MetricName": "none", "MetricExpr": "duration_time / duration_time"}]' >"$tables/x86/m/metrics.json"
thr=(--events-dir "$tables/x86" --cpuid GenuineIntel-6-55-4 -M over,under,none)
out=$(PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" --color always -- true 2>&1)
expect metric-threshold-colors-over grep -qE "^ +[0-9]+ ns   duration_time +# "$'\e\\[31m'"    1\.00"$'\e\\[m'" over {22}$" <<<"$out"
expect metric-threshold-colors-under grep -qxF "$(printf '%49s # \e[32m   100.0\e[m %%  under                  ' '')" <<<"$out"
expect metric-threshold-colors-none grep -qxF "$(printf '%49s #     1.00 none                      ' '')" <<<"$out"
PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" --color auto -o "$tables/out" -- true
expect metric-threshold-file-no-color [ "$(grep -c $'\e' "$tables/out")" = 0 ]
out=$(PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" -- true 2>&1 | cat)
expect metric-threshold-pipe-no-color [ "$(grep -c $'\e' <<<"$out")" = 0 ]
out=$(PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" --color always -x, -- true 2>&1)
expect metric-threshold-csv-no-color [ "$(grep -c $'\e' <<<"$out")" = 0 ]
# --metric-only: the escapes inside perf's widths, which count them whether they are printed or not.
out=$(PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" --metric-only --color always -- true 2>&1)
expect metric-only-threshold-colors [ "$(sed -n 4,5p <<<"$out")" = "                 over             %  under                 none 
            "$'\e[31m'"    1.00"$'\e[m'"             "$'\e[32m'"   100.0"$'\e[m'"                 1.00 " ]
out=$(PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" --metric-only -- true 2>&1)
expect metric-only-threshold-no-color [ "$(sed -n 5p <<<"$out")" = "                        1.00                        100.0                 1.00 " ]
out=$(PERFSPEC_CACHE_DIR=none "$bin" stat "${thr[@]}" --color always -x, --metric-only -- true 2>&1)
expect metric-only-threshold-csv [ "$out" = $'over,%  under,none,\n1.00,100.0,1.00,' ]
rm -rf "$tables"

if [ -f "$events/mapfile.csv" ]; then
  skx=(--sysfs "$fixtures/intel_skx" --events-dir "$events" --cpuid GenuineIntel-6-55-4)
  # list --metrics GROUP: the group's metrics; JSON with its schema.
  out=$("$bin" list "${skx[@]}" --metrics TopdownL1)
  expect list-metrics-group [ "$(grep -oE '^  tma_[a-z_]+' <<<"$out" | tr -d ' ' | tr '\n' ' ')" = "tma_backend_bound tma_bad_speculation tma_frontend_bound tma_retiring " ]
  out=$("$bin" list "${skx[@]}" --metrics --format json 'tma_info_thread_ipc')
  expect list-metrics-json python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["schema"] == "perfspec-metrics/1", d
m = [x for x in d["metrics"] if x["name"] == "tma_info_thread_ipc"][0]
assert m["expr"] == "INST_RETIRED.ANY / tma_info_thread_clks" and m["groups"] == ["Ret", "Summary"], m
' "$out"
  # resolve -M: the plan (references, folded literals, inputs) and the events in one weak group.
  out=$("$bin" resolve "${skx[@]}" -M tma_frontend_bound)
  expect resolve-metric-plan grep -qxF "metric tma_frontend_bound = IDQ_UOPS_NOT_DELIVERED.CORE / tma_info_thread_slots  (100%)" <<<"$out"
  expect resolve-metric-folded grep -qxF "  folded: #core_wide = 0" <<<"$out"
  expect resolve-metric-group grep -qxF "  pmu: cpu; leader of group 0 (4 members), weak" <<<"$out"
  # An error in a table's metric points at its line and column in the JSON file.
  err=$("$bin" resolve "${skx[@]}" -M C2_Pkg_Residency 2>&1); status=$?
  expect resolve-metric-file-position [ "$status" = 1 ]
  expect resolve-metric-file-position-text grep -qE "skylakex/skx-metrics.json:[0-9]+:[0-9]+: error: unknown PMU 'cstate_pkg'" <<<"$err"
fi

# ---- script: perf.data files written by perf 6.12 (tests/fixtures/perf_data/make.sh), printed as
# perf 6.12's own `perf script` prints them (the expected files are its output) ----
pd=$fixtures/perf_data
check script-callchain 0 script_callchain.txt -- script --samples -i "$pd/callchain.data" -F comm,tid,time,event,ip
check script-addr 0 script_addr.txt -- script --samples -i "$pd/addr.data" -F comm,pid,tid,time,period,event,addr,ip
check script-group-read 0 script_group_read.txt -- script --samples -i "$pd/group_read.data" -F comm,tid,time,period,event
check script-all-records 0 script_all_records.txt -- script -i "$pd/callchain.data" -F comm,tid,time,event
# perf's --show-*-events: the samples and those records only
check script-show-task 0 script_show_task.txt -- script -i "$pd/callchain.data" --show-task-events -F comm,tid,time,event
check script-show-mmap-lost 0 script_show_mmap_lost.txt -- script -i "$pd/callchain.data" --show-mmap-events --show-lost-events -F comm,tid,time,event
# --time: perf 6.12's samples of a slice, of percent ranges, of absolute ranges apart by a space; a
# form perf refuses, refused
check script-time-slice 0 script_time_slice.txt -- script --samples -i "$pd/rounds.data" --time 10%/2 -F comm,tid,time,event,ip
check script-time-percents 0 script_time_percents.txt -- script --samples -i "$pd/rounds.data" --time 0%-10%,30%-40% -F comm,tid,time,event,ip
check script-time-ranges 0 script_time_ranges.txt -- script --samples -i "$pd/rounds.data" --time '81833.67,81833.68 81833.69,81833.70' -F comm,tid,time,event,ip
for bad in 81833.67 81833.68,81833.67 '81833.67,81833.69 81833.68,81833.70' 10%/0 110% 1.0123456789,2; do
  err=$("$bin" script --samples -i "$pd/rounds.data" --time "$bad" 2>&1); status=$?
  expect "script-time-refused-$bad" [ "$status" = 2 ]
  expect "script-time-refused-$bad-text" grep -qF "perfspec: error: --time '$bad': " <<<"$err"
done
# JSON keeps the same samples; --summary counts the whole file, so it does not take --time
expect script-time-json [ "$("$bin" script --format json -i "$pd/rounds.data" --time 10%/2 | grep -c '"type":"SAMPLE"')" = "$(grep -c task-clock "$here/expected/script_time_slice.txt")" ]
err=$("$bin" script --summary -i "$pd/rounds.data" --time 10%/2 2>&1); status=$?
expect script-time-summary-refused [ "$status" = 2 ]
# percents of a file that does not say its first and last sample (no HEADER_SAMPLE_TIME, as perf's pipe)
err=$("$bin" script --samples -i - --time 10%/2 <"$pd/pipe.data" 2>&1); status=$?
expect script-time-percent-no-span [ "$status" = 2 ] && expect script-time-percent-no-span-text grep -qF "percents need the first and last sample's time" <<<"$err"
# perf record -z: COMPRESSED records over rounds, in perf's order
check script-compressed 0 script_compressed.txt -- script --samples -i "$pd/compressed.data" -F comm,tid,time,event,ip
check script-compressed-all 0 script_compressed_all.txt -- script -i "$pd/compressed.data" -F comm,tid,time,event
check script-tracepoint-all 0 script_tracepoint_all.txt -- script -i "$pd/tracepoint.data" -F comm,pid,tid,cpu,time,event
# tracepoint payloads as perf prints them: the trace field, and perf's default fields for tracepoints
check script-tracepoint-trace 0 script_tracepoint_trace.txt -- script --samples -i "$pd/tracepoint.data" -F comm,tid,cpu,time,event,trace
check script-tracepoint-default 0 script_tracepoint_default.txt -- script --samples -i "$pd/tracepoint.data"
check script-switch-default 0 script_switch_default.txt -- script --samples -i "$pd/tracepoint_switch.data"
check script-switch-trace-ip 0 script_switch_trace_ip.txt -- script --samples -i "$pd/tracepoint_switch.data" -F comm,pid,tid,time,period,event,trace,ip
check script-switch-pipe 0 script_switch_pipe.txt -- script --samples -i "$pd/tracepoint_pipe.data"
# a format file libtraceevent 1.7.1 (and perf 6.12's 1.8.4) dereferences a null field on: an error at
# the tracing data's offset, exit status 3 (perf 6.12 ends in SIGSEGV); without the trace field, the
# file is read as usual
check script-tracepoint-bad-format 3 script_tracepoint_bad_format.txt -- script --samples -i "$pd/tracepoint_bad_format.data" -F comm,tid,event,trace
# a print fmt whose __print_hex reads 100000000 bytes of a 36-byte payload: an error naming the record,
# with nothing of its line written (perf 6.12 ends in SIGSEGV)
check script-tracepoint-hex-overrun 3 script_tracepoint_hex_overrun.txt -- script --samples -i "$pd/tracepoint_hex_overrun.data" -F comm,tid,event,trace
# JSON: a tracepoint sample's payload as named fields (perfspec's own output, checked against the trace
# text of script_switch_default.txt)
out=$("$bin" script --format json -i "$pd/tracepoint_switch.data" | grep '"type":"SAMPLE"')
expect script-json-tracepoint [ "$out" = "$(cat "$here/expected/script_json_tracepoint.txt")" ]
# pipe mode, from stdin
out=$("$bin" script --samples -i - -F comm,pid,tid,time,period,event,ip <"$pd/pipe.data" 2>&1; echo '--- stderr')
expect script-pipe [ "$out" = "$(cat "$here/expected/script_pipe.txt")" ]
check script-summary 0 script_summary.txt -- script --summary -i "$pd/group_read.data"
# threads named as perf names them: a child of a parent never named is `:CHILD`, a pid reused forgets
# the name it had (perf 6.12's output on the same file)
threads_pd=$(mktemp)
python3 "$here/craft_perf_data.py" "$threads_pd" <"$pd/threads.records"
check script-threads 0 script_threads.txt -- script -F comm,pid,tid,time -i "$threads_pd"
rm -f "$threads_pd"
check script-json-head 0 script_json_addr.txt -- script --format json -i "$pd/addr.data"
# what the samples lack, perf's message; fields perfspec cannot print yet; files that are no perf.data
check script-no-cpu 2 script_no_cpu.txt -- script -i "$pd/addr.data" -F comm,cpu
check script-unknown-field 2 script_unknown_field.txt -- script -i "$pd/addr.data" -F comm,colour
check script-srccode-later 2 script_srccode_later.txt -- script -i "$pd/addr.data" -F ip,sym,srccode
# source lines as perf 6.12 prints them with binutils' addr2line (its output on the same file): no
# binaries here, so the binaries' short names and addresses, the kernel's; and perf's refusal without ip
check script-srcline 0 script_srcline.txt -- script --samples -i "$pd/addr.data" --kallsyms "$pd/kallsyms" \
  --symfs "$pd/no-binaries" -F comm,tid,ip,sym,srcline
check script-srcline-no-ip 2 script_srcline_no_ip.txt -- script -i "$pd/addr.data" -F comm,srcline
# symbols as perf 6.12 prints them (its output on the same files and the same kallsyms fixture): kernel
# frames of callchains, page-fault addresses and their data; no binaries under --symfs, so user space
# addresses are [unknown] in the binaries their mappings name
check script-sym-callchain 0 script_sym_callchain.txt -- script --samples -i "$pd/callchain.data" \
  --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" -F comm,tid,ip,sym,symoff,dso
check script-sym-addr 0 script_sym_addr.txt -- script --samples -i "$pd/addr.data" \
  --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" -F comm,tid,ip,sym,symoff,dso,addr
# perf script's choice of samples and callchains (make.sh: perf 6.12's output on the same files)
sym_check() {  # NAME FILE EXPECTED ARGS...
  local name=$1 file=$2 want=$3
  shift 3
  check "$name" 0 "$want" -- script --samples -i "$pd/$file.data" --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" "$@"
}
sym_check script-filter-pid stat_read script_filter_pid.txt --pid 32647 -F comm,pid,tid,time,event
sym_check script-filter-tid stat_read script_filter_tid.txt --tid 32648,32645 -F comm,pid,tid,time,event
sym_check script-filter-comm stat_read script_filter_comm.txt --comm ls -F comm,pid,time,event
sym_check script-filter-cpu tracepoint script_filter_cpu.txt -C 1 -F comm,tid,cpu,time,event
sym_check script-filter-symbols callchain script_filter_symbols.txt \
  -S __handle_mm_fault,folio_add_lru,7f32cd5bbcbf,0xffffffff8225fd19,nosuch -G -F comm,tid,ip,sym,dso
sym_check script-filter-addr-range callchain script_filter_addr_range.txt \
  -S 0x7f32cd5ba2f0,0xffffffff81775b90 --addr-range 16 -G -F comm,tid,ip,sym,dso
check script-reltime 0 script_reltime.txt -- script -i "$pd/callchain.data" --reltime --show-task-events \
  -F comm,tid,time,event
sym_check script-max-stack callchain script_max_stack.txt --max-stack 3
# --per-cache's level comes only after '=' (as perf's PARSE_OPT_OPTARG): the next word is the command
out=$("$bin" stat -a -x, -e task-clock --per-cache true 2>&1); status=$?
expect stat-per-cache-command [ "$status" = 0 ] && expect stat-per-cache-command-line grep -qE '^S-?[0-9]+-D-?[0-9]+-L[0-9]+-ID-?[0-9]+,[0-9]+,[0-9.]+,msec,task-clock,' <<<"$out"
for bad in "x2:a cache level is L1 to L4 (or l1 to l4)" "L0:a cache level is L1 to L4 (or l1 to l4)" "L5:perf knows cache levels up to L4"; do
  err=$("$bin" stat --per-cache="${bad%%:*}" -a -e task-clock true 2>&1); status=$?
  expect "stat-per-cache-${bad%%:*}" [ "$status" = 2 ] && expect "stat-per-cache-${bad%%:*}-text" grep -qxF \
    "perfspec: error: --per-cache=${bad%%:*}: ${bad#*:}" <<<"$err"
done
err=$("$bin" stat --per-cluster -e task-clock true 2>&1); status=$?
expect stat-per-cluster-not-system-wide [ "$status" = 2 ] && expect stat-per-cluster-not-system-wide-text grep -qxF \
  "perfspec: error: --per-cluster groups counts by CPU: it needs -a or -C (system-wide counting)" <<<"$err"
# --per-event-dump: perf 6.12's files, and its lines on stdout; the size is the file's own (perf's is
# what it had flushed when it asked: tests/cli/expected/script_dump.txt's are under it)
dump_dir=$(mktemp -d) dump_bin=$(realpath "$bin")
mkdir -p "$dump_dir/tmp/dump" && cp "$pd/callchain.data" "$dump_dir/tmp/dump/"
(cd "$dump_dir" && "$dump_bin" script -i tmp/dump/callchain.data --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" \
  --per-event-dump --show-task-events >stdout 2>stderr); status=$?
expect script-per-event-dump [ "$status" = 0 ] && expect script-per-event-dump-quiet [ ! -s "$dump_dir/stderr" ]
for e in task-clock page-faults; do
  expect "script-per-event-dump-$e" cmp -s "$dump_dir/tmp/dump/callchain.data.$e.dump" "$here/expected/script_dump_$e.txt"
done
mb() { python3 -c 'import os, sys; print("%.3f" % (os.path.getsize(sys.argv[1]) / 1048576))' "$1"; }
expect script-per-event-dump-stdout diff <(sed 's/Wrote [0-9.]* MB/Wrote MB/' "$here/expected/script_dump.txt") \
  <(sed 's/Wrote [0-9.]* MB/Wrote MB/' "$dump_dir/stdout")
expect script-per-event-dump-size grep -qxF \
  "[ perf script: Wrote $(mb "$dump_dir/tmp/dump/callchain.data.page-faults.dump") MB tmp/dump/callchain.data.page-faults.dump (26 samples) ]" \
  "$dump_dir/stdout"
# an event name no file can have (a '/' in it): an error naming the file, no records printed
cp "$pd/mixed.data" "$dump_dir/"
err=$(cd "$dump_dir" && "$dump_bin" script -i mixed.data --per-event-dump 2>&1 >"$dump_dir/mixed.out"); status=$?
expect script-per-event-dump-bad-name [ "$status" = 3 ] && expect script-per-event-dump-bad-name-text grep -qxF \
  "perfspec: error: cannot create mixed.data.page-faults/period=40/.dump: No such file or directory" <<<"$err"
expect script-per-event-dump-bad-name-nothing [ ! -s "$dump_dir/mixed.out" ]
rm -f "$dump_dir"/tmp/dump/*.dump
err=$(cd "$dump_dir" && "$dump_bin" script -i tmp/dump/callchain.data --per-event-dump --summary 2>&1); status=$?
expect script-per-event-dump-json [ "$status" = 2 ] && expect script-per-event-dump-json-text grep -qxF \
  "perfspec: error: --per-event-dump writes the text of each event's samples" <<<"$err"
expect script-per-event-dump-json-no-files [ ! -e "$dump_dir/tmp/dump/callchain.data.task-clock.dump" ]
rm -rf "$dump_dir"
# -v: perf's line for each recorded build id first; the binaries without symbols after the records
err=$("$bin" script -i "$pd/callchain.data" --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" -v 2>&1 >/dev/null)
expect script-verbose-build-ids diff <(grep '^build id event received' <<<"$err") "$here/expected/script_verbose_build_ids.txt"
expect script-verbose-problems grep -qxF "cannot open $pd/no-binaries/usr/bin/ls: No such file or directory" <<<"$err"
sym_check script-hide-call-graph callchain script_hide_call_graph.txt -G
# metrics: nothing for samples without group reads; refused for samples with them
sym_check script-metric addr script_fields_metric.txt -F +metric
err=$("$bin" script -i "$pd/group_read.data" -F +metric 2>&1); status=$?
expect script-metric-group-read [ "$status" = 2 ] && expect script-metric-group-read-text grep -qxF \
  "perfspec: error: -F metric: not supported yet (perfspec script does not compute the metrics of the samples' group reads)" <<<"$err"
err=$("$bin" script -i "$pd/callchain.data" -C 0 2>&1); status=$?
expect script-filter-cpu-none [ "$status" = 2 ] && expect script-filter-cpu-none-text grep -qxF \
  "perfspec: error: File does not contain CPU events. Remove -C option to proceed." <<<"$err"
err=$("$bin" script -i "$pd/stat_read.data" --pid 32647,abc 2>&1); status=$?
expect script-filter-bad-pid [ "$status" = 2 ] && expect script-filter-bad-pid-text grep -qxF \
  "perfspec: error: --pid 32647,abc: 'abc' is no id" <<<"$err"
err=$("$bin" script -i "$pd/stat_read.data" --format json --comm ls 2>&1); status=$?
expect script-filter-comm-json [ "$status" = 2 ]
# JSON keeps the samples --pid keeps: the four of 32647
expect script-filter-pid-json [ "$("$bin" script -i "$pd/stat_read.data" --format json --pid 32647 |
  grep -c '"type":"SAMPLE"')" = 4 ]
# perf report --stdio as perf 6.12 prints it (make.sh: its output on the same files, the kallsyms
# fixture and no binaries), but for the random tip it ends with: children and graphs by default, -g
# none, callee and caller graphs with a threshold, sort keys, --percent-limit, -n
report_check() {  # NAME FILE EXPECTED ARGS...
  local name=$1 file=$2 want=$3
  shift 3
  check "$name" 0 "$want" -- report -i "$pd/$file.data" --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" "$@"
}
report_check report-callchain callchain report_callchain.txt
report_check report-callchain-no-children callchain report_callchain_no_children.txt --no-children
report_check report-callchain-none callchain report_callchain_none.txt -g none
report_check report-callchain-caller callchain report_callchain_caller.txt --no-children -g caller,5
report_check report-callchain-sort callchain report_callchain_sort.txt --no-children --sort dso,sym --percent-limit 2 -n
report_check report-callchain-sym callchain report_callchain_sym.txt --sort sym,comm
report_check report-callchain-folded callchain report_callchain_folded.txt -g folded
report_check report-hierarchy callchain report_callchain_hierarchy.txt --hierarchy
report_check report-hierarchy-sort callchain report_callchain_hierarchy_sort.txt --sort dso,sym --hierarchy
report_check report-hierarchy-pid callchain report_callchain_hierarchy_pid.txt --sort pid,sym --hierarchy -g none -n --percent-limit 3
report_check report-hierarchy-limit callchain report_callchain_hierarchy_limit.txt --hierarchy --percent-limit 20 -g none -n
report_check report-hierarchy-folded callchain report_callchain_hierarchy_folded.txt --hierarchy -g folded --sort comm,sym
report_check report-hierarchy-callee callchain report_callchain_hierarchy_callee.txt --hierarchy -g callee --sort cpu,dso -n --show-cpu-utilization
report_check report-hierarchy-addr addr report_addr_hierarchy.txt --hierarchy
report_check report-hierarchy-mixed mixed report_mixed_hierarchy.txt --hierarchy --sort pid,dso
# a --sort naming symbol in full: perf's IPC column is a level of its own
report_check report-hierarchy-symbol callchain report_callchain_hierarchy_symbol.txt --hierarchy --sort dso,symbol -g none
report_check report-callchain-folded-caller callchain report_callchain_folded_caller.txt --no-children -n -g folded,1,caller
report_check report-callchain-tid callchain report_callchain_tid.txt --no-children --tid 28808 -n
report_check report-callchain-tid-none callchain report_callchain_tid_none.txt --tid 1
report_check report-callchain-inverted callchain report_callchain_inverted.txt -G --no-children
report_check report-addr addr report_addr.txt
# graphs asked of samples without callchains: perf's error (status 0) for a file; a pipe's reported
report_check report-addr-graph addr report_addr_graph.txt -g caller
# views of data the samples lack: perf's errors (status 0) and warning; views of data they have:
# refused, not shown wrong
report_check report-mem-mode-no-data callchain report_callchain_mem_mode.txt --mem-mode
report_check report-branch-no-data callchain report_callchain_branch.txt -b
report_check report-stitch-lbr-no-lbr callchain report_callchain_stitch_lbr.txt --stitch-lbr --no-children -g none
err=$("$bin" report -i "$pd/mem.data" --mem-mode 2>&1); status=$?
expect report-mem-mode-data [ "$status" = 2 ] && expect report-mem-mode-data-text grep -qxF \
  "perfspec: error: --mem-mode: the memory accesses' sort keys: not supported yet" <<<"$err"
err=$("$bin" report -i "$pd/group_read.data" --group 2>&1); status=$?
expect report-group-data [ "$status" = 2 ] && expect report-group-data-text grep -qxF \
  "perfspec: error: --group: a group's members in columns of its leader's rows: not supported yet" <<<"$err"
expect report-group-no-groups cmp -s <("$bin" report -i "$pd/callchain.data" --kallsyms "$pd/kallsyms" \
  --symfs "$pd/no-binaries" --group 2>&1) <(sed '/^--- stderr$/,$d' "$here/expected/report_callchain.txt")
for view in --total-cycles --show-ref-call-graph; do  # nothing to change without branch stacks or mixed graphs
  expect "report$view-no-data" cmp -s <("$bin" report -i "$pd/callchain.data" --kallsyms "$pd/kallsyms" \
    --symfs "$pd/no-binaries" "$view" 2>&1) <(sed '/^--- stderr$/,$d' "$here/expected/report_callchain.txt")
done
branches_pd=$(mktemp)
python3 "$here/craft_perf_data.py" "$branches_pd" <"$pd/branches.records"
err=$("$bin" report -i "$branches_pd" --total-cycles 2>&1); status=$?
expect report-total-cycles-branches [ "$status" = 2 ] && expect report-total-cycles-branches-text grep -qxF \
  "perfspec: error: --total-cycles: perfspec reports no branch stacks: not supported yet" <<<"$err"
rm -f "$branches_pd"
err=$("$bin" report -i "$pd/stat_read.data" -T --format folded 2>&1); status=$?
expect report-threads-text-only [ "$status" = 2 ] && expect report-threads-text-only-text grep -qxF \
  "perfspec: error: -T, --show-cpu-utilization and --hierarchy are of the text report" <<<"$err"
# a --sort naming symbol in full has perf's IPC column; sys and usr columns; -T's table of READ records
report_check report-symbol-ipc callchain report_callchain_symbol.txt --no-children --sort dso,symbol -g none
report_check report-cpu-utilization callchain report_callchain_cpu_utilization.txt --show-cpu-utilization --sort comm,dso -n
report_check report-threads stat_read report_stat_read_threads.txt -T --no-children --sort comm,pid
# (perf 6.12 names one address past the kernel's last symbol otherwise there: docs/perf-compatibility.md)
expect report-pipe-graph grep -qxF '# Samples: 44  of event '"'task-clock'" <(
  "$bin" report -i "$pd/pipe.data" --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" -g 2>/dev/null)
report_check report-callchain-pipe callchain_pipe report_callchain_pipe.txt
report_check report-addr-pid addr report_addr_pid.txt --sort pid,dso -n
report_check report-mixed mixed report_mixed.txt
report_check report-rounds rounds report_rounds.txt --sort comm,pid,dso,sym
# --time: the samples of the second tenth, as perf 6.12 weighs them; -g alone is the default graph
report_check report-time callchain report_callchain_time.txt --time 10%/2
report_check report-g-alone callchain report_callchain.txt -g
report_check report-threads-dir threads_dir report_threads_dir.txt --sort comm,pid,sym
# the header block as perf 6.12 prints it (its output on copies of the files dated 0, TZ=UTC): a file
# with -I, a pipe (the features from its records), perf script's; script refuses --header of a pipe
hdir=$(mktemp -d)
cp "$pd/callchain.data" "$pd/callchain_pipe.data" "$hdir/"
touch -d @0 "$hdir/callchain.data" "$hdir/callchain_pipe.data"
TZ=UTC check report-header-file 0 report_header_callchain.txt -- report --header-only -I -i "$hdir/callchain.data"
TZ=UTC check report-header-pipe 0 report_header_pipe.txt -- report --header-only -i "$hdir/callchain_pipe.data"
TZ=UTC check script-header-file 0 script_header_callchain.txt -- script --header-only -i "$hdir/callchain.data"
TZ=UTC check script-header-pipe 2 script_header_pipe.txt -- script --header -i "$hdir/callchain_pipe.data"
rm -rf "$hdir"
# folded stacks as perf 6.12's stackcollapse script writes them
report_check report-folded callchain report_folded_callchain.txt --format folded
report_check report-folded-kernel callchain report_folded_callchain_kernel.txt --format folded --kernel \
  --include-pid --include-tid
# a pprof profile as go tool pprof (Debian's golang-go) reads it: the functions' flat and cumulative
# shares are perf report's Self and Children (do_filp_open: 13.51% and 24.32%, report_callchain.txt)
pprof_file=$(mktemp)
if [ -n "${PERFSPEC_NO_GO:-}" ]; then
  echo "skipped: go tool pprof ($PERFSPEC_NO_GO); the profile is checked to be gzip only"
  "$bin" report -i "$pd/callchain.data" --kallsyms "$pd/kallsyms" --format pprof -o "$pprof_file"
  expect report-pprof-gzip python3 -c 'import gzip, sys; sys.exit(not gzip.open(sys.argv[1]).read())' "$pprof_file"
elif "$bin" report -i "$pd/callchain.data" --kallsyms "$pd/kallsyms" --symfs "$pd/no-binaries" --format pprof \
  -o "$pprof_file" && command -v go >/dev/null; then
  got=$(go tool pprof -top -sample_index=task-clock "$pprof_file" 2>&1)
  if [ "$got" = "$(cat "$here/expected/report_pprof_top.txt")" ]; then
    pass=$((pass + 1))
  else
    echo "FAIL report-pprof-top"
    diff "$here/expected/report_pprof_top.txt" <(echo "$got") | head -20
    fail=$((fail + 1))
  fi
else
  echo "FAIL report-pprof-top: no profile written, or no go tool (scripts/setup.sh installs golang-go)"
  fail=$((fail + 1))
fi
rm -f "$pprof_file"
check report-pprof-unwritable 3 report_pprof_unwritable.txt -- report -i "$pd/addr.data" --format pprof -o /nonexistent/dir/p.pb.gz
check report-group-read 2 report_group_read.txt -- report -i "$pd/group_read.data"
check report-bad-sort 2 report_bad_sort.txt -- report -i "$pd/addr.data" --sort comm,colour
check report-folded-only 2 report_folded_only.txt -- report -i "$pd/addr.data" --kernel
# ---- script -F as perf 6.12 reads it (make.sh's last part: perf's output and stderr on the same files) ----
# registers, memory data, misc (on every record too)
check script-regs 0 script_regs.txt -- script --samples -i "$pd/regs.data" -F comm,pid,tid,time,event,ip,iregs,uregs
check script-mem 0 script_mem.txt -- script --samples -i "$pd/mem.data" \
  -F comm,tid,time,misc,event,addr,data_src,weight,ins_lat,retire_lat,phys_addr,data_page_size,code_page_size,cgroup
check script-mem-all 0 script_mem_all.txt -- script -i "$pd/mem.data" -F comm,tid,misc,time,event
# the lists: trace for every type (nothing for a software event, a warning for each type), -field and
# +field from the defaults, type:fields, a type that prints nothing, -F given again
check script-fields-trace-sw 0 script_fields_trace_sw.txt -- script --samples -i "$pd/addr.data" -F trace
check script-fields-minus-ip 0 script_fields_minus_ip.txt -- script --samples -i "$pd/addr.data" -F -ip
check script-fields-plus 0 script_fields_plus.txt -- script --samples -i "$pd/tracepoint.data" -F +period,-cpu
check script-fields-typed 0 script_fields_typed.txt -- script --samples -i "$pd/mixed.data" \
  -F sw:comm,tid,period,event -F trace:comm,event,trace
check script-fields-type-none 0 script_fields_type_none.txt -- script --samples -i "$pd/mixed.data" \
  -F sw:comm,tid,time,event,addr -F trace:
check script-fields-override 0 script_fields_override.txt -- script --samples -i "$pd/mixed.data" \
  -F comm,tid,event -F sw:comm,event,ip -F trace:tid,trace
check script-fields-override-all 0 script_fields_override_all.txt -- script --samples -i "$pd/mixed.data" \
  -F comm,event -F tid,time,event,trace -F +period,-time
# crafted files (craft_perf_data.py): memory data of a PMU, events of one type with other sample types,
# the registers of every arch perf names
crafted=$(mktemp)
python3 "$here/craft_perf_data.py" "$crafted" <"$pd/data_src.records"
# The weight's split into weight, ins_lat and retire_lat is perf's x86 (and powerpc) reading of
# PERF_SAMPLE_WEIGHT_STRUCT, chosen by the machine perf runs on: elsewhere the weight is the whole value
# (perf's generic arch_perf_parse_sample_weight). PERFSPEC_ARCH names the binary's architecture when it
# is not this machine's (an arm64 build under qemu-user).
data_src_want=script_data_src.txt
[ "${PERFSPEC_ARCH:-$(uname -m)}" = aarch64 ] && data_src_want=script_data_src.aarch64.txt
check script-data-src 0 "$data_src_want" -- script --samples -i "$crafted" \
  -F comm,tid,time,misc,event,addr,data_src,weight,ins_lat,retire_lat,phys_addr,data_page_size,code_page_size,cgroup
python3 "$here/craft_perf_data.py" "$crafted" <"$pd/fields.records"
check script-fields-types 0 script_fields_types.txt -- script --samples -i "$crafted" -F comm,cpu,misc,time,event,ip,period
check script-fields-types-ns 0 script_fields_types_ns.txt -- script --samples -i "$crafted" --ns \
  -F cpu,time,event,ip -F sw:comm,tid,time
# a field for every type that the first event of a type lacks: perf's message (pid|tid has no name in it)
check script-fields-no-tid 2 script_fields_no_tid.txt -- script -i "$crafted" -F comm,tid
out=$(for arch in x86_64 i686 aarch64 armv7l csky loongarch64 mips64 ppc64le riscv64 s390x sparc64; do
  { echo "arch $arch"; cat "$pd/regs_arch.records"; } | python3 "$here/craft_perf_data.py" "$crafted"
  echo "# $arch"
  "$bin" script --samples -i "$crafted" -F tid,iregs,uregs 2>&1
done)
expect script-regs-arches [ "$out" = "$(cat "$here/expected/script_regs_arches.txt")" ]
# branch stacks (perf record -b with LBR): every flag perf prints, with and without binaries
python3 "$here/craft_perf_data.py" "$crafted" <"$pd/branches.records"
check script-brstack 0 script_brstack.txt -- script --samples -i "$crafted" -F brstack
check script-brstack-dso 0 script_brstack_dso.txt -- script --samples -i "$crafted" -F comm,tid,ip,brstack,dso
rm -f "$crafted"
# perf's refusals, with its words
check script-fields-mix 2 script_fields_mix.txt -- script -i "$pd/addr.data" -F comm,+addr
check script-fields-bad-type 2 script_fields_bad_type.txt -- script -i "$pd/addr.data" -F foo:comm
check script-fields-none 2 script_fields_none.txt -- script -i "$pd/addr.data" -F ''
check script-fields-sw-trace 2 script_fields_sw_trace.txt -- script -i "$pd/addr.data" -F sw:trace
check script-fields-no-hw 2 script_fields_no_hw.txt -- script -i "$pd/addr.data" -F comm -F hw:
check script-fields-no-uregs 2 script_fields_no_uregs.txt -- script -i "$pd/addr.data" -F comm,uregs
check script-fields-no-cgroup 2 script_fields_no_cgroup.txt -- script -i "$pd/addr.data" -F comm,cgroup
check script-fields-no-weight 2 script_fields_no_weight.txt -- script -i "$pd/regs.data" -F comm,weight
# a type named for itself whose samples lack the field: left out (only a field for every type is refused)
check script-fields-typed-missing 0 script_fields_typed_missing.txt -- script --samples -i "$pd/addr.data" -F sw:comm,tid,cpu,uregs
# pipe mode: each ATTR adds ip and sym to its type's fields while events have callchains (here without
# sym, which a -F for every type removed)
check script-fields-pipe-ip 0 script_fields_pipe_ip.txt -- script --samples -i "$pd/callchain_pipe.data" -F comm,tid -F -sym
# pipe mode: at the start there are no events yet, so a type named without fields has none
out=$("$bin" script -i - -F sw: <"$pd/pipe.data" 2>&1); status=$?
expect script-fields-pipe-no-sw [ "$status" = 2 -a "$out" = "perfspec: error: software events do not exist. Remove corresponding -F option to proceed." ]
# a folder of perf record --threads: its header, then the records of its data.N files (perf 6.12's
# output); the header file alone is refused (its records are elsewhere), as is a file whose recording
# was killed (data size 0 in its header)
check script-threads-dir 0 script_threads_dir.txt -- script --samples -i "$pd/threads_dir.data" -F comm,pid,tid,time,period,event
check script-threads-dir-all 0 script_threads_dir_all.txt -- script -i "$pd/threads_dir.data" -F comm,tid,time,event
check script-threads-dir-header 3 script_threads_dir_header.txt -- script -i "$pd/threads_dir.data/data"
check script-not-a-perf-folder 3 script_not_a_perf_folder.txt -- script -i "$pd"
check script-killed 3 script_killed.txt -- script -i "$pd/killed.data"
check script-missing-file 3 script_missing_file.txt -- script -i "$pd/nosuch.data"
check script-not-perf-data 3 script_not_perf_data.txt -- script -i "$pd/make.sh"
tmp_pd=$(mktemp)
head -c 3000 "$pd/callchain.data" >"$tmp_pd"
err=$("$bin" script -i "$tmp_pd" 2>&1); status=$?
expect script-truncated-status [ "$status" = 3 ]
expect script-truncated-message grep -qF "runs past the end of the file (3000 bytes)" <<<"$err"
# a record cut in the middle: its offset is named, the records before it are printed
size=$(stat -c %s "$pd/addr.data")
python3 - "$pd/addr.data" "$tmp_pd" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
off, = struct.unpack_from('<Q', b, 40)
# the second record of the data section claims 16 more bytes than it has, but within the file
first = struct.unpack_from('<H', b, off + 6)[0]
second = off + first
size = struct.unpack_from('<H', b, second + 6)[0]
struct.pack_into('<H', b, second + 6, 8)
open(sys.argv[2], 'wb').write(b)
PY
out=$("$bin" script --format json -i "$tmp_pd" 2>"$tmp_pd.err"); status=$?
expect script-bad-record-status [ "$status" = 3 ]
expect script-bad-record-offset grep -qF '"message":"'"$tmp_pd"': MMAP record at offset 0x160: its sample_id needs 16 bytes, the body has 0"' "$tmp_pd.err"
# the records before it are not lost
expect script-bad-record-partial [ "$(python3 -c 'import json,sys; [print(json.loads(l).get("type", json.loads(l).get("schema"))) for l in sys.stdin]' <<<"$out" | tr '\n' ' ')" = "perfspec-script/1 ID_INDEX " ]
rm -f "$tmp_pd.err"
rm -f "$tmp_pd"

# ---- record: a perf.data file of a command, read back; the command's status; what is refused ----
rec_dir=$(mktemp -d)
err=$("$bin" record -e page-faults -c 1 -o "$rec_dir/a.data" -- sh -c 'exit 3' 2>&1); status=$?
expect record-command-status [ "$status" = 3 ]
expect record-summary-line grep -qE '^\[ perfspec record: Captured and wrote [0-9.]+ MB .*a.data \([1-9][0-9]* samples\) \]$' <<<"$err"
sum=$("$bin" script --summary --format json -i "$rec_dir/a.data")
expect record-read-back python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["records"]["SAMPLE"] > 0 and j["records"]["COMM"] >= 1 and j["lost"] == 0))' "$sum"
# the file's event is named as written, and perf's header facts are there
expect record-event-name grep -qF '"events":[{"name":"page-faults","type":1,"config":2' <<<"$("$bin" script --format json -i "$rec_dir/a.data" | head -n 1)"
"$bin" record -q -e task-clock -o "$rec_dir/a.data" -- true
expect record-keeps-old [ -s "$rec_dir/a.data.old" ]
# Only a regular file with data is moved aside: a device node or a FIFO at -o is written in pipe mode
# and stays what it is; a file that cannot be moved is not overwritten.
if [ "$(id -u)" = 0 ]; then
  mknod "$rec_dir/null" c 1 3
  "$bin" record -q -e task-clock -o "$rec_dir/null" -- true; status=$?
  expect record-device-status [ "$status" = 0 ]
  expect record-device-kept [ -c "$rec_dir/null" ] && expect record-device-not-moved [ ! -e "$rec_dir/null.old" ]
fi
mkfifo "$rec_dir/fifo"
cat "$rec_dir/fifo" >"$rec_dir/from-fifo.data" & reader=$!
"$bin" record -q -e task-clock -o "$rec_dir/fifo" -- true; status=$?
wait $reader
expect record-fifo-status [ "$status" = 0 ] && expect record-fifo-kept [ -p "$rec_dir/fifo" ]
expect record-fifo-pipe-mode [ "$(head -c 16 "$rec_dir/from-fifo.data" | od -An -tx1 | tr -d ' \n')" = 50455246494c45321000000000000000 ]
expect record-fifo-read-back grep -qE '^ +true +[0-9]+ ' <<<"$("$bin" script -i "$rec_dir/from-fifo.data")"
echo kept >"$rec_dir/b.data"; mkdir "$rec_dir/b.data.old"
err=$("$bin" record -q -e task-clock -o "$rec_dir/b.data" -- true 2>&1); status=$?
expect record-cannot-move-status [ "$status" = 3 ] && expect record-cannot-move-kept [ "$(cat "$rec_dir/b.data")" = kept ]
expect record-cannot-move-text [ "$err" = "perfspec: error: cannot move '$rec_dir/b.data' to '$rec_dir/b.data.old': '$rec_dir/b.data.old' is there and is not a regular file" ]
# A full disk (a 64 KiB tmpfs in a mount namespace): the error, and the header says the data that
# reached the file, whole records, so that it reads back.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  mkdir "$rec_dir/small"
  out=$(unshare -m sh -c 'mount -t tmpfs -o size=64k none "$1/small" || exit 99
    "$2" record -q -e cpu-clock -c 20000 -o "$1/small/x.data" -- sh -c "i=0; while [ \$i -lt 300000 ]; do i=\$((i+1)); done"
    echo "status $?"
    "$2" script --summary --format json -i "$1/small/x.data"' sh "$rec_dir" "$bin" 2>&1)
  expect record-full-disk-text grep -qxF "perfspec: error: cannot write '$rec_dir/small/x.data': No space left on device" <<<"$out"
  expect record-full-disk-status grep -qxF "status 3" <<<"$out"
  expect record-full-disk-read-back python3 -c 'import json,sys; j=json.loads(sys.argv[1].splitlines()[-1]); sys.exit(not j["records"]["SAMPLE"] > 100)' "$out"
fi
err=$("$bin" record -c 10 -F 100 -- true 2>&1); status=$?
expect record-c-and-F [ "$status" = 2 ] && expect record-c-and-F-text grep -qF -- "-c and -F cannot go together" <<<"$err"
# Nothing named to record is the whole system until a signal, which then ends perfspec (perf's
# record__sig_exit); -p with a command records the process while the command runs
"$bin" record -q -e cpu-clock -c 1000000 -o "$rec_dir/nothing.data" & p=$!
for i in $(seq 300); do [ -s "$rec_dir/nothing.data" ] && grep -q poll "/proc/$p/wchan" 2>/dev/null && break; sleep 0.1; done
sleep 0.2; interrupt_until_gone $p; wait $p; status=$?
expect record-nothing-status [ "$status" = 130 ]
expect record-nothing-system-wide [ "$("$bin" script --samples -F tid -i "$rec_dir/nothing.data" | wc -l)" -ge 1 ]
sleep "30.$$" & sleeper=$!
"$bin" record -q -e task-clock -p "$sleeper" -o "$rec_dir/p-cmd.data" -- sleep 0.2; status=$?
kill "$sleeper"; wait "$sleeper" 2>/dev/null
expect record-p-command-status [ "$status" = 0 ]
expect record-p-command-comm grep -qE "PERF_RECORD_COMM: sleep:$sleeper/$sleeper\$" <<<"$("$bin" script -F comm,tid -i "$rec_dir/p-cmd.data")"
err=$("$bin" record -e task-clock -o /nonexistent/dir/x.data -- true 2>&1); status=$?
expect record-unwritable [ "$status" = 3 ] && expect record-unwritable-text grep -qF "cannot create '/nonexistent/dir/x.data': No such file or directory" <<<"$err"
err=$("$bin" record -e 'task-clock,sched:nosuch' -- true 2>&1); status=$?
expect record-bad-event [ "$status" = 1 ] && expect record-bad-event-caret [ "$err" = "$(printf '%s\n' "event syntax error: 'task-clock,sched:nosuch'" "                                \\___ unknown tracepoint 'sched:nosuch'")" ]
# -p: an existing process until SIGINT, its threads and mappings synthesized as perf does; -a: every
# CPU, and every running process named
sh -c 'while :; do :; done' &
busy=$!
"$bin" record -q -e task-clock -F 1000 -p "$busy" -o "$rec_dir/p.data" &
rec=$!
# It catches signals before it makes the file, and enables its events before it waits in poll(2) for
# their records: once it waits there (its wait channel says so), every millisecond the busy loop runs
# is a sample (-F 1000 of task-clock: a period of 1 ms of its run time, kept across its time slices).
# SIGINT once the loop has run 30 ms more (3 clock ticks of its utime + stime), however loaded the
# machine (a sanitizer build on a loaded machine takes seconds to start).
cpu_ticks() { local s; s=$(cat "/proc/$1/stat") && s=${s##*) } && set -- $s && echo $((${12} + ${13})); }
for i in $(seq 300); do [ -s "$rec_dir/p.data" ] && grep -q poll "/proc/$rec/wchan" 2>/dev/null && break; sleep 0.1; done
ticks=$(cpu_ticks "$busy")
for i in $(seq 300); do [ "$(cpu_ticks "$busy")" -ge $((ticks + 3)) ] && break; sleep 0.1; done
kill -INT "$rec"; wait "$rec"; status=$?
kill "$busy"; wait "$busy" 2>/dev/null
expect record-p-status [ "$status" = 130 ]  # ended by the SIGINT, as perf record
pids=$("$bin" script --samples -F pid -i "$rec_dir/p.data" | sort -u | tr -d ' ')
expect record-p-samples [ "$pids" = "$busy" ]
expect record-p-comm grep -qE "PERF_RECORD_COMM: sh:$busy/$busy\$" <<<"$("$bin" script -F comm,tid -i "$rec_dir/p.data")"
expect record-p-mmap grep -qE "PERF_RECORD_MMAP2 $busy/$busy: .* r-xp $(readlink -f "$(command -v sh)")\$" <<<"$("$bin" script -F comm,tid -i "$rec_dir/p.data")"
"$bin" record -q -a -e cpu-clock -c 1000000 -o "$rec_dir/a.data" -- sleep 0.3; status=$?
expect record-a-status [ "$status" = 0 ]
sum=$("$bin" script --summary --format json -i "$rec_dir/a.data")
expect record-a-read-back python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["records"]["SAMPLE"] > 0 and j["records"]["COMM"] > 10 and j["lost"] == 0))' "$sum"
# every sample names a CPU of this machine, as perf script prints it ([000])
cpus=$("$bin" script --samples -F cpu -i "$rec_dir/a.data" | sort -u | tr -d '[] ' | tr '\n' ' ')
expect record-a-cpus python3 -c 'import sys, os; c = sys.argv[1].split(); sys.exit(not c or any(int(x) >= os.cpu_count() for x in c))' "$cpus"
# -a: a tracking event (dummy:u) enabled before /proc is scanned, so that a process born during the scan
# is named: every sample of a thread that has not exited names its command (perf prints `:TID` for one
# it was never told of). Processes are born all through the recording.
spawner() { local i=0; while [ $i -lt 3000 ]; do sh -c 'x=0; while [ $x -lt 50 ]; do x=$((x+1)); done'; i=$((i+1)); done; }
spawner & spawn=$!
"$bin" record -q -a -e cpu-clock -c 100000 -o "$rec_dir/a.data" -- sleep 0.5; status=$?
kill "$spawn" 2>/dev/null; wait "$spawn" 2>/dev/null
expect record-a-spawn-status [ "$status" = 0 ]
expect record-a-tracking-event grep -qF '{"name":"dummy:u","type":1,"config":9,' <<<"$("$bin" script --format json -i "$rec_dir/a.data" | head -n 1)"
unnamed=$("$bin" script -F comm,tid -i "$rec_dir/a.data" | python3 -c '
import re, sys
exited, bad, samples = set(), 0, 0
for line in sys.stdin:
    m = re.match(r" *(\S+) +(\d+) +(PERF_RECORD_EXIT)?", line)
    if not m:
        continue
    comm, tid = m.group(1), int(m.group(2))
    if m.group(3):
        exited.add(tid)
    elif "PERF_RECORD" not in line:
        samples += 1
        bad += comm == ":%d" % tid and tid not in exited
print(bad, samples)')
expect record-a-every-thread-named python3 -c 'import sys; bad, n = map(int, sys.argv[1].split()); sys.exit(not (bad == 0 and n > 100))' "$unnamed"
# -d: the data address of each sample, and MMAP2 records of data mappings (perf -d sets mmap_data): the
# loader maps libc's read-only segments without PROT_EXEC
"$bin" record -q -d -e page-faults -c 1 -o "$rec_dir/d.data" -- ls / >/dev/null
expect record-d-data-mmaps grep -qE 'PERF_RECORD_MMAP2 [0-9]+/[0-9]+: .* r--p /.*libc' <<<"$("$bin" script -F comm,tid -i "$rec_dir/d.data")"
"$bin" record -q -e page-faults -c 1 -o "$rec_dir/nod.data" -- ls / >/dev/null
expect record-no-d-no-data-mmaps [ "$("$bin" script -F comm,tid -i "$rec_dir/nod.data" | grep -cE 'PERF_RECORD_MMAP2 .* r--p ')" = 0 ]
# perf record's attr options: -k (clock), -s (inherit_stat), --switch-events, --namespaces; -B leaves
# out the build ids (no build_id attr bit, no HEADER_BUILD_ID); -T is always on (time)
"$bin" record -q -k mono -s -T -B --switch-events --namespaces -e task-clock -o "$rec_dir/k.data" -- true; status=$?
hdr=$("$bin" script --header -i "$rec_dir/k.data" | grep '^# event :')
expect record-attr-options-status [ "$status" = 0 ]
for field in 'inherit_stat = 1' 'use_clockid = 1' 'context_switch = 1' 'namespaces = 1' 'clockid = 1' 'sample_type = IP|TID|TIME|PERIOD'; do
  expect "record-attr-options-$field" grep -qF ", $field" <<<"$hdr"
done
expect record-B-no-build-id-bit lacks "build_id = 1" "$hdr"
# --namespaces: the command's NAMESPACES synthesized after its perf-exec COMM, as perf's: seven, the
# net namespace's device and inode those of this shell's (the command's, before and after its exec)
ns=$("$bin" script --show-namespace-events --show-task-events -i "$rec_dir/k.data" | head -n 3)
net=$(printf '%d/0x%x' $(stat -L -c '%d %i' /proc/self/ns/net))
expect record-namespaces-synthesized grep -qE '^ +perf-exec +0 +0\.000000: PERF_RECORD_NAMESPACES ([0-9]+)/\1 - nr_namespaces: 7$' <<<"$(sed -n 2p <<<"$ns")"
expect record-namespaces-net grep -qF "[0/net: $net, " <<<"$ns"
"$bin" record -q -k CLOCK_MONOTONIC_RAW -e task-clock -o "$rec_dir/k4.data" -- true
expect record-k-raw grep -qF ', clockid = 4' <<<"$("$bin" script --header -i "$rec_dir/k4.data" | grep '^# event :')"
err=$("$bin" record -q -k sundial -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-k-unknown-clock [ "$status" = 2 ] && expect record-k-unknown-clock-text grep -qF -- '-k sundial: not a clock' <<<"$err"
# -F max: the kernel's limit
"$bin" record -q -F max -e task-clock -o "$rec_dir/max.data" -- true
expect record-F-max grep -qF "{ sample_period, sample_freq } = $(cat /proc/sys/kernel/perf_event_max_sample_rate)," <<<"$("$bin" script --header -i "$rec_dir/max.data")"
err=$("$bin" record -q -F lots -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-F-word [ "$status" = 2 ]
# --filter: set on the tracepoints of the -e before it; every sample kept passes it
"$bin" record -q -e sched:sched_switch --filter 'prev_pid != 0' -a -o "$rec_dir/filter.data" -- sleep 0.3; status=$?
out=$("$bin" script --samples -i "$rec_dir/filter.data")
expect record-filter-status [ "$status" = 0 ]
expect record-filter-some grep -q 'prev_pid=[1-9]' <<<"$out"
expect record-filter-none-filtered lacks "prev_pid=0 " "$out"
err=$("$bin" record -q -e sched:sched_switch --filter 'no_such_field == 1' -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-filter-refused [ "$status" = 3 ]
expect record-filter-refused-text grep -qF "cannot sample 'sched:sched_switch': EINVAL: the kernel refused the filter \"no_such_field == 1\"" <<<"$err"
err=$("$bin" record -q -e task-clock --filter 'x == 1' -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-filter-not-tracepoint [ "$status" = 2 ] && expect record-filter-not-tracepoint-text grep -qF "'task-clock' is not a tracepoint" <<<"$err"
err=$("$bin" record -q --filter 'x == 1' -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-filter-no-e [ "$status" = 2 ]
# -D: sampling from MSEC after the command starts, -1 never (the side-band records from the start),
# ranges START-END ending the recording with the last (the command ended by SIGTERM), as perf 6.12
err=$("$bin" record -D -1 -e task-clock -c 10000 -o "$rec_dir/d.data" -- sh -c 'while :; do :; done & sleep 0.3; kill $!' 2>&1); status=$?
expect record-D-never-status [ "$status" = 0 ] && expect record-D-never-said [ "$(head -n 1 <<<"$err")" = "Events disabled" ]
out=$("$bin" script --show-task-events -i "$rec_dir/d.data" 2>&1)
expect record-D-never-no-samples [ "$("$bin" script --samples -i "$rec_dir/d.data" | wc -l)" = 0 ]
expect record-D-never-side-band grep -qE 'PERF_RECORD_COMM exec: sh:[0-9]+/[0-9]+' <<<"$out"
# the command's first COMM is its name before the exec, perf-exec (as perf's), at time 0; then its exec's
comms=$(grep -oE 'PERF_RECORD_COMM( exec)?: [^ ]+' <<<"$out" | head -n 2 | tr '\n' ' ')
pid=$(grep -oE 'PERF_RECORD_COMM exec: sh:[0-9]+' <<<"$out" | head -n 1 | cut -d: -f3)
expect record-command-perf-exec [ "$comms" = "PERF_RECORD_COMM: perf-exec:$pid/$pid PERF_RECORD_COMM exec: sh:$pid/$pid " ]
expect record-command-perf-exec-time grep -qE "^ +perf-exec +0 +0\.000000: PERF_RECORD_COMM: perf-exec:$pid/$pid\$" <<<"$out"
err=$("$bin" record -D 200 -e task-clock -c 100000 -o "$rec_dir/d.data" -- sh -c 'while :; do :; done & sleep 0.6; kill $!' 2>&1); status=$?
expect record-D-status [ "$status" = 0 ] && expect record-D-said [ "$(head -n 2 <<<"$err" | tr '\n' ' ')" = "Events disabled Events enabled " ]
expect record-D-samples [ "$("$bin" script --samples -i "$rec_dir/d.data" | wc -l)" -gt 0 ]
start=$(date +%s)
err=$("$bin" record -D 10-50,100-150 -e task-clock -o "$rec_dir/d.data" -- sleep 5 2>&1); status=$?
expect record-D-ranges-status [ "$status" = 143 ]
expect record-D-ranges-said [ "$(grep Events <<<"$err" | tr '\n' ' ')" = "Events disabled Events enabled Events disabled Events enabled Events disabled " ]
expect record-D-ranges-end [ $(( $(date +%s) - start )) -lt 5 ]
for bad in 0 abc 50-10 10-20,15-30 -2 10-; do
  err=$("$bin" record -D "$bad" -o "$rec_dir/x.data" -- true 2>&1); status=$?
  expect "record-D-refused-$bad" [ "$status" = 2 ] && expect "record-D-refused-$bad-text" grep -qF -- "-D/--delay '$bad': not a delay" <<<"$err"
done
# --all-cgroups: each sample's cgroup, and a CGROUP record of each cgroup there is (perf's mount: the
# hierarchy with the perf_event controller, else cgroup2): this shell's cgroup names the samples
if grep -qE '^[^ ]+ [^ ]+ cgroup [^ ]*perf_event' /proc/mounts; then cg=$(sed -n 's/^[0-9]*:[^:]*perf_event[^:]*://p' /proc/self/cgroup)
elif grep -qE '^[^ ]+ [^ ]+ cgroup2 ' /proc/mounts; then cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
else cg=; fi
"$bin" record -q --all-cgroups -e task-clock -o "$rec_dir/cg.data" -- true; status=$?
hdr=$("$bin" script --header -i "$rec_dir/cg.data" | grep '^# event :' | head -n 1)
expect record-all-cgroups-status [ "$status" = 0 ]
expect record-all-cgroups-sample-type grep -qF 'sample_type = IP|TID|TIME|PERIOD|CGROUP,' <<<"$hdr"
expect record-all-cgroups-attr grep -qF ', cgroup = 1' <<<"$hdr"
if [ -n "$cg" ]; then
  out=$("$bin" script -i "$rec_dir/cg.data")
  expect record-all-cgroups-root grep -qE '^ +swapper +0 +0\.000000: PERF_RECORD_CGROUP cgroup: [0-9]+ /$' <<<"$out"
  expect record-all-cgroups-own grep -qE "PERF_RECORD_CGROUP cgroup: [0-9]+ $cg\$" <<<"$out"
  expect record-all-cgroups-samples [ "$("$bin" script --samples -F cgroup -i "$rec_dir/cg.data" | sed 's/^ *//; s/ *$//' | sort -u)" = "$cg" ]
else
  echo "skipped: record --all-cgroups's cgroups (no cgroup file system mounted)"
fi
# --max-size: the recording ends once its data reach the size, the command by SIGTERM, the file whole
start=$(date +%s)
err=$("$bin" record --max-size 64K -e task-clock -c 20000 -o "$rec_dir/m.data" -- sh -c 'while :; do :; done' 2>&1); status=$?
expect record-max-size-status [ "$status" = 143 ]
expect record-max-size-said grep -qE '^\[ perfspec record: perf size limit reached \(([6-9][0-9]|[1-9][0-9]{2,}) KB\), stopping session \]$' <<<"$err"
expect record-max-size-readable [ "$("$bin" script --samples -i "$rec_dir/m.data" | wc -l)" -gt 0 ]
expect record-max-size-ends [ $(( $(date +%s) - start )) -lt 30 ]
for bad in 1 10k 1.5M -1K 20KB; do
  err=$("$bin" record --max-size "$bad" -o "$rec_dir/x.data" -- true 2>&1); status=$?
  expect "record-max-size-refused-$bad" [ "$status" = 2 ] && expect "record-max-size-refused-$bad-text" grep -qF -- "--max-size '$bad': not a size" <<<"$err"
done
# --switch-output: the recording in files named PATH.YYYYmmddHHMMSScc (the last one too), each whole and
# begun with the processes that exist; by size, by SIGUSR2, by time; --switch-max-files keeps the newest
so_dir=$(mktemp -d)
# --overwrite: a flight recorder. One CPU's one-page buffer keeps the newest page faults only: the
# region's last pages, each once and in order, up to its last; then the records of what exists (the
# workload a zombie by then: its COMM, no mappings), after the samples in the file.
one_cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
err=$("$bin" record --overwrite -m 1 -d -e page-faults:u -c 1 -o "$rec_dir/ow.data" -- taskset -c "$one_cpu" "$workload" touch 3000 2>&1); status=$?
expect record-overwrite-status [ "$status" = 0 ]
region=$(grep -oE '^region 0x[0-9a-f]+ 0x[0-9a-f]+' <<<"$err")
addrs=$("$bin" script --samples -F addr -i "$rec_dir/ow.data" | tr -d ' ')
expect record-overwrite-newest python3 -c '
import sys
start, end = (int(x, 16) for x in sys.argv[1].split()[1:])
page = (end - start) // 3000
a = [int(x, 16) for x in sys.argv[2].split()]
a = [x for x in a if start <= x < end]
ok = 10 < len(a) < 1000 and a[-1] == end - page and a == list(range(a[0], end, page))
sys.exit(0 if ok else print(len(a), a[:3], a[-3:]) or 1)' "$region" "$addrs"
first=$("$bin" script --show-task-events -F comm,pid -i "$rec_dir/ow.data" | grep PERF_RECORD | head -n 2 | awk '{print $3, $4}' | tr '\n' '|')
expect record-overwrite-tail grep -qE '^PERF_RECORD_COMM: perf-exec:([0-9]+)/\1\|PERF_RECORD_COMM: perfspec_worklo:\1/\1\|$' <<<"$first"
err=$("$bin" record --switch-output=64K -e task-clock -c 20000 -o "$so_dir/s.data" -- "$workload" burn 400 2>&1); status=$?
files=$(ls "$so_dir" | grep -cE '^s\.data\.[0-9]{16}$')
expect record-switch-size-status [ "$status" = 0 ]
# (a switch is seen at the recorder's passes over the buffers: in the arm64 guest a run once ended
# without one, so the count of files is machine-dependent; each Dump's file must be there)
expect record-switch-size-files [ "$files" -ge 1 ] && expect record-switch-size-no-path [ ! -e "$so_dir/s.data" ]
[ "$files" -ge 2 ] || { echo "  record --switch-output=64K made $files file(s):"; sed 's/^/  | /' <<<"$err"; }
expect record-switch-size-dumps [ "$(grep -cE "^\[ perfspec record: Dump $so_dir/s\.data\.[0-9]{16} \]\$" <<<"$err")" = "$files" ]
expect record-switch-size-woken [ "$(grep -cE '^\[ perfspec record: dump data: Woken up [0-9]+ times \]$' <<<"$err")" = $((files - 1)) ]
expect record-switch-size-captured grep -qE "^\[ perfspec record: Captured and wrote [0-9.]+ MB $so_dir/s\.data\.<timestamp> \]\$" <<<"$err"
# every file is whole: its samples are the workload's, named from its own COMM record (the last ones may
# have none: the workload can end just after a switch). The first file's may also be named perf-exec,
# the name of the workload before its exec: taken after exec enabled the events and before the exec's
# COMM, which a slow machine (the arm64 guest) samples
bad=0 with=0 first=1
for f in "$so_dir"/s.data.*; do
  samples=$("$bin" script --samples -F comm,pid -i "$f" 2>/dev/null | awk '{print $1, $2}' | sort -u)
  comms=$(awk '{print $1}' <<<"$samples" | sort -u | tr -d ' ')
  [ -n "$comms" ] && with=$((with + 1))
  [ "$first" = 1 ] && comms=$(grep -vx "perf-exec" <<<"$comms")
  first=0
  [ -z "$comms" ] || [ "$comms" = perfspec_worklo ] || { bad=$((bad + 1)); echo "  $f: samples of '$comms'"; }
done
expect record-switch-size-whole [ "$bad:$((with >= 1))" = 0:1 ]
rm -f "$so_dir"/*
# a switch at every pass (1 byte): each file kept under a name of its own (two in one hundredth of a
# second would get one name: the second waits for the next)
err=$("$bin" record --switch-output=1B -e task-clock -c 100000 -o "$so_dir/b.data" -- "$workload" burn 400 2>&1); status=$?
dumps=$(grep -cE "^\[ perfspec record: Dump $so_dir/b\.data\.[0-9]{16} \]\$" <<<"$err")
expect record-switch-fast-status [ "$status" = 0 ]
expect record-switch-fast-kept [ "$dumps:$(ls "$so_dir" | grep -cE '^b\.data\.[0-9]{16}$')" = "$dumps:$dumps" ] && expect record-switch-fast-some [ "$dumps" -ge 1 ]
rm -f "$so_dir"/*
"$bin" record -q --switch-output --switch-max-files 2 -e task-clock -o "$so_dir/g.data" -- "$workload" burn 1500 & rec=$!
for _ in $(seq 300); do [ -s "$so_dir/g.data" ] && break; sleep 0.1; done
for _ in 1 2 3; do kill -USR2 "$rec"; sleep 0.2; done
wait "$rec"; status=$?
expect record-switch-signal-status [ "$status" = 0 ]
expect record-switch-max-files [ "$(ls "$so_dir" | grep -cE '^g\.data\.[0-9]{16}$')" = 2 ]
rm -f "$so_dir"/*
"$bin" record -q --switch-output=1s -e task-clock -o "$so_dir/t.data" -- "$workload" spin 2500; status=$?
expect record-switch-time-status [ "$status" = 0 ]
expect record-switch-time-files [ "$(ls "$so_dir" | grep -cE '^t\.data\.[0-9]{16}$')" -ge 2 ]
for bad in 10 100Kx 0M 1w signals; do
  err=$("$bin" record --switch-output="$bad" -o "$so_dir/x.data" -- true 2>&1); status=$?
  expect "record-switch-refused-$bad" [ "$status" = 2 ] && expect "record-switch-refused-$bad-text" grep -qF -- "--switch-output '$bad': 'signal' (SIGUSR2), a size" <<<"$err"
done
err=$("$bin" record --switch-output -o - -- true 2>&1 >/dev/null); status=$?
expect record-switch-pipe [ "$status:$err" = "2:perfspec: error: --switch-output switches files: not with -o - (a pipe)" ]
rm -rf "$so_dir"
# --user-regs and -I/--intr-regs: perf's register names of the arch, case aside, the value attached only;
# each sample holds those asked for (script -F uregs/iregs names them), ? names the machine's
case $(uname -m) in
  x86_64) regs='AX BX CX DX SI DI BP SP IP FLAGS CS SS R8 R9 R10 R11 R12 R13 R14 R15'; two='ax,SP'; names='AX SP'; mask=0x81 ;;
  aarch64) regs='x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 lr sp pc'
    two='X0,SP'; names='x0 sp'; mask=0x80000001 ;;
  *) regs= ;;
esac
if [ -n "$regs" ]; then
  err=$("$bin" record --user-regs=? -o "$rec_dir/x.data" -- true 2>&1); status=$?
  # (arm64: vg, the SVE vector length, follows where the CPU has SVE and the kernel samples it)
  expect record-user-regs-list [ "$status:${err% vg}" = "2:perfspec: error: --user-regs: available registers: $regs" ]
  err=$("$bin" record -I? -o "$rec_dir/x.data" -- true 2>&1); status=$?
  expect record-intr-regs-list grep -qxE "perfspec: error: --intr-regs: available registers: $regs( XMM0 .* XMM15)?" <<<"$err"
  err=$("$bin" record --user-regs="${two%%,*},bogus" -o "$rec_dir/x.data" -- true 2>&1); status=$?
  expect record-user-regs-unknown [ "$status:$(head -n 1 <<<"$err")" = "2:perfspec: error: --user-regs: unknown register 'bogus'" ]
  "$bin" record -q --user-regs="$two" -e task-clock -c 100000 -o "$rec_dir/ur.data" -- "$workload" burn 30; status=$?
  hdr=$("$bin" script --header -i "$rec_dir/ur.data" | grep '^# event :' | head -n 1)
  expect record-user-regs-status [ "$status" = 0 ]
  expect record-user-regs-attr grep -qF "sample_regs_user = $mask" <<<"$hdr"
  expect record-user-regs-sample-type grep -qF 'sample_type = IP|TID|TIME|REGS_USER,' <<<"$hdr"
  # the spinner's samples in user space hold the two registers, by name, and nothing else
  got=$("$bin" script --samples -F uregs -i "$rec_dir/ur.data" | grep -F 'ABI:2' | head -n 1 |
    grep -oE '[A-Za-z0-9]+:0x' | sed 's/:0x//' | tr '\n' ' ')
  expect record-user-regs-names [ "$got" = "$names " ]
  # -I alone: every register at the interrupt (kernel or user)
  "$bin" record -q -I -e task-clock -c 100000 -o "$rec_dir/ir.data" -- "$workload" burn 30; status=$?
  hdr=$("$bin" script --header -i "$rec_dir/ir.data" | grep '^# event :' | head -n 1)
  expect record-intr-regs-status [ "$status" = 0 ]
  expect record-intr-regs-sample-type grep -qF 'sample_type = IP|TID|TIME|REGS_INTR,' <<<"$hdr"
  got=$("$bin" script --samples -F iregs -i "$rec_dir/ir.data" | head -n 1 | grep -oE '[A-Za-z0-9]+:0x' |
    sed 's/:0x//' | tr '\n' ' ')
  expect record-intr-regs-names [ "${got% XMM*}" = "$regs " ]
  # with --call-graph dwarf, perf's warning, and the instruction and stack pointers added
  err=$("$bin" record -q --call-graph dwarf --user-regs=${two%%,*} -e task-clock -o "$rec_dir/x.data" -- true 2>&1)
  expect record-user-regs-dwarf-warning grep -qF "WARNING: The use of --call-graph=dwarf may require all the user registers" <<<"$err"
else
  echo "skipped: record --user-regs (perfspec knows no registers of $(uname -m))"
fi
# cycles where the machine has no such counter falls back to task-clock (cpu-clock on CPUs), its
# modifiers kept, as perf 6.12; where it has one, cycles is recorded
for target in cmd cpus; do
  if [ $target = cmd ]; then args=(-- true); timer='config = 0x1 (PERF_COUNT_SW_TASK_CLOCK)'
  else args=(-a -- sleep 0.1); timer='config = 0 (PERF_COUNT_SW_CPU_CLOCK)'; fi
  err=$("$bin" record -v -q -e cycles:u -o "$rec_dir/cyc.data" "${args[@]}" 2>&1); status=$?
  hdr=$("$bin" script --header -i "$rec_dir/cyc.data" | grep '^# event :' | head -1)
  expect "record-cycles-$target-status" [ "$status" = 0 ]
  if grep -qF 'name = cycles:u,' <<<"$hdr"; then  # the machine counts cycles (a core PMU's, whatever its type)
    expect "record-cycles-$target-hardware-not-said" lacks "cannot be opened" "$err"
  else
    expect "record-cycles-$target-fallback" grep -qF "type = 1 (software)," <<<"$hdr"
    expect "record-cycles-$target-timer" grep -qF ", $timer," <<<"$hdr"
    expect "record-cycles-$target-name" grep -qE "name = (task|cpu)-clock:uH?," <<<"$hdr"
    expect "record-cycles-$target-modifier-kept" grep -qF 'exclude_kernel = 1' <<<"$hdr"
    expect "record-cycles-$target-said" grep -qF "perfspec record: 'cycles:u' cannot be opened" <<<"$err"
  fi
done
# -z: zstd-compressed records (perf 6.12 reads them: perf_script_side_by_side.py); the level attached
# only, clamped to 1..22 as perf's; what the summary says, and the same samples as without -z
err=$("$bin" record -z -e task-clock -c 100000 -o "$rec_dir/z.data" true 2>&1); status=$?
expect record-z [ "$status" = 0 ] && expect record-z-summary grep -qE \
  '^\[ perfspec record: Captured and wrote [0-9.]+ MB .*/z\.data \([0-9]+ samples\), compressed \(original [0-9.]+ MB, ratio is [0-9.]+\) \]$' <<<"$err"
# (-z right before the command: the command is not its level)
err=$("$bin" record -e task-clock -o "$rec_dir/z.data" -z true 2>&1); status=$?
expect record-z-before-command [ "$status" = 0 ] && expect record-z-before-command-compressed grep -qF ', compressed (original' <<<"$err"
for z in "-z0:1" "-z7:7" "--compression-level=30:22"; do
  "$bin" record -q "${z%:*}" -e task-clock -o "$rec_dir/z.data" true
  expect "record-z-level${z%:*}" grep -qxF "# compressed : Zstd, level = ${z##*:}, ratio = $(
    "$bin" report -i "$rec_dir/z.data" --header-only | sed -n 's/^# compressed : Zstd, level = [0-9]*, ratio = //p')" \
    <("$bin" report -i "$rec_dir/z.data" --header-only)
done
err=$("$bin" record -z -e page-faults -c 1 -o "$rec_dir/z.data" -- ls -R /usr/share/doc 2>&1 >/dev/null)
expect record-z-samples [ "$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' <<<"$err")" = \
  "$("$bin" script --summary -i "$rec_dir/z.data" | awk '$1 == "SAMPLE" {print $2}')" ]
# -vv: each event's attr as opened
err=$("$bin" record -vv -q -e task-clock -o "$rec_dir/x.data" -- true 2>&1)
expect record-vv-attrs grep -qE '^  sample_type +IP\|TID\|TIME\|PERIOD' <<<"$err"
# what each sample holds, as perf 6.12's evsel__config sets it (its -vv shows the same bits); the
# file's samples then have them (a CPU each)
err=$("$bin" record -vv -q -P -c 100000 -W --sample-cpu --phys-data --data-page-size --code-page-size --all-user \
  -e task-clock:k -o "$rec_dir/bits.data" -- "$workload" burn 30 2>&1); status=$?
expect record-sample-bits-status [ "$status" = 0 ]
# (in bit order: x86's WEIGHT_STRUCT is bit 24, the others' WEIGHT bit 14)
want_bits='IP|TID|TIME|CPU|PERIOD|WEIGHT|PHYS_ADDR|DATA_PAGE_SIZE|CODE_PAGE_SIZE'
[ "$(uname -m)" = x86_64 ] && want_bits='IP|TID|TIME|CPU|PERIOD|PHYS_ADDR|DATA_PAGE_SIZE|CODE_PAGE_SIZE|WEIGHT_STRUCT'
expect record-sample-bits grep -qxE "  sample_type +${want_bits//|/\\|}" <<<"$err"
expect record-all-user grep -qxE '  exclude_kernel +1' <<<"$err"
expect record-all-user-not-user-excluded lacks -E "^  exclude_user " "$err"
err=$("$bin" record -vv -q --all-kernel -e task-clock:u -o "$rec_dir/k.data" -- true 2>&1)
expect record-all-kernel grep -qxE '  exclude_user +1' <<<"$err" &&
  expect record-all-kernel-not-kernel-excluded [ "$(grep -c '^  exclude_kernel ' <<<"$err")" = 0 ]
# (30 ms of the workload's CPU time in user space at a sample each 100 us: `true` alone had none in the
# emulated arm64 guest once, its user time under 100 us)
expect record-sample-bits-cpu [ "$("$bin" script --samples -F cpu -i "$rec_dir/bits.data" 2>/dev/null | grep -c '^\[')" -gt 0 ]
# branch stacks: perf's filter names (a wrong one named), -b and -j exclude each other; a software event
# cannot have them (EOPNOTSUPP, explained)
err=$("$bin" record -j any_call,bogus -e task-clock -o "$rec_dir/b.data" -- true 2>&1); status=$?
expect record-branch-filter-bad [ "$status" = 2 ] && expect record-branch-filter-bad-text grep -qxF \
  "perfspec: error: -j any_call,bogus: unknown branch filter 'bogus'" <<<"$err"
err=$("$bin" record -b -j any -e task-clock -o "$rec_dir/b.data" -- true 2>&1); status=$?
expect record-branch-any-and-filter [ "$status" = 2 ]
err=$("$bin" record -vv -j ANY_CALL,u -e task-clock -o "$rec_dir/b.data" -- true 2>&1); status=$?
expect record-branch-software [ "$status" = 3 ] && expect record-branch-software-text grep -qF \
  "perfspec record: cannot sample 'task-clock': EOPNOTSUPP" <<<"$err"
expect record-branch-bits grep -qxE '  branch_sample_type +USER\|ANY_CALL' <<<"$err"
# -t: the threads named, not their children, not the rest of their process
sh -c 'while :; do :; done' & spinner=$!
"$bin" record -q -t "$spinner" -e task-clock -F 500 -o "$rec_dir/t.data" -- sleep 0.3; status=$?
kill "$spinner"; wait "$spinner" 2>/dev/null
tids=$("$bin" script --samples -F tid -i "$rec_dir/t.data" | sort -u | tr -d ' ')
expect record-t-status [ "$status" = 0 ]
expect record-t-only-the-thread [ "$tids" = "$spinner" ]
err=$("$bin" record -q -t 2147483647 -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-t-gone [ "$status" = 2 ]
# --proc-map-timeout: a process whose maps take longer to read is cut short after the MMAP2 read so
# far (0 ms: after the first), said on stderr; 500 ms reads every executable mapping of a shell
sh -c 'while :; do sleep 0.05; done' & looper=$!
err=$("$bin" record -q -e task-clock -p "$looper" --proc-map-timeout 0 -o "$rec_dir/pmt.data" -- sleep 0.1 2>&1); status=$?
expect record-proc-map-timeout-status [ "$status" = 0 ]
expect record-proc-map-timeout-said grep -qF "reading /proc/$looper/maps took longer than 0 ms" <<<"$err"
expect record-proc-map-timeout-one [ "$("$bin" script -i "$rec_dir/pmt.data" | grep -c "PERF_RECORD_MMAP2 $looper/$looper:")" = 1 ]
"$bin" record -q -e task-clock -p "$looper" -o "$rec_dir/pm.data" -- sleep 0.1
expect record-proc-map-every [ "$("$bin" script -i "$rec_dir/pm.data" | grep -c "PERF_RECORD_MMAP2 $looper/$looper:")" -ge 3 ]
kill "$looper"; wait "$looper" 2>/dev/null
# -G/--cgroup with -a: the root cgroup holds everything; without -a/-C it is refused
"$bin" record -q -e cpu-clock --cgroup=/ -a -c 100000 -o "$rec_dir/cg.data" -- sleep 0.2; status=$?
expect record-cgroup-status [ "$status" = 0 ]
expect record-cgroup-samples [ "$("$bin" script --samples -i "$rec_dir/cg.data" | wc -l)" -gt 0 ]
err=$("$bin" record -q -e cpu-clock -G / -o "$rec_dir/x.data" -- true 2>&1); status=$?
expect record-cgroup-needs-cpus [ "$status" = 2 ]
# a buffer too small for the work: what the kernel dropped is said: every page fault of the region
# touched is a sample in the file or counted as dropped (how many are dropped depends on how fast the
# recorder reads beside the toucher: on a quiet machine it may keep up, and then none is). Unless the
# kernel throttled the event (more samples in a tick than perf_event_max_sample_rate allows, which
# it lowers when its interrupts take long, as in an emulator): a throttled event takes no samples and
# counts none, and record says so.
err=$("$bin" record -m 1 -e page-faults:u -c 1 -d -o "$rec_dir/m1.data" -- "$workload" touch 8192 2>&1)
dropped=$(sed -nE 's/^perfspec record: the kernel dropped ([0-9]+) records into full buffers .*/\1/p' <<<"$err")
region=$(sed -nE 's/^region (0x[0-9a-f]+) (0x[0-9a-f]+)$/\1 \2/p' <<<"$err")
on_region=$("$bin" script --format json -i "$rec_dir/m1.data" | python3 -c '
import json, sys
lo, hi = (int(x, 16) for x in sys.argv[1].split())
print(sum(1 for l in sys.stdin if "\"SAMPLE\"" in l and lo <= json.loads(l).get("addr", 0) < hi))' "$region")
throttled=$(sed -nE 's/^perfspec record: sampling was throttled (once|[0-9]+ times): .*\(a larger -c\)$/\1/; T; s/^once$/1/; s/ times$//; p' <<<"$err")
expect record-dropped-said python3 -c 'import sys; d, n, t = int(sys.argv[1] or 0), int(sys.argv[2]), int(sys.argv[3] or 0); sys.exit(not (n <= 8192 and (t > 0 or (n + d >= 8192 and (d > 0 or n == 8192)))))' "$dropped" "$on_region" "$throttled"
# --call-graph dwarf: user registers and stack with each sample, unwound by script and report through
# the binaries' call frame information (the workload is built without frame pointers at -O2 on most
# arches): the samples in the workload's spin functions reach main, and report credits main's Children
dwarf_err=$("$bin" record -q --call-graph dwarf -e task-clock -F 1000 -o "$rec_dir/dw.data" -- "$workload" burn 300 2>&1)
# (report's Children of main: the share of all samples whose stack script shows main in, to 0.01 %)
dwarf_stacks=$("$bin" script --samples -F comm,ip,sym -i "$rec_dir/dw.data" | python3 -c '
import sys
all_blocks = [b.splitlines() for b in sys.stdin.read().split("\n\n") if b.strip()]
blocks = [b for b in all_blocks if b[0].startswith("perfspec_worklo")]
spin = [b for b in blocks if len(b) > 1 and b[1].split()[-1] in ("spin_inner", "spin_middle", "spin_outer")]
deep = [b for b in spin if any(l.split()[-1] == "main" for l in b[1:])]
with_main = sum(1 for b in all_blocks if any(l.split()[-1] == "main" for l in b[1:]))
print(len(spin), len(deep), "%.2f%%" % (100.0 * with_main / len(all_blocks)))')
# (300 samples of the spin functions at most; where the kernel throttled the sampling, which it does
# when its interrupts take long, as copying 8 KiB stacks does in a loaded emulated guest, fewer: then at
# least 10 are asked, and still 90 % of them unwound to main)
least=100
grep -q 'sampling was throttled' <<<"$dwarf_err" && least=10
expect record-dwarf-unwound python3 -c 'import sys; s, d, _ = sys.argv[1].split(); sys.exit(not (int(s) >= int(sys.argv[2]) and int(d) >= 0.9 * int(s)))' "$dwarf_stacks" "$least"
python3 -c 'import sys; s, d, _ = sys.argv[1].split(); sys.exit(not (int(s) >= int(sys.argv[2]) and int(d) >= 0.9 * int(s)))' "$dwarf_stacks" "$least" ||
  { echo "  record --call-graph dwarf: $dwarf_stacks (spin samples, those unwound to main, share with main), at least $least asked"; sed 's/^/  | /' <<<"$dwarf_err"; }
main_children=$("$bin" report -i "$rec_dir/dw.data" -g none --sort sym | awk '$NF == "main" {print $1}')
expect record-dwarf-report [ "${main_children:-none}" = "${dwarf_stacks##* }" ]
err=$("$bin" record -q --call-graph lbr -e task-clock -- true 2>&1); status=$?
expect record-call-graph-mode [ "$status: $err" = "2: perfspec: error: --call-graph lbr: perfspec records fp or dwarf[,SIZE]" ]
err=$("$bin" record -q --call-graph dwarf,65536 -e task-clock -- true 2>&1); status=$?
expect record-call-graph-size [ "$status: $err" = "2: perfspec: error: --call-graph dwarf,65536: the stack dump size is 8 to 65528 bytes" ]
# a tracepoint: the file carries the tracing data (HEADER_TRACING_DATA), so the payloads print
"$bin" record -q -a -e sched:sched_process_exec -o "$rec_dir/tp.data" -- sh -c 'ls / >/dev/null'
expect record-tracepoint-payload grep -qE ' sched:sched_process_exec: filename=/usr/bin/ls pid=[0-9]+ old_pid=[0-9]+$' <<<"$("$bin" script -i "$rec_dir/tp.data")"
# -o -: perf's pipe mode on standard output, no file named '-'; the command's output goes to stderr
abs_bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(cd "$rec_dir" && "$abs_bin" record -q -e page-faults -c 1 -o - -- echo to-stderr >"$rec_dir/pipe.data" 2>"$rec_dir/pipe.err"); status=$?
expect record-pipe-status [ "$status" = 0 ]
expect record-pipe-no-dash-file [ ! -e "$rec_dir/-" ]
expect record-pipe-command-output [ "$(cat "$rec_dir/pipe.err")" = "to-stderr" ]
expect record-pipe-header [ "$(head -c 16 "$rec_dir/pipe.data" | od -An -tx1 | tr -d ' \n')" = "50455246494c45321000000000000000" ]
out=$("$bin" script --samples -F comm,event -i - <"$rec_dir/pipe.data" | sort -u)
expect record-pipe-read-back [ "$out" = "            echo page-faults: " ]
out=$("$bin" record -q -e page-faults -c 1 -o - -- true | "$bin" script --summary --format json -i -)
expect record-pipe-through-a-pipe python3 -c 'import json,sys; j=json.loads(sys.argv[1]); sys.exit(not (j["records"]["SAMPLE"] > 0 and j["records"]["ATTR"] == 1))' "$out"
# output that cannot be written: an error, and the command never runs
err=$("$bin" record -q -e task-clock -o - -- sleep 30 2>&1 >/dev/full); status=$?
expect record-pipe-unwritable [ "$status" = 3 ]
expect record-pipe-unwritable-text grep -qF "cannot write 'standard output': No space left on device" <<<"$err"
# a reader that leaves while the command runs: the recording ends at once with an error, and the command
# is ended (SIGTERM), not left running for its 300 s
start=$(date +%s)
"$bin" record -q -e task-clock -o - -- sleep "300.$$" 2>"$rec_dir/gone.err" | head -c 16 >/dev/null
status=${PIPESTATUS[0]}
expect record-pipe-reader-gone [ "$status" = 3 ] && expect record-pipe-reader-gone-soon [ $(( $(date +%s) - start )) -lt 60 ]
expect record-pipe-reader-gone-text grep -qF "cannot write 'standard output'" "$rec_dir/gone.err"
expect record-pipe-reader-gone-command [ -z "$(pgrep -x -f "sleep 300.$$")" ]
rm -rf "$rec_dir"

# ---- the documentation says what the program does ----
# the exporter's HTTP threads: docs/exporter.md gives the default --help gives
threads=$("$bin" exporter --help | sed -nE 's/.*--threads INT:INT in \[1 - 64\](=| \[)([0-9]+).*/\2/p')  # CLI11 2.3: =8, 2.4: [8]
expect exporter-doc-threads grep -qF "the exporter's HTTP threads ($threads;" "$here/../../docs/exporter.md"
# ---- the man page: troff lays it out without a warning at any common width ----
for width in 60 80 100 120; do
  expect "man-page-width-$width" [ -z "$(groff -man -Tutf8 -ww -rLL=${width}n -z "$here/../../docs/perfspec.1" 2>&1)" ]
done

# ---- bash completion ----
complete_words() {  # complete_words CWORD WORD...
  PATH=$(dirname "$bin"):$PATH bash -c 'source "$1"; shift; COMP_CWORD=$1; shift; COMP_WORDS=("$@"); _perfspec; echo "${COMPREPLY[*]}"' \
    _ "$here/../../completions/perfspec.bash" "$@"
}
expect completion-subcommand [ "$(complete_words 1 perfspec res)" = "resolve" ]
expect completion-exporter [ "$(complete_words 2 perfspec exporter --con)" = "--config" ]
expect completion-event [ "$(complete_words 3 perfspec stat -e task-cl)" = "task-clock" ]
expect completion-list-item [ "$(complete_words 2 perfspec resolve cycles,page-fa)" = "cycles,page-faults" ]
expect completion-option grep -qw -- "--events-dir" <<<"$(complete_words 2 perfspec list --ev)"
expect completion-stat-option [ "$(complete_words 2 perfspec stat --per-so)" = "--per-socket" ]
# Every long option each subcommand's --help lists is completed (a new option without completion fails
# here).
for sub in stat record script report list resolve decode exporter snapshot; do
  missing=$(comm -23 <("$bin" $sub --help | grep -oE -- '--[a-z][a-z0-9-]+(\.[a-z0-9-]+)*' | grep -vx -- '--help' | sort -u) \
                     <(complete_words 2 perfspec $sub -- | tr ' ' '\n' | sort -u))
  expect "completion-every-$sub-option" [ -z "$missing" ]
  [ -z "$missing" ] || echo "  not completed: $missing"
done
expect completion-command-after-dashes [ "$(complete_words 3 perfspec stat -- bas | tr ' ' '\n' | grep -cx bash)" = 1 ]
expect completion-command-args [ "$(complete_words 4 perfspec stat -- ls /et)" = "/etc" ]
if "$bin" list --tracepoints 'sched:sched_switch' 2>/dev/null | grep -q sched_switch; then
  # readline splits words at ':' (COMP_WORDBREAKS), so the reply is the part after the colon.
  expect completion-tracepoint [ "$(complete_words 3 perfspec stat -e sched:sched_swi)" = "sched_switch" ]
fi
# ---- zsh and fish completion: the same options (each subcommand's --help), events and commands ----
every_option_completed() {  # every_option_completed SHELL FUNCTION: FUNCTION SUB lists the options offered
  local shell=$1 options=$2 sub missing
  for sub in stat record script report list resolve decode exporter snapshot top trace; do
    missing=$(comm -23 <("$bin" $sub --help | grep -oE -- '--[a-z][a-z0-9_-]+(\.[a-z0-9_-]+)*' | sort -u) <($options $sub | sort -u))
    expect "$shell-completion-every-$sub-option" [ -z "$missing" ]
    [ -z "$missing" ] || echo "  $shell: not completed: $missing"
  done
}
zsh_complete() {  # zsh_complete WORD...: what completions/_perfspec offers for the last word (zsh's
  # completion builtins stubbed: compadd prints its words, _files and _command_names say so)
  PATH=$(dirname "$bin"):$PATH zsh -f -c '
    compadd() { while (( $# )) && [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }
    compset() { return 1; }
    _files() { print FILES; }
    _command_names() { print COMMANDS; }
    words=("$@"); CURRENT=$#; PREFIX=$words[CURRENT]
    source $0' "$here/../../completions/_perfspec" "$@"
}
if command -v zsh >/dev/null; then
  expect zsh-completion-subcommands [ "$(zsh_complete perfspec "" | head -3 | tr '\n' ' ')" = "resolve stat list " ]
  expect zsh-completion-event grep -qx task-clock <<<"$(zsh_complete perfspec stat -e "")"
  expect zsh-completion-resolve-event grep -qx page-faults <<<"$(zsh_complete perfspec resolve "")"
  expect zsh-completion-command [ "$(zsh_complete perfspec stat -a -- "")" = COMMANDS ]
  expect zsh-completion-command-args [ "$(zsh_complete perfspec record -g -- ls "")" = FILES ]
  expect zsh-completion-input [ "$(zsh_complete perfspec report -i "")" = FILES ]
  zsh_options() { zsh_complete perfspec "$1" -; }
  every_option_completed zsh zsh_options
else
  echo "skipped: zsh completion (no zsh: scripts/setup.sh installs it)"
  [ "${PERFSPEC_REQUIRE_ALL:-}" != 1 ] || { echo "FAIL zsh-completion: no zsh"; fail=$((fail + 1)); }
fi
if command -v fish >/dev/null; then
  fish_complete() {  # fish_complete COMMAND-LINE: fish's own completion of it
    PATH=$(dirname "$bin"):$PATH fish -c 'source $argv[1]; complete -C $argv[2]' \
      "$here/../../completions/perfspec.fish" "$1"
  }
  expect fish-completion-subcommand [ "$(fish_complete "perfspec res")" = "resolve" ]
  expect fish-completion-option [ "$(fish_complete "perfspec stat --per-so")" = "--per-socket" ]
  expect fish-completion-event [ "$(fish_complete "perfspec stat -e task-cl")" = "task-clock" ]
  expect fish-completion-list-item [ "$(fish_complete "perfspec resolve cycles,page-fa")" = "cycles,page-faults" ]
  expect fish-completion-input grep -qx "$pd/callchain.data" <<<"$(fish_complete "perfspec script -i $pd/callch")"
  fish_options() { fish_complete "perfspec $1 --"; }
  every_option_completed fish fish_options
else
  echo "skipped: fish completion (no fish: scripts/setup.sh installs it)"
  [ "${PERFSPEC_REQUIRE_ALL:-}" != 1 ] || { echo "FAIL fish-completion: no fish"; fail=$((fail + 1)); }
fi

# The exporter's configuration: --check resolves it against a machine and opens nothing; every error is
# at its file position with the line and a caret (columns count TOML escapes).
check exporter-good 0 exporter_good.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/good.toml"
check exporter-bad_toml 1 exporter_bad_toml.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/bad_toml.toml"
check exporter-bad_event 1 exporter_bad_event.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/bad_event.toml"
check exporter-unknown_metric 1 exporter_unknown_metric.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/unknown_metric.toml"
check exporter-bad_metric 1 exporter_bad_metric.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/bad_metric.toml"
check exporter-bad_listen_file 1 exporter_bad_listen_file.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/bad_listen_file.toml"
check exporter-missing 3 exporter_missing.txt -- exporter --check --config "$fixtures/exporter/none.toml"
check exporter-bad_listen 2 exporter_bad_listen.txt -- exporter --config "$fixtures/exporter/good.toml" --sysfs "$fixtures/intel_skx" --no-tables --listen 9464
# the web configuration (exporter-toolkit's YAML): checked with its TLS files, errors at their place
check exporter-web-good 0 exporter_web_good.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/good.toml" --web.config.file "$fixtures/tls/web.yml"
check exporter-web-bad 1 exporter_web_bad.txt -- exporter --check --sysfs "$fixtures/intel_skx" --no-tables --config "$fixtures/exporter/good.toml" --web.config.file "$fixtures/tls/bad_web.yml"
# Served over TLS with a client certificate and basic authentication, to curl: the series with the
# right certificate and password; refused without a certificate, with an expired one, with a wrong
# password and in plain HTTP, each counted by its reason.
if command -v curl >/dev/null; then
  fail_before=$fail
  web_dir=$(mktemp -d)
  printf '[[set]]\nname = "self"\npid = %d\nevents = ["task-clock"]\n' $$ >"$web_dir/e.toml"
  "$bin" exporter --config "$web_dir/e.toml" --listen 127.0.0.1:0 --web.config.file "$fixtures/tls/web.yml" 2>"$web_dir/err" &
  exporter_pid=$!
  port=""
  for _ in $(seq 100); do
    port=$(sed -nE 's/^perfspec exporter: serving 127\.0\.0\.1:([0-9]+)\/metrics over TLS .*/\1/p' "$web_dir/err")
    [ -n "$port" ] && break
    sleep 0.1
  done
  tls_curl() { curl -sS --max-time 10 --cacert "$fixtures/tls/ca.crt" --resolve "localhost:$port:127.0.0.1" "$@"; }
  good=(--cert "$fixtures/tls/client.crt" --key "$fixtures/tls/client.key" -u prometheus:secret)
  expect exporter-tls-served grep -qE "^perfspec_event_seconds_total\{set=\"self\",pid=\"$$\",event=\"task-clock\",pmu=\"software\"\} " <<<"$(tls_curl "${good[@]}" "https://localhost:$port/metrics")"
  expect exporter-tls-header grep -qx $'X-Content-Type-Options: nosniff\r' <<<"$(tls_curl "${good[@]}" -D - -o /dev/null "https://localhost:$port/-/healthy")"
  expect exporter-tls-wrong-password [ "$(tls_curl --cert "$fixtures/tls/client.crt" --key "$fixtures/tls/client.key" -u prometheus:nope -o /dev/null -w '%{http_code}' "https://localhost:$port/metrics")" = 401 ]
  tls_curl -u prometheus:secret -o /dev/null "https://localhost:$port/metrics" 2>/dev/null; status=$?
  expect exporter-tls-no-certificate [ "$status" != 0 ]
  tls_curl --cert "$fixtures/tls/expired-client.crt" --key "$fixtures/tls/expired-client.key" -u prometheus:secret -o /dev/null "https://localhost:$port/metrics" 2>/dev/null; status=$?
  expect exporter-tls-expired [ "$status" != 0 ]
  # (closed without a reset: curl says nothing of its own)
  expect exporter-tls-plain-http [ "$(curl -sS --max-time 10 "http://127.0.0.1:$port/metrics" 2>&1)" = "Client sent an HTTP request to an HTTPS server." ]
  counts=$(tls_curl "${good[@]}" "https://localhost:$port/metrics" | grep -E '^perfspec_exporter_(tls|auth)_refused_total' | tr '\n' ' ')
  for want in 'tls_refused_total{reason="plain_http"} 1' 'tls_refused_total{reason="no_certificate"} 1' \
               'tls_refused_total{reason="expired_certificate"} 1' 'auth_refused_total{reason="wrong_password"} 1'; do
    expect "exporter-tls-counted-${want%%\}*}" grep -qF "perfspec_exporter_$want " <<<"$counts "
  done
  [ "$fail" = "$fail_before" ] || { echo "  the exporter's refusals: $counts"; sed 's/^/  | /' "$web_dir/err"; }
  kill "$exporter_pid"; wait "$exporter_pid"; status=$?
  expect exporter-tls-stops [ "$status" = 0 ]
  rm -rf "$web_dir"
else
  echo "skipped: the exporter over TLS (no curl)"
  [ "${PERFSPEC_REQUIRE_ALL:-}" != 1 ] || { echo "FAIL exporter-tls: no curl"; fail=$((fail + 1)); }
fi

# ---- what is not perf.data is refused from its first bytes: endless input, a 10 GB sparse file ----
err=$(timeout 60 "$bin" script -i /dev/zero 2>&1); status=$?
expect script-dev-zero [ "$status" = 3 ] && expect script-dev-zero-text [ "$err" = "perfspec: error: /dev/zero: not a perf.data file (no PERFILE2 magic)" ]
err=$(timeout 60 "$bin" script -i - 2>&1 </dev/zero); status=$?
expect script-endless-stdin [ "$status" = 3 ] && expect script-endless-stdin-text [ "$err" = "perfspec: error: stdin: not a perf.data file (no PERFILE2 magic)" ]
sparse=$(mktemp)
if truncate -s 10G "$sparse" 2>/dev/null; then
  err=$(timeout 60 "$bin" script -i "$sparse" 2>&1); status=$?
  expect script-sparse [ "$status" = 3 ] && expect script-sparse-text grep -qF "not a perf.data file (no PERFILE2 magic)" <<<"$err"
fi
rm -f "$sparse"

# ---- output that is not written is an error (issue 34): /dev/full as standard output, -o or stderr ----
wf_dir=$(mktemp -d)
"$bin" record -q -e task-clock -o "$wf_dir/ok.data" -- true
for args in "script -i $wf_dir/ok.data" "script --format json -i $wf_dir/ok.data" "list" "resolve cycles" \
            "resolve --format json cycles" "decode --type 1 --config 0"; do
  err=$("$bin" $args 2>&1 >/dev/full); status=$?
  expect "write-failure-status ($args)" [ "$status" = 3 ]
  # (said where it is found: at exit for what stdio held, by script's printer when a write fails on the way)
  expect "write-failure-text ($args)" grep -qE '^perfspec: error: (write failure on standard output|cannot write the records: No space left on device)|"message":"(write failure on standard output|cannot write the records: No space left on device)"' <<<"$err"
done
err=$("$bin" stat -e task-clock -o /dev/full -- true 2>&1); status=$?
expect write-failure-stat-o [ "$status" = 3 ] && expect write-failure-stat-o-text grep -qxF "perfspec: error: cannot write '/dev/full'" <<<"$err"
"$bin" stat --format json -e task-clock -- true 2>/dev/full; status=$?
expect write-failure-stat-stderr [ "$status" = 3 ]
"$bin" script -i "$wf_dir/ok.data" >/dev/null; expect write-ok-status [ $? = 0 ]
rm -rf "$wf_dir"
# nohup: a SIGHUP ignored when stat starts stays ignored by the command it runs (perf stat leaves it)
out=$(sh -c 'trap "" HUP; exec "$0" stat -x, -e task-clock -- sh -c "kill -HUP \$\$; echo alive"' "$bin" 2>/dev/null); status=$?
expect stat-nohup-status [ "$status" = 0 ] && expect stat-nohup-alive [ "$out" = alive ]
out=$(sh -c 'trap "" HUP; exec "$0" record -q -e task-clock -o /dev/null -- sh -c "kill -HUP \$\$; echo alive"' "$bin" 2>/dev/null); status=$?
expect record-nohup-status [ "$status" = 0 ] && expect record-nohup-alive [ "$out" = alive ]

# ---- trace (issue 32): perf trace's lines; tests/cli/perf_trace_side_by_side.py checks them against perf 6.12 ----
if [ -d /sys/kernel/tracing/events/raw_syscalls ] || [ -d /sys/kernel/debug/tracing/events/raw_syscalls ]; then
  tr_dir=$(mktemp -d)
  out=$("$bin" trace -e openat,close -- cat /dev/null 2>"$tr_dir/err"); status=$?
  expect trace-status [ "$status" = 0 ] && expect trace-stdout-is-the-command [ -z "$out" ]
  expect trace-openat grep -qE '^ +[0-9]+\.[0-9]{3} \( *[0-9]+\.[0-9]{3} ms\): cat/[0-9]+ openat\(dfd: CWD, filename: 0x[0-9a-f]+, flags: RDONLY(\|[A-Z]+)*\) +=( -1 E[A-Z]+ \(.*\)| [0-9]+)$' "$tr_dir/err"
  expect trace-only-listed [ -z "$(grep -vE ' (openat|close)\(|\[continued\]' "$tr_dir/err")" ]
  # the arguments' column: " = " after 70 columns of the call when it is shorter
  expect trace-alignment grep -qE '^ +[0-9.]+ \( *[0-9.]+ ms\): cat/[0-9]+ close\(fd: [0-9]+\) {50,}= 0$' "$tr_dir/err"
  "$bin" trace -s -e openat -- true 2>"$tr_dir/err"; status=$?
  expect trace-summary-status [ "$status" = 0 ]
  expect trace-summary grep -qxF ' Summary of events:' "$tr_dir/err"
  expect trace-summary-row grep -qE '^   openat +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$' "$tr_dir/err"
  expect trace-summary-no-lines [ -z "$(grep -E 'openat\(' "$tr_dir/err")" ]
  "$bin" trace -o "$tr_dir/out" -e openat -- true 2>"$tr_dir/err"; status=$?
  expect trace-o-status [ "$status" = 0 ] && expect trace-o-file grep -q 'true/[0-9]* openat(' "$tr_dir/out"
  expect trace-o-stderr-empty [ ! -s "$tr_dir/err" ]
  # the command is ended once the events are printed: far sooner than its own minute (an emulated
  # machine takes seconds to set a trace up)
  start=$(date +%s)
  "$bin" trace --max-events 2 -- sleep 60 2>"$tr_dir/err"; status=$?
  expect trace-max-events-status [ "$status" = 0 ] && expect trace-max-events-lines [ "$(wc -l <"$tr_dir/err")" = 2 ]
  expect trace-max-events-stops [ $(( $(date +%s) - start )) -lt 50 ]
  "$bin" trace --failure -e openat -o "$tr_dir/err" -- cat /nonexistent/file >/dev/null 2>&1
  expect trace-failure grep -qE 'openat\(dfd: CWD, filename: 0x[0-9a-f]+(, flags: [A-Z|]+)?\) += -1 ENOENT \(No such file or directory\)$' "$tr_dir/err"
  expect trace-failure-only [ -z "$(grep -vE '= -1 E' "$tr_dir/err")" ]
  # a tracepoint with nr=: its fields, zero ones left out; the trace stops after that many
  "$bin" trace --no-syscalls -e 'sched:sched_process_exec/nr=1/' -- true 2>"$tr_dir/err"; status=$?
  expect trace-tracepoint-status [ "$status" = 0 ]
  expect trace-tracepoint grep -qE '^ +[0-9.]+ true/[0-9]+ sched:sched_process_exec\(filename: "[^"]*/true", pid: [0-9]+ \(true\), old_pid: [0-9]+ \(true\)\)$' "$tr_dir/err"
  # -p: an existing process (a shell forking sleeps), its wait4 calls, until --max-events; a child's pid
  # returned is followed by its name once its COMM record was read, as perf prints it
  sh -c 'while :; do sleep 0.05; done' & looper=$!
  "$bin" trace -p "$looper" -e wait4 --max-events 2 -o "$tr_dir/p" 2>"$tr_dir/err"; status=$?
  expect trace-p-status [ "$status" = 0 ]
  lines=$(grep -cE "^ +[0-9.]+ \( *[0-9.]+ ms\): sh/$looper wait4\(upid: -1, stat_addr: 0x[0-9a-f]+(, options: [A-Z|]+)?\) += ([0-9]+( \(sleep\))?|-1 E[A-Z]+ \(.*\))$|^ +\? \( +\): sh/$looper  \.\.\. \[continued\]: wait4\(\)\) += ([0-9]+( \(sleep\))?|-1 E[A-Z]+ \(.*\))$" "$tr_dir/p")
  expect trace-p-lines [ "$lines" = 2 ]
  # (the lines, should it fail: an exit printed before its entry was what it once found)
  [ "$lines" = 2 ] || { echo "  trace -p wrote:"; sed 's/^/  | /' "$tr_dir/p"; }
  # Ctrl-C while the trace's writes to standard error wait on a full pipe (the reader sleeps): the write
  # the signal interrupts (EINTR) is written again, and the trace ends by the signal, as perf's (it
  # ended with "cannot write 'standard error': Interrupted system call", status 3)
  ( "$bin" trace -F all 2>&1 >/dev/null & echo $! >"$tr_dir/pid"; wait $!; echo $? >"$tr_dir/status" ) |
    { sleep 1.5; kill -INT "$(cat "$tr_dir/pid")"; sleep 0.5; cat; } >"$tr_dir/eintr"
  expect trace-eintr-status [ "$(cat "$tr_dir/status")" = 130 ]
  expect trace-eintr-no-error [ "$(grep -c 'cannot write' "$tr_dir/eintr")" = 0 ]
  # (-s prints no lines, so --max-events never ends it: Ctrl-C does, and the summary is printed then)
  # (the signal comes once the trace waits on its events, and a second later: in the arm64 guest, a
  # fixed second from the start sometimes ended it while it was still being set up)
  "$bin" trace -s -p "$looper" -e wait4,clone,clone3 -o "$tr_dir/s" 2>/dev/null & tracer=$!
  wait_polling "$tracer"; sleep 1; kill -INT "$tracer"; wait "$tracer"; status=$?
  expect trace-p-summary-interrupted [ "$status" = 130 ]
  expect trace-p-summary grep -qE "^ sh \($looper\), [0-9]+ events, [0-9.]+%$" "$tr_dir/s"
  expect trace-p-summary-row grep -qE '^   wait4 +[0-9]+ +[0-9]+ +[0-9.]+ ' "$tr_dir/s"
  kill "$looper"; wait "$looper" 2>/dev/null
  # a trace that cannot be written is an error, and the command is not left running
  err=$("$bin" trace -o /dev/full -e openat -- cat /dev/null 2>&1); status=$?
  expect trace-write-failure [ "$status" = 3 ] && expect trace-write-failure-text grep -qxF "perfspec: error: cannot write '/dev/full': No space left on device" <<<"$err"
  rm -rf "$tr_dir"
  err=$("$bin" trace -e 'nosuch:thing' -- true 2>&1); status=$?
  expect trace-bad-event-status [ "$status" = 1 ] && expect trace-bad-event grep -qF "event syntax error: 'nosuch:thing'" <<<"$err"
  # an event beside system calls: the error points into the -e as written, past the system call words
  err=$("$bin" trace -e 'openat,close,nosuch:thing' -- true 2>&1); status=$?
  expect trace-bad-event-beside-calls-status [ "$status" = 1 ]
  expect trace-bad-event-beside-calls grep -qxF "event syntax error: 'openat,close,nosuch:thing'" <<<"$err"
  expect trace-bad-event-beside-calls-caret grep -qxF "$(printf '%34s' '')\\___ unknown tracepoint 'nosuch:thing'" <<<"$err"
fi
err=$("$bin" trace -G foo -- true 2>&1); status=$?
expect trace-cgroup-needs-cpus [ "$status" = 2 ] && expect trace-cgroup-text grep -qF -- "-G/--cgroup: cgroups are traced across CPUs only: add -a or -C" <<<"$err"
"$bin" trace -F bogus -- true 2>/dev/null; expect trace-bad-pf [ $? = 2 ]
err=$("$bin" trace --call-graph lbr -- true 2>&1); status=$?
expect trace-bad-call-graph [ "$status" = 2 ] && expect trace-bad-call-graph-text grep -qF -- "--call-graph lbr: perfspec records fp or dwarf[,SIZE]" <<<"$err"
"$bin" trace -p 999999999 2>/dev/null; expect trace-no-such-pid [ $? = 2 ]

# ---- top (issue 32): perf top's screen on a real terminal (tmux), refreshed, q to quit ----
if command -v tmux >/dev/null; then
  top_dir=$(mktemp -d)
  sh -c 'while :; do :; done' & busy=$!
  tm() { tmux -L perfspec-cli-test "$@"; }
  # wait_screen SESSION PATTERN TRIES: the session's screen once a line matches PATTERN (grep -E), or
  # after TRIES tenths of a second
  wait_screen() {
    local shown=""
    for _ in $(seq 1 "$3"); do
      shown=$(tm capture-pane -p -t "$1")
      grep -qE "$2" <<<"$shown" && break
      sleep 0.1
    done
    printf '%s\n' "$shown"
  }
  rate_before=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
  tm new-session -d -s top -x 110 -y 14 "'$bin' top -d 0.5 -p $busy -ns comm,dso; echo \$? > '$top_dir/status'; sleep 60"
  screen=$(wait_screen top '^ +[0-9]+\.[0-9]{2}% +[0-9]+  sh  ' 100)
  expect top-header grep -qE "^Samples: [0-9]+[KMG]? of event '[^']+', [0-9]+ Hz, Event count \(approx\.\): [0-9]+ lost: [0-9]+/[0-9]+ drop: 0/0$" <<<"$screen"
  # perf's default 4000 Hz, or the kernel's limit when that is lower (a slow emulated kernel lowers it)
  hz=$(sed -n "s/^Samples: .* of event '[^']*', \([0-9]*\) Hz, .*/\1/p" <<<"$screen")
  expect top-header-frequency [ "$hz" = 4000 -o \( "$rate_before" -lt 4000 -a "${hz:-0}" -gt 0 -a "${hz:-0}" -le "$rate_before" \) ]
  expect top-columns grep -qE '^Overhead    Samples  Command  Shared Object$' <<<"$screen"
  # every sample is the busy loop's: one command, its binary, libc or the kernel, 100% in all
  expect top-rows-are-the-process [ -z "$(sed -n '3,$p' <<<"$screen" | grep -vE '^ +[0-9]+\.[0-9]{2}% +[0-9]+  sh  +(dash|bash|busybox|libc\.so\.6|\[kernel\]|\[unknown\]) *$|^$')" ]
  expect top-first-row-first [ "$(sed -n 3p <<<"$screen" | awk '{print $1}')" = "$(sed -n '3,$p' <<<"$screen" | awk 'NF {print $1}' | sort -t% -k1 -rn | head -1)" ]
  tm send-keys -t top q
  for _ in $(seq 1 50); do [ -s "$top_dir/status" ] && break; sleep 0.1; done
  expect top-q-quits [ "$(cat "$top_dir/status" 2>/dev/null)" = 0 ]
  expect top-q-leaves-the-process kill -0 "$busy"
  # -e and -F: the header names the event and its frequency
  tm kill-session -t top 2>/dev/null
  tm new-session -d -s top3 -x 110 -y 8 "'$bin' top -e task-clock -F 499 -d 0.3 -p $busy -s sym; sleep 60"
  screen=$(wait_screen top3 '^Overhead' 60)
  expect top-e-F-header grep -qE "^Samples: [0-9]+[KMG]? of event 'task-clock', 499 Hz, " <<<"$screen"
  expect top-sort-sym grep -qE '^Overhead  Symbol$' <<<"$screen"
  # -F max: the kernel's limit, as the header says
  tm kill-session -t top3 2>/dev/null
  limit=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
  tm new-session -d -s top4 -x 110 -y 8 "'$bin' top -e task-clock -F max -d 0.3 -p $busy; sleep 60"
  # its first screen takes its first tenth of a million samples resolved: seconds under ASan on a loaded
  # machine, so up to 30 s (what this waits for, not how long it takes)
  screen=$(wait_screen top4 '^Overhead' 300)
  grep -qE "^Samples: [0-9]+[KMG]? of event 'task-clock', $limit Hz, " <<<"$screen" ||
    printf 'top -F max (limit %s): the screen:\n%s\n' "$limit" "$screen"
  expect top-F-max-header grep -qE "^Samples: [0-9]+[KMG]? of event 'task-clock', $limit Hz, " <<<"$screen"
  tm kill-session -t top4 2>/dev/null
  # -p of a process that ends: top ends with it
  tm kill-session -t top 2>/dev/null
  sh -c 'sleep 1' & short=$!
  tm new-session -d -s top2 -x 100 -y 10 "'$bin' top -d 0.3 -p $short; echo \$? > '$top_dir/status2'; sleep 60"
  for _ in $(seq 1 60); do [ -s "$top_dir/status2" ] && break; sleep 0.1; done
  expect top-ends-with-its-process [ "$(cat "$top_dir/status2" 2>/dev/null)" = 0 ]
  tm kill-server 2>/dev/null
  kill "$busy" 2>/dev/null; wait "$busy" 2>/dev/null
  rm -rf "$top_dir"
fi
err=$("$bin" top -s nosuch 2>&1); status=$?
expect top-bad-sort [ "$status" = 2 ] && expect top-bad-sort-text grep -qF "unknown --sort key: 'nosuch' (perfspec top sorts by comm, pid, dso and sym)" <<<"$err"
"$bin" top -p 999999999 2>/dev/null; expect top-no-such-pid [ $? = 2 ]
err=$("$bin" top -c 1000 -F 100 2>&1); status=$?
expect top-c-and-F [ "$status:$err" = "2:perfspec: error: -c and -F cannot go together: a period or a frequency" ]
err=$("$bin" top -F often 2>&1); status=$?
expect top-F-word [ "$status:$err" = "2:perfspec: error: -F often: a number of samples a second, or max" ]
err=$("$bin" record -c 1000 -F max -- true 2>&1); status=$?
expect record-c-and-F-max [ "$status:$err" = "2:perfspec: error: -c and -F cannot go together: a period or a frequency" ]

rm -f "$check_out" "$check_err"
rm -rf "$PERF_BUILDID_DIR"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
