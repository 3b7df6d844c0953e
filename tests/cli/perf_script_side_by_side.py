#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfspec script against perf 6.12's perf script, on files perf 6.12 records here and now.

Each case records a workload with `perf record` (perf-current, in its chroot), then prints the file with
`perf script -F FIELDS` and with `perfspec script -F FIELDS` and compares the two outputs byte for byte:
samples only (perf's default) and every record (perf's --show-*-events flags against perfspec's
default). For recordings of sched:sched_switch, the "fields" of perfspec's JSON samples must also be
what perf's trace text says (prev_comm, prev_pid, ... next_prio, sample by sample). Exit status 0 when
all agree, 1 when one differs, 77 when perf 6.12 cannot run here.

usage: perf_script_side_by_side.py --perfspec build/perfspec [--perf ../shared/tools/perf-current]
"""
import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHOW = ["--show-task-events", "--show-mmap-events", "--show-switch-events", "--show-namespace-events",
        "--show-lost-events", "--show-bpf-events", "--show-cgroup-events", "--show-text-poke-events"]

# name, perf record arguments (before the workload), workload
RECORDINGS = [
    ("two-events-callchain", ["-e", "task-clock,page-faults", "-g"], ["ls", "-R", "/usr/share/perl5"]),
    ("frequency", ["-e", "task-clock", "-F", "2000"], ["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"]),
    ("addr-period-1", ["-d", "-e", "page-faults", "-c", "1"], ["ls", "/"]),
    ("system-wide", ["-a", "-e", "cpu-clock", "-c", "100000"], ["sleep", "0.1"]),
    ("group-read", ["-e", "{task-clock,page-faults}:S"], ["ls", "-R", "/usr/share/perl5"]),
    ("tracepoints", ["-a", "-e", "sched:sched_switch,sched:sched_process_exec,sched:sched_process_exit"],
     ["sh", "-c", "ls / >/dev/null; sleep 0.05"]),
    ("inherit-fork", ["-e", "page-faults", "-c", "10"], ["sh", "-c", "ls / >/dev/null; ls /usr >/dev/null"]),
    ("switch-events", ["--switch-events", "-e", "task-clock"], ["sleep", "0.02"]),
    ("pipe", ["-e", "task-clock", "-c", "200000", "-o", "-"], ["ls", "-R", "/usr/share/perl5"]),
    ("sched-switch", ["-a", "-e", "sched:sched_switch"], ["sleep", "0.05"]),
    ("tracepoints-pipe", ["-a", "-e", "sched:sched_switch,sched:sched_process_exec", "-o", "-"],
     ["sh", "-c", "ls / >/dev/null; sleep 0.02"]),
]
FIELDS = ["comm,tid,time,event,ip", "comm,pid,tid,time,period,event", "comm,tid,cpu,time,event",
          "comm,pid,tid,cpu,time,period,event,addr,ip", "tid,time"]
# The recordings of tracepoints also print their payloads (the trace field), and perf's default fields
# (None: no -F), which for tracepoint events include the trace.
TRACE_FIELDS = ["comm,tid,cpu,time,event,trace", "trace", "comm,pid,tid,time,period,event,trace,ip", None]


def run(cmd, stdin=None):
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


SWITCH = re.compile(rb"^ *(\d+\.\d+): prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=\S+ ==> "
                    rb"next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)$")


def switch_fields(perf_out, perfspec_json):
    """sched_switch samples as (time, prev_comm, prev_pid, prev_prio, next_comm, next_pid, next_prio):
    from perf script --ns -F time,trace, and from perfspec script --format json's "fields"."""
    theirs = []
    for line in perf_out.splitlines():
        if b": prev_comm=" not in line:
            continue  # another tracepoint's
        m = SWITCH.match(line)
        if not m:
            raise ValueError(f"perf script printed {line!r}")
        t, pc, pp, ppr, nc, np_, npr = m.groups()
        theirs.append((t.decode(), pc.decode(errors="replace"), int(pp), int(ppr), nc.decode(errors="replace"),
                       int(np_), int(npr)))
    ours = []
    for line in perfspec_json.splitlines():
        r = json.loads(line)
        if r.get("type") != "SAMPLE" or r.get("event") != "sched:sched_switch":
            continue
        f = r["fields"]
        ours.append((f"{r['time'] // 10**9}.{r['time'] % 10**9:09d}", f["prev_comm"], f["prev_pid"], f["prev_prio"],
                     f["next_comm"], f["next_pid"], f["next_prio"]))
    return sorted(theirs), sorted(ours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--perf", default=os.path.join(HERE, "..", "..", "..", "shared", "tools", "perf-current"))
    args = ap.parse_args()
    perfspec = os.path.abspath(args.perfspec)
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    if os.geteuid() != 0 or not os.access(os.path.join(root, "usr/bin/perf"), os.X_OK):
        print("perf_script_side_by_side: perf 6.12 is not installed (needs root and " + root + "): skipped")
        return 77
    work = tempfile.mkdtemp(prefix="perfspec-script-")
    inside = tempfile.mkdtemp(prefix="perfspec-script-", dir=os.path.join(root, "tmp"))
    chroot_dir = "/tmp/" + os.path.basename(inside)
    failed = compared = 0
    try:
        for name, rec, workload in RECORDINGS:
            pipe = "-o" in rec
            host = os.path.join(work, name + ".data")
            if pipe:
                status, out, err = run([args.perf, "record", "-q"] + rec + ["--"] + workload)
                with open(host, "wb") as f:
                    f.write(out)
            else:
                status, out, err = run([args.perf, "record", "-q", "-o", chroot_dir + "/" + name + ".data"] + rec +
                                       ["--"] + workload)
                if status == 0:
                    shutil.copy(os.path.join(inside, name + ".data"), host)
            if status != 0:
                print(f"FAIL {name}: perf record failed ({status}): {err.decode(errors='replace')[-300:]}")
                failed += 1
                continue
            if "sched:sched_switch" in " ".join(rec):
                # perfspec's JSON fields of sched_switch samples are what perf's trace text says
                pcmd = [args.perf, "script", "--ns", "-F", "time,trace"]
                pcmd, pin = (pcmd + ["-i", "-"], host) if pipe else (pcmd + ["-i", chroot_dir + "/" + name + ".data"], None)
                pst, pout, perr = run(pcmd, pin)
                sst, sout, serr = run([perfspec, "script", "--format", "json", "-i", host])
                compared += 1
                try:
                    theirs, ours = switch_fields(pout, sout)
                except (ValueError, KeyError) as e:
                    theirs, ours = None, str(e)
                if pst != 0 or sst != 0 or not theirs or theirs != ours:
                    print(f"FAIL {name}: JSON fields of sched_switch differ from perf's trace text "
                          f"({len(theirs or [])} samples from perf): {str(ours)[:300]}")
                    failed += 1
            for fields in FIELDS + (TRACE_FIELDS if "sched:" in " ".join(rec) else []):
                for every in (False, True):
                    if pipe:
                        pcmd, pin = [args.perf, "script", "-i", "-"], host
                    else:
                        pcmd, pin = [args.perf, "script", "-i", chroot_dir + "/" + name + ".data"], None
                    f = ["-F", fields] if fields else []
                    pcmd += (SHOW if every else []) + f
                    scmd = [perfspec, "script", "-i", host] + f + ([] if every else ["--samples"])
                    pst, pout, perr = run(pcmd, pin)
                    sst, sout, serr = run(scmd)
                    if every:
                        # perf script has no way to show THROTTLE/UNTHROTTLE records; perfspec shows
                        # them (docs/perf-compatibility.md): they are left out of the comparison
                        sout = b"".join(line for line in sout.splitlines(keepends=True)
                                        if b": PERF_RECORD_THROTTLE " not in line and
                                        b": PERF_RECORD_UNTHROTTLE " not in line)
                    compared += 1
                    label = f"{name} -F {fields or '(default)'}{' (every record)' if every else ''}"
                    if (pst == 0) != (sst == 0):
                        # perf refuses a field the samples lack with a message perfspec repeats
                        print(f"FAIL {label}: perf status {pst}, perfspec {sst}\n  perf: {perr.decode(errors='replace')[:300]}"
                              f"\n  perfspec: {serr.decode(errors='replace')[:300]}")
                        failed += 1
                    elif pout != sout:
                        diff = difflib.unified_diff(pout.decode(errors="replace").splitlines(),
                                                    sout.decode(errors="replace").splitlines(), "perf", "perfspec",
                                                    lineterm="", n=1)
                        print(f"FAIL {label}:")
                        for i, line in enumerate(diff):
                            if i > 30:
                                break
                            print("  " + line)
                        failed += 1
                    elif pst != 0 and perr.decode().strip().splitlines()[0] not in serr.decode():
                        print(f"FAIL {label}: perfspec's message is not perf's: {serr.decode()!r} vs {perr.decode()!r}")
                        failed += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(inside, ignore_errors=True)
    print(f"perf_script_side_by_side: {compared - failed}/{compared} agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
