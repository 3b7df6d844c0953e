#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every event of perf's own tables, as perf 6.12 encodes it and as perfspec does.

For each model folder of an architecture's mapfile.csv, this picks a CPU id that the mapfile maps to
that folder, runs `perf list -j --details --deprecated` with that PERF_CPUID over a fixture tree of
the model's family (perf prints every table event of the PMUs the tree has, with its encoding), turns
each encoding into config words through the fixture's format files, and compares them with what
`perfspec resolve --format json 'PMU/NAME/'` gives for the same name. Table events whose PMU the
fixture lacks are not printed by perf and not compared.

    tests/perf_agreement/tables_sweep.py --perfspec build/perfspec --arch x86 \\
        [--perf '../shared/tools/perf-current'] [--model skylakex ...] [--json-report FILE]

perf must be built with the architecture's tables: perf-current (Debian's x86 build) has x86 only.
For another architecture, pass a perf that has its tables, e.g. one running under qemu-user:
`--perf 'tests/perf_agreement/perf-foreign arm64'`.

Exit status: 0 when every compared event agrees, 1 otherwise, 2 on usage errors.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import agree  # noqa: E402  (parse_format, the fixtures)

DEFAULT_EVENTS = os.path.join(REPO, "..", "shared", "pmu-events")
DEFAULT_PERF = os.path.join(REPO, "..", "shared", "tools", "perf-current")
FIXTURES = os.path.join(REPO, "tests", "fixtures")
WORDS = ["config", "config1", "config2", "config3"]


# --------------------------------------------------------------------------- CPU ids

def sample(regex):
    """One string the (POSIX extended) mapfile regex matches: first alternatives, shortest repeats."""
    pos = 0

    def atom():
        nonlocal pos
        c = regex[pos]
        if c == "(":
            pos += 1
            alts, cur = [], ""
            while regex[pos] != ")":
                if regex[pos] == "|":
                    alts.append(cur)
                    cur = ""
                    pos += 1
                else:
                    cur += atom_repeat()
            pos += 1
            alts.append(cur)
            return alts[0]
        if c == "[":
            end = regex.index("]", pos + 2 if regex[pos + 1] in "]^" else pos + 1)
            if regex.startswith("[[:", pos):
                end = regex.index(":]]", pos) + 2
                cls = regex[pos + 3:end - 2]
                pos = end + 1
                return {"xdigit": "0", "digit": "0", "alpha": "a", "alnum": "0"}.get(cls, "0")
            body = regex[pos + 1:end]
            pos = end + 1
            if body.startswith("[:"):
                return "0"
            return body[0]
        if c == "\\":
            pos += 2
            return regex[pos - 1]
        if c == ".":
            pos += 1
            return ","
        if c in "^$":
            pos += 1
            return ""
        pos += 1
        return c

    def atom_repeat():
        nonlocal pos
        a = atom()
        if pos < len(regex) and regex[pos] in "*+?{":
            q = regex[pos]
            if q == "{":
                end = regex.index("}", pos)
                n = int(regex[pos + 1:end].split(",")[0])
                pos = end + 1
                return a * n
            pos += 1
            return a if q == "+" else ""
        return a

    out = ""
    while pos < len(regex):
        out += atom_repeat()
    return out


def posix_to_python(regex):
    return regex.replace("[[:xdigit:]]", "[0-9a-fA-F]").replace("[:xdigit:]", "0-9a-fA-F")


def mapfile_rows(arch_dir):
    rows = []
    with open(os.path.join(arch_dir, "mapfile.csv")) as f:
        for n, line in enumerate(f):
            line = line.strip()
            if n == 0 or not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(",")]
            rows.append((parts[0], parts[2]))
    return rows


def x86_full_match(pattern, cpuid):
    """perf's x86 strcmp_cpuid_str."""
    full_p, full_id = pattern.count("-") == 3, cpuid.count("-") == 3
    if full_p and not full_id:
        return False
    m = re.search(posix_to_python(pattern), cpuid)
    if not m:
        return False
    want = cpuid.rfind("-") if (not full_p and full_id) else len(cpuid)
    return m.end() - m.start() == want


def cpuid_for(arch, rows, index):
    """A CPU id whose first matching mapfile row is rows[index]."""
    pattern, folder = rows[index]
    if arch == "arm64":
        return pattern
    cand = sample(pattern)
    if arch == "x86" and cand.count("-") == 2:
        cand += "-0"
    def first_folder(c):
        for p, f in rows:
            if (x86_full_match(p, c) if arch == "x86" else re.fullmatch(posix_to_python(p), c)):
                return f
        return None

    if first_folder(cand) == folder:
        return cand
    if arch == "x86":  # an earlier row takes the sample: try the family's other models and steppings
        vendor, family = cand.split("-")[:2]
        for model in range(256):
            for step in range(16):
                c = "%s-%s-%X-%X" % (vendor, family, model, step)
                if x86_full_match(pattern, c) and first_folder(c) == folder:
                    return c
    return None


# --------------------------------------------------------------------------- fixtures

# x86 model folders and the fixture modelled on that model or the closest one to it (a server of the
# same uncore generation, a client with the same uncore boxes); other x86 models fall back to the
# family's default below.
MODEL_FIXTURES = {
    "jaketown": "intel_bdx", "ivytown": "intel_bdx", "haswellx": "intel_bdx", "broadwellx": "intel_bdx",
    "broadwellde": "intel_bdx",
    "knightslanding": "intel_knl",
    "sandybridge": "intel_tgl", "ivybridge": "intel_tgl", "haswell": "intel_tgl", "broadwell": "intel_tgl",
    "skylake": "intel_tgl", "icelake": "intel_tgl", "tigerlake": "intel_tgl", "rocketlake": "intel_tgl",
    "meteorlake": "intel_mtl",
    "graniterapids": "intel_gnr", "sierraforest": "intel_gnr", "grandridge": "intel_gnr",
}


def fixture_for(arch, model, cpuid, folder_files):
    if arch == "x86" and model in MODEL_FIXTURES and os.path.isdir(os.path.join(FIXTURES, MODEL_FIXTURES[model])):
        return MODEL_FIXTURES[model]
    if arch == "x86":
        units = set()
        for path in folder_files:
            try:
                doc = json.load(open(path))
            except ValueError:
                continue
            if isinstance(doc, list):
                units.update(e.get("Unit") for e in doc if isinstance(e, dict))
        if "cpu_core" in units or "cpu_atom" in units:
            return "hybrid_adl"
        return "amd_zen4" if cpuid.startswith(("AuthenticAMD", "HygonGenuine")) else "intel_spr"
    return {"arm64": "arm_neoverse_v2", "powerpc": "power10", "s390": "s390_z16", "riscv": "riscv_sbi"}.get(arch)


def formats_of(root):
    out = {}
    devices = os.path.join(root, "bus", "event_source", "devices")
    for pmu in os.listdir(devices):
        fdir = os.path.join(devices, pmu, "format")
        fm = {}
        if os.path.isdir(fdir):
            for f in os.listdir(fdir):
                p = agree.parse_format(open(os.path.join(fdir, f)).read())
                if p:
                    fm[f] = p
        out[pmu] = fm
    return out


def encode(encoding, formats):
    """perf's `pmu/t=v,.../` -> {pmu, config words}; None when a term has no format."""
    m = re.fullmatch(r"([^/]+)/(.*)/", encoding)
    if not m:
        return None
    pmu = m.group(1)
    fm = None
    for name in sorted(formats, key=agree_natural):
        if name == pmu or re.fullmatch(re.escape(pmu) + r"(_?[0-9a-fA-F]+)?", name):
            fm = formats[name]
            break
    if fm is None:
        return None
    words = dict.fromkeys(WORDS, 0)
    for term in m.group(2).split(","):
        k, _, v = term.partition("=")
        try:
            val = int(v, 0) if v else 1
        except ValueError:
            return None  # e.g. `ldlat=None` from an entry without MSRValue
        if k in WORDS:
            words[k] |= val
            continue
        if k == "period" or k == "name":
            continue
        if k not in fm:
            return "unknown term"  # perf: "unknown term 'k' for pmu 'p'"
        word, bits = fm[k]
        if val >> len(bits):
            return "too big"  # perf: "value too big for format"
        for i, b in enumerate(bits):
            if val >> i & 1:
                words[word] |= 1 << b
    return {"pmu": pmu, **words}


def agree_natural(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


# --------------------------------------------------------------------------- both tools

def perf_events(perf, root, cpuid):
    env = dict(os.environ, PERF_CPUID=cpuid, LC_ALL="C")
    p = subprocess.run(perf.split() + ["--sysfs", root, "list", "-j", "--details", "--deprecated"],
                       env=env, capture_output=True, text=True, timeout=600)
    try:
        items = json.loads(p.stdout)
    except ValueError:
        raise RuntimeError("perf list gave no JSON: " + p.stderr[-400:])
    return items


def perfspec_attrs(perfspec, root, events_dir, cpuid, strings):
    """{string: [attr dicts]} or {string: 'error'}, in batches (one failing string retried alone)."""
    out = {}
    base = [perfspec, "resolve", "--sysfs", root, "--events-dir", events_dir, "--cpuid", cpuid,
            "--no-libpfm4", "--format", "json"]

    def run(batch):
        p = subprocess.run(base + batch, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            return None, p.stderr
        return json.loads(p.stdout)["events"], None

    def solve(batch):
        evs, err = run(batch)
        if evs is None:
            if len(batch) == 1:
                out[batch[0]] = "error: " + err.strip().splitlines()[-1] if err.strip() else "error"
                return
            half = len(batch) // 2
            solve(batch[:half])
            solve(batch[half:])
            return
        # each string's events: the set's events carry the string as their name (or name=)
        by = collections.defaultdict(list)
        i = 0
        for s in batch:
            pass
        for e in evs:
            by[e["name"]].append(e)
        for s in batch:
            out[s] = by.get(s, [])

    for i in range(0, len(strings), 400):
        solve(strings[i:i + 400])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perfspec", default=os.path.join(REPO, "build", "perfspec"))
    ap.add_argument("--perf", default=DEFAULT_PERF, help="perf command (with its own --sysfs option)")
    ap.add_argument("--events", default=DEFAULT_EVENTS, help="the pmu-events tree")
    ap.add_argument("--arch", default="x86")
    ap.add_argument("--model", action="append", help="only these model folders")
    ap.add_argument("--json-report")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    arch_dir = os.path.join(a.events, a.arch)
    rows = mapfile_rows(arch_dir)
    done, report, totals = set(), {}, collections.Counter()
    for i, (pattern, folder) in enumerate(rows):
        if folder in done or (a.model and folder not in a.model):
            continue
        cpuid = cpuid_for(a.arch, rows, i)
        if cpuid is None:
            continue
        done.add(folder)
        files = [os.path.join(arch_dir, folder, f) for f in os.listdir(os.path.join(arch_dir, folder))]
        fx = fixture_for(a.arch, folder, cpuid, files)
        root = os.path.join(FIXTURES, fx)
        formats = formats_of(root)
        items = perf_events(a.perf, root, cpuid)
        table = [e for e in items if "Encoding" in e and e.get("Topic") not in (None, "tool")
                 and "/" not in e.get("EventName", "")]
        strings, expect = [], {}
        for e in table:
            enc = encode(e["Encoding"], formats)
            s = "%s/%s/" % (e["Unit"], e["EventName"])
            if s in expect:
                continue
            expect[s] = enc
            strings.append(s)
        got = perfspec_attrs(a.perfspec, root, arch_dir, cpuid, strings)
        c = collections.Counter()
        bad = []
        for s in strings:
            want, have = expect[s], got.get(s)
            if want is None:
                c["perf encoding not decodable"] += 1
                continue
            if want in ("too big", "unknown term"):
                why = "value too big for the fixture's format" if want == "too big" else "a term the fixture's PMU lacks"
                c["both reject (%s)" % why if isinstance(have, str) else "differ"] += 1
                if not isinstance(have, str):
                    bad.append((s, have, "perf rejects: " + why))
                continue
            if isinstance(have, str) or not have:
                c["perfspec rejects"] += 1
                bad.append((s, "perfspec: %s" % have, want))
                continue
            h = have[0]["attr"]
            hw = {w: h.get(w, h.get({"config1": "bp_addr", "config2": "bp_len"}.get(w, w), 0)) for w in WORDS}
            if all(hw[w] == want[w] for w in WORDS):
                c["agree"] += 1
            else:
                c["differ"] += 1
                bad.append((s, {w: hex(hw[w]) for w in WORDS if hw[w]}, {w: hex(want[w]) for w in WORDS if want[w]}))
        totals.update(c)
        report[folder] = {"cpuid": cpuid, "fixture": fx, "counts": dict(c), "problems": bad[:50]}
        print("%-22s %-28s %-10s %s" % (folder, cpuid, fx, dict(c)))
        if a.verbose:
            for b in bad[:10]:
                print("   ", b)
    print("total", dict(totals))
    if a.json_report:
        with open(a.json_report, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
    return 0 if totals["differ"] == 0 and totals["perfspec rejects"] == 0 else 1



if __name__ == "__main__":
    sys.exit(main())
