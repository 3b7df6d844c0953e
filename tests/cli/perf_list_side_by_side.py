#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfspec list -j against perf 6.12's perf list -j, object by object.

On this machine the two documents must be the same bytes. On the fixture machines (tests/fixtures,
with the CPU id of their model, perf through --sysfs and PERF_CPUID) the objects must be the same but
for the tracepoints, which perf reads from this host's tracefs whatever --sysfs says (perfspec reads
the fixture's), and, for a fixture without a model, the metrics (perf's come from this host's CPU,
perfspec has none for a tree without a CPU id).

Then every x86 model of the tables (one CPU id each, made from mapfile.csv's patterns): `list -j
metric`'s every (group, metric) pair, MetricExpr as perf's build printed it again (pmu-events/metric.py)
included.

Exit status 0 when all agree, 1 when one differs, 77 when perf 6.12 cannot run here.

usage: perf_list_side_by_side.py --perfspec build/perfspec [--perf ../shared/tools/perf-current]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(SOURCE), "shared")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")
EVENTS = os.path.join(SHARED, "pmu-events", "x86")

# fixture, CPU id of its model ("" for none)
MACHINES = [
    ("intel_skx", "GenuineIntel-6-55-4"),
    ("hybrid_adl", "GenuineIntel-6-97-2"),
    ("intel_spr", "GenuineIntel-6-8F-8"),
    ("intel_mtl", "GenuineIntel-6-AA-4"),
    ("amd_zen3", "AuthenticAMD-25-11-1"),
    ("intel_tgl", "GenuineIntel-6-8C-1"),
    ("pmu_names", ""),
    ("arm_n1", ""),
]


def run(cmd, env=None):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300, env=env)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


# AMD's rows overlap (amdzen2's pattern matches zen1's ids): one id of each model, by hand.
AMD_IDS = {"amdzen1": "AuthenticAMD-23-1-0", "amdzen2": "AuthenticAMD-23-31-0", "amdzen3": "AuthenticAMD-25-1-0",
           "amdzen4": "AuthenticAMD-25-11-0", "amdzen5": "AuthenticAMD-26-2-0"}


def model_ids():
    """(model, a CPU id its mapfile.csv row matches) for each model: each pattern's first choices."""
    with open(os.path.join(EVENTS, "mapfile.csv"), newline="") as f:
        rows = list(csv.reader(f))[1:]
    out = []
    for row in rows:
        pattern, model = row[0], row[2]
        if model in AMD_IDS:
            out.append((model, AMD_IDS[model]))
            continue
        s = re.sub(r"\(([^()|]*)\|[^()]*\)", r"\1", pattern).replace("[[:xdigit:]]+", "0")
        s = re.sub(r"\[([^\]])[^\]]*\]", r"\1", s).replace("(", "").replace(")", "")
        out.append((model, s + "-0" if s.count("-") == 2 else s))
    return out


def compare(name, perf_doc, spec_doc, keep):
    """-> the objects that differ, said."""
    try:
        a = [o for o in json.loads(perf_doc) if keep(o)]
    except ValueError as e:
        return [f"{name}: perf's document is no JSON: {e}"]
    try:
        b = [o for o in json.loads(spec_doc) if keep(o)]
    except ValueError as e:
        return [f"{name}: perfspec's document is no JSON: {e}"]
    problems = []
    if len(a) != len(b):
        problems.append(f"{name}: perf lists {len(a)} objects, perfspec {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        problems.append(f"{name}: object {i}:\n      perf:     {json.dumps(x)[:400]}\n"
                        f"      perfspec: {json.dumps(y)[:400]}")
        if len(problems) > 10:
            break
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--perf", default=os.path.join(SHARED, "tools", "perf-current"))
    args = ap.parse_args()
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    if os.geteuid() != 0 or not os.path.exists(args.perf) or not os.access(os.path.join(root, "usr/bin/perf"), os.X_OK):
        print(f"perf_list_side_by_side: perf 6.12 needs root and its chroot at {root}: skipped")
        return 77
    if not os.path.exists(os.path.join(EVENTS, "mapfile.csv")):
        print(f"perf_list_side_by_side: no tables at {EVENTS}: skipped")
        return 77
    failed = 0
    # This machine: the same tables as perf's (its CPU's model among ../shared's, which are perf 6.12's).
    st, perf_doc, err = run([args.perf, "list", "-j"])
    st2, spec_doc, err2 = run([args.perfspec, "list", "-j", "--events-dir", EVENTS])
    if st != 0 or st2 != 0:
        print(f"this machine: perf status {st}, perfspec status {st2}\n{err[-800:]}{err2[-800:]}")
        failed += 1
    else:
        problems = compare("this machine", perf_doc, spec_doc, lambda o: True)
        if not problems and perf_doc != spec_doc:
            problems.append("this machine: the same objects in other bytes")
        print(f"this machine: {len(json.loads(perf_doc))} objects, "
              f"{'the same' if not problems else 'DIFFERENT'}")
        for p in problems:
            print("  " + p)
        failed += bool(problems)
    for fixture, cpuid in MACHINES:
        tree = os.path.join(FIXTURES, fixture)
        env = dict(os.environ)
        spec_cmd = [args.perfspec, "list", "-j", "--sysfs", tree, "--no-libpfm4", "--events-dir", EVENTS]
        if cpuid:
            env["PERF_CPUID"] = cpuid
            spec_cmd += ["--cpuid", cpuid]
        st, perf_doc, err = run([args.perf, "--sysfs", tree, "list", "-j"], env)
        st2, spec_doc, err2 = run(spec_cmd)
        if st != 0 or st2 != 0:
            print(f"{fixture}: perf status {st}, perfspec status {st2}\n{err[-800:]}{err2[-800:]}")
            failed += 1
            continue

        def keep(o):
            return o.get("EventType") != "Tracepoint event" and (cpuid or "MetricName" not in o)
        problems = compare(fixture, perf_doc, spec_doc, keep)
        count = sum(1 for o in json.loads(perf_doc) if keep(o))
        print(f"{fixture}: {count} objects, {'the same' if not problems else 'DIFFERENT'}")
        for p in problems:
            print("  " + p)
        failed += bool(problems)
    pairs = 0
    for model, cpuid in model_ids():
        st, perf_doc, err = run([args.perf, "list", "-j", "metric"], dict(os.environ, PERF_CPUID=cpuid))
        st2, spec_doc, err2 = run([args.perfspec, "list", "-j", "metric", "--cpuid", cpuid, "--events-dir", EVENTS])
        if st != 0 or st2 != 0:
            print(f"{model} ({cpuid}): perf status {st}, perfspec status {st2}\n{err[-800:]}{err2[-800:]}")
            failed += 1
            continue
        problems = compare(f"{model} metrics", perf_doc, spec_doc, lambda o: True)
        pairs += len(json.loads(perf_doc))
        for p in problems:
            print("  " + p)
        failed += bool(problems)
    print(f"every model's metrics: {pairs} (group, metric) pairs of {len(model_ids())} models, "
          f"{'the same' if not failed else 'see above'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
