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
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(SOURCE), "shared")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")
EVENTS = os.path.join(SHARED, "pmu-events", "x86")

# fixture, CPU id of its model. The two without a model of their own (their PMUs' names are what they
# test) are given Skylake-SP's: with none, perf and perfspec list the host's core events under their
# core PMU, and the host's table may differ between the tables here (perf 6.12.0's) and the newer 6.12
# perf of the chroot (on an AMD Zen 5 host, 23 fp_ops_retired_by_type events more).
MACHINES = [
    ("intel_skx", "GenuineIntel-6-55-4"),
    ("hybrid_adl", "GenuineIntel-6-97-2"),
    ("intel_spr", "GenuineIntel-6-8F-8"),
    ("intel_mtl", "GenuineIntel-6-AA-4"),
    ("amd_zen3", "AuthenticAMD-25-11-1"),
    ("intel_tgl", "GenuineIntel-6-8C-1"),
    ("pmu_names", "GenuineIntel-6-55-4"),
    ("arm_n1", "GenuineIntel-6-55-4"),
]


# perf's build-id cache (its SDT events) is $HOME/.debug, perfspec's $PERF_BUILDID_DIR else that: neither
# has one unless a case makes it (perf record fills the chroot's /root/.debug as other tests run)
NO_CACHE = {"HOME": "/nonexistent-perfspec-home", "PERF_BUILDID_DIR": ""}


def run(cmd, env=None, cache=False):
    """(status, stdout, stderr); without `cache`, with no build-id cache (NO_CACHE)."""
    env = dict(env if env is not None else os.environ)
    if not cache:
        env.update(NO_CACHE)
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


def sdt_case(perf, perfspec, root):
    """`list -j sdt` and `list sdt` of a build-id cache perf 6.12 makes of two builds of libstdc++ (this
    machine's and perf's chroot's, both with SDT notes of the same names): in a folder both see at one
    path (the chroot's /tmp/X, and /tmp/X here a link to it), so that both find the binaries of the
    cache with the builds it says. -> 1 when they differ."""
    sources = ["/usr/lib/x86_64-linux-gnu/libstdc++.so.6", os.path.join(root, "usr/lib/x86_64-linux-gnu/libstdc++.so.6")]
    if not all(os.path.exists(s) for s in sources):
        print("sdt: no libstdc++ to cache: skipped")
        return 0
    inside = tempfile.mkdtemp(prefix="perfspec-sdt-", dir=os.path.join(root, "tmp"))
    link = os.path.join("/tmp", os.path.basename(inside))
    try:
        os.symlink(inside, link)
        for name, source in zip("ab", sources):
            os.makedirs(os.path.join(inside, name))
            shutil.copy(os.path.realpath(source), os.path.join(inside, name, "libstdc++.so.6"))
        home = os.path.join(link, "home")
        with_cache = dict(os.environ, HOME=home, PERF_BUILDID_DIR="")
        problems = []
        # one build cached: its events by name alone; both: each event of each, with the binary's path
        for name in "ab":
            st, _, err = run([perf, "buildid-cache", "--add", os.path.join(link, name, "libstdc++.so.6")],
                             with_cache, cache=True)
            if st != 0:
                print(f"sdt: perf buildid-cache --add failed ({st}): {err[-300:]}")
                return 1
            st, perf_doc, err = run([perf, "list", "-j", "sdt"], with_cache, cache=True)
            st2, spec_doc, err2 = run([perfspec, "list", "-j", "sdt"], with_cache, cache=True)
            _, perf_text, _ = run([perf, "list", "sdt"], with_cache, cache=True)
            _, spec_text, _ = run([perfspec, "list", "sdt"], with_cache, cache=True)
            if st != 0 or st2 != 0:
                problems.append(f"sdt: perf status {st}, perfspec {st2}: {err[-300:]} {err2[-300:]}")
                continue
            problems += compare("sdt", perf_doc, spec_doc, lambda o: True)
            names = [o.get("EventName") for o in json.loads(perf_doc)]
            detailed = [n for n in names if "@" in n]
            if len(names) < 2 or len(detailed) != (len(names) if name == "b" else 0):
                problems.append(f"sdt: perf lists {names} for {'both builds' if name == 'b' else 'one build'}")
            # perfspec's text layout is its own: the same names, each on a line of its own
            text_names = [l.split("[SDT event]")[0].strip() for l in perf_text.splitlines() if "[SDT event]" in l]
            if text_names != names or any(f"  {n}\n" not in spec_text for n in names):
                problems.append(f"sdt: the text lists differ: perf {text_names}, perfspec {spec_text!r}")
            print(f"sdt: {len(names)} events of {'2 builds' if name == 'b' else '1 build'}, "
                  f"{'the same' if not problems else 'DIFFERENT'}")
        for p in problems:
            print("  " + p)
        return 1 if problems else 0
    finally:
        if os.path.islink(link):
            os.unlink(link)
        shutil.rmtree(inside, ignore_errors=True)


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
    failed += sdt_case(args.perf, args.perfspec, root)
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
