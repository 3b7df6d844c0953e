#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf stat 6.12 and perfspec stat side by side: the same command lines, compared line by line.

usage: perf_side_by_side.py --perfspec BIN [--perf PERF-CURRENT] [--only NAME]

For each case both tools run the same `stat` arguments (perf through ../shared/tools/perf-current,
a perf 6.12 chroot). Their outputs are compared:
  - layout: every line is cut into tokens; a word must be the same word at the same column, a
    number must end at the same column (counts are right-aligned, so their width may differ);
  - numbers that do not depend on the run (CPUs summed per aggregate, event order, units, metric
    units) exactly. Counts of two runs taken at different moments are not compared with each other:
    task-clock counted on CPUs (the cases marked CPU_CLOCK) is checked in each tool's output against
    what that tool's accounting makes it (cpu_clock_problems).
What depends on the machine's load is kept out of the cases: interval counts are given by
--interval-count (with -a and no command: perf 6.12 waits for a command after its last interval),
and the process that -p and -t count sleeps all through (its lines are <not counted> in both).
Exit status 0 when every case agrees, 1 otherwise, 77 when perf 6.12 cannot run here (not root, or
the chroot cannot be made).
"""
import argparse, os, re, select, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))

NUM = re.compile(r"^[+-]?[0-9][0-9.,]*%?$")

# A case's third field: CPU_CLOCK where task-clock is counted on CPUs around `sleep S` (checked by
# cpu_clock_problems); STOP_WHEN_ENABLED where the tool counts until SIGINT, sent once it has said
# 'Events enabled' (-D: a command could end before the delay does, when the tool is slow to start);
# else nothing beyond the layout.
CPU_CLOCK = "cpu-clock"
STOP_WHEN_ENABLED = "Events enabled"

# name, stat arguments, CPU_CLOCK, STOP_WHEN_ENABLED or None
CASES = [
    ("default-events", ["-e", "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses", "true"], None),
    ("command", ["-e", "task-clock,page-faults", "--", "sleep", "0.1"], None),
    # task-clock varies from run to run; a count that does not (page-faults can be the same three
    # times) has no variation to print, in either tool.
    ("repeat", ["-r", "3", "-e", "task-clock", "--", "sleep", "0.05"], None),
    ("system-wide", ["-a", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("no-aggr", ["-a", "-A", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-core", ["-a", "--per-core", "-e", "task-clock", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-die", ["-a", "--per-die", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-socket", ["-a", "--per-socket", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-node", ["-a", "--per-node", "-e", "task-clock", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-cache", ["-a", "--per-cache", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-cache-l1", ["-a", "--per-cache=l1", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-cache-l4", ["-a", "--per-cache=L4", "-e", "task-clock", "--", "sleep", "0.2"], CPU_CLOCK),
    ("per-cluster", ["-a", "--per-cluster", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    ("cpus", ["-C", "0", "-e", "task-clock", "--", "sleep", "0.2"], CPU_CLOCK),
    ("interval", ["-I", "100", "--interval-count", "3", "-a", "-e", "task-clock"], None),
    ("interval-per-socket", ["-I", "100", "--interval-count", "3", "-a", "--per-socket", "-e", "cs"], None),
    ("tracepoint", ["-a", "-e", "sched:sched_switch,task-clock", "--", "sleep", "0.2"], None),
    ("csv", ["-x", ",", "-e", "task-clock,cs,cycles", "true"], None),
    ("csv-no-aggr", ["-x", ";", "-a", "-A", "-e", "task-clock,cs", "--", "sleep", "0.1"], None),
    ("csv-repeat", ["-x", ",", "-r", "2", "-e", "task-clock", "true"], None),
    ("json", ["-j", "-e", "task-clock,cs,cycles", "true"], None),
    ("json-per-socket", ["-j", "-a", "--per-socket", "-e", "task-clock", "--", "sleep", "0.1"], None),
    ("json-per-cache", ["-j", "-a", "--per-cache=L2", "-e", "task-clock", "--", "sleep", "0.1"], None),
    ("csv-per-cluster", ["-x", ",", "-a", "--per-cluster", "-e", "task-clock,cs", "--", "sleep", "0.1"], None),
    ("interval-per-cache", ["-I", "100", "--interval-count", "2", "-a", "--per-cache", "-e", "cs"], None),
    ("interval-per-cluster", ["-I", "100", "--interval-count", "2", "-a", "--per-cluster", "-e", "cs"], None),
    ("metric-only-per-cache", ["--metric-only", "-a", "--per-cache", "-e", "task-clock", "true"], None),
    ("metric-only-csv-per-cluster", ["-x", ",", "--metric-only", "-a", "--per-cluster", "-e", "task-clock", "true"], None),
    ("null", ["--null", "--", "sleep", "0.1"], None),
    ("all-user", ["--all-user", "-e", "task-clock,cs", "true"], None),
    ("breakpoint", ["-e", "mem:0x1000:rw,task-clock", "true"], None),
    ("delay", ["-D", "50", "-a", "-e", "task-clock"], STOP_WHEN_ENABLED),
    ("interval-count", ["-I", "100", "--interval-count", "2", "-a", "-e", "cs"], None),
    # --summary: the whole run after its intervals, without the header; "summary" first in -x
    ("summary", ["-I", "100", "--interval-count", "2", "-a", "--summary", "-e", "task-clock,cs"], None),
    ("summary-command", ["-I", "100", "--interval-count", "2", "--summary", "-e", "task-clock,page-faults",
                         "--", "sleep", "5"], None),
    ("summary-no-aggr", ["-I", "100", "--interval-count", "2", "-a", "-A", "--summary", "-e", "cs"], None),
    ("summary-csv", ["-x", ",", "-I", "100", "--interval-count", "2", "-a", "-A", "--summary", "-e", "task-clock"], None),
    ("summary-no-csv-summary", ["-x", ";", "-I", "100", "--interval-count", "2", "-a", "--summary",
                                "--no-csv-summary", "-e", "task-clock,cs"], None),
    ("summary-json", ["-j", "-I", "100", "--interval-count", "2", "-a", "--summary", "-e", "task-clock"], None),
    ("summary-metric-only", ["--metric-only", "-I", "100", "--interval-count", "2", "-a", "--per-socket",
                             "--summary", "-e", "task-clock"], None),
    ("no-merge", ["-a", "--no-merge", "-e", "task-clock,cs", "--", "sleep", "0.2"], CPU_CLOCK),
    # -B is perf's default (in the C locale, as these run, no digit is grouped); --no-big-num lets -x be
    ("big-num", ["-B", "-e", "task-clock,page-faults", "--", "sleep", "0.1"], None),
    ("no-big-num-csv", ["-B", "--no-big-num", "-x", ",", "-e", "task-clock,page-faults", "true"], None),
    # --metric-only over software events: perf shows no figure of theirs in a column (not CPUs
    # utilized, not the rates), so what is compared is where the headers and lines stand.
    ("metric-only", ["--metric-only", "-e", "task-clock,page-faults", "true"], None),
    ("metric-only-csv", ["-x", ",", "--metric-only", "-e", "task-clock", "true"], None),
    ("metric-only-json", ["-j", "--metric-only", "-e", "task-clock", "true"], None),
    ("metric-only-no-aggr", ["--metric-only", "-a", "-A", "-e", "task-clock", "true"], None),
    ("metric-only-per-socket", ["--metric-only", "-a", "--per-socket", "-e", "task-clock", "true"], None),
    ("metric-only-interval", ["--metric-only", "-I", "100", "--interval-count", "3", "-a", "--per-core", "-e", "task-clock"], None),
    # {cgroup}: a cgroup the harness makes in the cgroup2 file system; {sleeper}: a process it starts.
    ("cgroup", ["-a", "-e", "task-clock,cs", "-G", "{cgroup}", "--", "sleep", "0.1"], None),
    ("per-thread", ["--per-thread", "-p", "{sleeper}", "-I", "100", "--interval-count", "1", "-e", "task-clock"], None),
    ("tid", ["-t", "{sleeper}", "-I", "100", "--interval-count", "1", "-e", "task-clock,cs"], None),
]


def cgroup2_mount():
    """Where the cgroup2 file system is mounted (perf's -G names are relative to it), or None."""
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return fields[1]
    return None

import json


def fields_equal(a, b, sep):
    """A CSV line (-x SEP) or a JSON line (-j): the same fields, equal where they are not numbers."""
    if a.startswith("{") and b.startswith("{"):
        try:
            ja, jb = json.loads(a), json.loads(b)
        except ValueError:
            return False
        if list(ja) != list(jb):
            return False
        # a rate's unit steps with its magnitude (K/sec from 1000 a second), which is the run's
        return all(isinstance(ja[k], (int, float)) or NUM.match(str(ja[k])) and NUM.match(str(jb[k]))
                   or RATE.match(str(ja[k])) and RATE.match(str(jb[k])) or ja[k] == jb[k] for k in ja)
    fa, fb = a.split(sep), b.split(sep)
    return len(fa) == len(fb) and all(x == y or (NUM.match(x) and NUM.match(y)) or (RATE.match(x) and RATE.match(y))
                                      for x, y in zip(fa, fb))


RATE = re.compile(r"^[KMG]?/sec$")  # perf's rate steps: the unit follows the magnitude


def tokens(line):
    out = []
    for m in re.finditer(r"\S+", line):
        t = m.group(0)
        if RATE.match(t):
            t = "/sec"
        if NUM.match(t):
            out.append(("num", m.end(), None))
        else:
            out.append(("word", m.start(), t))
    return out


def run(cmd, stop_after=None):
    """Exit status, stderr and stdout, and the CLOCK_MONOTONIC seconds around the run. With
    `stop_after`, SIGINT once that line is on stderr (at most 60 s)."""
    start = time.monotonic()
    if stop_after is None:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        return p.returncode, p.stderr + p.stdout, time.monotonic() - start
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    head = ""
    while stop_after not in head.splitlines() and time.monotonic() - start < 60:
        if select.select([p.stderr], [], [], 1)[0]:
            line = p.stderr.readline()
            if not line:
                break
            head += line
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return p.returncode, head + err + out, time.monotonic() - start


def lines_of(text, perfspec):
    out = []
    for line in text.splitlines():
        # perf prints a NULL unit as "(null)" (docs/perf-compatibility.md)
        line = line.replace('"metric-unit" : "(null)"', '"metric-unit" : ""')
        if line.startswith(("Using CPUID", "Control descriptor", "WARNING")):
            continue
        out.append(line)
    if perfspec:
        # perfspec's reasons for what was not counted follow the footer, by design.
        ends = [i for i, l in enumerate(out) if re.search(r"seconds (time elapsed|user|sys)", l)]
        if ends:
            out = out[:ends[-1] + 1]
    # perfspec's reasons follow the footer; drop trailing blank lines on both sides
    while out and not out[-1].strip():
        out.pop()
    return out


def cpus_counted(argv):
    """How many CPUs a case counts on: -C's list, or every online CPU."""
    if "-C" in argv:
        text = argv[argv.index("-C") + 1]
    else:
        with open("/sys/devices/system/cpu/online") as f:
            text = f.read().strip()
    n = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def cpu_clock_problems(tool, lines, wall, argv):
    """task-clock counted on a CPU is the time it was enabled there (ctx->time from sched-in to
    sched-out; software events are never multiplexed), so an aggregate of n CPUs counts n times the
    time its counters were enabled. What each tool's accounting makes of that, exactly:
      - perfspec enables before it starts the command and disables after it has reaped it, and its
        elapsed time starts before the enable and ends after the disable: n * S <= task-clock <=
        n * elapsed, for a command `sleep S`;
      - perf opens its counters and closes them within its own run: task-clock <= n * the wall time
        measured around it. (perf starts the command before it enables, and reads its elapsed time
        after enabling and after disabling: neither of its own figures bounds the count exactly.)
    The kernel's clock and CLOCK_MONOTONIC may run apart by NTP's 500 ppm at most (1e-3 here), and the
    table shows hundredths of a millisecond."""
    sleep = float(argv[argv.index("sleep") + 1])
    elapsed = [float(m.group(1)) for l in lines for m in [re.match(r"^ +([0-9.]+) seconds time elapsed$", l)] if m]
    all_cpus = cpus_counted(argv)
    problems, seen = [], 0
    for line in lines:
        # the aggregate's label and CPU count (--per-*), a CPU (-A), or the whole (no label)
        m = re.match(r"^(?:(CPU\d+)|\S+ +(\d+))? +([0-9][0-9.,]*) msec task-clock\b", line)
        if not m:
            continue
        seen += 1
        n = 1 if m.group(1) else int(m.group(2)) if m.group(2) else all_cpus
        ms = float(m.group(3).replace(",", ""))
        low, high = 0.0, n * wall * 1e3
        if tool == "perfspec":
            if len(elapsed) != 1:
                return [f"perfspec: no single elapsed time in {lines!r}"]
            low, high = n * sleep * 1e3, n * elapsed[0] * 1e3
        if not low * (1 - 1e-3) - 0.01 <= ms <= high * (1 + 1e-3) + 0.01:
            problems.append(f"{tool}: {ms} msec task-clock on {n} CPU(s), not within [{low:.2f}, {high:.2f}]: {line!r}")
    if not seen:
        problems.append(f"{tool}: no task-clock line")
    return problems


NOISE = re.compile(r"  \( \+- *[0-9.]+% \)$")


def compare(name, perf_lines, ours, sep):
    problems = []
    # -r: a variation of exactly 0 is printed by neither tool, so whether a line has one is chance;
    # its layout is checked exactly by unit.stat and tests/cli/run.sh.
    perf_lines = [NOISE.sub("", l).rstrip() if NOISE.search(l) else l for l in perf_lines]
    ours = [NOISE.sub("", l).rstrip() if NOISE.search(l) else l for l in ours]
    if len(perf_lines) != len(ours):
        problems.append(f"{len(perf_lines)} lines from perf, {len(ours)} from perfspec")
    for i, (a, b) in enumerate(zip(perf_lines, ours)):
        if (sep is not None or a.startswith("{")) and fields_equal(a, b, sep or ","):
            continue
        ta, tb = tokens(a), tokens(b)
        if "+-" in a and "seconds time elapsed" in a:
            # -r: perf's precision follows the deviation's magnitude, so only the words must agree
            ta = [(k, 0, w) for k, _, w in ta]
            tb = [(k, 0, w) for k, _, w in tb]
        if ta != tb:
            if [k for k, _, _ in ta] == [k for k, _, _ in tb] and all(
                    x[0] == "num" or x[2] == y[2] for x, y in zip(ta, tb)) and all(
                    x[0] == "word" or abs(x[1] - y[1]) <= 0 for x, y in zip(ta, tb)):
                continue
            problems.append(f"line {i + 1}:\n      perf:     {a!r}\n      perfspec: {b!r}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--perf", default=os.path.join(SHARED, "tools", "perf-current"))
    ap.add_argument("--only")
    args = ap.parse_args()
    # Both in the C locale: perf stat groups a count's digits and writes a float's decimal point as the
    # locale says (setlocale(LC_ALL, "")), which perfspec does not (docs/perf-compatibility.md).
    os.environ["LC_ALL"] = "C"
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    if os.geteuid() != 0 or not os.path.exists(args.perf) or not os.access(os.path.join(root, "usr/bin/perf"), os.X_OK):
        # Making the chroot takes minutes and the network: a test does not do it behind one's back.
        print(f"perf_side_by_side: perf 6.12 needs root and its chroot at {root} "
              "(make it with ../shared/tools/perf-current --version): skipped")
        return 77
    status, text, _ = run([args.perf, "--version"])
    if status != 0:
        print("perf_side_by_side: perf 6.12 cannot run here: skipped\n" + text)
        return 77
    failed = 0
    sleeper = subprocess.Popen(["sleep", "600"])
    # -p and -t count it from its nanosleep on, where it does not run: <not counted> in both tools
    # (counted from before, its exec's time would fall in whichever tool's interval it falls).
    for _ in range(300):
        if asleep(sleeper.pid):
            break
        time.sleep(0.1)
    else:
        print(f"perf_side_by_side: sleep {sleeper.pid} not asleep after 30 s")
        sleeper.kill()
        return 1
    mount = cgroup2_mount()
    cgroup = "perfspec-side-by-side-%d" % os.getpid()
    if mount:
        os.makedirs(os.path.join(mount, cgroup), exist_ok=True)
    try:
        failed = compare_all(args, {"{sleeper}": str(sleeper.pid), "{cgroup}": cgroup}, mount is not None)
    finally:
        sleeper.kill()
        sleeper.wait()
        if mount:
            os.rmdir(os.path.join(mount, cgroup))
    return 1 if failed else 0


def asleep(pid):
    """Whether `pid` is a sleep(1) in its nanosleep: comm sleep, state S, and the kernel's wait channel
    a nanosleep where it names one."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read().strip()
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read().strip()
    except OSError:
        return False
    return comm == "sleep" and state == "S" and ("nanosleep" in wchan or wchan in ("", "0"))


def compare_all(args, placeholders, have_cgroup2):
    failed = 0
    for name, argv, clock in CASES:
        if args.only and name != args.only:
            continue
        if "{cgroup}" in argv and not have_cgroup2:
            print(f"skip   {name}: no cgroup2 file system is mounted")
            continue
        argv = [placeholders.get(a, a) for a in argv]
        sep = argv[argv.index("-x") + 1] if "-x" in argv else None
        stop = STOP_WHEN_ENABLED if clock == STOP_WHEN_ENABLED else None
        _, perf_text, perf_wall = run([args.perf, "stat"] + argv, stop)
        _, ours_text, ours_wall = run([args.perfspec, "stat"] + argv, stop)
        perf_lines, ours = lines_of(perf_text, False), lines_of(ours_text, True)
        problems = compare(name, perf_lines, ours, sep)
        if clock == CPU_CLOCK:
            problems += cpu_clock_problems("perf", perf_lines, perf_wall, argv)
            problems += cpu_clock_problems("perfspec", ours, ours_wall, argv)
        if problems:
            failed += 1
            print(f"DIFFER {name}: perfspec stat {' '.join(argv)}")
            for p in problems[:8]:
                print("    " + p)
        else:
            print(f"same   {name}")
    print(f"{len(CASES) - failed if not args.only else 1 - failed} cases agree, {failed} differ")
    return failed


if __name__ == "__main__":
    sys.exit(main())
