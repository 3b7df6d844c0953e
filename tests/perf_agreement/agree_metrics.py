#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Metric agreement: does `perfspec resolve -M` open the events perf 6.12 opens for each metric?

For every metric of a model's tables, on a fixture machine of that model, perf 6.12 is asked which
events it opens (`perf stat -vv -M NAME true`: its "Parsing metric events '...'" lines, whose
metric-id terms name each event as the metric writes it) and perfspec for its plan's inputs
(`perfspec resolve -M NAME --format json`). The two sets must be equal, and a metric perf cannot
set up (an event or a PMU the fixture lacks) must be one perfspec reports as an error. This checks
the folding of literals, `if`, `has_event` and `d_ratio` by constants, and the metric references,
against the reference.

    tests/perf_agreement/agree_metrics.py --perfspec build/perfspec \\
        --cache tests/perf_agreement/metrics_oracle.json [--refresh]

perf reads the CPU topology (#smt_on, #num_cpus_online, #core_wide) from the live /sys, not from
the fixture (perf-current binds only bus/event_source/devices), so --refresh records this host's
topology files in the oracle, and perfspec runs over a temporary tree holding the fixture's PMUs and
that topology. Without --refresh the oracle is used and perf is not needed (exit 77 when neither).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
PERF = os.path.join(SHARED, "tools", "perf-current")
TABLES = os.path.join(SHARED, "pmu-events", "x86")

# The fixtures compared, each with the CPU id that picks its tables.
CASES = {"intel_skx": "GenuineIntel-6-55-4", "intel_tgl": "GenuineIntel-6-8C-1"}

# perf writes a metric's identifier in a metric-id term with these characters coded (encode_metric_id).
CODES = {"!0": ",", "!1": "-", "!2": "=", "!3": "@", "!!": "!"}


def decode(metric_id):
    return re.sub(r"!.", lambda m: CODES.get(m.group(0), m.group(0)), metric_id)


def perf_ids(fixture, cpuid, name):
    """The identifiers of the events perf opens for metric `name`; None when perf sets up none."""
    env = dict(os.environ, PERF_CPUID=cpuid)
    p = subprocess.run([PERF, "--sysfs", os.path.join(ROOT, "tests", "fixtures", fixture), "stat", "-vv",
                        "-M", name, "true"], capture_output=True, text=True, env=env, timeout=120)
    text = p.stdout + p.stderr
    lines = re.findall(r"^Parsing metric events '(.*)'$", text, re.M)
    # perf names the events before it parses them: one it cannot parse fails the metric
    if not lines or "event syntax error" in text:
        return None
    ids = set()
    for line in lines:
        ids.update(decode(m) for m in re.findall(r"metric-id=([^,/]+)", line))
        # tool events carry no metric-id: `duration_time` alone between commas or braces
        ids.update(t for t in re.findall(r"(?:^|[,{])([a-z_]+_time)(?=$|[,}])", line))
    # the metric's identifiers as perfspec writes them: '@' is the '/' of an event string
    return sorted(i.replace("@", "/") for i in ids)


def topology_files():
    """This host's files perf's literals come from, relative to /sys."""
    out = {}
    base = "/sys/devices/system/cpu"
    for rel in ("online", "present", "possible", "smt/active", "smt/control"):
        path = os.path.join(base, rel)
        if os.path.isfile(path):
            out["devices/system/cpu/" + rel] = open(path).read()
    for entry in sorted(os.listdir(base)):
        if not re.fullmatch(r"cpu\d+", entry):
            continue
        for f in ("physical_package_id", "die_id", "core_id"):
            path = os.path.join(base, entry, "topology", f)
            if os.path.isfile(path):
                out["devices/system/cpu/%s/topology/%s" % (entry, f)] = open(path).read()
    return out


def refresh(cache_path):
    oracle = {"topology": topology_files(), "cases": {}}
    for fixture, cpuid in CASES.items():
        names = metric_names(None, fixture, cpuid)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            ids = list(pool.map(lambda n: perf_ids(fixture, cpuid, n), names))
        oracle["cases"][fixture] = {"cpuid": cpuid, "metrics": dict(zip(names, ids))}
        print("perf 6.12: %s: %d metrics, %d set up" % (fixture, len(names), sum(i is not None for i in ids)))
    with open(cache_path, "w") as f:
        json.dump(oracle, f, indent=1, sort_keys=True)
        f.write("\n")
    return oracle


PERFSPEC = None


def metric_names(root, fixture, cpuid):
    """Every metric of the fixture's model, from the tables themselves (perfspec list --metrics)."""
    sysfs = root or os.path.join(ROOT, "tests", "fixtures", fixture)
    p = subprocess.run([PERFSPEC, "list", "--metrics", "--format", "json", "--sysfs", sysfs, "--events-dir",
                        TABLES, "--cpuid", cpuid], capture_output=True, text=True, check=True)
    return sorted({m["name"] for m in json.loads(p.stdout)["metrics"]})


def perfspec_ids(root, cpuid, name):
    p = subprocess.run([PERFSPEC, "resolve", "--sysfs", root, "--events-dir", TABLES, "--cpuid", cpuid,
                        "--no-libpfm4", "--format", "json", "-M", name], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    plan = json.loads(p.stdout)
    ids = set()
    for m in plan["metrics"]:
        ids.update(m["inputs"].keys())
    return sorted(ids)


def tree(fixture, topology):
    """The fixture's PMUs with the recorded host's topology."""
    root = tempfile.mkdtemp(prefix="perfspec-metrics-")
    shutil.copytree(os.path.join(ROOT, "tests", "fixtures", fixture, "bus"), os.path.join(root, "bus"),
                    symlinks=True)
    # The TSC frequency perf takes from this host's CPU (its value opens no event; perfspec needs one
    # to fold #system_tsc_freq under a root that is not /sys).
    topology = dict(topology, **{"perfspec-snapshot/system_tsc_freq": "2000000000\n"})
    for rel, text in topology.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return root


def main():
    global PERFSPEC
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--refresh", action="store_true")
    args = ap.parse_args()
    PERFSPEC = os.path.abspath(args.perfspec)
    if not os.path.isdir(TABLES):
        print("agree_metrics: no %s: skipped" % TABLES)
        return 77
    if args.refresh:
        if os.geteuid() != 0 or not os.access("/opt/perf-current/usr/bin/perf", os.X_OK):
            print("agree_metrics: --refresh needs root and perf 6.12 (../shared/tools/perf-current)")
            return 2
        oracle = refresh(args.cache)
    elif os.path.exists(args.cache):
        oracle = json.load(open(args.cache))
    else:
        print("agree_metrics: no oracle %s: skipped" % args.cache)
        return 77
    failed = 0
    for fixture, case in oracle["cases"].items():
        root = tree(fixture, oracle["topology"])
        try:
            names = metric_names(root, fixture, case["cpuid"])
            if sorted(case["metrics"]) != names:
                print("DIFFER %s: the metrics listed are not perf's" % fixture)
                failed += 1
            with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                ours = dict(zip(names, pool.map(lambda n: perfspec_ids(root, case["cpuid"], n), names)))
            same = 0
            for name in names:
                theirs = case["metrics"].get(name)
                if ours[name] == theirs:
                    same += 1
                    continue
                failed += 1
                print("DIFFER %s %s:\n    perf 6.12: %s\n    perfspec:  %s" % (fixture, name, theirs, ours[name]))
            print("%s: %d metrics, %d agree (perf sets up %d)" %
                  (fixture, len(names), same, sum(v is not None for v in case["metrics"].values())))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
