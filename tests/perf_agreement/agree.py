#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perf agreement harness: does `perfspec resolve` build the same perf_event_attr as perf?

Generates event strings (deterministically, from a seed) over the fake sysfs trees in
tests/fixtures/ and over the live machine's tracepoints, asks perf 6.12 (the reference of
REFERENCE.md; --perf system asks the machine's perf 6.1 instead) which attrs it builds for each,
asks perfspec, and compares.

    tests/perf_agreement/agree.py --perfspec build/perfspec \\
        --cache tests/perf_agreement/perf_oracle.json [--no-perf] [--perf current|system]

Where perf's answers come from
    perf is run as `perf stat -vv -e EVENT true` with FIXTURE/bus/event_source/devices
    bind-mounted over /sys/bus/event_source/devices in a private mount namespace.  --perf current
    (the default) runs `shared/tools/perf-current --sysfs FIXTURE stat -vv -e EVENT true`: Debian
    trixie's perf 6.12 in a chroot (bootstrapped once, /opt/perf-current; the harness never
    bootstraps it, it uses the cache when the chroot is missing).  --perf system runs the machine's
    perf (Debian's 6.1) under `unshare -m` with the same bind mount.  The harness runs perf itself
    instead of calling shared/tools/perf-attrs because perf-attrs keeps only the attr blocks, and
    the text around them is needed to tell a retry from a new event, a probe from an event, and a
    parse rejection that follows probe opens (see "Mapping perf's output" below).  PERF_CPUID is
    set to a value that matches no built-in table (--cpuid, default NoVendor-0-0-0) so that perf
    only sees the fixture's sysfs aliases and not the JSON tables of the host CPU.
    Tracepoint cases (fixture "live") run against the live /sys (perf-current without --sysfs),
    because perf reads the live tracefs (perf mounts tracefs itself when it is not mounted).  The
    harness snapshots the live PMU folders and the tracefs ids it needs into the oracle (mounting
    tracefs in a private namespace to read them), and perfspec is run against that snapshot
    (materialised in a temporary folder), so the comparison is reproducible on machines whose
    kernel has other tracepoint ids.
    The oracle records which perf answered (perf_version); a cache made by another perf version
    or PERF_CPUID is re-run when perf can run.  perf_oracle.json holds perf 6.12's answers,
    perf_oracle_6.1.json the system perf 6.1's (use it with --cache ... --no-perf).

Mapping perf's output (the retry/group rule)
    perf prints one `perf_event_attr:` block per open attempt, followed by a
    `sys_perf_event_open: pid P  cpu C  group_fd G  flags F` line and `= fd` or `failed, error -E`.
    perf 6.12 prints an annotation after some values (`type 4 (cpu)`, `config 0x174
    (sched:sched_switch)`, `config 0 (PERF_COUNT_HW_CACHE_RESULT_ACCESS | ... )`) and symbolic
    sample_type/read_format; only the number is read.  It does not print config3.
    * Retry: when an open fails, perf may change the attr and try again (missing-feature fallbacks,
      e.g. `msr/tsc/` on this VM prints 3 blocks: cloexec off, then exclude_guest off).  Before
      re-printing the block perf prints one of "switching off ...", "decreasing precise_ip by one",
      "... trying to fall back ..." / "Trying to fall back ..." (6.1 also "Weak group for ...
      failed") -- but only the first time per process (pr_debug2_peo), so a later event needing
      the same fallback is retried silently.  A block is a retry of the previous one, and is
      dropped, when such a line precedes it, or when the previous open failed with an errno other
      than ENOENT (perf stat never retries ENOENT), on the same pid/cpu, and the block differs from
      the previous one only by exclude_guest / exclude_host / precise_ip having been cleared or
      lowered.  The first block of each chain is the attr the parser built, and that is what is
      compared.
    * Weak groups (6.12): when a member of a `{...}:W` group fails, perf prints "Weak group for
      LEADER/N failed", skips the group's remaining members and goes on; a second pass then
      reopens every member alone, each block preceded by "reopening weak NAME".  Such a block is
      dropped when it repeats a first-pass block (the group's leader, or the member after the
      previous reopen's), and kept as a new event otherwise (a member the first pass never tried).
    * Probe: blocks whose open line says `pid 0` are probes, not events: dropped.  6.1's probes
      are is_event_supported() for hybrid cache events: on this VM they fail, so 6.1 drops those
      events: if nothing is left perf says "event parser found nothing" and the case is
      "env_rejected" (skipped, not compared); if other events remain, the perf result is "partial"
      and compared like a truncated one.  6.12's only probe is perf_pmus__supports_extended_type()
      (a cycles event with a core PMU's type in config bits 32-63, on hybrid trees): on this VM it
      fails, so 6.12 builds hardware and cache events without the extended type (hardware events
      once, cache events once per core PMU); the entry records extended_type false and the case
      is compared as sets with bits 32-63 of hardware/cache configs cleared.
    * Per-CPU opens: perf stat opens an event once per CPU of its cpumask; only blocks whose open
      line has cpu -1 or the lowest CPU seen in the run are kept (all fixture cpumasks contain 0).
      perf 6.12 with a bpf-output event in the list opens every per-thread event once per online
      CPU, all printed as cpu -1 (evlist__create_maps): the repeats after the first pass are
      dropped.
    * Not opened: perf 6.12 accepts `:R` (retirement latency) but perf stat opens nothing for such
      an event (its value comes from a sampling run): "unopened", compared like a truncated one.
    * Truncation: a group whose leader cannot be opened makes perf stat stop ("Error:" line); it
      then has printed only a prefix of the events.  Such a perf result is "truncated".
    * Comparison of the remaining perf events P with perfspec's events S (each projected on the
      compared fields): not truncated: P must equal S as a sequence, or else as a multiset
      (counted as agreement, listed as "order differs": perf 6.12 sorts PMUs by name and instance
      number (cpu_atom before cpu_core), regroups a group's events by PMU, and opens uncore events
      CPU by CPU between per-thread ones).  Truncated, partial or unopened: P must be a prefix of
      S, or else a sub-multiset of S.  Group structure (leader/member) is not compared: perf moves
      events whose PMU or cpumask differs from the leader's out of the group ("events were
      regrouped to match PMUs", "grouped events cpus do not match").
    * Rejection: perf rejected the string when its output has "event syntax error", "Run 'perf
      list'" or "event parser found nothing" and no event blocks.  That must meet a non-zero exit
      of perfspec.  An open failure (block printed, then "not supported") means perf accepted.

Compared fields: type config config1 config2 bp_type exclude_user exclude_kernel exclude_hv
exclude_idle precise_ip (config1/config2 are bp_addr/bp_len for breakpoints; absent = 0).

Normalisations (not counted as mismatches)
    * exclude_guest/exclude_host are not compared: perf 6.1 and 6.12 default exclude_guest to 1
      (and an event's own modifier list resets it to 0 unless it holds u, p or H: `cycles:k` has
      0), perfspec defaults it to 0 as REFERENCE.md 6 and perf >= 6.13 do.
    * `:P`: perf resolves the maximum precision by trying opens at run time; precise_ip is not
      compared for cases with a P modifier.
    * Tagged cases (QUIRKS below: the tag, which perfs behave that way, what perf does and what
      perfspec does instead) are run and listed in a separate section when they differ, not
      counted; a tag for another perf than the oracle's is dropped, so the case counts normally.
      Tags of both 6.1 and 6.12 (deliberate differences): repeated-term (a term given twice, or
      twice through an alias: perf ORs, perfspec replaces; config words not compared),
      overlapping-terms, intel_pt-default-config, cache-case (`LLC-LOADS`), cache-duplicate
      (`l1-d-stores-write`), colon-after-slash (`cycles/period=1/:u`), leader-only (D/e on a
      member), unterminated-group (`{cycles`), empty-modifier (`cycles:`), tracepoint-terms
      (`sched:x/period=3/`), perf-stat-term (freq, inherit, no-inherit, call-graph), dotted-cache
      (`L1D.READ.MISS`, perfspec's own form).  6.1 only (6.12 behaves as perfspec does):
      bare-multibit (`cpu/umask/` = 1), weak-single (`cycles:W`), mod-R, config3,
      cache-branches-prefix (`branches-misses`), pmu-glob (`uncore_imc_*/event=1/`),
      hybrid-numeric (`r1a8` fanned out over cpu_atom/cpu_core).  When a tagged case agrees anyway
      it counts normally.
    * Any event string listed in known_differences.txt (one `EVENT reason...` per line) is reported
      as "allowed" and left out of the agreement ratio.

Exit status: 0 all good; 1 agreement below --min-agreement or an unallowed mismatch or
accept/reject disagreement; 2 usage or environment error (no perfspec binary, no perf and no cache).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_FIXTURES = os.path.join(REPO, "tests", "fixtures")
DEFAULT_KNOWN = os.path.join(HERE, "known_differences.txt")
DEFAULT_PERFSPEC = os.path.join(REPO, "build", "perfspec")
FIXTURE_NAMES = ["intel_skx", "amd_zen3", "arm_n1", "hybrid_adl", "pmu_names"]
LIVE = "live"
NAME_FIXTURES = {"pmu_names"}       # fixtures that also get Gen.name_cases()
ORACLE_FORMAT = 1

COMPARE_FIELDS = ["type", "config", "config1", "config2", "bp_type", "exclude_user",
                  "exclude_kernel", "exclude_hv", "exclude_idle", "precise_ip"]
CONFIG_WORDS = ["config", "config1", "config2"]
# Fields perf -vv prints that the oracle keeps (the rest of the block is open-time bookkeeping).
PERF_FIELDS = {"type", "config", "{ bp_addr, config1 }", "{ bp_len, config2 }", "config3",
               "bp_type", "exclude_user", "exclude_kernel", "exclude_hv", "exclude_idle",
               "exclude_host", "exclude_guest", "precise_ip", "pinned", "exclusive",
               "sample_period", "sample_freq", "{ sample_period, sample_freq }", "freq"}
PERF_RENAME = {"{ bp_addr, config1 }": "config1", "{ bp_len, config2 }": "config2",
               "{ sample_period, sample_freq }": "sample_period"}
# One attr line of -vv: "  NAME<padding> VALUE", perf 6.12 adding " (ANNOTATION)" after some
# values: `type 4 (cpu)`, `config 0x174 (sched:sched_switch)`, `config 0 (PERF_COUNT_HW_CACHE_...
# | ... | ...)`; symbolic values (`sample_type IDENTIFIER`) are not numbers and are skipped.
PERF_ATTR_LINE = re.compile(r"\s+(.+?)\s{2,}(\S+)(?:\s+\(.*\))?\s*$")
# Lines perf prints before it retries an open with a changed attr: 6.1 and 6.12 print "switching
# off ...", "decreasing precise_ip by one", "... trying to fall back ..." / "Trying to fall back
# ..." (evsel__fallback); 6.1 also "Weak group for X/N failed".  6.12 prints that line when a member
# fails and goes on with the next event; its second pass then prints "reopening weak X" before
# each member it reopens alone, handled apart in parse_perf (it may open a member for the first
# time).
RETRY_MARKERS = re.compile(r"switching off|decreasing precise_ip|[Tt]rying to fall back")
RETRY_MARKERS_61 = re.compile(RETRY_MARKERS.pattern + r"|Weak group for")
REJECT_MARKERS = re.compile(r"event syntax error|Run 'perf list' for a list of valid events|"
                            r"event parser found nothing")

# --------------------------------------------------------------------------- sysfs trees


def read_text(path):
    with open(path, "r", errors="replace") as f:
        return f.read().strip()


def parse_format(spec):
    """'config1:0-7,32' -> ('config1', [0..7, 32]); None when malformed."""
    m = re.fullmatch(r"(config[0-9]?):([0-9,\-]+)", spec.strip())
    if not m:
        return None
    bits = []
    for part in m.group(2).split(","):
        if "-" in part:
            lo, hi = part.split("-")
            bits.extend(range(int(lo), int(hi) + 1))
        elif part:
            bits.append(int(part))
    return m.group(1), bits


def parse_terms(s):
    """'event=0x3c,umask=1,inv' -> {'event': '0x3c', 'umask': '1', 'inv': None}"""
    out = {}
    for t in s.split(","):
        t = t.strip()
        if not t:
            continue
        k, _, v = t.partition("=")
        out[k.strip().lower()] = v.strip() if _ else None
    return out


ALIAS_META = ("scale", "unit", "per-pkg", "snapshot")


class Pmu:
    def __init__(self, name, path):
        self.name = name
        self.type = int(read_text(os.path.join(path, "type")))
        self.formats = {}
        self.events = {}
        self.caps = {}
        fdir = os.path.join(path, "format")
        if os.path.isdir(fdir):
            for term in sorted(os.listdir(fdir)):
                f = parse_format(read_text(os.path.join(fdir, term)))
                if f:
                    self.formats[term] = f
        edir = os.path.join(path, "events")
        if os.path.isdir(edir):
            for ev in sorted(os.listdir(edir)):
                if ev.rpartition(".")[2] in ALIAS_META and "." in ev:  # NAME.scale, NAME.unit...
                    continue
                try:
                    self.events[ev] = read_text(os.path.join(edir, ev))
                except OSError:
                    pass
        cdir = os.path.join(path, "caps")
        if os.path.isdir(cdir):
            for c in sorted(os.listdir(cdir)):
                self.caps[c] = read_text(os.path.join(cdir, c))
        self.cpus = None
        for f in ("cpus", "cpumask"):
            if os.path.exists(os.path.join(path, f)):
                self.cpus = read_text(os.path.join(path, f))
        # some uncore drivers name the PMU a second way in an `alias` file (perf 6.12 matches it)
        self.alias_name = read_text(os.path.join(path, "alias")) \
            if os.path.isfile(os.path.join(path, "alias")) else None


def load_pmus(root):
    ddir = os.path.join(root, "bus", "event_source", "devices")
    pmus = {}
    for name in sorted(os.listdir(ddir)):
        p = os.path.join(ddir, name)
        if os.path.exists(os.path.join(p, "type")):
            pmus[name] = Pmu(name, p)
    return pmus


def load_tracepoints(root):
    """{(sys, event): id} from ROOT/kernel/tracing/events."""
    out = {}
    edir = os.path.join(root, "kernel", "tracing", "events")
    if not os.path.isdir(edir):
        return out
    for sys_ in sorted(os.listdir(edir)):
        sdir = os.path.join(edir, sys_)
        if not os.path.isdir(sdir):
            continue
        for ev in sorted(os.listdir(sdir)):
            idf = os.path.join(sdir, ev, "id")
            if os.path.isfile(idf):
                out[(sys_, ev)] = int(read_text(idf))
    return out

# --------------------------------------------------------------------------- live snapshot


LIVE_TP_SYSTEMS = ["sched", "irq", "syscalls", "raw_syscalls", "timer", "signal", "task"]
SNAPSHOT_SKIP = {"power", "subsystem", "uevent", "perf_event_mux_interval_ms"}


def snapshot_live():
    """Copy of the live PMU folders + tracefs ids of LIVE_TP_SYSTEMS as {relpath: text}."""
    files = {}
    ddir = "/sys/bus/event_source/devices"
    for pmu in sorted(os.listdir(ddir)):
        base = os.path.join(ddir, pmu)
        for sub in ("type", "cpumask", "cpus", "alias"):
            p = os.path.join(base, sub)
            if os.path.isfile(p):
                files["bus/event_source/devices/%s/%s" % (pmu, sub)] = read_text(p) + "\n"
        for sub in ("format", "events", "caps"):
            d = os.path.join(base, sub)
            if os.path.isdir(d):
                for f in sorted(os.listdir(d)):
                    try:
                        files["bus/event_source/devices/%s/%s/%s" % (pmu, sub, f)] = \
                            read_text(os.path.join(d, f)) + "\n"
                    except OSError:
                        pass
    script = ("[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing; "
              "cd /sys/kernel/tracing/events && for s in %s; do [ -d $s ] && for e in $s/*/id; do "
              "[ -f $e ] && echo \"$e $(cat $e)\"; done; done; true" % " ".join(LIVE_TP_SYSTEMS))
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                       timeout=120)
    for line in p.stdout.splitlines():
        path, _, id_ = line.rpartition(" ")
        if path and id_.isdigit():
            files["kernel/tracing/events/" + path] = id_ + "\n"
    if not any(k.startswith("kernel/") for k in files):
        raise RuntimeError("could not read the live tracefs: %s" % p.stderr.strip())
    return files


def materialise(files, dest):
    for rel, text in files.items():
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

# --------------------------------------------------------------------------- generation

HW_SYMBOLS = ["cpu-cycles", "cycles", "instructions", "cache-references", "cache-misses",
              "branch-instructions", "branches", "branch-misses", "bus-cycles",
              "stalled-cycles-frontend", "idle-cycles-frontend", "stalled-cycles-backend",
              "idle-cycles-backend", "ref-cycles"]
SW_SYMBOLS = ["cpu-clock", "task-clock", "page-faults", "faults", "context-switches", "cs",
              "cpu-migrations", "migrations", "minor-faults", "major-faults", "alignment-faults",
              "emulation-faults", "dummy", "bpf-output", "cgroup-switches"]
CACHE_TYPES = [["L1-dcache", "l1-d", "l1d", "L1-data"], ["L1-icache", "l1-i", "l1i", "L1-instruction"],
               ["LLC", "L2"], ["dTLB", "d-tlb", "Data-TLB"], ["iTLB", "i-tlb", "Instruction-TLB"],
               ["branch", "branches", "bpu", "btb", "bpc"], ["node"]]
CACHE_OPS = [["load", "loads", "read"], ["store", "stores", "write"],
             ["prefetch", "prefetches", "speculative-read", "speculative-load"]]
CACHE_RESULTS = [["refs", "Reference", "ops", "access"], ["misses", "miss"]]
GOOD_MODS = "ukhIGHSDe"


# --------------------------------------------------------------------------- quirk tags
# A tagged case is one on which perf behaves in a known way that perfspec deliberately does not
# copy (REFERENCE.md, docs/perf-compatibility.md), or that only `perf stat` has.  When such a case
# differs it is listed in its own section and not counted; when it agrees anyway it counts
# normally.  Each tag names the perfs that behave that way: against an oracle of another perf the
# tag is dropped and the case counts like any other (so a 6.1-only tag that still differs against
# 6.12 shows up as a mismatch).  The third element lists fields not compared under the tag.
# Tags are set by the generator (Gen) or recognised from the string (detect_quirks).
QUIRKS = {
    # perf 6.1 only: perf 6.12 behaves as perfspec does
    "bare-multibit": (("6.1",), (), "`cpu/cmask/`: perf 6.1 sets a bare multi-bit term to 1; "
                      "6.12 and perfspec reject it (no value assigned for term)"),
    "weak-single": (("6.1",), (), "`cycles:W`: perf 6.1 ignores W on a single event; 6.12 and "
                    "perfspec reject it (Weak modifier is for use with groups)"),
    "mod-R": (("6.1",), (), "`cycles:R`: perf 6.1 has no R modifier; 6.12 and perfspec accept "
              "it (6.12's perf stat opens nothing for it)"),
    "config3": (("6.1",), (), "`cpu/config3=1/`: perf 6.1 has no config3 term; 6.12 and "
                "perfspec accept it (6.12's -vv does not print config3: not compared)"),
    "cache-branches-prefix": (("6.1",), (), "`branches-misses`: perf 6.1 lexes `branches` as "
                              "the hardware event, then fails; 6.12 and perfspec take the longest "
                              "cache name"),
    "pmu-glob": (("6.1",), (), "`uncore_imc_*/event=1/`: perf 6.1 has no PMU globs; 6.12 and "
                 "perfspec expand them with fnmatch"),
    "hybrid-numeric": (("6.1",), (), "raw `rNNN` and `type:config` on a hybrid tree: perf 6.1 "
                       "fans them out over cpu_atom/cpu_core (rewriting any type into a "
                       "hardware event); 6.12 and perfspec take them literally"),
    # perf 6.1 and 6.12 alike: deliberate differences
    "repeated-term": (("6.1", "6.12"), CONFIG_WORDS, "a term given twice in one /.../, a "
                      "`config=` word beside a format term of that word, or a user term the "
                      "alias already sets (`cpu/mem-loads,ldlat=5/`): perf ORs the values "
                      "(ldlat 3|5 = 7), perfspec lets the later term replace the bits; config "
                      "words not compared"),
    "overlapping-terms": (("6.1", "6.12"), (), "two terms, or an alias term and a user term, "
                          "writing overlapping bits (`cpu/ldlat=0x984f,offcore_rsp=1/`): perf "
                          "ORs them into the word, perfspec lets the later one replace the "
                          "earlier's bits"),
    "intel_pt-default-config": (("6.1", "6.12"), CONFIG_WORDS, "perf ORs intel_pt's default "
                                "config (tsc, mtc, mtc_period=3, psb_period=3, pt, branch; "
                                "arch/x86/util/pmu.c) into every intel_pt event, perfspec encodes "
                                "what was written; config words not compared"),
    "cache-case": (("6.1", "6.12"), (), "`LLC-LOADS`: perf lexes cache names case-sensitively "
                   "and rejects other cases; perfspec accepts any case (REFERENCE 3)"),
    "cache-duplicate": (("6.1", "6.12"), (), "two ops or two results in a cache name "
                        "(`l1-d-stores-write`): perf keeps the first and silently ignores the "
                        "second; perfspec rejects the name"),
    "colon-after-slash": (("6.1", "6.12"), (), "`cycles/period=1/:u`, `cpu/event=1/:u`: perf's "
                          "grammar has no ':' after a closing slash; REFERENCE 2 allows it"),
    "leader-only": (("6.1", "6.12"), (), "`D`/`e` on a group member that is not the leader: "
                    "perf accepts it (and sets pinned/exclusive on the member); REFERENCE 6 "
                    "makes them leader-only"),
    "unterminated-group": (("6.1", "6.12"), (), "`{cycles`: perf's event lexer accepts an "
                           "unclosed group; perfspec reports a syntax error"),
    "empty-modifier": (("6.1", "6.12"), (), "`cycles:`: perf accepts a colon with no "
                       "modifiers; perfspec reports a syntax error"),
    "tracepoint-terms": (("6.1", "6.12"), (), "`sched:sched_switch/period=3/`: perf allows only "
                         "call-graph and stack-size on a tracepoint; perfspec every built-in "
                         "term"),
    "perf-stat-term": (("6.1", "6.12"), (), "freq, inherit, no-inherit, call-graph: valid in "
                       "the language, rejected by perf stat (not usable in 'perf stat')"),
    # no perf has it
    "dotted-cache": (("6.1", "6.12"), (), "`L1D.READ.MISS`: perfspec's own cache form "
                     "(REFERENCE 3); perf has no such event"),
}


def merge_quirks(*tags):
    """'a', None, 'b+a' -> 'a+b' (tags joined by '+', each once, in order); None when empty."""
    out = []
    for t in tags:
        for x in (t or "").split("+"):
            if x and x not in out:
                out.append(x)
    return "+".join(out) or None


def settle_quirks(case, family, detected=None):
    """Keep only the tags of case.quirk (plus DETECTED) that describe FAMILY's perf (None: 6.12);
    fields ignored only for a dropped tag are compared again."""
    family = family or "6.12"
    tags = (merge_quirks(case.quirk, detected) or "").split("+")
    keep = [t for t in tags if t and (t not in QUIRKS or family in QUIRKS[t][0])]
    drop = [t for t in tags if t and t not in keep]
    needed = {f for t in keep for f in QUIRKS.get(t, ((), ()))[1]}
    dropped = {f for t in drop for f in QUIRKS[t][1]} - needed
    case.ignore = tuple(f for f in case.ignore if f not in dropped)
    case.quirk = "+".join(keep) or None
    return case


_CACHE_TYPES = ["l1-dcache", "l1-d", "l1d", "l1-data", "l1-icache", "l1-i", "l1i", "l1-instruction",
                "llc", "l2", "dtlb", "d-tlb", "data-tlb", "itlb", "i-tlb", "instruction-tlb", "branch",
                "branches", "bpu", "btb", "bpc", "node"]
_CACHE_OPS = ["load", "loads", "read", "store", "stores", "write", "prefetch", "prefetches",
              "speculative-read", "speculative-load"]
_CACHE_RESULTS = ["refs", "reference", "ops", "access", "misses", "miss"]


def _split_top(s, sep=","):
    out, cur, depth, slash, quote = [], "", 0, False, False
    for ch in s:
        if quote:
            quote = ch != "'"
        elif ch == "'":
            quote = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "/":
            slash = not slash
        elif ch == sep and depth == 0 and not slash:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    out.append(cur)
    return out


def _cache_duplicate(name):
    n = name.lower()
    best = None
    for t in _CACHE_TYPES:
        if n.startswith(t) and (len(n) == len(t) or n[len(t)] == "-") and (not best or len(t) > len(best)):
            best = t
    if not best:
        return False
    rest, ops, results = n[len(best):], 0, 0
    while rest:
        rest = rest[1:]
        tok = max((t for t in _CACHE_OPS + _CACHE_RESULTS
                   if rest.startswith(t) and (len(rest) == len(t) or rest[len(t)] == "-")),
                  key=len, default=None)
        if not tok:
            return False
        ops += tok in _CACHE_OPS
        results += tok in _CACHE_RESULTS
        rest = rest[len(tok):]
    return ops > 1 or results > 1


def _overlapping_terms(event, pmus):
    m = re.match(r"^([^/:{}]+)/(.*)/", event)
    if not m or not pmus:
        return False
    name, body = m.group(1), m.group(2)
    pmu = pmus.get(name)
    if pmu is None:
        cands = [p for n, p in sorted(pmus.items())
                 if re.sub(r"_[0-9a-fA-F]+$", "", n) in (name, "uncore_" + name)]
        pmu = cands[0] if cands else None
    if pmu is None:
        return False
    terms = []
    for t in _split_top(body):
        k, eq, v = t.partition("=")
        alias = None
        if not eq and k.lower() in {e.lower() for e in pmu.events} and k not in pmu.formats:
            alias = next(e for e in pmu.events if e.lower() == k.lower())
        elif k == "event" and v and not re.match(r"^(0x[0-9a-fA-F]+|[0-9]+)$", v):
            alias = next((e for e in pmu.events if e.lower() == v.lower()), None)
        if alias:
            terms += list(parse_terms(pmu.events[alias]).keys())
        else:
            terms.append(k)
    words = {}
    for t in terms:
        if t in ("config", "config1", "config2", "config3"):
            bits = set(range(64))
            word = t
        elif t in pmu.formats:
            word, bl = pmu.formats[t]
            bits = set(bl)
        else:
            continue
        if words.get(word, set()) & bits:
            return True
        words.setdefault(word, set()).update(bits)
    return False


def detect_quirks(fixture, event, pmus):
    """The quirk tags (QUIRKS) recognisable from the string itself, '+'-joined, or None."""
    hybrid = pmus is not None and "cpu_core" in pmus and "cpu_atom" in pmus
    found = []
    for item in _split_top(event):
        inner = item
        members = [item]
        if "{" in item:
            inner = item[item.index("{") + 1:item.rindex("}")] if "}" in item else item
            members = _split_top(inner)
        for i, ev in enumerate(members):
            if re.search(r"/:", ev):
                found.append("colon-after-slash")
            if hybrid and (re.match(r"^r[0-9a-fA-F]+([:/]|$)", ev) or re.match(r"^[0-9]+:[0-9]", ev)):
                found.append("hybrid-numeric")
            if _cache_duplicate(re.split(r"[:/]", ev)[0]):
                found.append("cache-duplicate")
            own = ev.rsplit("/", 1)[1] if ev.count("/") >= 2 else (ev.rsplit(":", 1)[1] if ":" in ev else "")
            if "{" in item and i > 0 and re.search(r"[De]", own.lstrip(":")) and \
                    re.fullmatch(r":?[ukhIGHpPSDWebR]*", own):
                found.append("leader-only")
            if _overlapping_terms(ev, pmus):
                found.append("overlapping-terms")
    return merge_quirks(*found)


def detect_quirk(fixture, event, pmus):
    """The first tag of detect_quirks (kept for callers that want one)."""
    q = detect_quirks(fixture, event, pmus)
    return q.split("+")[0] if q else None


class Case:
    __slots__ = ("event", "kind", "quirk", "ignore")

    def __init__(self, event, kind, quirk=None, ignore=()):
        self.event, self.kind, self.quirk, self.ignore = event, kind, quirk, tuple(ignore)


class Gen:
    def __init__(self, name, root, seed, pmus, tracepoints):
        self.name, self.root = name, root
        self.r = random.Random("%s:%s" % (seed, name))
        self.pmus = pmus
        self.tps = tracepoints
        self.fmt_pmus = [p for p in pmus.values() if p.formats and p.name not in
                         ("kprobe", "uprobe")]
        self.alias_pmus = [p for p in pmus.values() if p.events]
        self.hybrid = "cpu_core" in pmus

    def pick(self, pmus):
        """A PMU, uniform over families (uncore_imc_0..5 count once) so the core PMU is not drowned."""
        fams = {}
        for p in pmus:
            fams.setdefault(re.sub(r"_\d+$", "", p.name), []).append(p)
        fam = self.r.choice(sorted(fams))
        if fam == "intel_pt" and len(fams) > 1 and self.r.random() < 0.7:
            fam = self.r.choice(sorted(f for f in fams if f != "intel_pt"))  # mostly a perf quirk
        return self.r.choice(fams[fam])

    # --- numbers and modifiers
    def num(self, v):
        return hex(v) if self.r.random() < 0.6 else str(v)

    def rand_value(self, nbits):
        r = self.r.random()
        maxv = (1 << nbits) - 1
        if r < 0.15:
            return maxv
        if r < 0.25:
            return 0
        if r < 0.35:
            return 1
        return self.r.randint(0, maxv)

    def mods(self, allow_p=True, bad=False):
        """(modifier text without ':', ignore-fields, quirk)"""
        r = self.r
        if bad:
            return r.choice(["uu", "pppp", "kk", "uku", "q", "x", "ppppu", "IuI",
                             "GG", "SS"]), (), None
        letters = r.sample(GOOD_MODS, r.randint(1, 3)) if r.random() < 0.8 else []
        p = ""
        if allow_p and r.random() < 0.35:
            p = "p" * r.randint(1, 3)
        ignore = ()
        if allow_p and not p and r.random() < 0.08:
            p = "P"
            ignore = ("precise_ip",)
        m = letters[:]
        if p:
            m.insert(r.randint(0, len(m)), p)
        s = "".join(m)
        return (s or "u"), ignore, None

    def with_mods(self, ev, prob=0.4, allow_p=True, pmu_form=False):
        """Attach random modifiers: `ev:mods`, or `ev/.../mods` right after a closing slash (perf
        6.1 rejects `/.../:mods`; a few such cases are generated, tagged when REFERENCE.md allows
        the colon, i.e. for the non-PMU forms)."""
        if self.r.random() < prob:
            m, ign, q = self.mods(allow_p)
            if ev.endswith("/"):
                if self.r.random() < 0.1:
                    return ev + ":" + m, ign, q or (None if pmu_form else "colon-after-slash")
                return ev + m, ign, q
            return ev + ":" + m, ign, q
        return ev, (), None

    # --- event forms
    def hw(self):
        s = self.r.choice(HW_SYMBOLS)
        x = self.r.random()
        if x < 0.15:
            s += "//"
        elif x < 0.25:
            s += "/period=%s/" % self.num(self.r.randint(1, 1 << 20))
        elif x < 0.3:
            s += "/name=ev%d/" % self.r.randint(0, 9)
        ev, ign, q = self.with_mods(s, 0.5)
        return Case(ev, "hw", q, ign)

    def sw(self):
        s = self.r.choice(SW_SYMBOLS)
        if self.r.random() < 0.15:
            s += "/period=%d/" % self.r.randint(1, 100000)
        ev, ign, q = self.with_mods(s, 0.4)
        return Case(ev, "sw", q, ign)

    def cache(self):
        r = self.r
        t = r.randrange(len(CACHE_TYPES))
        parts = [r.choice(CACHE_TYPES[t])]
        x = r.random()
        op = r.choice(r.choice(CACHE_OPS))
        res = r.choice(r.choice(CACHE_RESULTS))
        if x < 0.55:
            parts += [op, res]
        elif x < 0.7:
            parts += [res, op]
        elif x < 0.82:
            parts += [op]
        elif x < 0.92:
            parts += [res]
        else:
            parts += [op, r.choice(r.choice(CACHE_OPS))]   # two ops: perf decides
        s = "-".join(parts)
        quirk = None
        if r.random() < 0.08:
            s2 = s.upper() if r.random() < 0.5 else s.lower()
            if s2 != s:
                s, quirk = s2, "cache-case"        # perf 6.1 lexes cache names case-sensitively
        if parts[0] == "branches":
            quirk = "cache-branches-prefix"        # perf 6.1 lexes `branches` as the hw symbol
        ev, ign, q = self.with_mods(s, 0.3)
        return Case(ev, "cache", merge_quirks(quirk, q), ign)

    def raw(self):
        r = self.r
        x = r.random()
        if x < 0.75:
            s = "r%x" % r.randint(0, (1 << r.choice([8, 12, 16, 32, 64])) - 1)
        elif x < 0.85:
            s = "r" + "".join(r.choice("0123456789abcdef") for _ in range(17))  # too long
        elif x < 0.92:
            s = "r0x%x" % r.randint(0, 0xffff)
        else:
            s = "r%X" % r.randint(0x100, 0xffff)
        ev, ign, q = self.with_mods(s, 0.3)
        return Case(ev, "raw", q, ign)

    def typed(self):
        r = self.r
        types = sorted({p.type for p in self.pmus.values()} | {0, 3, 4})
        t = r.choice(types + [99])
        c = r.randint(0, (1 << r.choice([4, 8, 16, 40])) - 1)
        s = "%d:%s" % (t, self.num(c))
        ev, ign, q = self.with_mods(s, 0.3)
        return Case(ev, "type:config", q, ign)

    def bp(self):
        r = self.r
        addr = r.choice([0x1000, 0x2000, 0x7ffe1234, 0xffffffff81000000, r.randint(1, 1 << 47)])
        s = "mem:" + self.num(addr)
        if r.random() < 0.4:
            s += "/" + str(r.choice([1, 2, 4, 8, 3]))
        if r.random() < 0.6:
            acc = r.choice(["r", "w", "x", "rw", "wr", "rwx", "rx", "rr", "z"])
            s += ":" + acc
        ev, ign, q = self.with_mods(s, 0.25, allow_p=False)
        return Case(ev, "breakpoint", q, ign)

    def pmu_terms(self, pmu, n):
        """[(text, word, bits)] of n distinct random format terms with values."""
        r = self.r
        names = r.sample(sorted(pmu.formats), min(n, len(pmu.formats)))
        out = []
        for t in names:
            word, bits = pmu.formats[t]
            if len(bits) == 1 and r.random() < 0.6:
                out.append((t, t))
            else:
                out.append((t, "%s=%s" % (t, self.num(self.rand_value(len(bits))))))
        return out

    def pmu_event(self):
        r = self.r
        pmu = self.pick(self.fmt_pmus)
        name = pmu.name
        quirk, ignore, kind = None, (), "pmu"
        terms = [t for _, t in self.pmu_terms(pmu, r.randint(1, 4))]
        x = r.random()
        if x < 0.06:                           # whole words
            w = r.choice(["config", "config1", "config2"])
            terms.append("%s=%s" % (w, self.num(r.randint(0, (1 << 64) - 1))))
            kind = "pmu-config-word"
            if any(pmu.formats.get(t.split("=")[0], ("",))[0] == w for t in terms[:-1]):
                quirk, ignore = "repeated-term", CONFIG_WORDS   # perf 6.1 ORs the word in
        elif x < 0.09:
            terms = ["config3=1"]
            quirk = "config3"                  # perf 6.1 has no config3
        elif x < 0.14:                         # value too big
            multi = [t for t, (w, b) in pmu.formats.items() if len(b) < 64]
            if multi:
                t = r.choice(multi)
                terms = ["%s=%s" % (t, self.num((1 << len(pmu.formats[t][1])) + r.randint(0, 9)))]
                kind = "pmu-too-big"
        elif x < 0.18:                         # unknown term
            terms.append(r.choice(["foo=1", "bogus", "evnt=0x3c", "umask2=1"]))
            kind = "pmu-unknown-term"
        elif x < 0.21:                         # repeated term: perf 6.1 ORs
            t = r.choice(sorted(pmu.formats))
            terms += ["%s=1" % t, "%s=2" % t]
            quirk, ignore = "repeated-term", CONFIG_WORDS
        elif x < 0.23:                         # bare multi-bit term: perf 6.1 sets 1
            multi = [t for t, (w, b) in pmu.formats.items() if len(b) > 1]
            if multi:
                terms = [r.choice(multi)]
                quirk = "bare-multibit"
        elif x < 0.27:                         # built-in terms
            t = r.choice(["period=%d" % r.randint(1, 99999), "name=foo",
                          "freq=%d" % r.randint(1, 4000), "percore", "no-inherit", "inherit"])
            terms.append(t)
            kind = "pmu-builtin-term"
            if t.split("=")[0] in ("freq", "inherit", "no-inherit"):
                quirk = "perf-stat-term"       # perf stat rejects sampling-only terms
        elif x < 0.30:                         # syntax errors
            return Case(r.choice(["%s/event=/", "%s/event=0x3c", "%s//event=1/", "%s/event=0xg/",
                                  "%s/,/", "%s/=1/", "%s/event==1/"]) % name, "pmu-syntax")
        if r.random() < 0.12 and name.startswith("uncore_") and re.search(r"_\d+$", name):
            base = re.sub(r"_\d+$", "", name)
            name = base if r.random() < 0.5 else base[len("uncore_"):]
            kind += "-wildcard"
        s = "%s/%s/" % (name, ",".join(terms))
        ev, ign, q = self.with_mods(s, 0.35, pmu_form=True)
        if pmu.name == "intel_pt":                 # perf ORs intel_pt's default config in
            quirk, ignore = merge_quirks(quirk, "intel_pt-default-config"), CONFIG_WORDS
        return Case(ev, kind, merge_quirks(quirk, q), tuple(ignore) + tuple(ign))

    def alias_event(self):
        r = self.r
        pmu = self.pick(self.alias_pmus)
        alias = r.choice(sorted(pmu.events))
        aterms = parse_terms(pmu.events[alias])
        x = r.random()
        quirk, ignore = None, ()
        name = pmu.name
        if x < 0.3:
            if alias in HW_SYMBOLS or alias in SW_SYMBOLS:
                s = "%s/%s/" % (name, alias)
            else:
                s = alias                          # bare: every PMU that has it
            kind = "alias-bare"
        elif x < 0.55:
            s = "%s/%s/" % (name, alias)
            kind = "alias-pmu"
        elif x < 0.75:
            extra = self.pmu_terms(pmu, 1) if pmu.formats else []
            if not extra:
                s = "%s/%s/" % (name, alias)
            else:
                t, txt = extra[0]
                if t in aterms:
                    quirk, ignore = "repeated-term", CONFIG_WORDS
                s = "%s/%s,%s/" % (name, alias, txt)
            kind = "alias-plus-term"
        elif x < 0.85:
            s = "%s/event=%s/" % (name, alias)
            kind = "alias-event="
        elif x < 0.92:
            s = "%s/%s/" % (name, alias.upper() if r.random() < 0.5 else alias.title())
            kind = "alias-case"
        else:
            s = "%s/%s_nosuch/" % (name, alias)
            kind = "alias-unknown"
        if s == alias or "/" in s:
            if name.startswith("uncore_") and re.search(r"_\d+$", name) and r.random() < 0.3 \
                    and "/" in s:
                base = re.sub(r"_\d+$", "", name)
                s = s.replace(name + "/", (base if r.random() < 0.5 else base[7:]) + "/", 1)
                kind += "-wildcard"
        ev, ign, q = self.with_mods(s, 0.3, pmu_form=True)
        return Case(ev, kind, merge_quirks(quirk, q), tuple(ignore) + tuple(ign))

    def bad(self):
        r = self.r
        x = r.random()
        if x < 0.3:
            c = self.simple()
            base = re.sub(r"(/)[A-Za-z]*$", r"\1", c.event) if "/" in c.event \
                else c.event.split(":")[0] if not c.event.startswith("mem:") else "mem:0x1000"
            m, _, _ = self.mods(bad=True)
            return Case(base + ("" if base.endswith("/") else ":") + m, "bad-modifier", c.quirk)
        if x < 0.5:
            return Case(r.choice(["nopmu/event=1/", "uncore_nosuch/event=1/", "cpux/event=1/",
                                  "imc_9/event=1/"]), "unknown-pmu")
        if x < 0.75:
            ev = r.choice(["cycles,", ",cycles", "{cycles", "cycles}", "{}", "cycles::u",
                                  "cycles/", "cycles:", "/event=1/", "{cycles,}", "cycles,,instructions",
                                  "mem:", "mem:0x1000:rwxr", "5:", ":1", "cycles//u//", "cycles:"])
            return Case(ev, "syntax", {"{cycles": "unterminated-group",
                                       "cycles:": "empty-modifier"}.get(ev))
        return Case(r.choice(["nosuchevent", "cyclez", "instruction", "L3-dcache-loads",
                              "L1-icache-stores", "L1-icache-store-misses", "iTLB-prefetches",
                              "branch-stores", "branch-prefetch-misses", "bpu-writes",
                              "iTLB-store-misses"]), "unknown-event")

    def simple(self):
        r = self.r
        choices = [(self.hw, 3), (self.sw, 2), (self.cache, 3), (self.raw, 1), (self.typed, 1),
                   (self.bp, 1)]
        if self.fmt_pmus:
            choices.append((self.pmu_event, 6))
        if self.alias_pmus:
            choices.append((self.alias_event, 4))
        tot = sum(w for _, w in choices)
        x = r.uniform(0, tot)
        for f, w in choices:
            x -= w
            if x <= 0:
                return f()
        return choices[-1][0]()

    def group(self):
        r = self.r
        members = []
        quirk, ignore = None, []
        for _ in range(r.randint(2, 3)):
            c = self.simple()
            members.append(c.event)
            quirk = merge_quirks(quirk, c.quirk)
            ignore += c.ignore
        s = "{%s}" % ",".join(members)
        if r.random() < 0.1:
            s = "grp%d%s" % (r.randint(0, 9), s)
        if r.random() < 0.6:
            m, ign, q = self.mods(allow_p=r.random() < 0.5)
            if r.random() < 0.1:
                m += "W"
            s += ":" + m
            ignore += ign
            quirk = merge_quirks(quirk, q)
        return Case(s, "group", quirk, tuple(ignore))

    def listed(self):
        a, b = self.simple(), self.simple()
        return Case(a.event + "," + b.event, "list", merge_quirks(a.quirk, b.quirk),
                    a.ignore + b.ignore)

    def quirk_cases(self):
        """A few fixed perf-6.1-quirk probes so the report documents them."""
        out = [Case("cycles:W", "single-weak", "weak-single"),
               Case("cycles:R", "retire-lat", "mod-R"),
               Case("L1D.READ.MISS", "cache-dotted", "dotted-cache"),  # perfspec's own extension
               Case("cycles//:u", "hw", "colon-after-slash")]
        core = [p for p in self.pmus if p in ("cpu", "cpu_core", "armv8_pmuv3_0", "cpum_cf")]
        for p in core:
            out += [Case("%s/r1a8/" % p, "pmu-raw"), Case("%s/r0x1a8/u" % p, "pmu-raw")]
        uncore = sorted({re.sub(r"_\d+$", "", p) for p in self.pmus
                         if p.startswith(("uncore_", "amd_iommu_")) and re.search(r"_\d+$", p)})
        for base in uncore[:2]:
            term = sorted(self.pmus[base + "_0"].formats)[0]
            out.append(Case("%s_*/%s=1/" % (base, term), "pmu-glob", "pmu-glob"))
        for p in self.fmt_pmus[:2]:
            multi = [t for t, (w, b) in p.formats.items() if len(b) > 1]
            if multi:
                out.append(Case("%s/%s/" % (p.name, multi[0]), "pmu", "bare-multibit"))
        return out

    def name_cases(self):
        """Every way of naming the PMUs of the pmu_names tree that perf 6.12 or REFERENCE.md knows
        of, and near misses: exact names, the `alias` file's name, `uncore_` left out, the name
        without its instance suffix (`_N`, `N`, hex), a partial suffix (`imc_1` against
        uncore_imc_1 and uncore_imc_10), a trailing `_`, globs (with and without `uncore_`),
        `uncore_` added to a name that has none, other case, and alias events on them."""
        out = []
        t = "event=1"
        for base in ("hisi_sccl1_ddrc0", "hisi_sccl1_ddrc", "hisi_sccl3_ddrc", "hisi_sccl",
                     "hisi_sccl1", "hisi_sccl1_ddr", "hisi_sccl1_ddrc_", "sccl1_ddrc",
                     "hisi_sccl*_ddrc1", "hisi_sccl?_ddrc?",
                     "uncore_imc", "imc", "uncore_imc_", "imc_", "uncore_imc_1", "imc_1",
                     "uncore_imc_10", "imc_10", "uncore_imc_1*", "uncore_im", "uncore_imc1",
                     "uncore_imc_0x1", "uncore_imc_01",
                     "uncore_cha", "cha", "uncore_cha_", "uncore_cha_a", "cha_a", "uncore_cha_*",
                     "uncore_cha_A",
                     "uncore_foo", "foo", "uncore_foo_", "uncore_foo_abc", "foo_abc",
                     "uncore_foo_ab", "foo_a", "uncore_foo_ABC",
                     "uncore_iio", "iio_0", "uncore_type_1_0", "type_1_0", "uncore_type_1",
                     "type_1", "uncore_type_1_", "uncore_type_*", "uncore_type_1_0*",
                     "cpum_cf", "cpum", "cpum_", "cpum_c", "cpum_cf_0",
                     "uncore*", "*imc_1", "*_imc_1", "uncore_imc_?", "type_1*", "UNCORE_IMC",
                     "uncore_IMC", "uncore_cpum_cf", "uncore_hisi_sccl1_ddrc0",
                     "uncore_hisi_sccl1_ddrc"):
            out.append(Case("%s/%s/" % (base, t), "pmu-name"))
        for ev in ("hisi_sccl1_ddrc/flux_rd/", "hisi_sccl1_ddrc0/flux_wr/u",
                   "hisi_sccl3_ddrc1/event=flux_rcmd/", "hisi_sccl*/flux_rd/", "flux_rd",
                   "flux_rd:u", "FLUX_RD", "uncore_imc/cas_count_read/", "imc_1/cas_count_read/",
                   "cas_count_read", "clockticks", "uncore_cha/clockticks/",
                   "uncore_type_1_0/clockticks/", "uncore_type_1/clockticks/",
                   "uncore_type_1_1/clockticks/",
                   "type_1/clockticks/k", "cpum_cf/CPU_CYCLES/", "cpum_cf/cpu_cycles/",
                   "CPU_CYCLES", "INSTRUCTIONS:u", "cpum_cf/r1a8/", "foo_ticks",
                   "{uncore_imc_1/event=1/,uncore_imc_10/event=2/}",
                   "{imc_1/event=1/,imc_1/event=2/}", "{uncore_type_1_0/event=1/,task-clock}:u",
                   "uncore_imc_1/event=1/,imc_10/event=2/", "cycles", "L1-dcache-loads"):
            out.append(Case(ev, "pmu-name-alias"))
        return out

    def cases(self, count):
        r = self.r
        out = list(self.quirk_cases())
        if self.name in NAME_FIXTURES:
            have = {c.event for c in out}
            out += [c for c in self.name_cases() if c.event not in have]
        seen = {c.event for c in out}
        tries = 0
        while len(out) < count and tries < count * 20:
            tries += 1
            x = r.random()
            if x < 0.13:
                c = self.bad()
            elif x < 0.23:
                c = self.group()
            elif x < 0.28:
                c = self.listed()
            else:
                c = self.simple()
            if c.event in seen:
                continue
            seen.add(c.event)
            out.append(c)
        return out


def live_cases(seed, count, tps):
    """Cases for the live machine: tracepoints (from the snapshot), software, breakpoints, msr."""
    r = random.Random("%s:live" % seed)
    names = sorted(tps)
    by_sys = {}
    for s, e in names:
        by_sys.setdefault(s, []).append(e)
    fixed = ["sched:sched_switch", "sched:sched_wakeup", "sched:sched_process_exec",
             "syscalls:sys_enter_openat", "syscalls:sys_exit_openat", "irq:irq_handler_entry",
             "sched:sched_wak*", "sched:*switch", "irq:*", "irq:softirq_*", "sched:sched_switch//",
             "sched:sched_switch:u", "sched:sched_switch/period=3/", "sched:nosuch", "nosys:foo",
             "sched:*wake*/period=3/", "syscalls:sys_enter_open*", "{sched:sched_switch,sched:sched_wakeup}:k",
             "sched:sched_switch,task-clock", "msr/tsc/", "msr/event=0x0/", "msr/aperf/",
             "{msr/tsc/,msr/smi/}:W", "mem:0x1000", "mem:0x1000/8:w", "mem:0x2000:x",
             "uprobe/retprobe/", "sched:sched_switch/foo=1/", "irq:irq_handler_entry/call-graph=fp/"]
    out = [Case(e, "tracepoint" if ":" in e and not e.startswith(("mem:", "{msr")) else "live")
           for e in fixed]
    quirks = {"irq:irq_handler_entry/call-graph=fp/": "perf-stat-term",
              "sched:sched_switch/period=3/": "tracepoint-terms",
              "sched:*wake*/period=3/": "tracepoint-terms"}
    for c in out:
        c.quirk = quirks.get(c.event)
    seen = {c.event for c in out}
    tp_sys = [s for s in ("sched", "irq", "syscalls", "raw_syscalls", "timer", "signal") if s in by_sys]
    while len(out) < count:
        x = r.random()
        if x < 0.55:
            s = r.choice(tp_sys)
            e = r.choice(by_sys[s])
            ev = "%s:%s" % (s, e)
            if r.random() < 0.15:
                ev += "//"
            if r.random() < 0.35:
                m = "".join(r.sample("ukhIGH", r.randint(1, 2)))
                ev += ":" + m
            kind = "tracepoint"
        elif x < 0.65:
            s = r.choice([s for s in tp_sys if s != "syscalls"])
            e = r.choice(by_sys[s])
            ev = "%s:%s*" % (s, e[:r.randint(3, max(3, len(e) - 1))])
            kind = "tracepoint-glob"
        elif x < 0.75:
            s = r.choice(tp_sys)
            a = "%s:%s" % (s, r.choice(by_sys[s]))
            b = r.choice(["task-clock", "page-faults", "sched:sched_switch", "cs"])
            ev = "{%s,%s}" % (a, b) + (":" + r.choice("ukh") if r.random() < 0.5 else "")
            kind = "tracepoint-group"
        elif x < 0.85:
            ev = r.choice(SW_SYMBOLS) + (":" + r.choice(["u", "k", "uk", "I", "H"]) if r.random() < 0.4 else "")
            kind = "sw"
        elif x < 0.92:
            ev = "%s:%s_nosuch" % (r.choice(tp_sys), r.choice(["sched", "irq", "x"]))
            kind = "tracepoint-unknown"
        else:
            ev = "mem:0x%x/%d:%s" % (r.randint(1, 1 << 40), r.choice([1, 2, 4, 8]),
                                     r.choice(["r", "w", "rw", "x"]))
            kind = "breakpoint"
        if ev in seen:
            continue
        seen.add(ev)
        out.append(Case(ev, kind))
    return out

# --------------------------------------------------------------------------- perf side


DEFAULT_PERF_CURRENT = os.path.normpath(os.path.join(REPO, "..", "shared", "tools", "perf-current"))
PERF_KINDS = ("current", "system")


class Perf:
    """Which perf answers: "current" is perf 6.12 through shared/tools/perf-current (a Debian trixie
    chroot entered in a private mount namespace; `--sysfs ROOT` bind-mounts the fixture's devices
    folder); "system" is the machine's own perf (Debian's 6.1), run here in `unshare -m` with the
    same bind mount.  The live fixture runs without a bind mount: perf sees the live /sys."""

    def __init__(self, kind="current", current=DEFAULT_PERF_CURRENT):
        self.kind, self.current = kind, current
        self._version = None

    def available(self):
        """(ok, reason).  perf-current is used only when its chroot is already bootstrapped:
        bootstrapping takes minutes and downloads a Debian system, which a test run must not do."""
        if os.geteuid() != 0:
            return False, "needs root (private mount namespace)"
        if not shutil.which("unshare"):
            return False, "no unshare"
        if self.kind == "system":
            return (True, "") if shutil.which("perf") else (False, "no perf in PATH")
        if not (os.path.isfile(self.current) and os.access(self.current, os.X_OK)):
            return False, "no %s (--perf-current)" % self.current
        chroot = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
        if not os.access(os.path.join(chroot, "usr", "bin", "perf"), os.X_OK):
            return False, ("%s is not bootstrapped (run `%s --version` once as root)" %
                           (chroot, self.current))
        return True, ""

    def command(self, root, args):
        """argv and extra environment to run `perf ARGS` over ROOT (None: the live /sys)."""
        if self.kind == "current":
            return [self.current] + (["--sysfs", os.path.abspath(root)] if root else []) + args, {}
        if not root:   # a private namespace all the same: perf may mount tracefs
            return ["unshare", "-m", "perf"] + args, {}
        devices = os.path.join(os.path.abspath(root), "bus", "event_source", "devices")
        script = 'mount --bind "$DEVICES" /sys/bus/event_source/devices && exec perf "$@"'
        return ["unshare", "-m", "sh", "-c", script, "sh"] + args, {"DEVICES": devices}

    def version(self):
        """`perf --version` text, e.g. "perf version 6.12.107"."""
        if self._version is None:
            argv, extra = self.command(None, ["--version"])
            try:
                self._version = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                                               env=dict(os.environ, **extra)).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                self._version = ""
        return self._version or None

    def run(self, root, event, cpuid):
        """`perf stat -vv -e EVENT true` over ROOT -> (exit status, stdout + stderr)."""
        argv, extra = self.command(root, ["stat", "-vv", "-e", event, "true"])
        env = dict(os.environ, LC_ALL="C", **extra)
        env.pop("PERF_CPUID", None)
        if cpuid:
            env["PERF_CPUID"] = cpuid
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout + p.stderr


def perf_family(version):
    """"perf version 6.12.107" -> "6.12"; None when unknown."""
    m = re.search(r"(\d+)\.(\d+)", version or "")
    return "%s.%s" % (m.group(1), m.group(2)) if m else None


FALLBACK_FIELDS = ("exclude_guest", "exclude_host", "precise_ip")


def is_silent_retry(prev, a):
    """perf prints "switching off X" once per process (pr_debug2_peo); later events that need the
    same fallback are retried silently.  A block is such a retry when the previous open failed with
    an error other than ENOENT (which perf stat never retries), at the same pid/cpu, and the block
    differs from the previous one only by fallback fields that were cleared or lowered."""
    if prev is None or prev.get("err") in (None, 0, -2):
        return False
    if (prev["pid"], prev["cpu"]) != (a["pid"], a["cpu"]):
        return False
    pf, af = prev["fields"], a["fields"]
    for k in set(pf) | set(af):
        if k in FALLBACK_FIELDS:
            if af.get(k, 0) > pf.get(k, 0):
                return False
        elif pf.get(k, 0) != af.get(k, 0):
            return False
    return True


def reopen_twin(kept, last, fields):
    """The index in KEPT of the first-pass block a weak-group reopen with FIELDS repeats, or None
    (see parse_perf); LAST is the previous reopen's twin."""
    member = lambda i: i < len(kept) and kept[i].get("group_fd", -1) >= 0  # noqa: E731
    if last >= 0 and member(last + 1) and kept[last + 1]["fields"] == fields:
        return last + 1
    for i in range(last + 1, len(kept)):
        if kept[i]["fields"] == fields and not member(i) and member(i + 1):
            return i
    return None


def drop_cpu_passes(kept, events):
    """perf 6.12's stat gives the evlist the online CPUs instead of the dummy CPU map when it holds
    a bpf-output event (evlist__create_maps), and then opens every per-thread event once per CPU
    index, all printed with cpu -1; an event that failed in the first pass is not tried again
    (counter->errored).  So the cpu -1 blocks are a first pass followed by one or more repeats of
    its successful blocks: keep the first pass (the longest prefix for which that holds)."""
    idx = [i for i, a in enumerate(kept) if a["cpu"] == -1]
    if not any(kept[i]["fields"].get("type") == 1 and kept[i]["fields"].get("config") == 10
               for i in idx):
        return events
    seq = [(kept[i]["fields"], kept[i].get("err") == 0) for i in idx]
    for p in range(len(seq) - 1, 0, -1):
        again = [f for f, ok in seq[:p] if ok]
        rest = [f for f, _ in seq[p:]]
        if again and len(rest) % len(again) == 0 and rest == again * (len(rest) // len(again)):
            drop = set(idx[p:])
            return [e for i, e in enumerate(events) if i not in drop]
    return events


def parse_perf(text, rc=None, family=None):
    """Turn `perf stat -vv` text into an oracle entry (see the module docstring).  FAMILY is the
    perf that printed it ("6.1", "6.12"; None = 6.12): the two use their probe opens differently."""
    attempts, cur, pending, outside = [], None, [], []
    last = None
    for line in text.splitlines():
        if line.startswith("perf_event_attr:"):
            cur = {"fields": {}, "pre": pending, "pid": None, "cpu": None}
            pending = []
            attempts.append(cur)
            continue
        if cur is not None:
            if line.startswith("----"):
                last, cur = cur, None
                continue
            m = PERF_ATTR_LINE.match(line)
            if m and m.group(1) in PERF_FIELDS:
                try:
                    cur["fields"][PERF_RENAME.get(m.group(1), m.group(1))] = int(m.group(2), 0)
                except ValueError:
                    pass
            continue
        m = re.match(r"sys_perf_event_open: pid (-?\d+)\s+cpu (-?\d+)\s+group_fd (-?\d+)", line)
        if m and last is not None and last["pid"] is None:
            last["pid"], last["cpu"] = int(m.group(1)), int(m.group(2))
            last["group_fd"] = int(m.group(3))
            last["err"] = 0 if re.search(r"= \d+\s*$", line) else None
            continue
        m = re.match(r"sys_perf_event_open failed, error (-?\d+)", line)
        if m and last is not None and last.get("err") is None:
            last["err"] = int(m.group(1))
            continue
        pending.append(line)
        outside.append(line)
    rejected = bool(REJECT_MARKERS.search(text))
    probes = [a for a in attempts if a["pid"] == 0]
    real = [a for a in attempts if a["pid"] != 0]
    cpus = [a["cpu"] for a in real if a["cpu"] is not None and a["cpu"] >= 0]
    min_cpu = min(cpus) if cpus else None
    events, kept = [], []
    prev = None
    last_twin = -1
    for a in real:
        if family != "6.1" and any("reopening weak" in l for l in a["pre"]):
            # perf 6.12's second pass over a weak group reopens its members alone, in order; the
            # members after the one that failed were not tried in the first pass and appear here
            # for the first time.  A reopen repeats a first-pass block (its twin): the leader (a
            # block followed by a member, group_fd >= 0) or the member after the last twin.
            prev = a
            twin = reopen_twin(kept, last_twin, a["fields"])
            if twin is not None:
                last_twin = twin
                continue
        else:
            markers = RETRY_MARKERS_61 if family == "6.1" else RETRY_MARKERS
            retry = any(markers.search(l) for l in a["pre"]) or is_silent_retry(prev, a)
            prev = a
            if retry:
                continue
        if a["cpu"] is not None and a["cpu"] >= 0 and a["cpu"] != min_cpu:
            continue
        events.append(a["fields"])
        kept.append(a)
    if family != "6.1":
        events = drop_cpu_passes(kept, events)
    entry = {"events": events, "probes": len(probes)}
    if rejected and not events:
        # 6.1 drops hybrid cache events whose probe failed, and says "event parser found nothing"
        entry["status"] = "env_rejected" if probes and family == "6.1" and \
            "event syntax error" not in text else "rejected"
        err = [l for l in outside if l.strip() and not l.startswith((
               "Using CPUID", "intel_pt default", " Usage:", "    -e, --event", "Run 'perf list'",
               "Attempt to add:", "..after resolving event:", "---", "perf_event_attr:",
               "sys_perf_event_open")) and "->" not in l]
        entry["error"] = "\n".join(err[-6:])[-400:]
    elif not real and family != "6.1" and "Performance counter stats for" in text:
        # perf 6.12 accepted the string but opened nothing: a retirement-latency event (`:R`)
        # is read from a sampling run (--record-tpebs), not opened (evsel__open_cpu)
        entry["status"] = "accepted"
        entry["truncated"] = False
        entry["unopened"] = True
    elif not attempts:
        entry["status"] = "error"
        entry["error"] = text.strip()[-400:]
    else:
        entry["status"] = "accepted"
        entry["truncated"] = bool(re.search(r"^Error:", text, re.M))
        if probes and family == "6.1":
            # hybrid cache events whose probe open failed are dropped silently (VM: no PMU)
            entry["partial"] = True
    if probes and family != "6.1":
        # perf 6.12's only probe is perf_pmus__supports_extended_type(): a hardware cycles event
        # with a core PMU's type in config bits 32-63.  When it fails (no PMU on this VM) perf
        # builds hardware and cache events without the extended type: record that.
        ext = [a for a in probes if a["fields"].get("config", 0) >> 32]
        if ext:
            entry["extended_type"] = any(a.get("err") == 0 for a in ext)
    return entry

# --------------------------------------------------------------------------- perfspec side


def perfspec_entry(rc, out, err):
    """One answer of `perfspec resolve --format json` -> a perfspec entry: rc its status, out the
    perfspec-resolve/1 document (when rc is 0), err the error shown (when it is not)."""
    if rc != 0:
        return {"status": "rejected", "error": err.strip()[-400:], "rc": rc}
    try:
        doc = json.loads(out)
        evs = doc["events"]
        attrs = [dict(e["attr"]) for e in evs]
        for a in attrs:
            if "config1" not in a and "bp_addr" in a:   # the kernel's union names
                a["config1"] = a["bp_addr"]
            if "config2" not in a and "bp_len" in a:
                a["config2"] = a["bp_len"]
            for k, v in a.items():
                if not isinstance(v, int):
                    raise ValueError("attr.%s is not an integer" % k)
    except (ValueError, KeyError, TypeError) as e:
        return {"status": "error", "error": "bad JSON from perfspec: %s: %s" % (e, out[:300])}
    return {"status": "accepted", "events": attrs}


def run_perfspec(binary, root, event, extra=()):
    """`perfspec resolve --sysfs ROOT [EXTRA...] --format json EVENT` -> a perfspec entry.
    EXTRA: more resolve options (agree_tables.py passes --events-dir/--cpuid)."""
    try:
        p = subprocess.run([binary, "resolve", "--sysfs", root, *extra, "--format", "json", event],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return {"status": "error", "error": "timeout"}
    except OSError as e:
        return {"status": "error", "error": str(e)}
    return perfspec_entry(p.returncode, p.stdout, p.stderr)


def run_perfspec_each(binary, root, events, extra=()):
    """run_perfspec for each of EVENTS, in one `perfspec resolve --stdin` (one process: its start,
    the tables' load, paid once; under qemu-user that start is most of a run's time) -> a list of
    entries, in order. A process that ends early (a crash) leaves the rest as errors."""
    if any("\n" in e or "\r" in e for e in events):
        return [run_perfspec(binary, root, e, extra) for e in events]
    try:
        p = subprocess.run([binary, "resolve", "--sysfs", root, *extra, "--format", "json", "--stdin"],
                           input="".join(e + "\n" for e in events), capture_output=True, text=True,
                           timeout=60 + 2 * len(events))
        lines, rc, err = p.stdout.splitlines(), p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        lines, rc, err = [], -1, "timeout"
    except OSError as e:
        lines, rc, err = [], -1, str(e)
    entries = []
    for i, event in enumerate(events):
        if i >= len(lines):
            entries.append({"status": "error", "error": "perfspec resolve --stdin ended (status %d) before "
                            "this line: %s" % (rc, err.strip()[-300:])})
            continue
        try:
            doc = json.loads(lines[i])
        except ValueError:
            entries.append({"status": "error", "error": "bad JSON from perfspec: " + lines[i][:300]})
            continue
        if doc.get("schema") == "perfspec-error/1":
            entries.append(perfspec_entry(1, "", doc.get("message", "")))
        else:
            entries.append(perfspec_entry(0, lines[i], ""))
    return entries


def run_perfspec_jobs(binary, jobs, root_of, extra_of=lambda key: (), workers=2):
    """perfspec's entries for JOBS, (key, case) pairs in order: one `resolve --stdin` per key (a
    fixture or model), WORKERS at a time."""
    by_key = {}
    for i, (key, c) in enumerate(jobs):
        by_key.setdefault(key, []).append(i)

    def run_key(key):
        idx = by_key[key]
        return key, run_perfspec_each(binary, root_of(key), [jobs[i][1].event for i in idx], extra_of(key))

    results = [None] * len(jobs)
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        for key, entries in ex.map(run_key, list(by_key)):
            for i, entry in zip(by_key[key], entries):
                results[i] = entry
    return results

# --------------------------------------------------------------------------- comparison


def project(fields, ignore):
    return tuple(int(fields.get(f, 0)) for f in COMPARE_FIELDS if f not in ignore)


def strip_extended_type(e):
    """An attr dict with bits 32-63 of a hardware or cache config cleared."""
    if e.get("type") in (0, 3) and e.get("config", 0) >> 32:
        return dict(e, config=e["config"] & 0xffffffff)
    return e


def is_sub_multiset(small, big):
    pool = list(big)
    for x in small:
        if x in pool:
            pool.remove(x)
        else:
            return False
    return True


def compare(case, perf, spec):
    """-> (verdict, note). verdict in agreed, both_rejected, mismatch, disagree, skipped, error."""
    ps, ss = perf.get("status"), spec.get("status")
    if ps == "error":
        return "error", "perf: " + perf.get("error", "")
    if ps == "env_rejected":
        return "skipped", "perf probed the hardware and rejected (no PMU on this VM)"
    if ss == "error":
        return "error", "perfspec: " + spec.get("error", "")
    if ps == "rejected" and ss == "rejected":
        return "both_rejected", ""
    if ps != ss:
        return "disagree", "perf %s, perfspec %s" % (ps, ss)
    P = [project(e, case.ignore) for e in perf["events"]]
    S = [project(e, case.ignore) for e in spec["events"]]
    if perf.get("extended_type") is False:
        # perf 6.12 on a hybrid tree whose extended-type probe failed (no PMU on this VM) builds
        # legacy hardware events once and cache events once per core PMU, all without the
        # extended type: compare the sets with bits 32-63 of hardware/cache configs cleared
        P = {project(strip_extended_type(e), case.ignore) for e in perf["events"]}
        S = {project(strip_extended_type(e), case.ignore) for e in spec["events"]}
        if P == S or ((perf.get("truncated") or perf.get("unopened")) and P <= S):
            return "agreed", "perf without extended type: compared as sets"
        return "mismatch", "events differ (perf without extended type)"
    if not perf.get("truncated") and not perf.get("partial") and not perf.get("unopened"):
        if P == S:
            return "agreed", ""
        if sorted(P) == sorted(S):
            return "agreed", "order differs"
        return "mismatch", "events differ"
    why = "perf truncated" if perf.get("truncated") else "perf opened nothing" \
        if perf.get("unopened") else "perf dropped unprobeable events"
    if len(P) <= len(S) and P == S[:len(P)]:
        return "agreed", "%s: compared %d of %d" % (why, len(P), len(S))
    if is_sub_multiset(P, S):
        return "agreed", "%s: compared %d of %d; order differs" % (why, len(P), len(S))
    return "mismatch", "events differ (%s)" % why


def fmt_fields(evs, ignore=()):
    out = []
    for e in evs:
        out.append("{" + ", ".join("%s=%s" % (f, hex(e.get(f, 0)) if f.startswith("config")
                                              else e.get(f, 0))
                                   for f in COMPARE_FIELDS if f not in ignore and e.get(f, 0)) + "}")
    return "[" + ", ".join(out) + "]" if out else "[]"


def load_known(path):
    known = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                ev, _, reason = line.partition(" ")
                known[ev] = reason.strip()
    return known

# --------------------------------------------------------------------------- main


def add_common_options(ap, known_default):
    """Options shared with agree_tables.py: which perf, the perf cache, reporting and the run."""
    ap.add_argument("--perf", choices=PERF_KINDS, default="current",
                    help="which perf answers: current = perf 6.12 through perf-current (default), "
                    "system = the machine's perf (6.1)")
    ap.add_argument("--perf-current", default=DEFAULT_PERF_CURRENT, metavar="PATH",
                    help="the perf-current wrapper (%(default)s)")
    ap.add_argument("--refresh", action="store_true", help="rerun perf for every case")
    ap.add_argument("--no-perf", action="store_true", help="never run perf: cache only")
    ap.add_argument("--perf-only", action="store_true",
                    help="only generate and run/cache perf; do not run perfspec")
    ap.add_argument("--known", default=known_default, help="allow-list (%(default)s)")
    ap.add_argument("--min-agreement", type=float, default=1.0)
    ap.add_argument("--jobs", type=int, default=max(2, min(8, 2 * (os.cpu_count() or 1))))
    ap.add_argument("--list", action="store_true", help="print the generated cases and exit")
    ap.add_argument("--show-perf", metavar="EVENT", help="print perf's raw -vv text for EVENT "
                    "on the first selected fixture or model and the parsed entry, then exit")
    ap.add_argument("--json-report", help="write every case's verdict here")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list agreed cases")


def main():
    ap = argparse.ArgumentParser(description="Compare perfspec's perf_event_attr with perf's "
                                 "(6.12 by default).",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--perfspec", default=DEFAULT_PERFSPEC, help="perfspec binary (%(default)s)")
    ap.add_argument("--fixtures", default=DEFAULT_FIXTURES, help="fixture folder (%(default)s)")
    ap.add_argument("--fixture", action="append", choices=FIXTURE_NAMES + [LIVE],
                    help="run only these fixtures (repeatable; default: all, live included)")
    ap.add_argument("--seed", default="1", help="generator seed (%(default)s)")
    ap.add_argument("--count", type=int, default=300, help="cases per fixture (%(default)s)")
    ap.add_argument("--live-count", type=int, default=120, help="live tracepoint cases")
    ap.add_argument("--cpuid", default="NoVendor-0-0-0",
                    help="PERF_CPUID for perf runs ('' = host's); default matches no JSON table")
    ap.add_argument("--cache", help="perf oracle JSON: read; perf results for missing cases are "
                    "added and the file rewritten")
    add_common_options(ap, DEFAULT_KNOWN)
    a = ap.parse_args()

    fixtures = a.fixture or (FIXTURE_NAMES + [LIVE])
    cache = {"format": ORACLE_FORMAT, "fixtures": {}}
    if a.cache and os.path.exists(a.cache):
        with open(a.cache) as f:
            cache = json.load(f)
        if cache.get("format") != ORACLE_FORMAT:
            print("error: %s has oracle format %r, expected %d" % (a.cache, cache.get("format"),
                                                                  ORACLE_FORMAT), file=sys.stderr)
            return 2
    perf = Perf(a.perf, a.perf_current)
    can_perf, why = (False, "--no-perf") if a.no_perf else perf.available()
    if not a.no_perf and not can_perf:
        print("note: perf (%s) cannot run here: %s; using the cache only" % (a.perf, why),
              file=sys.stderr)
    if can_perf and a.cache:
        cached_cpuid = cache.get("cpuid")
        if cached_cpuid is not None and cached_cpuid != a.cpuid and not a.refresh:
            print("note: cache made with PERF_CPUID=%s, now %s: rerunning perf" %
                  (cached_cpuid, a.cpuid), file=sys.stderr)
            a.refresh = True
        cached_family = perf_family(cache.get("perf_version"))
        if cached_family and cached_family != perf_family(perf.version()) and not a.refresh:
            print("note: cache made with perf %s, now %s: rerunning perf" %
                  (cached_family, perf_family(perf.version())), file=sys.stderr)
            a.refresh = True
    # the perf whose answers are compared: quirk tags depend on it (QUIRKS)
    family = perf_family(perf.version()) if can_perf else perf_family(cache.get("perf_version"))
    if not a.perf_only and not a.list and not a.show_perf:
        if not (os.path.isfile(a.perfspec) and os.access(a.perfspec, os.X_OK)):
            print("error: perfspec binary not found or not executable: %s\n"
                  "  build it first, or pass --perfspec PATH; --perf-only exercises the perf side "
                  "alone" % a.perfspec, file=sys.stderr)
            return 2

    tmpdirs = []
    roots, case_lists = {}, {}
    cache_dirty = False
    for fx in fixtures:
        if fx == LIVE:
            snap = cache.get("live_snapshot")
            if can_perf and (a.refresh or snap is None or not cache.get("fixtures", {}).get(LIVE)):
                fresh = snapshot_live()
                if fresh != snap:
                    cache.setdefault("fixtures", {}).pop(LIVE, None)  # ids changed: stale
                    cache["live_snapshot"] = snap = fresh
                    cache_dirty = True
            elif can_perf and snap is not None:
                fresh = snapshot_live()
                if fresh != snap:
                    print("note: live tracefs differs from the cached snapshot; rerunning perf "
                          "for the live cases", file=sys.stderr)
                    cache.setdefault("fixtures", {}).pop(LIVE, None)
                    cache["live_snapshot"] = snap = fresh
                    cache_dirty = True
            if snap is None:
                print("warning: no live snapshot (no perf and none cached): skipping live",
                      file=sys.stderr)
                continue
            d = tempfile.mkdtemp(prefix="perfspec-live-")
            tmpdirs.append(d)
            materialise(snap, d)
            roots[fx] = d
            case_lists[fx] = live_cases(a.seed, a.live_count, load_tracepoints(d))
        else:
            root = os.path.join(a.fixtures, fx)
            if not os.path.isdir(root):
                print("error: no fixture %s" % root, file=sys.stderr)
                return 2
            roots[fx] = root
            g = Gen(fx, root, a.seed, load_pmus(root), load_tracepoints(root))
            case_lists[fx] = g.cases(a.count)

    for fx, cases in case_lists.items():
        pmus = load_pmus(roots[fx]) if os.path.isdir(
            os.path.join(roots[fx], "bus", "event_source", "devices")) else None
        for c in cases:
            settle_quirks(c, family, detect_quirks(fx, c.event, pmus))

    try:
        if a.list:
            for fx, cases in case_lists.items():
                for c in cases:
                    print("%s\t%s\t%s\t%s" % (fx, c.kind, c.quirk or "-", c.event))
            return 0
        if a.show_perf:
            fx = fixtures[0]
            rc, text = perf.run(None if fx == LIVE else roots[fx], a.show_perf, a.cpuid)
            print(text)
            print(json.dumps(parse_perf(text, rc, perf_family(perf.version())), indent=1,
                             sort_keys=True))
            return 0

        # ---- perf oracle
        todo = []
        for fx, cases in case_lists.items():
            have = cache.setdefault("fixtures", {}).setdefault(fx, {})
            for c in cases:
                if a.refresh or c.event not in have:
                    todo.append((fx, c))
        if todo and can_perf:
            print("running perf for %d cases ..." % len(todo), file=sys.stderr)

            def job(item):
                fx, c = item
                rc, text = perf.run(None if fx == LIVE else roots[fx], c.event, a.cpuid)
                return fx, c.event, parse_perf(text, rc, family)

            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                for fx, ev, entry in ex.map(job, todo):
                    cache["fixtures"][fx][ev] = entry
            cache_dirty = True
            cache["perf_version"] = perf.version()
            cache["cpuid"] = a.cpuid
        if a.cache and (cache_dirty or a.refresh):
            # keep exactly the generated cases of the fixtures run now (stable, sorted)
            for fx, cases in case_lists.items():
                names = {c.event for c in cases}
                cache["fixtures"][fx] = {k: v for k, v in cache["fixtures"][fx].items()
                                         if k in names}
            cache["generator"] = {"seed": a.seed, "count": a.count, "live_count": a.live_count}
            tmp = a.cache + ".tmp"
            with open(tmp, "w") as f:
                json.dump(cache, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(tmp, a.cache)
            print("wrote %s" % a.cache, file=sys.stderr)

        known = load_known(a.known)
        if a.perf_only:
            return perf_summary(case_lists, cache)

        # ---- perfspec and comparison
        jobs = []
        for fx, cases in case_lists.items():
            for c in cases:
                jobs.append((fx, c))

        spec_results = run_perfspec_jobs(a.perfspec, jobs, lambda fx: roots[fx], workers=a.jobs)
        return report(a, jobs, spec_results, cache, known)
    finally:
        for d in tmpdirs:
            shutil.rmtree(d, ignore_errors=True)


def perf_summary(case_lists, cache):
    print("%-11s %6s %9s %9s %9s %6s %6s" % ("fixture", "cases", "accepted", "rejected",
                                            "env-rej", "trunc", "quirk"))
    for fx, cases in case_lists.items():
        have = cache["fixtures"].get(fx, {})
        st = {"accepted": 0, "rejected": 0, "env_rejected": 0, "error": 0, "uncached": 0}
        trunc = quirk = 0
        for c in cases:
            e = have.get(c.event)
            st[e["status"] if e else "uncached"] += 1
            trunc += bool(e and e.get("truncated"))
            quirk += bool(c.quirk)
        print("%-11s %6d %9d %9d %9d %6d %6d%s" % (fx, len(cases), st["accepted"], st["rejected"],
                                                  st["env_rejected"], trunc, quirk,
                                                  "  errors=%d" % st["error"] if st["error"] else "")
              + ("  uncached=%d" % st["uncached"] if st["uncached"] else ""))
    return 0


def report(a, jobs, spec_results, cache, known):
    per = {}
    rows = []
    bad = 0
    order_notes = []
    for (fx, c), spec in zip(jobs, spec_results):
        s = per.setdefault(fx, {"cases": 0, "agreed": 0, "both_rejected": 0, "mismatch": 0,
                                "disagree": 0, "skipped": 0, "quirk": 0, "allowed": 0,
                                "uncached": 0, "error": 0})
        s["cases"] += 1
        perf = cache["fixtures"].get(fx, {}).get(c.event)
        if perf is None:
            s["uncached"] += 1
            rows.append((fx, c, None, spec, "uncached", ""))
            continue
        verdict, note = compare(c, perf, spec)
        if verdict in ("mismatch", "disagree") and c.quirk:
            verdict = "quirk"
        elif verdict in ("mismatch", "disagree", "error") and c.event in known:
            verdict, note = "allowed", known[c.event]
        elif c.quirk and verdict in ("agreed", "both_rejected"):
            pass  # a quirk case that agrees anyway counts normally
        s[verdict] += 1
        if "order differs" in note:
            order_notes.append((fx, c.event))
        rows.append((fx, c, perf, spec, verdict, note))
        if verdict in ("mismatch", "disagree", "error"):
            bad += 1

    print("%-11s %6s %7s %8s %8s %8s %7s %6s %7s %5s" % (
        "fixture", "cases", "agreed", "both-rej", "mismatch", "acc/rej", "skipped", "quirk",
        "allowed", "err"))
    tot_ok = tot_n = 0
    for fx, s in per.items():
        print("%-11s %6d %7d %8d %8d %8d %7d %6d %7d %5d%s" % (
            fx, s["cases"], s["agreed"], s["both_rejected"], s["mismatch"], s["disagree"],
            s["skipped"], s["quirk"], s["allowed"], s["error"],
            "  uncached=%d" % s["uncached"] if s["uncached"] else ""))
        tot_ok += s["agreed"] + s["both_rejected"]
        tot_n += s["agreed"] + s["both_rejected"] + s["mismatch"] + s["disagree"] + s["error"]
    ratio = tot_ok / tot_n if tot_n else 1.0
    print("agreement: %d/%d = %.4f (min %.4f)" % (tot_ok, tot_n, ratio, a.min_agreement))

    for title, verdicts in (("MISMATCHES / DISAGREEMENTS / ERRORS", ("mismatch", "disagree", "error")),
                            ("tagged perf %s behaviours perfspec deliberately differs from "
                             "(not counted)" % (perf_family(cache.get("perf_version")) or "?"),
                             ("quirk",)),
                            ("allowed known differences", ("allowed",))):
        sel = [r for r in rows if r[4] in verdicts]
        if not sel:
            continue
        print("\n== %s (%d)" % (title, len(sel)))
        for fx, c, perf, spec, verdict, note in sel:
            print("[%s] %s  %s  (%s%s)%s" % (fx, verdict, c.event, c.kind,
                                             ", quirk " + c.quirk if c.quirk else "",
                                             ": " + note if note else ""))
            print("    perf     %s %s" % (perf["status"], fmt_fields(perf.get("events", []))
                                          if perf["status"] == "accepted" else
                                          perf.get("error", "").replace("\n", " | ")[:200]))
            print("    perfspec %s %s" % (spec["status"], fmt_fields(spec.get("events", []))
                                          if spec["status"] == "accepted" else
                                          spec.get("error", "").replace("\n", " | ")[:200]))
    if order_notes:
        print("\n== agreed but in another order (%d), e.g. %s" % (
            len(order_notes), ", ".join("[%s] %s" % o for o in order_notes[:5])))
    if a.verbose:
        print("\n== all cases")
        for fx, c, perf, spec, verdict, note in rows:
            print("[%s] %-13s %s %s" % (fx, verdict, c.event, note))
    if a.json_report:
        with open(a.json_report, "w") as f:
            json.dump([{"fixture": fx, "event": c.event, "kind": c.kind, "quirk": c.quirk,
                        "verdict": v, "note": n, "perf": p, "perfspec": s}
                       for fx, c, p, s, v, n in rows], f, indent=1, sort_keys=True)
    if bad or ratio < a.min_agreement:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
