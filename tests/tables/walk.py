#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The whole-tree table test: every event of every model of every architecture of perf's own tables.

For each architecture folder of the pmu-events tree (`x86`, `arm64`, `powerpc`, `s390`, `riscv`),
each model folder that mapfile.csv names, and the `sys` folders (uncore events matched by Compat),
this reads the JSON by the rules of perf's jevents.py, written here a second time and independently
of perfspec's C++ loader: terms from EventCode, UMask, ... in jevents' order, ArchStdEvent
inheritance from the architecture's standard events, the events whose encoding perf fixes, MSR terms,
Filter, Unit -> PMU. For each event it picks a fixture machine of the model's family that has a PMU
the event belongs to, computes the config words the event's terms give through that PMU's format
files, and asks `perfspec resolve --format json` for `PMU/NAME/` with the model's CPU id. The words
must be equal, or, when a value does not fit the fixture's format, perfspec must reject it (perf
does too). An event no fixture can host is skipped for a named reason. The counts per architecture
and reason are printed; the exit status is 1 on any difference.

    tests/tables/walk.py --perfspec build/perfspec [--events ../shared/pmu-events] [--arch x86]
                         [--json-report FILE] [-v]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "perf_agreement"))
import tables_sweep  # noqa: E402  (mapfile rows and CPU ids that select each folder)

FIXTURES = os.path.join(REPO, "tests", "fixtures")
WORDS = ["config", "config1", "config2", "config3"]
# Units whose PMU no machine running Linux 6.12 has, by the kernel's own names: perf cannot use these
# events either, so no fixture could host them (checked in the 6.12 drivers).
NO_SUCH_PMU = {
    "uncore_m2hbm": "6.12 names Xeon Max's HBM units uncore_hbm_N (uncore_snbep.c)",
    "uncore_mchbm": "6.12 names Xeon Max's HBM units uncore_hbm_N (uncore_snbep.c)",
    "uncore_imc_dclk": "6.12 names Knights Landing's DCLK memory controllers uncore_imc_N (uncore_snbep.c)",
    "uncore_hac_cbo": "6.12 names Meteor Lake's unit uncore_hac_cbox (uncore_snb.c)",
    "uncore_chacms": "6.12 registers no PMU of that name",
    "ali_drw": "the driver's identifier file is ali_drw_pmu_identifier, which perf does not read",
}

# Fixture machines per family, in order of preference (the first that hosts an event is used).  A
# model's own fixture (tables_sweep.fixture_for: the machine modelled on it or the closest one) is
# tried before its family's list.
FAMILIES = {
    "intel": ["intel_spr", "intel_skx", "hybrid_adl", "intel_bdx", "intel_gnr", "intel_tgl", "intel_knl",
              "intel_mtl"],
    "intel_hybrid": ["hybrid_adl", "intel_spr", "intel_skx", "intel_mtl", "intel_tgl", "intel_bdx",
                     "intel_gnr", "intel_knl"],
    "amd": ["amd_zen4", "amd_zen3"],
    "arm64": ["arm_neoverse_v2", "arm_n1", "arm_imx8mp", "arm_hip09", "arm_yitian710"],
    "powerpc": ["power10", "power9"],
    "s390": ["s390_z16"],
    "riscv": ["riscv_sbi"],
}

# --------------------------------------------------------------------------- jevents, again

UNIT_PMUS = {
    "CBO": "uncore_cbox", "QPI LL": "uncore_qpi", "SBO": "uncore_sbox", "iMPH-U": "uncore_arb",
    "CPU-M-CF": "cpum_cf", "CPU-M-SF": "cpum_sf", "PAI-CRYPTO": "pai_crypto", "PAI-EXT": "pai_ext",
    "UPI LL": "uncore_upi", "hisi_sicl,cpa": "hisi_sicl,cpa", "hisi_sccl,ddrc": "hisi_sccl,ddrc",
    "hisi_sccl,hha": "hisi_sccl,hha", "hisi_sccl,l3c": "hisi_sccl,l3c", "imx8_ddr": "imx8_ddr",
    "imx9_ddr": "imx9_ddr", "L3PMC": "amd_l3", "DFPMC": "amd_df", "UMCPMC": "amd_umc",
    "cpu_core": "cpu_core", "cpu_atom": "cpu_atom", "ali_drw": "ali_drw", "arm_cmn": "arm_cmn",
}
FIXED = {
    "inst_retired.any": "event=0xc0,period=2000003",
    "inst_retired.any_p": "event=0xc0,period=2000003",
    "cpu_clk_unhalted.ref": "event=0x0,umask=0x03,period=2000003",
    "cpu_clk_unhalted.thread": "event=0x3c,period=2000003",
    "cpu_clk_unhalted.core": "event=0x3c,period=2000003",
    "cpu_clk_unhalted.thread_any": "event=0x3c,any=1,period=2000003",
}
FIELDS = [("AnyThread", "any"), ("PortMask", "ch_mask"), ("CounterMask", "cmask"),
          ("EdgeDetect", "edge"), ("FCMask", "fc_mask"), ("Invert", "inv"),
          ("SampleAfterValue", "period"), ("UMask", "umask"), ("NodeType", "type"),
          ("RdWrMask", "rdwrmask"), ("EnAllCores", "enallcores"), ("EnAllSlices", "enallslices"),
          ("SliceId", "sliceid"), ("ThreadMask", "threadmask")]
MSR_TERMS = {0x3F6: "ldlat", 0x1A6: "offcore_rsp", 0x1A7: "offcore_rsp", 0x3F7: "frontend"}


def unit_pmu(unit):
    if not unit:
        return ""  # jevents' default_core: every core PMU
    return UNIT_PMUS.get(unit, "uncore_" + unit.lower())


def jevents_terms(jd):
    """[(term, value)] of an entry, jevents' order; raises ValueError for what perf cannot use."""
    if "ConfigCode" in jd:
        terms = [("config", int(jd["ConfigCode"], 0))]
    elif "EventidCode" in jd:
        terms = [("eventid", int(jd["EventidCode"], 0))]
    else:
        code = int(jd["EventCode"].split(",", 1)[0], 0) if "EventCode" in jd else 0
        if "ExtSel" in jd:
            code |= int(jd["ExtSel"]) << 8
        terms = [("event", code)]
    for key, term in FIELDS:
        if key in jd:
            v = int(jd[key], 16) if jd[key].startswith("0x") else int(jd[key])
            if v:
                terms.append((term, v))
    if jd.get("Filter"):
        for part in jd["Filter"].split(","):
            k, _, v = part.partition("=")
            terms.append((k.strip(), int(v, 0) if v else 1))
    if "MSRIndex" in jd:
        index = int(jd["MSRIndex"].split(",", 1)[0], 0)
        if index not in MSR_TERMS:
            raise ValueError("unknown MSRIndex")
        if "MSRValue" not in jd:
            raise ValueError("MSRIndex without MSRValue (perf writes %s=None)" % MSR_TERMS[index])
        terms.append((MSR_TERMS[index], int(jd["MSRValue"], 0)))
    return terms


def read_events(path, std):
    """(name, pmu, terms|error, compat, deprecated) of each event of a table file."""
    try:
        doc = json.load(open(path))
    except ValueError:
        return [], "invalid JSON"
    if not isinstance(doc, list):
        return [], None if os.path.basename(path) == "metricgroups.json" else "not an array"
    out = []
    for jd in doc:
        if not isinstance(jd, dict):
            continue
        name = jd.get("EventName")
        pmu = unit_pmu(jd.get("Unit"))
        compat = jd.get("Compat")
        deprecated = jd.get("Deprecated") == "1"
        try:
            terms = jevents_terms(jd) if name else None
        except (ValueError, KeyError) as e:
            terms = "error: %s" % e
        if "ArchStdEvent" in jd:
            base = std.get(jd["ArchStdEvent"].lower())
            if base is None:
                terms = "error: unknown ArchStdEvent"
            else:
                terms = base["terms"]
                name = name or base["name"]
                compat = compat or base["compat"]
                deprecated = deprecated or base["deprecated"]
        if not name:
            continue
        if name.lower() in FIXED:
            terms = [(k, int(v, 0) if v else 1) for k, _, v in
                     (t.partition("=") for t in FIXED[name.lower()].split(","))]
        out.append({"name": name, "pmu": pmu, "terms": terms, "compat": compat,
                    "deprecated": deprecated})
    return out, None


def std_events(arch_dir):
    std = {}
    for f in sorted(os.listdir(arch_dir)):
        path = os.path.join(arch_dir, f)
        if f.endswith(".json") and os.path.isfile(path):
            events, _ = read_events(path, std)
            for e in events:
                std[e["name"].lower()] = e
    return std

# --------------------------------------------------------------------------- fixtures


class Fixture:
    def __init__(self, name):
        self.name = name
        self.root = os.path.join(FIXTURES, name)
        devices = os.path.join(self.root, "bus", "event_source", "devices")
        self.pmus = {}
        for p in sorted(os.listdir(devices), key=tables_sweep.agree_natural):
            d = os.path.join(devices, p)
            fm = {}
            if os.path.isdir(os.path.join(d, "format")):
                for f in os.listdir(os.path.join(d, "format")):
                    parsed = tables_sweep.agree.parse_format(open(os.path.join(d, "format", f)).read())
                    if parsed:
                        fm[f] = parsed

            def read(rel):
                path = os.path.join(d, rel)
                return open(path).read().split("\n")[0].strip() if os.path.isfile(path) else None
            self.pmus[p] = {"formats": fm, "uncore": read("cpumask") is not None,
                            "core": p in ("cpu", "cpum_cf") or read("cpus") is not None,
                            "identifier": read("identifier") if read("cpumask") is not None else None}

    def hosts(self, event, sys_table):
        """The PMUs of this fixture the event belongs to (perf's pmu__name_match)."""
        out = []
        for name, p in self.pmus.items():
            if sys_table:
                if (p["uncore"] and p["identifier"] and event["pmu"] and event["compat"]
                        and suffix_match(event["pmu"], name)
                        and re.fullmatch(event["compat"], p["identifier"])):
                    out.append(name)
            elif event["pmu"] == "":
                if p["core"]:
                    out.append(name)
            elif event["pmu"] == name or (p["uncore"] and suffix_match(event["pmu"], name)):
                out.append(name)
        return out


def suffix_match(table_pmu, name):
    """perf's pmu_uncore_alias_match (jevents unit vs sysfs name)."""
    toks = [t for t in table_pmu.split(",") if t]
    rest = name
    for i, tok in enumerate(toks):
        at = rest.find(tok)
        if at < 0:
            return False
        rest = rest[at:]
        if i == len(toks) - 1:
            return ignoring_suffix(rest, tok)
        rest = rest[len(toks[i + 1]):]
    return False


def ignoring_suffix(name, tok):
    if not name.startswith(tok):
        return False
    s = name[len(tok):]
    if not s:
        return True
    if s[0] == "_":
        s = s[1:]
    if not s or not all(c in "0123456789abcdefABCDEF" for c in s):
        return False
    return s.isdigit() or len(s) > 2


def encode(terms, formats):
    """Config words, or a reason it cannot be encoded on this PMU."""
    words = dict.fromkeys(WORDS, 0)
    for k, v in terms:
        if k in WORDS:
            words[k] |= v
            continue
        if k in ("period", "name"):
            continue
        if k not in formats:
            return "no format '%s'" % k
        word, bits = formats[k]
        if v >> len(bits):
            return "too big"
        for i, b in enumerate(bits):
            if v >> i & 1:
                words[word] |= 1 << b
    return words

# --------------------------------------------------------------------------- perfspec


def resolve_all(perfspec, root, events_dir, cpuid, strings, cache):
    """{string: attrs of its first event}; a string perfspec rejects is absent."""
    out = {}
    base = [perfspec, "resolve", "--keep-going", "--sysfs", root, "--events-dir", events_dir,
            "--cpuid", cpuid, "--no-libpfm4", "--format", "json"]
    env = dict(os.environ, PERFSPEC_CACHE_DIR=cache)
    for i in range(0, len(strings), 4000):
        p = subprocess.run(base + strings[i:i + 4000], capture_output=True, text=True, timeout=600, env=env)
        if p.returncode not in (0, 1, 3) or not p.stdout.startswith("{"):
            raise RuntimeError("perfspec failed (%d): %s" % (p.returncode, p.stderr[-500:]))
        for e in json.loads(p.stdout)["events"]:
            out.setdefault(e["name"], e["attr"])
    return out


def family_of(arch, cpuid, files):
    if arch != "x86":
        return arch
    if cpuid.startswith(("AuthenticAMD", "HygonGenuine")):
        return "amd"
    for path in files:
        try:
            doc = json.load(open(path))
        except ValueError:
            continue
        if isinstance(doc, list) and any(isinstance(e, dict) and e.get("Unit") in ("cpu_core", "cpu_atom")
                                         for e in doc):
            return "intel_hybrid"
    return "intel"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perfspec", default=os.path.join(REPO, "build", "perfspec"))
    ap.add_argument("--events", default=os.path.join(REPO, "..", "shared", "pmu-events"))
    ap.add_argument("--arch", action="append", help="only these architectures")
    ap.add_argument("--cache", help="compiled-index folder (default: a new one, so the walk builds every index)")
    ap.add_argument("--json-report")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if not os.path.isdir(a.events):
        print("skipped: no pmu-events tree at %s" % a.events)
        return 0
    fixtures = {}

    def fixture(name):
        if name not in fixtures:
            fixtures[name] = Fixture(name) if os.path.isdir(os.path.join(FIXTURES, name)) else None
        return fixtures[name]

    started = time.time()
    totals = collections.Counter()
    report = {}
    failures = []
    cache = a.cache or tempfile.mkdtemp(prefix="perfspec-walk-")
    perfspec_seconds = 0.0
    archs = a.arch or sorted(d for d in os.listdir(a.events) if os.path.isfile(os.path.join(a.events, d, "mapfile.csv")))
    for arch in archs:
        arch_dir = os.path.join(a.events, arch)
        std = std_events(arch_dir)
        rows = tables_sweep.mapfile_rows(arch_dir)
        counts = collections.Counter()
        # The sys folders: uncore events any machine of the architecture may have.
        sys_events = []
        for dirpath, dirnames, files in os.walk(arch_dir):
            if os.path.basename(dirpath) == "sys":
                for f in sorted(files):
                    if f.endswith(".json"):
                        sys_events += read_events(os.path.join(dirpath, f), std)[0]
        units = []  # (cpuid, family, events, sys?)
        done = set()
        for i, (pattern, folder) in enumerate(rows):
            if folder in done:
                continue
            cpuid = tables_sweep.cpuid_for(arch, rows, i)
            if cpuid is None:
                continue
            done.add(folder)
            mdir = os.path.join(arch_dir, folder)
            if not os.path.isdir(mdir):
                counts["mapfile rows naming no folder"] += 1
                continue
            files = [os.path.join(mdir, f) for f in sorted(os.listdir(mdir)) if f.endswith(".json")]
            events = []
            for path in files:
                evs, problem = read_events(path, std)
                if problem:
                    counts["files that are no table (%s)" % problem] += 1
                events += evs
            units.append((folder, cpuid, family_of(arch, cpuid, files), events, False, files))
        if sys_events and units:
            # sys events belong to no model: checked with the first model's CPU id
            units.append(("sys", units[0][1], units[0][2], sys_events, True, []))
        for folder, cpuid, family, events, is_sys, files in units:
            own = tables_sweep.fixture_for(arch, folder, cpuid, files)
            order = ([own] if own else []) + [n for n in FAMILIES[family] if n != own]
            candidates = [fixture(n) for n in order if fixture(n)]
            plan = collections.defaultdict(dict)  # fixture -> {string: expected}
            for e in events:
                if isinstance(e["terms"], str):
                    counts["skipped: entry perf cannot use (%s)" % e["terms"][7:]] += 1
                    continue
                chosen, why = None, None
                for fx in candidates:
                    hosts = fx.hosts(e, is_sys)
                    if not hosts:
                        continue
                    enc = encode(e["terms"], fx.pmus[hosts[0]]["formats"])
                    if isinstance(enc, str) and enc != "too big":
                        why = why or "%s on %s" % (enc, hosts[0])
                        continue
                    chosen = (fx, hosts[0], enc)
                    break
                if not chosen:
                    unit = e["pmu"] or "core"
                    if why:
                        reason = "fixture PMU lacks a term (%s)" % re.sub(r" on .*", "", why)
                    elif is_sys and any(suffix_match(e["pmu"], n) for fx in candidates for n in fx.pmus):
                        reason = "no fixture %s PMU whose identifier matches Compat '%s'" % (unit, e["compat"])
                    elif unit in NO_SUCH_PMU:
                        reason = "no machine has a PMU for unit %s: %s" % (unit, NO_SUCH_PMU[unit])
                    else:
                        reason = "no fixture PMU for unit %s" % unit
                    counts["skipped: " + reason] += 1
                    continue
                fx, host, enc = chosen
                plan[fx.name]["%s/%s/" % (host, e["name"])] = enc
            for fxname, expect in plan.items():
                fx = fixture(fxname)
                t0 = time.time()
                got = resolve_all(a.perfspec, fx.root, arch_dir, cpuid, sorted(expect), cache)
                perfspec_seconds += time.time() - t0
                for s, want in expect.items():
                    have = got.get(s)
                    if want == "too big":
                        if have is None:
                            counts["both reject: value too big for %s's format" % fxname] += 1
                        else:
                            counts["DIFFER"] += 1
                            failures.append((arch, folder, fxname, s, "expected a rejection", have))
                        continue
                    if have is None:
                        counts["DIFFER"] += 1
                        failures.append((arch, folder, fxname, s, want, have))
                        continue
                    hw = {w: have.get(w, have.get({"config1": "bp_addr", "config2": "bp_len"}.get(w, w), 0))
                          for w in WORDS}
                    if hw == want:
                        counts["resolved with the JSON's encoding"] += 1
                    else:
                        counts["DIFFER"] += 1
                        failures.append((arch, folder, fxname, s, want, hw))
        report[arch] = dict(counts)
        totals.update(counts)
        print("%s: %d model folders, %s" % (arch, len(done), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    elapsed = time.time() - started
    print("total: %s" % ", ".join("%s %d" % kv for kv in sorted(totals.items())))
    print("time: %.1f s, of which perfspec %.1f s (%d events resolved)" %
          (elapsed, perfspec_seconds, totals["resolved with the JSON's encoding"]))
    for f in failures[:40 if not a.verbose else len(failures)]:
        print("DIFFER %s %s on %s: %s: want %s, perfspec %s" % f)
    if a.json_report:
        with open(a.json_report, "w") as f:
            json.dump({"counts": report, "failures": failures[:200]}, f, indent=1, sort_keys=True)
    return 1 if totals["DIFFER"] else 0


if __name__ == "__main__":
    sys.exit(main())
