#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf agreement for named events from perf-format JSON tables (issue 3).

Generates event strings (deterministically, from a seed) from the JSON event tables of a CPU model,
asks perf 6.12 (--perf current, the default; --perf system: the machine's 6.1) which attrs it
builds for each over a fake sysfs tree, asks `perfspec resolve --events-dir DIR --cpuid CPUID`
over the same tree, and compares.  Everything that is not table-specific is agree.py's and is
imported from there: running perf (agree.Perf), mapping perf's -vv text to events (parse_perf:
retries, per-CPU opens, weak groups, truncation), running perfspec (run_perfspec), the comparison
(compare/project), the quirk tags (QUIRKS, detect_quirks, settle_quirks) and the report.

    tests/perf_agreement/agree_tables.py --perfspec build/perfspec \\
        --cache tests/perf_agreement/tables_oracle.json [--no-perf]

Models (name, PERF_CPUID / --cpuid, fixture)
    skylakex          GenuineIntel-6-55-4   intel_skx
    icelakex          GenuineIntel-6-6A-6   intel_skx  (same core formats; the icelakex uncore units
                                                        other than imc/cha have no PMU there, so both
                                                        tools must reject those names, and icelakex's
                                                        32-bit CHA umasks do not fit SKX's 8-bit one)
    amdzen3           AuthenticAMD-25-1-1   amd_zen3   (L3PMC -> amd_l3, DFPMC -> amd_df)
    skylakex-collide  GenuineIntel-6-55-4   intel_skx plus a few sysfs aliases whose names are also
                                                        table names (COLLIDE below), materialised in
                                                        a temporary copy: which source wins
    perf is not given the tables of --events-dir: it uses the tables built into it, selected by
    PERF_CPUID.  ../shared/pmu-events is Linux 6.12's tools/perf/pmu-events/arch, exactly the tables
    built into perf 6.12, so both tools see the same events (perf 6.1's built-in tables are older:
    its answers are not kept for this script).  Each model has probe cases (a name only this model
    has, which must resolve, and a name only another model has, which must be rejected) that show
    that both tools picked the intended table.

Reading the real tree
    Only event entries are used: files that are not a JSON list (metricgroups.json: group
    descriptions) and entries without an EventName (*metrics.json metrics, counter.json counter
    counts) are skipped; unknown fields are ignored.  Entry follows perf 6.12's jevents.py for the
    term string: ConfigCode -> config=, else event= (ExtSel in bits 8+), then AnyThread, PortMask
    (ch_mask), CounterMask, EdgeDetect, FCMask (fc_mask), Invert, SampleAfterValue (period), UMask
    and the other FIELD_TERMS, Filter as written, the MSR term; INST_RETIRED.ANY and the
    CPU_CLK_UNHALTED fixed-counter names get perf's fixed strings (FIXED_EVENTS).

What is generated (about --count cases per model, 150 by default)
    Names from the model's JSON: bare in the table's case, lower case and mixed case; with
    modifiers; `cpu/NAME/` (+ modifiers); `cpu/NAME,TERM/` with extra user terms (cmask, inv, edge,
    umask, any, ldlat, period, name, ...); `cpu/event=NAME/`; uncore names bare (expanding over
    uncore_imc_N / uncore_cha_N, amd_l3 / amd_df), as `uncore_imc/NAME/`, `imc/NAME/`,
    `uncore_imc_2/NAME/` and with uncore terms; names in groups `{a,b}:mods` and lists `a,b`
    (mixed with sysfs aliases and hardware symbols); entries with MSRIndex/MSRValue (ldlat,
    offcore_rsp, frontend), Filter, CounterMask, Invert, EdgeDetect, AnyThread; names on the wrong
    PMU and uncore names whose unit has no PMU; and ~10 % unknown / misspelled names (checked
    against every table, sysfs alias and symbol name so that both tools must reject them).

Compared: agree.COMPARE_FIELDS (type config config1 config2 bp_type exclude_user exclude_kernel
exclude_hv exclude_idle precise_ip) and acceptance.  sample_period is not compared: perf stat
clears it, perfspec resolve keeps the table's SampleAfterValue as the period.

Name collisions: perf 6.12 gives a sysfs alias whose name (case-insensitively) is also an event of
that PMU's table the table's encoding (pmu.c perf_pmu__new_alias -> update_alias): with COLLIDE,
`inst_retired.any` is config 0xc0 (the table's fixed string), not the overlay's 0x2211, and
`uncore_imc_0/unc_m_cas_count.rd/` is the table's 0x304, not 0x105.  (perf 6.1 kept the sysfs
alias.)

Quirks: agree.detect_quirks runs with the table entries added to each PMU's aliases (the table's
terms replacing a sysfs alias of the same name, as perf 6.12 does), so a user term that overlaps
a term the table entry already sets (`cpu/NAME,cmask=2/` for an entry with CounterMask, `umask=`
on an entry with a UMask, `ldlat=` on an offcore_rsp entry, a cha filter_* term on an entry whose
Filter sets config1) is tagged "overlapping-terms": perf 6.1 and 6.12 OR the two values, perfspec
lets the user's term replace.  Tagged cases that differ are listed separately and not counted;
the summary counts the tags per model.

Oracle: --cache FILE holds perf's parsed answers per model and event string (stable, sorted JSON),
with each model's cpuid, fixture and overlay and the perf that answered (perf_version); a model
whose cpuid/fixture/overlay changed, or a cache of another perf version, is rerun.
--refresh reruns perf for every case, --no-perf never runs perf (CI), --perf-only skips perfspec.
Exit status: 0 everything agrees or is an explained quirk / allowed difference
(known_differences.txt); 1 otherwise, or agreement below --min-agreement, or a case without a
cached perf answer under --no-perf; 2 usage or environment error (no perfspec binary, no events
dir, no perf and no cache).
"""
import argparse
import concurrent.futures
import copy
import glob
import json
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import agree  # noqa: E402  (the harness this one extends)
from agree import Case  # noqa: E402

REPO = agree.REPO
DEFAULT_EVENTS_DIR = os.path.normpath(os.path.join(REPO, "..", "shared", "pmu-events", "x86"))
ORACLE_FORMAT = 1

# Extra sysfs aliases for the collision model: file -> term string.  Table names, other encodings.
COLLIDE = {
    "cpu/events/inst_retired.any": "event=0x11,umask=0x22",
    "cpu/events/INST_RETIRED.NOP": "event=0x33",
    "cpu/events/br_misp_retired.all_branches": "event=0x44,umask=0x1,cmask=2",
    "uncore_imc_0/events/unc_m_cas_count.rd": "event=0x05,umask=0x01",
}


class Model:
    def __init__(self, name, table, cpuid, fixture, overlay=None):
        self.name, self.table, self.cpuid, self.fixture = name, table, cpuid, fixture
        self.overlay = overlay or {}

    def desc(self):
        return {"table": self.table, "cpuid": self.cpuid, "fixture": self.fixture,
                "overlay": self.overlay}


MODELS = [Model("skylakex", "skylakex", "GenuineIntel-6-55-4", "intel_skx"),
          Model("icelakex", "icelakex", "GenuineIntel-6-6A-6", "intel_skx"),
          Model("amdzen3", "amdzen3", "AuthenticAMD-25-1-1", "amd_zen3"),
          Model("skylakex-collide", "skylakex", "GenuineIntel-6-55-4", "intel_skx", COLLIDE)]
MODEL_NAMES = [m.name for m in MODELS]

# --------------------------------------------------------------------------- tables

# JSON Unit -> PMU name where it is not `uncore_<unit lower-case>` (perf 6.12's jevents.py keeps
# such a table; only the units of the x86 models used here matter).
UNIT_PMU = {"l3pmc": "amd_l3", "dfpmc": "amd_df", "umcpmc": "amd_umc", "cpu_core": "cpu_core",
            "cpu_atom": "cpu_atom", "cbo": "uncore_cbox", "qpi ll": "uncore_qpi",
            "sbo": "uncore_sbox", "imph-u": "uncore_arb", "upi ll": "uncore_upi"}
MSR_TERM = {0x3f6: "ldlat", 0x1a6: "offcore_rsp", 0x1a7: "offcore_rsp", 0x3f7: "frontend"}
# JSON field -> term, in the order perf 6.12 appends them after event= (zero values left out)
FIELD_TERMS = [("AnyThread", "any"), ("PortMask", "ch_mask"), ("CounterMask", "cmask"),
               ("EdgeDetect", "edge"), ("FCMask", "fc_mask"), ("Invert", "inv"),
               ("SampleAfterValue", "period"), ("UMask", "umask"), ("NodeType", "type"),
               ("RdWrMask", "rdwrmask"), ("EnAllCores", "enallcores"),
               ("EnAllSlices", "enallslices"), ("SliceId", "sliceid"),
               ("ThreadMask", "threadmask")]
# Names perf encodes with a fixed string instead of the entry's fields (fixed-counter events)
FIXED_EVENTS = {"inst_retired.any": "event=0xc0,period=2000003",
                "inst_retired.any_p": "event=0xc0,period=2000003",
                "cpu_clk_unhalted.ref": "event=0x0,umask=0x03,period=2000003",
                "cpu_clk_unhalted.thread": "event=0x3c,period=2000003",
                "cpu_clk_unhalted.core": "event=0x3c,period=2000003",
                "cpu_clk_unhalted.thread_any": "event=0x3c,any=1,period=2000003"}


def cpuid_matches(regex, cpuid):
    """perf's strcmp_cpuid_str: the mapfile regex must match the whole cpuid, or the cpuid without
    its stepping when the regex has fewer than three dashes."""
    target = cpuid
    if regex.count("-") < 3 and cpuid.count("-") >= 3:
        target = cpuid.rsplit("-", 1)[0]
    try:
        return re.fullmatch(regex.replace("[[:xdigit:]]", "[0-9a-fA-F]"), target) is not None
    except re.error:
        return False


def model_folder(events_dir, cpuid):
    with open(os.path.join(events_dir, "mapfile.csv")) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) >= 3 and not parts[0].startswith("Family") and \
                    cpuid_matches(parts[0], cpuid):
                return parts[2]
    return None


def _is_zero(v):
    try:
        return int(str(v), 0) == 0
    except ValueError:
        return False


class Entry:
    """One table event: its name, target PMU family and the term string perf 6.12 builds from it
    (jevents.py: ConfigCode -> config=, else event= with ExtSel in bits 8+; then FIELD_TERMS,
    Filter as written, the MSR term; FIXED_EVENTS replace the whole string)."""
    __slots__ = ("name", "unit", "pmu", "terms", "fields", "topic")

    def __init__(self, d, topic):
        self.name, self.fields, self.topic = d["EventName"], d, topic
        self.unit = d.get("Unit")
        u = (self.unit or "").lower()
        self.pmu = None if not u else UNIT_PMU.get(u, "uncore_" + u)
        if d.get("ConfigCode") is not None:
            t = ["config=%s" % d["ConfigCode"]]
        else:
            code = int(str(d.get("EventCode", "0")).split(",")[0], 0)
            if d.get("ExtSel"):
                code |= int(str(d["ExtSel"]), 0) << 8
            t = ["event=%s" % hex(code)]
        for key, term in FIELD_TERMS:
            v = d.get(key)
            if v is not None and not _is_zero(v):
                t.append("%s=%s" % (term, v))
        if d.get("Filter"):
            t.append(d["Filter"])
        if d.get("MSRIndex") and d.get("MSRValue"):
            m = MSR_TERM.get(int(d["MSRIndex"].split(",")[0], 0))
            if m:
                t.append("%s=%s" % (m, d["MSRValue"]))
        self.terms = FIXED_EVENTS.get(self.name.lower(), ",".join(t))

    def special(self):
        return [k for k in ("MSRIndex", "Filter", "CounterMask", "Invert", "EdgeDetect",
                            "AnyThread") if self.fields.get(k)]


def load_entries(events_dir, folder):
    """The events of a model folder.  The real tree also holds files and entries that are not
    events, skipped here: metricgroups.json (an object: group descriptions), *metrics.json and
    counter.json entries (no EventName); unknown fields in an event entry are ignored."""
    out = []
    for path in sorted(glob.glob(os.path.join(events_dir, folder, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc, list):
            continue
        for d in doc:
            if isinstance(d, dict) and isinstance(d.get("EventName"), str):
                out.append(Entry(d, os.path.basename(path)[:-5]))
    return out


def augmented_pmus(pmus, entries):
    """PMUs whose .events also hold the table entries, for agree.detect_quirks' overlapping-terms
    check.  On a name collision the table's terms replace the sysfs alias's, as perf 6.12 does
    (pmu.c update_alias: a sysfs alias that is also an event of the PMU's table takes the table's
    event string)."""
    out = {}
    for name, p in pmus.items():
        q = copy.copy(p)
        q.events = dict(p.events)
        fam = re.sub(r"_[0-9]+$", "", name)
        for e in entries:
            target = e.pmu or "cpu"
            if target in (name, fam):
                for k in [k for k in q.events if k.lower() == e.name.lower()]:
                    del q.events[k]
                q.events[e.name] = e.terms
        out[name] = q
    return out


def all_names(pmus, entries_by_model):
    names = {e.name.lower() for es in entries_by_model for e in es}
    for p in pmus.values():
        names |= {a.lower() for a in p.events}
    names |= {s.lower() for s in agree.HW_SYMBOLS + agree.SW_SYMBOLS}
    return names

# --------------------------------------------------------------------------- generator


def dedupe(cases):
    seen = set()
    return [c for c in cases if not (c.event in seen or seen.add(c.event))]


class TableGen(agree.Gen):
    """agree.Gen's random source, numbers and modifiers; table-name event forms."""

    def __init__(self, model, root, seed, pmus, entries, other_entries):
        super().__init__(model.name, root, seed, pmus, {})
        self.model = model
        self.entries = entries
        self.core = [e for e in entries if e.pmu is None]
        fams = {}
        for n in pmus:
            fams.setdefault(re.sub(r"_[0-9]+$", "", n), []).append(n)
        self.fams = fams
        self.uncore = [e for e in entries if e.pmu is not None and e.pmu in fams]
        self.absent = [e for e in entries if e.pmu is not None and e.pmu not in fams]
        self.special_entries = [e for e in entries if e.special() and
                                (e.pmu is None or e.pmu in fams)]
        self.known = all_names(pmus, [entries, other_entries])
        mine = {e.name.lower() for e in entries}
        self.foreign = sorted({e.name for e in other_entries if e.pmu is None and
                               e.name.lower() not in mine})
        others = {e.name.lower() for e in other_entries}
        self.unique = sorted(e.name for e in self.core if e.name.lower() not in others)
        self.sysfs_aliases = sorted((p, a) for p, pm in pmus.items() for a in pm.events
                                    if p in ("cpu", "cpu_core"))

    # --- names
    def spell(self, name, how=None):
        r = self.r
        how = how or r.choice(["orig", "lower", "mixed"])
        if how == "lower":
            return name.lower()
        if how == "mixed":
            for _ in range(10):
                s = "".join(c.upper() if r.random() < 0.5 else c.lower() for c in name)
                if s not in (name, name.lower(), name.upper()):
                    return s
            return name.lower().capitalize()
        return name

    def pick_core(self):
        return self.r.choice(self.core)

    def pick_uncore(self):
        fam = self.r.choice(sorted({e.pmu for e in self.uncore}))
        return self.r.choice([e for e in self.uncore if e.pmu == fam])

    def pmu_spelling(self, fam):
        """How to address an uncore family: wildcard, without `uncore_`, or one instance."""
        r = self.r
        x = r.random()
        insts = sorted(self.fams[fam])
        if x < 0.45 or insts == [fam]:
            return fam
        if x < 0.65 and fam.startswith("uncore_"):
            return fam[len("uncore_"):]
        return r.choice(insts)

    def mod_suffix(self, ev, prob):
        ev, ign, q = self.with_mods(ev, prob, pmu_form=ev.endswith("/"))
        return ev, ign, q

    def extra_terms(self, pmu_name, entry):
        """One or two user terms for pmu_name (a real PMU instance name)."""
        r = self.r
        p = self.pmus[pmu_name]
        choices = []
        f = p.formats
        if "cmask" in f:
            choices += ["cmask=%s" % self.num(r.randint(1, 255))] * 3
        if "thresh" in f:
            choices += ["thresh=%s" % self.num(r.randint(1, 255))] * 2
        for t in ("inv", "edge", "any", "pc", "in_tx", "enallcores", "enallslices", "tid_en",
                  "filter_nm", "filter_rem"):
            if t in f:
                choices.append(t)
        if "umask" in f:
            choices.append("umask=%s" % self.num(r.randint(0, 255)))
        if "ldlat" in f:
            choices.append("ldlat=%d" % r.randint(3, 1000))
        if "threadmask" in f:
            choices.append("threadmask=%d" % r.randint(0, 3))
        if "coreid" in f:
            choices.append("coreid=%d" % r.randint(0, 7))
        if "filter_tid" in f:
            choices.append("filter_tid=%s" % self.num(r.randint(0, 511)))
        choices += ["period=%d" % r.randint(1000, 2000000), "name=ev%d" % r.randint(0, 9)]
        if entry.pmu is None:
            choices.append(r.choice(["any", "cmask=1", "inv", "edge"]))  # maybe absent on AMD
        n = 1 if r.random() < 0.7 else 2
        out = []
        for t in r.sample(choices, min(n, len(choices))):
            if t.split("=")[0] not in [o.split("=")[0] for o in out]:
                out.append(t)
        return out

    # --- case kinds
    def bare(self):
        e = self.pick_core() if self.r.random() < 0.8 or not self.uncore else self.pick_uncore()
        return Case(self.spell(e.name), "bare")

    def bare_mods(self):
        e = self.pick_core() if self.r.random() < 0.85 or not self.uncore else self.pick_uncore()
        ev, ign, q = self.mod_suffix(self.spell(e.name), 1.0)
        return Case(ev, "bare-mods", q, ign)

    def pmu_form(self):
        e = self.pick_core()
        ev, ign, q = self.mod_suffix("cpu/%s/" % self.spell(e.name), 0.4)
        return Case(ev, "pmu-name", q, ign)

    def pmu_terms(self):
        e = self.r.choice(self.special_entries) if self.r.random() < 0.3 and \
            self.special_entries else self.pick_core()
        terms = self.extra_terms("cpu", e)
        body = ",".join([self.spell(e.name)] + terms) if self.r.random() < 0.8 \
            else ",".join(terms + [self.spell(e.name)])
        ev, ign, q = self.mod_suffix("cpu/%s/" % body, 0.3)
        return Case(ev, "pmu-name-terms", q, ign)

    def event_eq(self):
        e = self.pick_core()
        s = "cpu/event=%s" % self.spell(e.name)
        if self.r.random() < 0.35:
            s += "," + ",".join(self.extra_terms("cpu", e))
        ev, ign, q = self.mod_suffix(s + "/", 0.3)
        return Case(ev, "pmu-event=name", q, ign)

    def uncore_case(self):
        r = self.r
        e = self.pick_uncore()
        x = r.random()
        if x < 0.35:
            ev, ign, q = self.mod_suffix(self.spell(e.name), 0.2)
            return Case(ev, "uncore-bare", q, ign)
        sp = self.pmu_spelling(e.pmu)
        body = self.spell(e.name)
        kind = "uncore-pmu"
        if x < 0.6:
            inst = sorted(self.fams[e.pmu])[0]
            body += "," + ",".join(self.extra_terms(inst, e))
            kind = "uncore-pmu-terms"
        elif x < 0.75:
            body = "event=" + body
            kind = "uncore-event=name"
        ev, ign, q = self.mod_suffix("%s/%s/" % (sp, body), 0.2)
        return Case(ev, kind, q, ign)

    def special(self):
        r = self.r
        if not self.special_entries:
            return self.bare()
        e = r.choice(self.special_entries)
        x = r.random()
        if x < 0.45 or e.pmu is not None and x < 0.7:
            ev, ign, q = self.mod_suffix(self.spell(e.name), 0.4)
            return Case(ev, "special-bare:" + "+".join(e.special()), q, ign)
        pmu = "cpu" if e.pmu is None else self.pmu_spelling(e.pmu)
        ev, ign, q = self.mod_suffix("%s/%s/" % (pmu, self.spell(e.name)), 0.4)
        return Case(ev, "special-pmu:" + "+".join(e.special()), q, ign)

    def member(self):
        r = self.r
        x = r.random()
        if x < 0.6:
            ev, ign, q = self.mod_suffix(self.spell(self.pick_core().name), 0.35)
        elif x < 0.75:
            ev, ign, q = self.mod_suffix("cpu/%s/" % self.spell(self.pick_core().name), 0.35)
        elif x < 0.85 and self.uncore:
            ev, ign, q = self.spell(self.pick_uncore().name), (), None
        elif x < 0.93 and self.sysfs_aliases:
            p, a = r.choice(self.sysfs_aliases)
            ev, ign, q = self.mod_suffix("%s/%s/" % (p, a), 0.3)
        else:
            ev, ign, q = self.mod_suffix(r.choice(["cycles", "instructions", "task-clock"]), 0.3)
        return ev, ign, q

    def group(self):
        r = self.r
        ms, ign, quirk = [], [], None
        for _ in range(r.randint(2, 3)):
            ev, i, q = self.member()
            ms.append(ev)
            ign += i
            quirk = quirk or q
        s = "{%s}" % ",".join(ms)
        if r.random() < 0.7:
            m, i, q = self.mods(allow_p=r.random() < 0.5)
            s += ":" + m
            ign += i
        return Case(s, "group", quirk, tuple(ign))

    def listed(self):
        ms, ign, quirk = [], [], None
        for _ in range(self.r.randint(2, 3)):
            ev, i, q = self.member()
            ms.append(ev)
            ign += i
            quirk = quirk or q
        return Case(",".join(ms), "list", quirk, tuple(ign))

    def misspell(self, name):
        r = self.r
        for _ in range(50):
            x = r.random()
            i = r.randrange(1, len(name) - 1)
            if x < 0.25:
                s = name[:i] + name[i + 1:]
            elif x < 0.45:
                s = name[:i] + name[i + 1] + name[i] + name[i + 2:]
            elif x < 0.65:
                s = name[:i] + r.choice("aeiouxz_") + name[i + 1:]
            elif x < 0.8:
                s = name + r.choice(["_x", "s", "2"])
            elif "." in name:
                s = name.rsplit(".", 1)[0] + "." + r.choice(["foo", "any2", "nosuch"])
            else:
                s = name + ".nosuch"
            if s.lower() not in self.known and s.lower() != name.lower() and \
                    re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", s) and "__" not in s:
                return s
        return name + "_nosuch"

    def unknown(self):
        r = self.r
        e = self.pick_core() if r.random() < 0.75 or not self.uncore else self.pick_uncore()
        bad = self.spell(self.misspell(e.name))
        x = r.random()
        if x < 0.45:
            ev, ign, q = self.mod_suffix(bad, 0.3)
            return Case(ev, "unknown-bare", q, ign)
        if x < 0.65:
            pmu = "cpu" if e.pmu is None else self.pmu_spelling(e.pmu)
            return Case("%s/%s/" % (pmu, bad), "unknown-pmu-name")
        if x < 0.75:
            return Case("cpu/event=%s/" % bad, "unknown-event=name")
        if x < 0.88:
            good = self.spell(self.pick_core().name)
            return Case("%s,%s" % (good, bad) if r.random() < 0.5 else "%s,%s" % (bad, good),
                        "unknown-in-list")
        good = self.spell(self.pick_core().name)
        return Case("{%s,%s}:u" % (good, bad), "unknown-in-group")

    def wrong_place(self):
        """Names that exist but not where they are asked for: both tools reject."""
        r = self.r
        x = r.random()
        if self.absent and (x < 0.5 or not self.uncore):
            e = r.choice(self.absent)
            if r.random() < 0.7:
                return Case(self.spell(e.name), "uncore-no-pmu")
            return Case("%s/%s/" % (e.pmu, self.spell(e.name)), "uncore-no-pmu-form")
        if self.uncore and x < 0.75:
            return Case("cpu/%s/" % self.spell(self.pick_uncore().name), "uncore-name-on-cpu")
        if self.uncore:
            fam = sorted({e.pmu for e in self.uncore})[0]
            return Case("%s/%s/" % (fam, self.spell(self.pick_core().name)), "core-name-on-uncore")
        return Case("amd_l3/%s/" % self.spell(self.pick_core().name), "core-name-on-uncore")

    def fixed_cases(self):
        out = []
        if self.unique:
            out.append(Case(self.unique[len(self.unique) // 2], "model-probe"))
        if self.foreign:
            out.append(Case(self.foreign[len(self.foreign) // 2], "model-probe-foreign"))
        for k in ("MSRIndex", "Filter", "CounterMask", "Invert", "EdgeDetect", "AnyThread"):
            es = [e for e in self.special_entries if k in e.special()]
            if es:
                out.append(Case(es[0].name, "special-bare:" + "+".join(es[0].special())))
        # `cpu/NAME,cmask=2/` with and without a CounterMask in the entry (perf ORs the former)
        cm = [e for e in self.core if e.fields.get("CounterMask")]
        plain = [e for e in self.core if not e.fields.get("CounterMask")]
        if cm:
            out.append(Case("cpu/%s,cmask=2/" % cm[len(cm) // 2].name.lower(), "pmu-name-cmask"))
        if plain:
            out.append(Case("cpu/%s,cmask=2/" % plain[len(plain) // 3].name.lower(),
                            "pmu-name-cmask"))
        return out

    def collide_cases(self):
        """Every spelling of each colliding name (the collide model)."""
        out = []
        for path, terms in sorted(self.model.overlay.items()):
            pmu, _, name = path.split("/")
            fam = re.sub(r"_[0-9]+$", "", pmu)
            out += [Case(name, "collide-bare"), Case(name.upper(), "collide-bare"),
                    Case(name.lower() + ":u", "collide-bare-mods"),
                    Case("%s/%s/" % (fam, name), "collide-pmu"),
                    Case("%s/event=%s/" % (fam, name.lower()), "collide-event="),
                    Case("%s/%s/k" % (pmu, name.upper()), "collide-pmu")]
            if pmu == "cpu":
                out += [Case("cpu/%s,cmask=3/" % name, "collide-pmu-terms"),
                        Case("cpu/%s,edge/" % name, "collide-pmu-terms"),
                        Case("{%s,cycles}:u" % name, "collide-group"),
                        Case("instructions,%s" % name.lower(), "collide-list")]
        return out

    def cases(self, count):
        r = self.r
        if self.model.overlay:
            return dedupe(self.collide_cases())
        kinds = [(self.bare, 12), (self.bare_mods, 14), (self.pmu_form, 10), (self.pmu_terms, 18),
                 (self.event_eq, 8), (self.uncore_case, 16 if self.uncore else 0),
                 (self.special, 12), (self.group, 10), (self.listed, 8), (self.unknown, 13),
                 (self.wrong_place, 5)]
        kinds = [(f, w) for f, w in kinds if w]
        tot = sum(w for _, w in kinds)
        out = dedupe(self.fixed_cases())
        seen = {c.event for c in out}
        tries = 0
        while len(out) < count and tries < count * 20:
            tries += 1
            x = r.uniform(0, tot)
            for f, w in kinds:
                x -= w
                if x <= 0:
                    break
            c = f()
            if c.event in seen:
                continue
            seen.add(c.event)
            out.append(c)
        return out

# --------------------------------------------------------------------------- main


def write_overlay(src, overlay):
    d = tempfile.mkdtemp(prefix="perfspec-collide-")
    root = os.path.join(d, "root")
    shutil.copytree(src, root, symlinks=True)
    devs = os.path.join(root, "bus", "event_source", "devices")
    for rel, text in overlay.items():
        p = os.path.join(devs, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text + "\n")
    return d, root


def tag_summary(jobs, spec_results, results):
    """Per model: how many cases carry each quirk tag, and how many of those differ."""
    per = {}
    for (m, c), spec in zip(jobs, spec_results):
        if not c.quirk:
            continue
        perf = results.get(m, {}).get(c.event)
        v = agree.compare(c, perf, spec)[0] if perf else "uncached"
        t = per.setdefault(m, {}).setdefault(c.quirk, [0, 0])
        t[0] += 1
        t[1] += v in ("mismatch", "disagree")
    if per:
        print("\n== quirk tags per model (tagged / differing)")
        for m, tags in per.items():
            print("  %-17s %s" % (m, ", ".join("%s %d/%d" % (k, n, d)
                                               for k, (n, d) in sorted(tags.items()))))


def main():
    ap = argparse.ArgumentParser(description="perf (6.12 by default) vs perfspec on JSON-table "
                                 "event names.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--perfspec", default=agree.DEFAULT_PERFSPEC, help="perfspec binary")
    ap.add_argument("--fixtures", default=agree.DEFAULT_FIXTURES, help="fixture folder")
    ap.add_argument("--events-dir", default=DEFAULT_EVENTS_DIR,
                    help="perf-format JSON tables (%(default)s)")
    ap.add_argument("--model", action="append", choices=MODEL_NAMES,
                    help="run only these models (repeatable; default: all)")
    ap.add_argument("--seed", default="1", help="generator seed (%(default)s)")
    ap.add_argument("--count", type=int, default=150, help="cases per model (%(default)s)")
    ap.add_argument("--cache", help="perf oracle JSON (tables_oracle.json)")
    agree.add_common_options(ap, agree.DEFAULT_KNOWN)
    a = ap.parse_args()

    models = [m for m in MODELS if not a.model or m.name in a.model]
    if not os.path.isfile(os.path.join(a.events_dir, "mapfile.csv")):
        print("error: no event tables at %s (--events-dir)" % a.events_dir, file=sys.stderr)
        return 2
    cache = {"format": ORACLE_FORMAT, "models": {}, "results": {}}
    if a.cache and os.path.exists(a.cache):
        with open(a.cache) as f:
            cache = json.load(f)
        if cache.get("format") != ORACLE_FORMAT:
            print("error: %s has oracle format %r, expected %d" % (
                a.cache, cache.get("format"), ORACLE_FORMAT), file=sys.stderr)
            return 2
    perf = agree.Perf(a.perf, a.perf_current)
    can_perf, why = (False, "--no-perf") if a.no_perf else perf.available()
    if not a.no_perf and not can_perf:
        print("note: perf (%s) cannot run here: %s; using the cache only" % (a.perf, why),
              file=sys.stderr)
    if can_perf and a.cache and not a.refresh:
        cached_family = agree.perf_family(cache.get("perf_version"))
        if cached_family and cached_family != agree.perf_family(perf.version()):
            print("note: cache made with perf %s, now %s: rerunning perf" % (
                cached_family, agree.perf_family(perf.version())), file=sys.stderr)
            a.refresh = True
    family = agree.perf_family(perf.version()) if can_perf else \
        agree.perf_family(cache.get("perf_version"))
    if not can_perf and not (a.cache and os.path.exists(a.cache)) and not a.list:
        print("error: perf cannot run (or --no-perf) and there is no cache: nothing to compare "
              "with", file=sys.stderr)
        return 2
    if not a.perf_only and not a.list and not a.show_perf and \
            not (os.path.isfile(a.perfspec) and os.access(a.perfspec, os.X_OK)):
        print("error: perfspec binary not found or not executable: %s" % a.perfspec,
              file=sys.stderr)
        return 2

    tmpdirs, roots, case_lists, stale = [], {}, {}, set()
    cache.setdefault("models", {})
    cache.setdefault("results", {})
    folders = {}
    entries = {}
    for m in MODELS:
        folder = model_folder(a.events_dir, m.cpuid)
        if folder != m.table:
            print("error: cpuid %s selects %r in %s/mapfile.csv, expected %r" % (
                m.cpuid, folder, a.events_dir, m.table), file=sys.stderr)
            return 2
        folders[m.name] = folder
        entries.setdefault(folder, load_entries(a.events_dir, folder))
    try:
        for m in models:
            src = os.path.join(a.fixtures, m.fixture)
            if not os.path.isdir(src):
                print("error: no fixture %s" % src, file=sys.stderr)
                return 2
            root = src
            if m.overlay:
                d, root = write_overlay(src, m.overlay)
                tmpdirs.append(d)
            roots[m.name] = root
            pmus = agree.load_pmus(root)
            mine = entries[m.table]
            others = [e for t, es in entries.items() if t != m.table for e in es]
            g = TableGen(m, root, a.seed, pmus, mine, others)
            cases = g.cases(a.count)
            aug = augmented_pmus(pmus, mine)
            for c in cases:
                agree.settle_quirks(c, family, agree.detect_quirks(m.name, c.event, aug))
            case_lists[m.name] = cases
            if cache["models"].get(m.name) != m.desc():
                if m.name in cache["results"] and can_perf:
                    print("note: model %s changed (cpuid/fixture/overlay): rerunning perf" %
                          m.name, file=sys.stderr)
                    stale.add(m.name)
                elif m.name in cache["results"]:
                    print("warning: cached answers for %s were made with %s, now %s" % (
                        m.name, cache["models"].get(m.name), m.desc()), file=sys.stderr)

        if a.list:
            for mn, cases in case_lists.items():
                for c in cases:
                    print("%s\t%s\t%s\t%s" % (mn, c.kind, c.quirk or "-", c.event))
            return 0
        if a.show_perf:
            m = models[0]
            rc, text = perf.run(roots[m.name], a.show_perf, m.cpuid)
            print(text)
            print(json.dumps(agree.parse_perf(text, rc, agree.perf_family(perf.version())),
                             indent=1, sort_keys=True))
            return 0

        # ---- perf oracle
        by_name = {m.name: m for m in models}
        todo = []
        for mn, cases in case_lists.items():
            have = cache["results"].setdefault(mn, {})
            for c in cases:
                if a.refresh or mn in stale or c.event not in have:
                    todo.append((mn, c))
        dirty = False
        if todo and can_perf:
            print("running perf for %d cases ..." % len(todo), file=sys.stderr)

            def job(item):
                mn, c = item
                rc, text = perf.run(roots[mn], c.event, by_name[mn].cpuid)
                return mn, c.event, agree.parse_perf(text, rc, family)

            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                for mn, ev, entry in ex.map(job, todo):
                    cache["results"][mn][ev] = entry
            for mn in case_lists:
                cache["models"][mn] = by_name[mn].desc()
            cache["perf_version"] = perf.version()
            dirty = True
        if a.cache and (dirty or a.refresh):
            for mn, cases in case_lists.items():   # keep exactly the generated cases
                names = {c.event for c in cases}
                cache["results"][mn] = {k: v for k, v in cache["results"][mn].items()
                                        if k in names}
            cache["generator"] = {"seed": a.seed, "count": a.count}
            tmp = a.cache + ".tmp"
            with open(tmp, "w") as f:
                json.dump(cache, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, a.cache)
            print("wrote %s" % a.cache, file=sys.stderr)

        view = {"fixtures": cache["results"], "perf_version": cache.get("perf_version")}
        if a.perf_only:
            return agree.perf_summary(case_lists, view)

        # ---- perfspec and comparison
        jobs = [(mn, c) for mn, cases in case_lists.items() for c in cases]

        # perf's tables against perfspec's: libpfm4, which perf 6.12 lacks and whose model is this
        # host's, is left out (a name of another model it knows would be accepted on an Intel host)
        spec_results = agree.run_perfspec_jobs(
            a.perfspec, jobs, lambda mn: roots[mn],
            lambda mn: ("--events-dir", a.events_dir, "--cpuid", by_name[mn].cpuid, "--no-libpfm4"),
            workers=a.jobs)
        rc = agree.report(a, jobs, spec_results, view, agree.load_known(a.known))
        tag_summary(jobs, spec_results, cache["results"])
        uncached = sum(1 for mn, c in jobs if c.event not in cache["results"].get(mn, {}))
        if uncached:
            print("\nerror: %d cases have no perf answer in the cache (generator, tables or models "
                  "changed?): rerun as root without --no-perf to add them" % uncached,
                  file=sys.stderr)
            rc = max(rc, 1)
        return rc
    finally:
        for d in tmpdirs:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
