#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Regenerate the seed corpora in fuzz/corpus/ from the golden tests, the fixture trees and a few entries
of the shared skylakex tables (python3 fuzz/make_corpus.py [--events-dir ../shared/pmu-events/x86]), and
the metric_parse seeds from the metrics of every architecture (--only metric_parse for those alone)."""
import argparse
import hashlib
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TREES = ["intel_skx", "amd_zen3", "arm_n1", "hybrid_adl"]  # the events target's first byte, modulo 4


def put(folder, data):
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def reset(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)


def events():
    out = os.path.join(HERE, "corpus", "events")
    reset(out)
    n = 0
    for g in sorted(os.listdir(os.path.join(ROOT, "tests", "golden"))):
        if not g.endswith(".golden"):
            continue
        fixture = None
        for line in open(os.path.join(ROOT, "tests", "golden", g), "rb"):
            line = line.rstrip(b"\n")
            if line.startswith(b"@fixture "):
                fixture = line[len(b"@fixture "):].decode().strip()
            elif line.startswith(b"=== ") and fixture in TREES:
                put(out, bytes([TREES.index(fixture)]) + line[4:])
                n += 1
    return n


def sysfs_files():
    for tree in TREES:
        devices = os.path.join(ROOT, "tests", "fixtures", tree, "bus", "event_source", "devices")
        for pmu in sorted(os.listdir(devices)):
            yield tree, os.path.join(devices, pmu)


def formats():
    out = os.path.join(HERE, "corpus", "format")
    reset(out)
    seen = set()
    for _, pmu in sysfs_files():
        d = os.path.join(pmu, "format")
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                seen.add(open(os.path.join(d, f), "rb").read())
    for s in sorted(seen):
        put(out, s)
    return len(seen)


def aliases():
    out = os.path.join(HERE, "corpus", "alias")
    reset(out)
    seen = set()
    for _, pmu in sysfs_files():
        d = os.path.join(pmu, "events")
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if "." in f:
                continue
            data = open(os.path.join(d, f), "rb").read()
            for suffix in (".scale", ".unit"):
                p = os.path.join(d, f + suffix)
                if os.path.exists(p) or (suffix == ".scale" and os.path.exists(os.path.join(d, f + ".unit"))):
                    data += b"\x01" + (open(p, "rb").read() if os.path.exists(p) else b"1")
            seen.add(data)
    # What a hostile or broken tree holds: folders and symlinks to nothing where files belong, control
    # bytes in an alias and its unit.
    seen.update([b"\x02D", b"\x02L", b"event=0x3c\x01\x02D", b"event=0x3c\x011\x01\x02L",
                 b"event=0x1\x1b[31m\x011\x01Mi\x07B", b"event=0x1,umask=\x9b2J"])
    for s in sorted(seen):
        put(out, s)
    return len(seen)


def tables(events_dir):
    out = os.path.join(HERE, "corpus", "json")
    reset(out)
    model = os.path.join(events_dir, "skylakex")
    n = 0
    mixed = []
    for f in sorted(os.listdir(model)):
        if not f.endswith(".json"):
            continue
        entries = json.load(open(os.path.join(model, f)))
        # A handful per file, chosen for the variety of their fields.
        picked, keysets = [], set()
        for e in entries:
            k = frozenset(e)
            if k not in keysets:
                keysets.add(k)
                picked.append(e)
            if len(picked) == 4:
                break
        for e in picked:
            e.pop("PublicDescription", None)
            if len(e.get("BriefDescription", "")) > 80:
                e["BriefDescription"] = e["BriefDescription"][:80]
        put(out, json.dumps(picked, indent=4).encode() + b"\n")
        mixed.append(picked[0])
        n += 1
    put(out, json.dumps(mixed, indent=1).encode())
    put(out, b"[]")
    return n + 2


def decode(perfspec):
    """perf stat -vv style text, resolve's JSON and binary attrs, from resolving every 4th golden string with
    the CLI, plus JSON nested past decode's depth bound."""
    import struct
    import subprocess
    out = os.path.join(HERE, "corpus", "decode")
    reset(out)
    if not (perfspec and os.access(perfspec, os.X_OK)):
        return 0
    n = 0
    for k, name in enumerate(sorted(os.listdir(os.path.join(HERE, "corpus", "events")))):
        if k % 4:
            continue
        data = open(os.path.join(HERE, "corpus", "events", name), "rb").read()
        tree, text = data[0], data[1:].decode("utf-8", "replace")
        args = [perfspec, "resolve", "--sysfs", os.path.join(ROOT, "tests", "fixtures", TREES[tree]), "--no-libpfm4"]
        r = subprocess.run(args + [text], capture_output=True)
        if r.returncode != 0:
            continue
        put(out, bytes([tree, 0]) + r.stdout)
        j = subprocess.run(args + ["--format", "json", text], capture_output=True)
        if k % 16 == 0:
            put(out, bytes([tree, 0]) + j.stdout)
        for e in json.loads(j.stdout)["events"][:2]:
            a = e["attr"]
            b = bytes([tree, 1, 0xE0]) + struct.pack("<IQQQQ", a["type"], a["config"], a["config1"], a["config2"], a["config3"])
            b += bytes(a[f] for f in ("exclude_user", "exclude_kernel", "exclude_hv", "exclude_idle", "exclude_host",
                                      "exclude_guest", "precise_ip", "freq"))
            put(out, b + struct.pack("<Q", a["sample_period"]))
        n += 1
    put(out, bytes([0, 0]) + b"[" * 17 + b"]" * 17)
    put(out, bytes([0, 0]) + b'{"x":"[[[[[[[[[[[[[[[[[[[[\\"{","events":[{"attr":{"type":4,"config":461}}]}')
    return n


def index():
    """Payloads for the index target: [lines, diagnostics, offsets_at] then the payload, as the writer
    lays it out (diagnostics, 8-hex offsets, body), plus a few that lie about their offsets."""
    out = os.path.join(HERE, "corpus", "index")
    reset(out)
    body_lines = [
        "mem_load_retired.l1_miss\tMEM_LOAD_RETIRED.L1_MISS\t\tcache.json\tevent=0xd1,umask=8\t\t\t000\t",
        "unc_m_cas_count.rd\tUNC_M_CAS_COUNT.RD\tuncore_imc\tcache.json\tevent=4,umask=3\t6.103515625E-5\tMiB\t100\t",
    ]
    diag = "/x/m/cache.json\t2\tBAD\tUMask 'zz' is not a number\n"
    for diags in (0, 1):
        head = diag * diags
        offsets, body, at = "", "", 0
        for l in body_lines:
            offsets += "%08x" % at
            body += l + "\n"
            at += len(l) + 1
        payload = head + offsets + body
        put(out, bytes([len(body_lines), diags, len(head)]) + payload.encode())
        put(out, bytes([len(body_lines), diags, len(head)]) + (head + "00000000ffffffff" + body).encode())
        put(out, bytes([len(body_lines), diags, len(head)]) + (head + "0000002000000000" + body).encode())
    return len(os.listdir(out))


def metrics(pmu_events):
    """Metric expressions of every architecture under pmu_events (MetricExpr and MetricThreshold): those
    that add a construct the seeds lack, then every 40th of the rest for variety, plus a few edge cases."""
    import re
    out = os.path.join(HERE, "corpus", "metric_parse")
    reset(out)
    exprs = set()
    for root, _, files in os.walk(pmu_events):
        for f in files:
            if not f.endswith(".json"):
                continue
            doc = json.load(open(os.path.join(root, f)))
            if not isinstance(doc, list):
                continue
            for e in doc:
                for k in ("MetricExpr", "MetricThreshold"):
                    if isinstance(e, dict) and isinstance(e.get(k), str):
                        exprs.add(e[k])
    token = re.compile(r"d_ratio|min|max|source_count|has_event|strcmp_cpuid_str|if|else|NaN|#\w+|\\."
                       r"|[@?|^&<>+*/%()-]|\d+e-?\d+|\.\d")
    seen, picked = set(), []
    for x in sorted(exprs, key=lambda x: (len(x), x)):
        feats = set(token.findall(x))
        if feats - seen:
            seen |= feats
            picked.append(x)
    picked += sorted(exprs)[::40]
    picked += ["1e999", "1e-999", "0x81 + 1e3 - .5 * 5.", "iffy if NaNs else min_x", "-(-(-a))",
               "a if b else c if d else e", "(((((a)))))", "cpu@x\\,y\\=?@ / #SMT_on", "d_ratio(a b)",
               "has_event(1)", "a $ b", "a\x00b", "\xc2\xb5s + 1"]
    for x in picked:
        put(out, x.encode("latin-1") if x.startswith("\xc2") else x.encode())
    return len(os.listdir(out))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--events-dir", default=os.path.join(ROOT, "..", "shared", "pmu-events", "x86"))
    ap.add_argument("--perfspec", default=os.path.join(ROOT, "build", "perfspec"), help="for the decode seeds")
    ap.add_argument("--pmu-events", default=os.path.join(ROOT, "..", "shared", "pmu-events"),
                    help="every architecture's tables, for the metric_parse seeds")
    ap.add_argument("--only", choices=["metric_parse"], help="regenerate these seeds alone")
    a = ap.parse_args()
    if a.only == "metric_parse":
        print("metric_parse", metrics(a.pmu_events))
        raise SystemExit(0)
    print("events", events(), "format", formats(), "alias", aliases(), "json", tables(a.events_dir))
    print("decode", decode(a.perfspec), "index", index(), "metric_parse", metrics(a.pmu_events))