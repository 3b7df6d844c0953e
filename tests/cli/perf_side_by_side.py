#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf stat 6.12 and perfspec stat side by side: the same command lines, compared line by line.

usage: perf_side_by_side.py --perfspec BIN [--perf PERF-CURRENT] [--only NAME]

For each case both tools run the same `stat` arguments (perf through ../shared/tools/perf-current,
a perf 6.12 chroot). Their outputs are compared:
  - layout: every line is cut into tokens; a word must be the same word at the same column, a
    number must end at the same column (counts are right-aligned, so their width may differ);
  - numbers that do not depend on the run (CPUs summed per aggregate, event order, units, metric
    units) exactly; counts within a tolerance (the `numbers` of a case: a token's ratio to perf's).
Lines that both tools print only on some runs (perf's "Events disabled" on stderr) are not compared.
Exit status 0 when every case agrees, 1 otherwise, 77 when perf 6.12 cannot run here (not root, or
the chroot cannot be made).
"""
import argparse, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))

NUM = re.compile(r"^[+-]?[0-9][0-9.,]*%?$")

# name, stat arguments, {event: tolerance ratio} for the counts compared (others: layout only)
CASES = [
    ("default-events", ["-e", "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses", "true"], {}),
    ("command", ["-e", "task-clock,page-faults", "--", "sleep", "0.1"], {}),
    # task-clock varies from run to run; a count that does not (page-faults can be the same three
    # times) has no variation to print, in either tool.
    ("repeat", ["-r", "3", "-e", "task-clock", "--", "sleep", "0.05"], {}),
    ("system-wide", ["-a", "-e", "task-clock,cs", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("no-aggr", ["-a", "-A", "-e", "task-clock,cs", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("per-core", ["-a", "--per-core", "-e", "task-clock", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("per-die", ["-a", "--per-die", "-e", "task-clock,cs", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("per-socket", ["-a", "--per-socket", "-e", "task-clock,cs", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("per-node", ["-a", "--per-node", "-e", "task-clock", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("cpus", ["-C", "0", "-e", "task-clock", "--", "sleep", "0.2"], {"task-clock": 0.2}),
    ("interval", ["-I", "100", "-a", "-e", "task-clock", "--", "sleep", "0.25"], {}),
    ("interval-per-socket", ["-I", "100", "-a", "--per-socket", "-e", "cs", "--", "sleep", "0.25"], {}),
    ("tracepoint", ["-a", "-e", "sched:sched_switch,task-clock", "--", "sleep", "0.2"], {}),
    ("csv", ["-x", ",", "-e", "task-clock,cs,cycles", "true"], {}),
    ("csv-no-aggr", ["-x", ";", "-a", "-A", "-e", "task-clock,cs", "--", "sleep", "0.1"], {}),
    ("csv-repeat", ["-x", ",", "-r", "2", "-e", "task-clock", "true"], {}),
    ("json", ["-j", "-e", "task-clock,cs,cycles", "true"], {}),
    ("json-per-socket", ["-j", "-a", "--per-socket", "-e", "task-clock", "--", "sleep", "0.1"], {}),
    ("null", ["--null", "--", "sleep", "0.1"], {}),
    ("all-user", ["--all-user", "-e", "task-clock,cs", "true"], {}),
    ("breakpoint", ["-e", "mem:0x1000:rw,task-clock", "true"], {}),
    ("delay", ["-D", "50", "-e", "task-clock", "--", "sleep", "0.2"], {}),
    ("interval-count", ["-I", "100", "--interval-count", "2", "-a", "-e", "cs"], {}),
    # --metric-only over software events: perf shows no figure of theirs in a column (not CPUs
    # utilized, not the rates), so what is compared is where the headers and lines stand.
    ("metric-only", ["--metric-only", "-e", "task-clock,page-faults", "true"], {}),
    ("metric-only-csv", ["-x", ",", "--metric-only", "-e", "task-clock", "true"], {}),
    ("metric-only-json", ["-j", "--metric-only", "-e", "task-clock", "true"], {}),
    ("metric-only-no-aggr", ["--metric-only", "-a", "-A", "-e", "task-clock", "true"], {}),
    ("metric-only-per-socket", ["--metric-only", "-a", "--per-socket", "-e", "task-clock", "true"], {}),
    ("metric-only-interval", ["--metric-only", "-I", "100", "-a", "--per-core", "-e", "task-clock", "--", "sleep", "0.25"], {}),
    # {cgroup}: a cgroup the harness makes in the cgroup2 file system; {sleeper}: a process it starts.
    ("cgroup", ["-a", "-e", "task-clock,cs", "-G", "{cgroup}", "--", "sleep", "0.1"], {}),
    ("per-thread", ["--per-thread", "-p", "{sleeper}", "-I", "100", "--interval-count", "1", "-e", "task-clock"], {}),
    ("tid", ["-t", "{sleeper}", "-I", "100", "--interval-count", "1", "-e", "task-clock,cs"], {}),
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
        return all(isinstance(ja[k], (int, float)) or NUM.match(str(ja[k])) and NUM.match(str(jb[k]))
                   or ja[k] == jb[k] for k in ja)
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


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    return p.returncode, p.stderr + p.stdout


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


def counts_of(lines):
    """event -> list of counts, from table lines (`VALUE [unit] EVENT`)."""
    out = {}
    for line in lines:
        m = re.match(r"^(?:\S+\s+(?:\d+\s+)?)?\s*([0-9][0-9.,]*)\s+(?:msec\s+)?(\S+)", line.strip())
        if m:
            try:
                out.setdefault(m.group(2), []).append(float(m.group(1).replace(",", "")))
            except ValueError:
                pass
    return out


NOISE = re.compile(r"  \( \+- *[0-9.]+% \)$")


def compare(name, perf_lines, ours, numbers, sep):
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
    pc, oc = counts_of(perf_lines), counts_of(ours)
    for event, tol in numbers.items():
        for x, y in zip(pc.get(event, []), oc.get(event, [])):
            if x and abs(y / x - 1) > tol:
                problems.append(f"{event}: perf {x}, perfspec {y} (tolerance {tol:.0%})")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--perf", default=os.path.join(SHARED, "tools", "perf-current"))
    ap.add_argument("--only")
    args = ap.parse_args()
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    if os.geteuid() != 0 or not os.path.exists(args.perf) or not os.access(os.path.join(root, "usr/bin/perf"), os.X_OK):
        # Making the chroot takes minutes and the network: a test does not do it behind one's back.
        print(f"perf_side_by_side: perf 6.12 needs root and its chroot at {root} "
              "(make it with ../shared/tools/perf-current --version): skipped")
        return 77
    status, text = run([args.perf, "--version"])
    if status != 0:
        print("perf_side_by_side: perf 6.12 cannot run here: skipped\n" + text)
        return 77
    failed = 0
    sleeper = subprocess.Popen(["sleep", "600"])
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


def compare_all(args, placeholders, have_cgroup2):
    failed = 0
    for name, argv, numbers in CASES:
        if args.only and name != args.only:
            continue
        if "{cgroup}" in argv and not have_cgroup2:
            print(f"skip   {name}: no cgroup2 file system is mounted")
            continue
        argv = [placeholders.get(a, a) for a in argv]
        sep = argv[argv.index("-x") + 1] if "-x" in argv else None
        # Timing decides some lines (how many -I intervals fit, a rate's K/M step, a count's
        # tolerance on a loaded machine): a case agrees when one of three tries does.
        for _ in range(3):
            _, perf_text = run([args.perf, "stat"] + argv)
            _, ours_text = run([args.perfspec, "stat"] + argv)
            problems = compare(name, lines_of(perf_text, False), lines_of(ours_text, True), numbers, sep)
            if not problems:
                break
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
