#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfspec trace against perf 6.12's perf trace, line by line, on the same program.

The program (tests/cli/trace_program.c) is built static, so that it makes the same system calls inside
perf 6.12's chroot and outside it, and copied to the same path in both (/tmp/perfspec-trace-N/prog).
Each case traces it with perf 6.12 and with perfspec, and compares what both print on stderr once the
figures that differ from run to run are made equal: times and durations, pids, addresses, the blanks
before " = " (their count follows the length of the addresses), and an fd's path (perf reads it from
/proc when it prints, so it comes or not with the timing). Where perfspec differs on purpose
(docs/perf-compatibility.md: write's buffer, getpid's name) perf's text is taken as perfspec prints it
first. For -s and --errno-summary, the tables' rows are compared by name, calls and errors (and the
errno lines whole); their times are the kernel's.

Exit status 0 when every case agrees, 1 when one differs, 77 when perf 6.12 cannot run here.

usage: perf_trace_side_by_side.py --perfspec build/perfspec [--perf ../shared/tools/perf-current]
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name, trace options (before the program)
CASES = [
    ("default", []),
    ("syscall-list", ["-e", "openat,close,read,write"]),
    ("syscall-glob", ["-e", "open*,mmap,munmap"]),
    ("negated-list", ["-e", "!brk,mmap,munmap,mprotect"]),
    ("failure", ["--failure"]),
    ("duration", ["--duration", "4"]),
    ("max-events", ["--max-events", "5"]),
    ("no-comm", ["--no-comm", "-e", "getppid,kill"]),
    ("tracepoint", ["--no-syscalls", "-e", "sched:sched_process_exit"]),
    ("tracepoint-and-syscalls", ["-e", "sched:sched_process_exit", "-e", "nanosleep,clock_nanosleep,exit_group"]),
    ("summary", ["-s"]),
    ("with-summary", ["-S", "-e", "openat,read,close"]),
    ("errno-summary", ["--errno-summary"]),
    ("output-file", ["-o", "OUT"]),
    ("callchain-fp", ["--call-graph", "fp", "-e", "brk,getppid"]),
    # perf 6.12 unwinds a static binary's stack only to its first frame: the first frames are compared
    ("callchain-dwarf-first-frames", ["--max-stack", "4", "-e", "getppid,kill"]),
    ("page-faults", ["-F", "min", "--no-syscalls"]),
    ("page-faults-and-syscalls", ["-F", "all", "-e", "munmap,mmap", "--max-events", "6"]),
]


def run(cmd, timeout=60):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


ADDRESS = re.compile(r"0x[0-9a-f]+")


def normal(line, pid):
    """A trace line with what differs from run to run made equal."""
    line = re.sub(r"^( *[0-9]+\.[0-9]{3}|         \?) \(( *[0-9]+\.[0-9]{3} ms|         )\): ",
                  lambda m: ("T " if "?" not in m.group(1) else "? ") + ("(D): " if "ms" in m.group(2) else "(): "),
                  line)
    # addresses before the pid: an address may hold the pid's digits ("0x7ffe2d4531234")
    line = ADDRESS.sub("ADDR", line)
    line = re.sub(rf"\b{pid}\b", "PID", line)
    line = re.sub(r"getppid\(\)\s+= [0-9]+", "getppid() = PID", line)  # perf's parent or perfspec's
    line = re.sub(r"\b[0-9]{3,7}\b(?= \()", "PID", line)  # pids with their names: "= 123 (prog)"
    line = re.sub(r"<[^>]*>", "", line)  # an fd's path
    line = re.sub(r"/tmp/perf-vdso\.so-\w+", "[vdso]", line)  # perf's name of its copy of the vdso
    line = re.sub(r"\)\s+= ", ") = ", line)
    # perfspec's deliberate differences, perf's text written as perfspec's
    line = re.sub(r"^(.*write\(.*buf: )(?=[,)])", r"\1ADDR", line)
    line = re.sub(r"(getpid\(\) = PID)$", r"\1 (prog)", line)
    return line


def lines_of(text, pid, first_frames=False):
    out = []
    for l in text.splitlines():
        if not l.strip():
            continue
        frame = l.startswith(" " * 39) and not l.startswith(" " * 40)
        if first_frames and frame and out and out[-1].startswith(" " * 39):
            continue  # a callchain's frames after its first
        out.append(normal(l, pid))
    return out


def summary_rows(text):
    """The -s tables: per thread header line and its rows as (name, calls, errors), errno lines whole."""
    out = []
    for l in text.splitlines():
        m = re.match(r"^   (\S+) +([0-9]+) +([0-9]+) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+%$", l)
        if m:
            out.append(("row", m.group(1), m.group(2), m.group(3)))
        elif re.match(r"^ \S+ \([0-9]+\), [0-9]+ events, [0-9.]+%", l):
            out.append(("thread", re.sub(r"\([0-9]+\)", "(PID)", l.split(",")[0]), re.sub(r"[0-9.]+%", "", l.split(",", 1)[1])))
        elif l.startswith("\t\t\t\t"):
            out.append(("errno", l.strip()))
        elif l.strip():
            out.append(("text", l))
    # rows of equal time may come in either order: each thread's rows as a sorted block
    blocks, current = [], []
    for item in out:
        if item[0] == "row" or item[0] == "errno":
            current.append(item)
        else:
            if current:
                blocks.append(("rows", tuple(sorted(current))))
                current = []
            blocks.append(item)
    if current:
        blocks.append(("rows", tuple(sorted(current))))
    return blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--perf", default=os.path.join(HERE, "..", "..", "..", "shared", "tools", "perf-current"))
    args = ap.parse_args()
    perfspec = os.path.abspath(args.perfspec)
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    if os.geteuid() != 0 or not os.access(os.path.join(root, "usr/bin/perf"), os.X_OK):
        print("perf_trace_side_by_side: perf 6.12 is not installed (needs root and " + root + "): skipped")
        return 77
    inside = tempfile.mkdtemp(prefix="perfspec-trace-", dir=os.path.join(root, "tmp"))
    same = "/tmp/" + os.path.basename(inside)  # the program's path in the chroot, and made here too
    os.makedirs(same, exist_ok=True)
    failed = 0
    try:
        prog_in = os.path.join(inside, "prog")
        st, _, err = run(["gcc", "-O1", "-static", "-o", prog_in, os.path.join(HERE, "trace_program.c")])
        if st != 0:
            print("FAIL: the traced program does not build: " + err[-400:])
            return 1
        shutil.copy(prog_in, os.path.join(same, "prog"))
        prog = same + "/prog"
        for name, options in CASES:
            out_file = None
            perf_opts, ours_opts = list(options), list(options)
            if "OUT" in options:
                i = options.index("OUT")
                perf_opts[i] = same + "/perf.out"
                ours_opts[i] = same + "/ours.out"
            # perf 6.12 itself sometimes dies of a signal (seen in a fresh chroot: "assertion failed at
            # util/build-id.c:954", then "stack smashing detected", as it adds the program to its build-id
            # cache): the reference is what failed, so it is run again (its words are shown)
            # Both are pinned to one CPU, and the program with them: perf reads its per-CPU buffers one
            # after another, so a program that moved between CPUs can have its lines out of order there
            pin = ["taskset", "-c", "0"]
            for attempt in range(4):
                pst, pout, perf_text = run(pin + [args.perf, "trace"] + perf_opts + [prog])
                if pst >= 0:
                    break
                print(f"{name}: perf 6.12 died of signal {-pst} (attempt {attempt + 1}): {perf_text[:200]!r}")
            ost, oout, ours_text = run(pin + [perfspec, "trace"] + ours_opts + [prog])
            if "OUT" in options:
                perf_text = open(os.path.join(inside, "perf.out")).read()
                ours_text = open(os.path.join(same, "ours.out")).read()
            if pst != 0 or ost != 0 or pout != oout:
                print(f"FAIL {name}: exit status perf {pst}, perfspec {ost}; standard output "
                      f"{'equal' if pout == oout else 'differs'}\n  perf: {perf_text[-300:]}\n  perfspec: {ours_text[-300:]}")
                failed += 1
                continue
            if "OUT" in options:
                # perf leaves its -o file open in the program it starts (fd 3): the program's next fd is 4
                perf_text = re.sub(r"(fd: |RDONLY\|CLOEXEC\)\s+= )4\b", r"\g<1>3", perf_text)
            ppid = re.search(r"prog/([0-9]+)|([0-9]+) \(prog\)|prog \(([0-9]+)\)", perf_text)
            opid = re.search(r"prog/([0-9]+)|([0-9]+) \(prog\)|prog \(([0-9]+)\)", ours_text)
            if not ppid or not opid:
                print(f"FAIL {name}: no line of the program\n  perf: {perf_text[:300]}\n  perfspec: {ours_text[:300]}")
                failed += 1
                continue
            if "-F" in options:
                # Which pages fault depends on what the page cache holds (fault-around maps a file's
                # pages in batches) and on timing: the lines' form is compared, and the first user fault
                # (the program's first instruction), which both must show as perf does.
                form = re.compile(r"^T \(D\): prog/PID (min|maj)fault \[\S+\] => \S+ \([d?][.k]\)$|^T \(D\): prog/PID \S+\(.*\) = \S+")
                a = lines_of(perf_text, next(g for g in ppid.groups() if g))
                b = lines_of(ours_text, next(g for g in opid.groups() if g))
                start = re.compile(r"minfault \[_start\+ADDR\] => \S+/prog@ADDR \(d\.\)$")
                bad = [l for l in a + b if not form.match(l)]
                if bad or not a or not b or not any(start.search(l) for l in a) or not any(start.search(l) for l in b):
                    print(f"FAIL {name}: lines of another form, or no fault at _start\n  " + "\n  ".join(bad[:5] or b[:5]))
                    failed += 1
                    continue
            elif "-s" in options or "--errno-summary" in options or "-S" in options:
                summary_at = perf_text.find(" Summary of events:")
                ours_at = ours_text.find(" Summary of events:")
                a, b = summary_rows(perf_text[summary_at:]), summary_rows(ours_text[ours_at:])
                head_a = lines_of(perf_text[:summary_at], next(g for g in ppid.groups() if g))
                head_b = lines_of(ours_text[:ours_at], next(g for g in opid.groups() if g))
                if a != b or head_a != head_b or summary_at < 0 or ours_at < 0:
                    print(f"FAIL {name}: the summaries differ\n  perf: {a}\n  perfspec: {b}")
                    failed += 1
                    continue
            else:
                first = "first-frames" in name
                a = lines_of(perf_text, next(g for g in ppid.groups() if g), first)
                b = lines_of(ours_text, next(g for g in opid.groups() if g), first)
                if a != b:
                    print(f"FAIL {name}:")
                    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(a, b, "perf 6.12", "perfspec", lineterm=""))
                    failed += 1
                    continue
            print(f"ok {name}: {len(a)} lines agree")
    finally:
        shutil.rmtree(inside, ignore_errors=True)
        shutil.rmtree(same, ignore_errors=True)
    print(f"perf_trace_side_by_side: {len(CASES) - failed} of {len(CASES)} cases agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
