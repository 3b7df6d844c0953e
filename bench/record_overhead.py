#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfspec record against perf 6.12's perf record on one fixed workload, sampled at 10 kHz, in one run.

The workload (tests/workload/workload.c `loop N`) does a fixed amount of work and prints the CPU time it
took. Run alone, under `perfspec record` and under `perf record` (perf 6.12 from its chroot, the
workload inside it for both), each RUNS times, alternating. Reported, as medians:
  - the workload's own CPU time: what sampling costs the program measured (the kernel's share);
  - the recorder's own CPU time: all CPU of the run (wait4's rusage) less the workload's;
  - samples written, and records lost (LOST, LOST_SAMPLES) as perfspec script --summary reads each file.
usage: bench/record_overhead.py [--perfspec build/perfspec] [--loops 20000] [--runs 7] [--freq 10000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    m = re.search(r"cpu_ms ([0-9.]+) ([0-9.]+)", err)
    if not m:
        sys.exit(f"no cpu_ms from {' '.join(cmd)}: {err[-500:]}")
    workload = float(m.group(1)) + float(m.group(2))
    total = (ru.ru_utime + ru.ru_stime) * 1000
    return workload, total - workload


def summary(perfspec, path):
    out = subprocess.run([perfspec, "script", "--summary", "--format", "json", "-i", path],
                         stdout=subprocess.PIPE, check=True).stdout
    import json
    j = json.loads(out)
    return j["records"].get("SAMPLE", 0), j["lost"], j["lost_samples"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfspec", default=os.path.join(HERE, "..", "build", "perfspec"))
    ap.add_argument("--perf", default=os.path.join(HERE, "..", "..", "shared", "tools", "perf-current"))
    ap.add_argument("--loops", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--freq", type=int, default=10000)
    a = ap.parse_args()
    perfspec = os.path.abspath(a.perfspec)
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    exe = os.path.join(root, "tmp", "perfspec-bench-workload")
    subprocess.run(["cc", "-O0", "-fno-omit-frame-pointer", "-o", exe,
                    os.path.join(HERE, "..", "tests", "workload", "workload.c")], check=True)
    inner = ["/tmp/perfspec-bench-workload", "loop", str(a.loops)]
    ps_file, perf_file = "/tmp/perfspec-bench-ps.data", "/tmp/perfspec-bench-perf.data"
    cmds = {
        "workload alone": ["chroot", root] + inner,
        "perfspec record": [perfspec, "record", "-q", "-e", "task-clock", "-F", str(a.freq), "-o", ps_file, "--",
                            "chroot", root] + inner,
        "perf record": [a.perf, "record", "-q", "-e", "task-clock", "-F", str(a.freq), "-o", perf_file, "--"] + inner,
    }
    res = {k: [] for k in cmds}
    for _ in range(a.runs):
        for k, c in cmds.items():
            res[k].append(run(c))
    base = statistics.median(w for w, _ in res["workload alone"])
    print(f"workload loop {a.loops}, task-clock at {a.freq} Hz, {a.runs} runs each, medians:")
    print(f"  workload alone: {base:.0f} ms CPU")
    files = {"perfspec record": ps_file, "perf record": os.path.join(root, perf_file.lstrip("/"))}
    own = {}
    for k in ("perfspec record", "perf record"):
        w = statistics.median(x for x, _ in res[k])
        own[k] = statistics.median(y for _, y in res[k])
        samples, lost, lost_samples = summary(perfspec, files[k])
        print(f"  {k}: workload {w:.0f} ms CPU ({w - base:+.0f} ms), the recorder's own {own[k]:.0f} ms CPU; "
              f"{samples} samples, lost {lost} records and {lost_samples} samples")
    print(f"  recorder CPU, perf / perfspec: {own['perf record'] / max(own['perfspec record'], 0.1):.1f}x")


if __name__ == "__main__":
    main()
