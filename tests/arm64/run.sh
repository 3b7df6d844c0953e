#!/bin/sh
# SPDX-License-Identifier: MIT
# The arm64 suite, inside scripts/vm-arm64.sh's guest (busybox sh, as root): the library's hardware
# paths (perfspec_arm64_tests), then the command line on the same PMU. The machine is told apart by
# its PMU: under QEMU's -icount the driver lists inst_retired, counts are exact and cycles are
# instructions; without it the cycle counter follows the host's clock and `instructions` is ENOENT.
here=$(dirname "$0")
spin=$here/perfspec_arm64_spin
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }
# check NAME CONDITION-COMMAND... : ok when the command succeeds, else FAIL with what it saw
check() {
  name=$1
  shift
  if "$@"; then ok "$name"; else bad "$name" "$seen"; fi
}
machine=default
[ -e /sys/bus/event_source/devices/armv8_pmuv3/events/inst_retired ] && machine=icount
echo "== arm64 suite on $(uname -r), machine: $machine, $(grep -c ^processor /proc/cpuinfo) CPUs"

if "$here/perfspec_arm64_tests" --no-colors=true; then ok "library: perfspec_arm64_tests"; else bad "library" "perfspec_arm64_tests failed"; fi

# The CSV field of EVENT in `perfspec stat -x,` output: its value.
value_of() { printf '%s\n' "$2" | awk -F, -v e="$1" '$3 == e { print $1; exit }'; }
is_count() { case "$1" in '' | *[!0-9]*) return 1 ;; *) [ "$1" -gt 0 ] ;; esac; }

# 1. The issue's command: real cycles, and `instructions` explained.
out=$(perfspec stat -e cycles,cycles:u,cycles:k,instructions -- /bin/busybox true 2>&1)
rc=$?
seen="status $rc: $out"
check "stat: exit status 0" [ $rc = 0 ]
for e in cycles cycles:u cycles:k; do
  line=$(printf '%s\n' "$out" | grep -E "^ +[0-9,]+ +$e( |\$)")
  check "stat: $e has a count" [ -n "$line" ]
done
if [ $machine = default ]; then
  check "stat: instructions is <not supported>" sh -c 'printf "%s\n" "$1" | grep -qE "^ +<not supported> +instructions"' _ "$out"
else
  line=$(printf '%s\n' "$out" | grep -E "^ +[0-9,]+ +instructions")
  check "stat: instructions has a count under -icount" [ -n "$line" ]
fi

# 2. CSV counts: user-space cycles of a known loop; the parts of cycles add up under -icount.
n=20000000
csv=$(perfspec stat -x, -e cycles:u,cycles:k,cycles -- "$spin" $n 1000 2>&1)
seen=$csv
u=$(value_of cycles:u "$csv")
k=$(value_of cycles:k "$csv")
all=$(value_of cycles "$csv")
check "stat -x: cycles:u, cycles:k, cycles are counts" sh -c "[ -n '$u' ] && [ -n '$k' ] && [ -n '$all' ] && [ '$u' -gt 0 ]"
if [ $machine = icount ] && is_count "$u"; then
  # The loop's 2n user instructions, the process's own start and exit (dynamic loading: well under
  # a million), each a cycle.
  check "stat -x: cycles:u of spin $n is 2n plus the program's start" sh -c "[ $u -ge $((2 * n)) ] && [ $u -le $((2 * n + 1000000)) ]"
fi

# 3. Sampling on the cycle counter's overflow: one sample every N cycles, and script reads them.
period=100000
rec=$(perfspec record -e cycles:u -c $period -o /tmp/cycles.data -- "$spin" $n 2>&1)
rc=$?
seen="status $rc: $rec"
check "record: exit status 0" [ $rc = 0 ]
samples=$(perfspec script -i /tmp/cycles.data 2>/dev/null | grep -c ' cycles:u:')
seen="$samples samples; record said: $rec"
check "script: reads the samples" [ "$samples" -gt 0 ]
if [ $machine = icount ] && is_count "$u"; then
  # cycles:u of the same run counted above (deterministic under -icount): u / N overflows, give or
  # take the one in progress at exit and the program start's few thousand cycles of difference.
  want=$((u / period))
  check "record: $samples samples for $u cycles at period $period ($want)" sh -c "[ $samples -ge $((want - 2)) ] && [ $samples -le $((want + 2)) ]"
fi

# 4. A metric on real counts: instructions per cycle. Under -icount a cycle is an instruction.
if [ $machine = icount ]; then
  m=$(perfspec stat -x, -M 'ipc = inst_retired / cpu_cycles' -- "$spin" $n 2>&1)
  seen=$m
  ipc=$(printf '%s\n' "$m" | awk -F, '$0 ~ /ipc/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && $i != "") v = $i } END { print v }')
  check "metric: ipc of a loop is 1.00 under -icount ($ipc)" sh -c "[ '$ipc' = 1.00 ] || [ '$ipc' = 1.0 ] || [ '$ipc' = 1 ]"
fi

# 5. libpfm4's own arm64 model (arm_n1, what it detects on a Neoverse N1): its names resolve onto the
# kernel's PMU and count what the sysfs spelling counts.
r=$(perfspec resolve 'arm_n1::CPU_CYCLES:u' 2>&1)
seen=$r
check "libpfm4: arm_n1::CPU_CYCLES:u is armv8_pmuv3's event 0x11, user only" sh -c '
  printf "%s\n" "$1" | grep -qE "^  type +$2\$" && printf "%s\n" "$1" | grep -qE "^  config +0x11\$" &&
  printf "%s\n" "$1" | grep -qE "^  exclude_kernel +1\$"' _ "$r" "$(cat /sys/bus/event_source/devices/armv8_pmuv3/type)"
p=$(perfspec stat -x, -e '{arm_n1::CPU_CYCLES:u,cpu_cycles:u}' -- "$spin" 1000000 2>&1)
seen=$p
x=$(value_of arm_n1::CPU_CYCLES:u "$p")
y=$(value_of cpu_cycles:u "$p")
check "libpfm4: arm_n1::CPU_CYCLES:u counts" is_count "$x"
# In one group they count the same window of one clock: equal under -icount.
[ $machine = icount ] && check "libpfm4: arm_n1::CPU_CYCLES:u equals cpu_cycles:u in a group ($x, $y)" [ "$x" = "$y" ]

# 6. Debian's arm64 perf as a reference on the same PMU (scripts/vm-arm64.sh --perf): bookworm's 6.1
# and trixie's 6.12 (the project's reference). The same strings give the same attrs, and the same
# user-space counts of the same program.
# The attr fields of `stat -vv` that say what is counted, not how stat reads it. Left out:
# exclude_guest, which both perfs set by default and perfspec does not (docs/perf-compatibility.md,
# "Deliberate differences": perf 6.13 stopped too); a zero type or config, which perf 6.1 does not
# print; and perf 6.12's names after a value ("8 (armv8_pmuv3)"). Each event's "perf_event_attr:"
# stays: a tool that opened nothing has nothing to agree with.
attrs() {
  sed -n '/^perf_event_attr:/,/^-----/p' | sed -E 's/^(  (type|config) +[0-9a-fx]+) \(.*\)$/\1/' |
    grep -vE '^-+$|^  (size|sample_type|read_format|disabled|inherit|enable_on_exec|exclude_guest) |^  (type|config) +0$'
}
strings="cycles cycles:u cycles:k cycles:h cycles:H cycles:G cpu_cycles armv8_pmuv3/event=0x11/ r11 stall_frontend:u
  armv8_pmuv3/cpu_cycles,rdpmc=1,long=1/u {cycles,stall_backend}:u {cpu_cycles,stall_frontend,stall_backend}:k"
[ $machine = icount ] && strings="$strings instructions:u inst_retired {inst_retired,cpu_cycles}:u"
for perf in perf perf-6.12; do
  command -v $perf >/dev/null || continue
  version=$($perf --version | sed 's/^perf version //')
  for e in $strings; do
    a=$($perf stat -vv -e "$e" -- /bin/busybox true 2>&1 | attrs)
    b=$(perfspec stat -vv -e "$e" -- /bin/busybox true 2>&1 | attrs)
    seen="perf $version:
$a
perfspec:
$b"
    check "perf $version agrees: the attrs of $e" [ "$a" = "$b" ]
  done
  if [ $machine = icount ]; then
    # Counting from exec, the same program does the same user-space work under both; only the
    # environment and auxiliary vector each tool gives it change the dynamic loader's share, by a few
    # thousand instructions at most (perf 6.12 starts it through its own loader: the same program).
    p=$($perf stat -x, -e cycles:u,inst_retired:u -- "$spin" $n 2>&1)
    q=$(perfspec stat -x, -e cycles:u,inst_retired:u -- "$spin" $n 2>&1)
    seen="perf: $p / perfspec: $q"
    for e in cycles:u inst_retired:u; do
      x=$(value_of $e "$p")
      y=$(value_of $e "$q")
      check "perf $version agrees: $e of spin $n ($x and $y)" sh -c "[ -n '$x' ] && [ -n '$y' ] && d=\$(($x - $y)) && [ \${d#-} -le 10000 ]"
    done
  fi
done

# 7. A cgroup on a machine without systemd (this guest): until a controller is enabled in the cgroup2
# root's cgroup.subtree_control, the kernel gives new cgroups no perf_event state and refuses their
# events with ENOENT, which perfspec tells from a PMU without the event. Enabled as systemd does it,
# the cgroup's tasks are counted, and only they.
cg=/sys/fs/cgroup
if [ -z "$(cat $cg/cgroup.subtree_control 2>/dev/null)" ] && mkdir $cg/perfspec-t; then
  out=$(perfspec stat -a -G perfspec-t -e cycles -- sleep 0.1 2>&1)
  seen=$out
  check "-G before subtree_control: ENOENT, explained by the cgroup" sh -c '
    printf "%s\n" "$1" | grep -qE "^ +<not supported> +cycles +perfspec-t" &&
    printf "%s\n" "$1" | grep -qF "ENOENT: the cgroup has no perf_event state in the kernel (the event opens outside it)"' _ "$out"
  echo +pids >$cg/cgroup.subtree_control
  out=$(perfspec stat -a -G perfspec-t -x, -e cycles:u -- sh -c "echo \$\$ >$cg/perfspec-t/cgroup.procs; exec $spin $n" 2>&1)
  seen=$out
  c=$(printf '%s\n' "$out" | awk -F, '$3 == "cycles:u" && $4 == "perfspec-t" { print $1 }')
  check "-G after subtree_control: the cgroup's cycles:u counted ($c)" is_count "$c"
  # Only the cgroup's tasks: the loop's 2n instructions (each a cycle under -icount), and not the
  # other CPU's nor perfspec's own.
  [ $machine = icount ] && is_count "$c" &&
    check "-G: cycles:u in the cgroup is spin's 2n plus its start ($c)" sh -c "[ $c -ge $((2 * n)) ] && [ $c -le $((2 * n + 1000000)) ]"
  rmdir $cg/perfspec-t 2>/dev/null
else
  echo "skipped: -G before and after subtree_control (a controller is already enabled, or no cgroup2 here)"
fi

# 8. stat's default events (no -e) on this PMU, each counted or <not supported> as it belongs: the
# generic events the PMU lacks (instructions, branches, branch-misses on QEMU's default machine;
# branches and branch-misses under -icount) are not supported, the rest counted. As perf 6.12 chooses
# and prints them, where it is in the guest.
shape() { awk -F, 'NF >= 3 { print ($1 ~ /^[0-9.]+$/ ? "N" : $1) "," $3 }'; }
b=$(perfspec stat -x, -- /bin/busybox true 2>&1 | shape | tr '\n' ' ')
seen=$b
if [ $machine = default ]; then inst="<not supported>"; else inst=N; fi
check "stat's default events, counted or not supported" [ "$b" = "N,task-clock N,context-switches N,cpu-migrations N,page-faults N,cycles $inst,instructions <not supported>,branches <not supported>,branch-misses " ]
if command -v perf-6.12 >/dev/null; then
  a=$(perf-6.12 stat -x, -- /bin/busybox true 2>&1 | shape | tr '\n' ' ')
  seen="perf 6.12: $a"
  check "stat's default events, as perf 6.12's" [ "$a" = "$b" ]
fi

echo "== arm64 suite: $passed passed, $failed failed"
[ $failed = 0 ]
