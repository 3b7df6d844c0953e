#!/usr/bin/env python3
"""perf agreement harness: does `perfspec resolve` build the same perf_event_attr as perf?

Generates event strings (deterministically, from a seed) over the fake sysfs trees in
tests/fixtures/ and over the live machine's tracepoints, asks the system perf (6.1) which attrs it
builds for each, asks perfspec, and compares.

    tests/perf_agreement/agree.py --perfspec build/perfspec \\
        --cache tests/perf_agreement/perf_oracle.json [--no-perf]

Where perf's answers come from
    perf is run as `perf stat -vv -e EVENT true` in a private mount namespace in which
    FIXTURE/bus/event_source/devices is bind-mounted over /sys/bus/event_source/devices: the same
    mechanism as shared/tools/perf-attrs.  The harness runs it itself instead of calling perf-attrs
    because perf-attrs keeps only the attr blocks, and the text around them is needed to tell a
    retry from a new event, a probe from an event, and a parse rejection that follows probe opens
    (see "Mapping perf's output" below).  PERF_CPUID is set to a value that matches no built-in
    table (--cpuid, default NoVendor-0-0-0) so that perf only sees the fixture's sysfs aliases and
    not the JSON tables of the host CPU.
    Tracepoint cases (fixture "live") run against the live /sys, because perf reads the live tracefs.
    The harness snapshots the live PMU folders and the tracefs ids it needs into the oracle, and
    perfspec is run against that snapshot (materialised in a temporary folder), so the comparison
    is reproducible on machines whose kernel has other tracepoint ids.

Mapping perf's output (the retry/group rule)
    perf prints one `perf_event_attr:` block per open attempt, followed by a
    `sys_perf_event_open: pid P  cpu C  group_fd G  flags F` line and `= fd` or `failed, error -E`.
    * Retry: when an open fails, perf may change the attr and try again (missing-feature fallbacks,
      e.g. `msr/tsc/` on this VM prints 3 blocks: cloexec off, then exclude_guest off).  Before
      re-printing the block perf prints one of "switching off ...", "decreasing precise_ip by one",
      "... trying to fall back ...", "Weak group for ... failed" -- but only the first time per
      process (pr_debug2_peo), so a later event needing the same fallback is retried silently.
      A block is a retry of the previous one, and is dropped, when such a line precedes it, or when
      the previous open failed with an errno other than ENOENT (perf stat never retries ENOENT),
      on the same pid/cpu, and the block differs from the previous one only by exclude_guest /
      exclude_host / precise_ip having been cleared or lowered.  The first block of each chain is
      the attr the parser built, and that is what is compared.
    * Probe: blocks whose open line says `pid 0` are perf's is_event_supported() probes (hybrid
      cache events in 6.1), not events: dropped.  On this VM the probes fail, so perf drops those
      events: if nothing is left perf says "event parser found nothing" and the case is
      "env_rejected" (skipped, not compared); if other events remain, the perf result is "partial"
      and compared like a truncated one.
    * Per-CPU opens: perf stat opens an event once per CPU of its cpumask; only blocks whose open
      line has cpu -1 or the lowest CPU seen in the run are kept (all fixture cpumasks contain 0).
    * Truncation: a group whose leader cannot be opened makes perf stat stop ("Error:" line); it
      then has printed only a prefix of the events.  Such a perf result is "truncated".
    * Comparison of the remaining perf events P with perfspec's events S (each projected on the
      compared fields): not truncated: P must equal S as a sequence, or else as a multiset
      (counted as agreement, listed as "order differs": perf orders wildcard/alias expansions by
      readdir order and puts cpu_atom before cpu_core).  Truncated or partial: P must be a prefix
      of S, or else a sub-multiset of S.  Group structure (leader/member) is not compared: perf
      6.1 silently disables groups whose members' cpumasks differ.
    * Rejection: perf rejected the string when its output has "event syntax error", "Run 'perf
      list'" or "event parser found nothing" and no event blocks.  That must meet a non-zero exit
      of perfspec.  An open failure (block printed, then "not supported") means perf accepted.

Compared fields: type config config1 config2 bp_type exclude_user exclude_kernel exclude_hv
exclude_idle precise_ip (config1/config2 are bp_addr/bp_len for breakpoints; absent = 0).

Normalisations (not counted as mismatches)
    * exclude_guest/exclude_host are not compared (perf 6.1 defaults exclude_guest to 1).
    * A term given twice in one /.../ (or a term the selected alias already sets): perf 6.1 ORs the
      values instead of replacing; such cases are tagged quirk "repeated-term" and the config words
      are not compared (type and modifiers still are, and acceptance).
    * `:P`: perf resolves the maximum precision by trying opens at run time; precise_ip is not
      compared for cases with a P modifier.
    * Cases tagged at generation with a quirk (perf 6.1 behaviour that REFERENCE.md differs from or
      that only perf stat has) are run and listed in a separate "quirks" section when they differ,
      not counted: bare-multibit (`cpu/umask/` = 1), weak-single (`cycles:W`), mod-R, config3,
      intel_pt-default-config (perf ORs tsc,mtc,mtc_period=3,psb_period=3,pt,branch into every
      intel_pt event), cache-case (`LLC-LOADS`), cache-branches-prefix (`branches-misses`),
      colon-after-slash (`cycles/period=1/:u`), tracepoint-terms (`sched:x/period=3/`),
      perf-stat-term (freq, inherit, no-inherit, call-graph), unterminated-group (`{cycles`),
      empty-modifier (`cycles:`), pmu-glob (`uncore_imc_*/event=1/`: 6.1 has no PMU globs),
      dotted-cache (`L1D.READ.MISS`, perfspec's own form).  When such a case agrees anyway it
      counts normally.
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
FIXTURE_NAMES = ["intel_skx", "amd_zen3", "arm_n1", "hybrid_adl"]
LIVE = "live"
ORACLE_FORMAT = 1

COMPARE_FIELDS = ["type", "config", "config1", "config2", "bp_type", "exclude_user",
                  "exclude_kernel", "exclude_hv", "exclude_idle", "precise_ip"]
CONFIG_WORDS = ["config", "config1", "config2"]
# Fields perf -vv prints that the oracle keeps (the rest of the block is open-time bookkeeping).
PERF_FIELDS = {"type", "config", "{ bp_addr, config1 }", "{ bp_len, config2 }", "config3",
               "bp_type", "exclude_user", "exclude_kernel", "exclude_hv", "exclude_idle",
               "exclude_host", "exclude_guest", "precise_ip", "pinned", "exclusive",
               "sample_period", "sample_freq", "freq"}
PERF_RENAME = {"{ bp_addr, config1 }": "config1", "{ bp_len, config2 }": "config2"}
RETRY_MARKERS = re.compile(r"switching off|decreasing precise_ip|trying to fall back|"
                           r"Weak group for")
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
        for sub in ("type", "cpumask", "cpus"):
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


# --------------------------------------------------------------------------- quirks found after generation
# Some perf 6.1 behaviours that REFERENCE.md (and current perf) do differently show up in generated
# strings whose generator did not tag them.  detect_quirk() recognises them from the string itself,
# so that they are reported in the quirks section rather than as mismatches:
#   colon-after-slash   `pmu/terms/:mods`: REFERENCE's grammar allows it; perf 6.1's parser does not
#   hybrid-numeric      raw `rNNN` and `type:config` on a hybrid machine: perf 6.1 fans them out over
#                       cpu_atom/cpu_core (rewriting any type into a hardware event); current perf and
#                       perfspec take them literally
#   cache-duplicate     two ops or two results in a cache name: perf 6.1 silently ignores the second,
#                       perfspec reports it
#   leader-only         `D`/`e` on a group member that is not the leader: perf 6.1 accepts it,
#                       REFERENCE.md section 6 makes them leader-only
#   overlapping-terms   two terms (or an alias term and a user term) writing overlapping bits: perf
#                       6.1 ORs them, perfspec lets the later one replace the earlier's bits
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


def detect_quirk(fixture, event, pmus):
    hybrid = pmus is not None and "cpu_core" in pmus and "cpu_atom" in pmus
    for item in _split_top(event):
        inner = item
        members = [item]
        if "{" in item:
            inner = item[item.index("{") + 1:item.rindex("}")] if "}" in item else item
            members = _split_top(inner)
        for i, ev in enumerate(members):
            if re.search(r"/:", ev):
                return "colon-after-slash"
            if hybrid and (re.match(r"^r[0-9a-fA-F]+([:/]|$)", ev) or re.match(r"^[0-9]+:[0-9]", ev)):
                return "hybrid-numeric"
            if _cache_duplicate(re.split(r"[:/]", ev)[0]):
                return "cache-duplicate"
            own = ev.rsplit("/", 1)[1] if ev.count("/") >= 2 else (ev.rsplit(":", 1)[1] if ":" in ev else "")
            if "{" in item and i > 0 and re.search(r"[De]", own.lstrip(":")) and \
                    re.fullmatch(r":?[ukhIGHpPSDWebR]*", own):
                return "leader-only"
            if _overlapping_terms(ev, pmus):
                return "overlapping-terms"
    return None


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
        return Case(ev, "cache", quirk or q, ign)

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
            quirk, ignore = quirk or "intel_pt-default-config", CONFIG_WORDS
        return Case(ev, kind, quirk or q, tuple(ignore) + tuple(ign))

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
        return Case(ev, kind, quirk or q, tuple(ignore) + tuple(ign))

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
            quirk = quirk or c.quirk
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
        return Case(s, "group", quirk, tuple(ignore))

    def listed(self):
        a, b = self.simple(), self.simple()
        return Case(a.event + "," + b.event, "list", a.quirk or b.quirk, a.ignore + b.ignore)

    def quirk_cases(self):
        """A few fixed perf-6.1-quirk probes so the report documents them."""
        out = [Case("cycles:W", "single-weak", "weak-single"),
               Case("cycles:R", "retire-lat", "mod-R"),
               Case("L1D.READ.MISS", "cache-dotted", "dotted-cache"),  # perfspec's own extension
               Case("cycles//:u", "hw", "colon-after-slash")]
        core = [p for p in self.pmus if p in ("cpu", "cpu_core", "armv8_pmuv3_0")]
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

    def cases(self, count):
        r = self.r
        out = list(self.quirk_cases())
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


def perf_available():
    return shutil.which("perf") and shutil.which("unshare") and os.geteuid() == 0


def perf_version():
    try:
        return subprocess.run(["perf", "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except OSError:
        return None


def run_perf(root, event, cpuid):
    devices = os.path.join(os.path.abspath(root), "bus", "event_source", "devices")
    script = 'mount --bind "$DEVICES" /sys/bus/event_source/devices && exec perf stat -vv -e "$EV" true'
    env = dict(os.environ, DEVICES=devices, EV=event, LC_ALL="C")
    if cpuid:
        env["PERF_CPUID"] = cpuid
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


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


def parse_perf(text, rc=None):
    """Turn `perf stat -vv` text into an oracle entry (see the module docstring)."""
    attempts, cur, pending = [], None, []
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
            m = re.match(r"\s+(.+?)\s{2,}(\S+)$", line)
            if m and m.group(1) in PERF_FIELDS:
                try:
                    cur["fields"][PERF_RENAME.get(m.group(1), m.group(1))] = int(m.group(2), 0)
                except ValueError:
                    pass
            continue
        m = re.match(r"sys_perf_event_open: pid (-?\d+)\s+cpu (-?\d+)\s+group_fd (-?\d+)", line)
        if m and last is not None and last["pid"] is None:
            last["pid"], last["cpu"] = int(m.group(1)), int(m.group(2))
            last["err"] = 0 if re.search(r"= \d+\s*$", line) else None
            continue
        m = re.match(r"sys_perf_event_open failed, error (-?\d+)", line)
        if m and last is not None and last.get("err") is None:
            last["err"] = int(m.group(1))
            continue
        pending.append(line)
    rejected = bool(REJECT_MARKERS.search(text))
    probes = [a for a in attempts if a["pid"] == 0]
    real = [a for a in attempts if a["pid"] != 0]
    cpus = [a["cpu"] for a in real if a["cpu"] is not None and a["cpu"] >= 0]
    min_cpu = min(cpus) if cpus else None
    events = []
    prev = None
    for a in real:
        retry = any(RETRY_MARKERS.search(l) for l in a["pre"]) or is_silent_retry(prev, a)
        prev = a
        if retry:
            continue
        if a["cpu"] is not None and a["cpu"] >= 0 and a["cpu"] != min_cpu:
            continue
        events.append(a["fields"])
    entry = {"events": events, "probes": len(probes)}
    if rejected and not events:
        entry["status"] = "env_rejected" if probes and "event syntax error" not in text \
            else "rejected"
        err = [l for l in text.splitlines() if l.strip() and not l.startswith(("Using CPUID",
               "intel_pt default", " Usage:", "    -e, --event", "Run 'perf list'"))
               and "->" not in l]
        entry["error"] = "\n".join(err[-6:])[-400:]
    elif not attempts:
        entry["status"] = "error"
        entry["error"] = text.strip()[-400:]
    else:
        entry["status"] = "accepted"
        entry["truncated"] = bool(re.search(r"^Error:", text, re.M))
        if probes:
            # hybrid cache events whose probe open failed are dropped silently (VM: no PMU)
            entry["partial"] = True
    return entry

# --------------------------------------------------------------------------- perfspec side


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
    if p.returncode != 0:
        return {"status": "rejected", "error": p.stderr.strip()[-400:], "rc": p.returncode}
    try:
        doc = json.loads(p.stdout)
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
        return {"status": "error", "error": "bad JSON from perfspec: %s: %s" % (e, p.stdout[:300])}
    return {"status": "accepted", "events": attrs}

# --------------------------------------------------------------------------- comparison


def project(fields, ignore):
    return tuple(int(fields.get(f, 0)) for f in COMPARE_FIELDS if f not in ignore)


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
    if not perf.get("truncated") and not perf.get("partial"):
        if P == S:
            return "agreed", ""
        if sorted(P) == sorted(S):
            return "agreed", "order differs"
        return "mismatch", "events differ"
    why = "perf truncated" if perf.get("truncated") else "perf dropped unprobeable events"
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
    """Options shared with agree_tables.py: the perf cache, reporting and the run."""
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
    ap = argparse.ArgumentParser(description="Compare perfspec's perf_event_attr with perf 6.1's.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--perfspec", default=DEFAULT_PERFSPEC, help="perfspec binary (%(default)s)")
    ap.add_argument("--fixtures", default=DEFAULT_FIXTURES, help="fixture folder (%(default)s)")
    ap.add_argument("--fixture", action="append", choices=FIXTURE_NAMES + [LIVE],
                    help="run only these fixtures (repeatable; default: all four + live)")
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
    can_perf = not a.no_perf and perf_available()
    if not a.no_perf and not can_perf:
        print("note: perf cannot run here (needs root, perf and unshare): using the cache only",
              file=sys.stderr)
    if can_perf and a.cache:
        cached_cpuid = cache.get("cpuid")
        if cached_cpuid is not None and cached_cpuid != a.cpuid and not a.refresh:
            print("note: cache made with PERF_CPUID=%s, now %s: rerunning perf" %
                  (cached_cpuid, a.cpuid), file=sys.stderr)
            a.refresh = True
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

    try:
        if a.list:
            for fx, cases in case_lists.items():
                for c in cases:
                    print("%s\t%s\t%s\t%s" % (fx, c.kind, c.quirk or "-", c.event))
            return 0
        if a.show_perf:
            fx = fixtures[0]
            root = "/sys" if fx == LIVE else roots[fx]
            rc, text = run_perf(root, a.show_perf, a.cpuid)
            print(text)
            print(json.dumps(parse_perf(text, rc), indent=1, sort_keys=True))
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
                root = "/sys" if fx == LIVE else roots[fx]
                rc, text = run_perf(root, c.event, a.cpuid)
                return fx, c.event, parse_perf(text, rc)

            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                for fx, ev, entry in ex.map(job, todo):
                    cache["fixtures"][fx][ev] = entry
            cache_dirty = True
            cache["perf_version"] = perf_version()
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
            pmus = load_pmus(roots[fx]) if fx in roots and os.path.isdir(
                os.path.join(roots[fx], "bus", "event_source", "devices")) else None
            for c in cases:
                if not c.quirk:
                    c.quirk = detect_quirk(fx, c.event, pmus)
                jobs.append((fx, c))

        def sjob(item):
            fx, c = item
            return run_perfspec(a.perfspec, roots[fx], c.event)

        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            spec_results = list(ex.map(sjob, jobs))
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
                            ("perf 6.1 quirks (not counted)", ("quirk",)),
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
