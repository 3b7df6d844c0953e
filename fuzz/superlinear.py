#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time perfspec on super-linear-prone inputs (issue 7): 100 KB strings, 10,000 terms, nested and
unbalanced braces, 1,000-event groups, pathological globs against many PMUs and tracepoints.

    python3 fuzz/superlinear.py [--perfspec build/perfspec] [--events-dir ../shared/pmu-events/x86]
                                [--slow-ms 100] [--repeat 3]

Each case runs `perfspec resolve` (best of --repeat wall times); a case is SLOW above --slow-ms and a
CRASH when it exits other than 0 or 1 (1 is a diagnosed error). A synthetic sysfs tree with 1,000
uncore PMUs and 10,000 tracepoints is generated under $TMPDIR for the "many" cases."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KB100 = 100 * 1024


def many_tree(base):
    """intel_skx plus uncore_cha_4..1003 and 100 systems x 100 tracepoints."""
    root = os.path.join(base, "many")
    shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "intel_skx"), root, symlinks=True)
    dev = os.path.join(root, "bus", "event_source", "devices")
    src = os.path.join(dev, "uncore_cha_0")
    for i in range(4, 1004):
        d = os.path.join(dev, f"uncore_cha_{i}")
        shutil.copytree(src, d)
        with open(os.path.join(d, "type"), "w") as f:
            f.write(f"{100 + i}\n")
    ev = os.path.join(root, "kernel", "tracing", "events")
    n = 1000
    for s in range(100):
        for e in range(100):
            d = os.path.join(ev, f"sys{s:02d}_aaaaaaaaaaaaaaaaaaaa", f"event_{e:02d}_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
            os.makedirs(d)
            with open(os.path.join(d, "id"), "w") as f:
                f.write(f"{n}\n")
            n += 1
    return root


def cases(events_dir):
    skx = os.path.join(ROOT, "tests", "fixtures", "intel_skx")
    adl = os.path.join(ROOT, "tests", "fixtures", "hybrid_adl")
    tables = ["--events-dir", events_dir, "--cpuid", "GenuineIntel-6-55-4"] if events_dir else None
    glob = "*?" * 60
    c = [
        ("100 KB unknown name", skx, None, "a" * KB100),
        ("100 KB unknown name, with tables", skx, tables, "a" * KB100),
        ("100 KB unknown PMU", skx, None, "a" * KB100 + "/event=1/"),
        ("100 KB unknown term", skx, None, "cpu/" + "a" * KB100 + "=1/"),
        ("100 KB unknown event= value, with tables", skx, tables, "cpu/event=" + "a" * KB100 + "/"),
        ("100 KB quoted name= value", skx, None, "cpu/event=1,name='" + "a" * KB100 + "'/"),
        ("100 KB raw number", skx, None, "r" + "f" * KB100),
        ("100 KB decimal config", skx, None, "cpu/config=" + "9" * KB100 + "/"),
        ("100 KB of blanks around cycles", skx, None, " " * (KB100 // 2) + "cycles" + "\t" * (KB100 // 2)),
        ("100 KB unknown tracepoint", skx, None, "sched:" + "a" * KB100),
        ("100 KB modifiers", skx, None, "cycles:" + "u" * KB100),
        ("100 KB of commas", skx, None, "cycles" + "," * KB100),
        ("10,000 events (cycles,...)", skx, None, ",".join(["cycles"] * 10000)),
        ("10,000 events (cpu/event=0x3c/)", skx, None, ",".join(["cpu/event=0x3c/"] * 6000)),
        ("10,000 terms in one event", skx, None, "cpu/" + ",".join(["umask=0x1"] * 10000) + "/"),
        ("10,000 terms (inv, flag)", skx, None, "cpu/event=1," + ",".join(["inv"] * 10000) + "/"),
        ("10,000 unknown terms", skx, None, "cpu/" + ",".join(["zz"] * 10000) + "/"),
        ("10,000 driver terms", skx, None, "cpu/event=1," + ",".join(["@cfg=1"] * 10000) + "/"),
        ("10,000 alias terms (mem-loads,ldlat)", skx, None, "cpu/mem-loads," + ",".join(["ldlat=3"] * 10000) + "/"),
        ("nested braces x10,000", skx, None, "{" * 10000 + "cycles" + "}" * 10000),
        ("unbalanced '{' x50,000", skx, None, "{" * 50000),
        ("unbalanced '}' x50,000", skx, None, "}" * 50000),
        ("'{cycles,' x10,000", skx, None, "{cycles," * 10000),
        ("'{cycles},' x10,000 groups", skx, None, ",".join(["{cycles}"] * 10000)),
        ("1,000-event group", skx, None, "{" + ",".join(["cycles"] * 1000) + "}"),
        ("1,000-event group :W", skx, None, "{" + ",".join(["cpu/event=0x3c/"] * 1000) + "}:W"),
        ("1,000-event group, hybrid (split)", adl, None, "{" + ",".join(["cycles", "instructions"] * 500) + "}"),
        ("1,000-event group of uncore wildcards", skx, None, "{" + ",".join(["uncore_imc/cas_count_read/"] * 1000) + "}"),
        ("1,000-event group alternating PMUs", skx, None,
         "{" + ",".join(["cycles", "uncore_imc_0/clockticks/", "uncore_cha_0/event=1/", "power/energy-pkg/"] * 250) + "}"),
        ("glob PMU '*?'x60", skx, None, glob + "/event=1/"),
        ("glob tracepoint '*?'x60:'*?'x60", skx, None, glob + ":" + glob),
        ("glob '*a'x30+'b' tracepoint", skx, None, "*a" * 30 + "b:" + "*a" * 30 + "b"),
        ("1,000 glob PMU events", skx, None, ",".join([glob[:40] + "/event=1/"] * 1000)),
    ]
    return c


def many_cases(root):
    glob = "*?" * 60
    return [
        ("[many] uncore_cha/event=1/ (1,004 PMUs)", root, None, "uncore_cha/event=1/"),
        ("[many] glob PMU '*?'x60 (1,030 PMUs)", root, None, glob + "/event=1/"),
        ("[many] glob PMU '*a*a..*b' (1,030 PMUs)", root, None, "*a" * 30 + "b/event=1/"),
        ("[many] 100 x uncore_cha/event=1/", root, None, ",".join(["uncore_cha/event=1/"] * 100)),
        ("[many] {uncore_cha/event=1/} (1 group -> 1,004)", root, None, "{uncore_cha/event=1/,cycles}"),
        ("[many] *:* (10,006 tracepoints)", root, None, "*:*"),
        ("[many] tracepoint '*?'x60:'*?'x60", root, None, glob + ":" + glob),
        ("[many] tracepoint '*a'x30+'b' (10,006)", root, None, "*a" * 30 + "b:" + "*a" * 30 + "b"),
        ("[many] tracepoint sys*a*a*a*a*a*a*a*a*a:*a*a*a*a*a*a*a*a*a*a*a*a*b", root, None,
         "sys" + "*a" * 9 + ":" + "*a" * 12 + "*b"),
        ("[many] 100 x '*:*'", root, None, ",".join(["*:*"] * 100)),
        ("[many] unknown name (suggestions)", root, None, "no_such_event_name"),
        ("[many] 100 KB unknown name", root, None, "a" * KB100),
    ]


def run(perfspec, sysfs, extra, text, repeat):
    args = [perfspec, "resolve", "--no-libpfm4", "--sysfs", sysfs] + (extra or []) + ["--", text]
    best, rc, err = None, None, b""
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", b""
        dt = (time.perf_counter() - t0) * 1000
        best = dt if best is None else min(best, dt)
        if rc == "timeout":
            break
    return best, rc, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfspec", default=os.path.join(ROOT, "build", "perfspec"))
    ap.add_argument("--events-dir", default=os.path.join(ROOT, "..", "shared", "pmu-events", "x86"))
    ap.add_argument("--slow-ms", type=float, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-many", action="store_true", help="skip the synthetic 1,000-PMU / 10,000-tracepoint tree")
    a = ap.parse_args()
    events_dir = a.events_dir if os.path.exists(os.path.join(a.events_dir, "mapfile.csv")) else None
    env_cache = tempfile.mkdtemp(prefix="perfspec-superlinear-")
    os.environ["PERFSPEC_CACHE_DIR"] = os.path.join(env_cache, "cache")
    all_cases = [c for c in cases(events_dir) if c[2] is not None or "tables" not in c[0]]
    if not a.no_many:
        all_cases += many_cases(many_tree(env_cache))
    # Warm the table index so that its one-time build is not timed.
    if events_dir:
        run(a.perfspec, all_cases[0][1], ["--events-dir", events_dir, "--cpuid", "GenuineIntel-6-55-4"], "cycles", 1)
    bad = 0
    print(f"{'case':60} {'bytes':>7} {'ms':>9}  result")
    for name, sysfs, extra, text in all_cases:
        ms, rc, err = run(a.perfspec, sysfs, extra, text, a.repeat)
        verdict = "ok" if rc == 0 else "error" if rc == 1 else f"CRASH (exit {rc})"
        if rc not in (0, 1):
            bad += 1
            verdict += ": " + err.decode(errors="replace").strip().splitlines()[-1][:100] if err.strip() else ""
        slow = " SLOW" if ms > a.slow_ms else ""
        if slow:
            bad += 1
        print(f"{name:60} {len(text):7d} {ms:9.1f}  {verdict}{slow}")
        sys.stdout.flush()
    shutil.rmtree(env_cache, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
