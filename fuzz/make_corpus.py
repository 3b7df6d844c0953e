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


def perf_vv_seeds(out):
    """perf's own -vv text (tests/fixtures/perf_vv: perf 6.12's annotated forms, perf 6.1's plain ones), for
    the intel_skx tree (byte 0 = 0) the skx_* and perf61_* captures were made over; the vm_* ones were made
    on another machine, whose annotations the tree contradicts. The attr blocks alone (from
    `perf_event_attr:` to perf's rule after them), as many whole blocks as fit fuzz/run.sh's 4 kB."""
    folder = os.path.join(ROOT, "tests", "fixtures", "perf_vv")
    n = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".txt"):
            continue
        blocks, block = [], None
        for line in open(os.path.join(folder, name), "rb").read().splitlines(keepends=True):
            if line.rstrip() == b"perf_event_attr:":
                block = line
            elif block is not None:
                block += line
                if line.startswith(b"---"):
                    blocks.append(block)
                    block = None
        seed = b""
        for b in blocks:
            if seed and len(seed) + len(b) > 4096 - 2:
                put(out, bytes([0, 0]) + seed)
                n += 1
                seed = b""
            seed += b
        if seed:
            put(out, bytes([0, 0]) + seed)
            n += 1
    return n


def decode(perfspec):
    """perf stat -vv style text, resolve's JSON and binary attrs, from resolving every 4th golden string with
    the CLI, plus JSON nested past decode's depth bound, plus perf's own -vv text (perf_vv_seeds)."""
    import struct
    import subprocess
    out = os.path.join(HERE, "corpus", "decode")
    reset(out)
    n = perf_vv_seeds(out)
    if not (perfspec and os.access(perfspec, os.X_OK)):
        return n
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


# perf.data files (tests/fixtures/perf_data): the header's fields, for the record_decode and perf_data seeds.
PERF_DATA = os.path.join(ROOT, "tests", "fixtures", "perf_data")


def perf_files():
    for name in sorted(os.listdir(PERF_DATA)):
        if name.endswith(".data"):
            yield name, open(os.path.join(PERF_DATA, name), "rb").read()


def records(b, start, end):
    """(offset, bytes) of each record in b[start:end]."""
    import struct
    at = start
    while at + 8 <= end:
        size = struct.unpack_from("<H", b, at + 6)[0]
        if size < 8 or at + size > end:
            return
        yield at, b[at:at + size]
        at += size


def file_header(b):
    """attrs [(attr bytes, [ids])], data (offset, size), features [(bit, offset, size)] of a file-mode file."""
    import struct
    attr_size, a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQQ", b, 16)
    attrs = []
    for at in range(a_off, a_off + a_size, attr_size):
        i_off, i_size = struct.unpack_from("<QQ", b, at + attr_size - 16)
        ids = list(struct.unpack_from("<%dQ" % (i_size // 8), b, i_off))
        attrs.append((b[at:at + attr_size - 16], ids))
    bitmap = struct.unpack_from("<4Q", b, 72)
    feats, at = [], d_off + d_size
    for bit in range(256):
        if bitmap[bit // 64] >> (bit % 64) & 1:
            f_off, f_size = struct.unpack_from("<QQ", b, at)
            feats.append((bit, f_off, f_size))
            at += 16
    return attrs, (d_off, d_size), feats


def decoder_prefix(attrs, id_all):
    """record_decode's control byte and attrs (see fuzz/record_decode.cpp) for one or two attrs."""
    import struct
    out = bytes([(1 if len(attrs) > 1 else 0) | (2 if id_all else 0)])
    for a, ids in attrs[:2]:
        sample_type, read_format = struct.unpack_from("<QQ", a, 24)
        branch = struct.unpack_from("<Q", a, 72)[0] if len(a) >= 80 else 0
        regs_user = struct.unpack_from("<Q", a, 80)[0] if len(a) >= 88 else 0
        regs_intr = struct.unpack_from("<Q", a, 96)[0] if len(a) >= 104 else 0
        b = (branch >> 17 & 1) | (branch >> 18 & 2) | (branch & 0x3f) << 2
        ids = ids[:3]
        out += struct.pack("<IBBQQB", sample_type & 0xffffffff, read_format & 0xff, b, regs_user, regs_intr,
                           len(ids)) + b"".join(struct.pack("<Q", i) for i in ids)
    return out


def crafted_records():
    """(attr fields, records) that the perf-written files lack: every sample_type bit, every kernel record
    with its trailer, perf's own records, and counts that lie."""
    import struct
    q = lambda *v: struct.pack("<%dQ" % len(v), *v)
    def rec(t, misc, body):
        return struct.pack("<IHH", t, misc, 8 + len(body)) + body
    def cstr(s):
        s += b"\0"
        return s + b"\0" * (-len(s) % 8)
    every = (1 << 25) - 1 & ~(1 << 14)  # WEIGHT_STRUCT rather than WEIGHT
    sample = (q(0x1d, 0x401000) + struct.pack("<II", 100, 101) + q(123456789, 0xdead0000, 0x1d, 77)
              + struct.pack("<II", 3, 0) + q(1000) + q(2, 500, 400, 11, 0x1d, 0, 22, 0x1e, 5)
              + q(3, 2 ** 64 - 128, 0xffffffff81000000, 0x401000) + struct.pack("<I", 12) + q(0xaabbccdd)
              + struct.pack("<I", 0x11223344) + q(1, 7, 0x10, 0x20, 3, 9) + q(2, 10, 11, 13)
              + q(16, 0x1111, 0x2222, 8) + q(3 << 48 | 2 << 32 | 1, 0x42, 0x43) + q(2, 21, 22)
              + q(0x7000, 99, 4096, 2097152) + q(8, 0x5555))
    trailer = struct.pack("<II", 100, 101) + q(5000, 0x1d)  # TID, TIME, IDENTIFIER
    kernel = [
        rec(1, 2, struct.pack("<II", 1, 1) + q(0x400000, 0x1000, 0) + cstr(b"/bin/true") + trailer),
        rec(10, 2, struct.pack("<II", 1, 1) + q(0x400000, 0x1000, 0) + struct.pack("<II", 8, 1) + q(42, 0)
            + struct.pack("<II", 5, 2) + cstr(b"/bin/true") + trailer),
        rec(10, 2 | 1 << 14, struct.pack("<II", 1, 1) + q(0x400000, 0x1000, 0) + bytes([20, 0, 0, 0])
            + bytes(range(20)) + struct.pack("<II", 5, 2) + cstr(b"/lib/x.so") + trailer),
        rec(2, 0, q(0x1d, 3) + trailer),
        rec(3, 1 << 13, struct.pack("<II", 7, 7) + cstr(b"sh") + trailer),
        rec(4, 0, struct.pack("<IIII", 7, 1, 7, 1) + q(99) + trailer),
        rec(5, 0, q(99, 0x1d, 0) + trailer),
        rec(6, 0, q(99, 0x1d, 0) + trailer),
        rec(7, 0, struct.pack("<IIII", 8, 7, 8, 7) + q(98) + trailer),
        rec(8, 0, struct.pack("<II", 7, 7) + q(2, 500, 400, 11, 0x1d, 0, 22, 0x1e, 5) + trailer),
        rec(11, 0, q(0, 4096, 1) + trailer),
        rec(12, 0, struct.pack("<II", 7, 7) + trailer),
        rec(13, 0, q(17) + trailer),
        rec(14, 1 << 13 | 1 << 14, trailer),
        rec(15, 1 << 13, struct.pack("<II", 9, 9) + trailer),
        rec(16, 0, struct.pack("<II", 7, 7) + q(2, 4, 0xf0000001, 4, 0xf0000002) + trailer),
        rec(17, 0, q(0xffffffffa0000000) + struct.pack("<IHH", 128, 1, 0) + cstr(b"bpf_prog_x") + trailer),
        rec(18, 0, struct.pack("<HHI", 1, 0, 12) + bytes(range(8)) + trailer),
        rec(19, 0, q(1) + cstr(b"/sys/fs/cgroup") + trailer),
        rec(20, 0, q(0xffffffff81000000) + struct.pack("<HH", 2, 3) + b"\x90\x90\xcc\xcc\xcc\0\0\0" + trailer),
        rec(21, 0, q(3) + trailer),
        rec(9, 2 | 1 << 14, sample),
    ]
    attr = struct.pack("<IIQQQQQ", 1, 136, 1, 1000, 0x1d7, 0, 1 << 18) + bytes(136 - 48)
    user = [
        rec(64, 0, attr + q(0x1d, 0x1e)),
        rec(66, 0, struct.pack("<I", 16) + bytes(4)),
        rec(67, 2 | 1 << 15, struct.pack("<I", 1) + bytes(range(20)) + bytes([8, 0, 0, 0]) + cstr(b"/bin/true")),
        rec(68, 0, b""),
        rec(69, 0, q(1, 0x1d, 0, 0, 2 ** 64 - 1)),
        rec(73, 0, q(1, 7) + b"sh".ljust(16, b"\0")),
        rec(79, 0, q(10, 20, 30, 40, 2 ** 64 - 1) + bytes([1, 1]) + bytes(6)),
        rec(80, 0, q(3) + struct.pack("<I", 6) + cstr(b"host")[:6].ljust(8, b"\0")),
        rec(82, 0, b""),
    ]
    liars = [
        rec(9, 2, sample[:16] + q(2 ** 61) + sample[24:64]),             # IP then a callchain nr past all
        rec(16, 0, struct.pack("<II", 7, 7) + q(2 ** 63) + trailer),      # namespaces
        rec(69, 0, q(2 ** 62, 1, 2, 3, 4)),                               # id index
        rec(73, 0, q(2 ** 60) + b"x" * 16),                               # thread map
        rec(3, 0, struct.pack("<II", 7, 7) + b"unterminated" + trailer),  # a string without its NUL
    ]
    all_fields = dict(sample_type=every, read_format=31, branch=3, regs_user=0b1011, regs_intr=0b110, ids=[0x1d, 0x1e])
    return all_fields, kernel, user, liars


def record_decode():
    """Seeds for record_decode: each fixture's attrs (one, and the first two) with its data section's records
    (at most about 3 kB of them, from the start and from the middle), and crafted records of every type."""
    import struct
    out = os.path.join(HERE, "corpus", "record_decode")
    reset(out)
    for name, b in perf_files():
        if struct.unpack_from("<Q", b, 8)[0] == 16:
            continue  # pipe mode: its attrs are records (seeded through the crafted ATTR record)
        attrs, (d_off, d_size), _ = file_header(b)
        id_all = struct.unpack_from("<Q", attrs[0][0], 40)[0] >> 18 & 1
        recs = list(records(b, d_off, d_off + d_size))
        for first in (0, len(recs) // 2):
            stream = b""
            for _, r in recs[first:]:
                if len(stream) + len(r) > 3000:
                    break
                stream += r
            for n in sorted({1, min(2, len(attrs))}):
                put(out, decoder_prefix(attrs[:n], id_all) + stream)
    f, kernel, user, liars = crafted_records()
    def prefix(st, ids, extra=0):
        b = (f["branch"] & 3)
        return struct.pack("<IBBQQB", st, f["read_format"], b, f["regs_user"], f["regs_intr"], len(ids)) + \
            b"".join(struct.pack("<Q", i) for i in ids)
    one = bytes([2]) + prefix(f["sample_type"], f["ids"])
    two = bytes([3]) + prefix(f["sample_type"], [0x1d]) + prefix(f["sample_type"] & ~(1 << 4), [0x1e])
    put(out, one + b"".join(kernel))
    put(out, one + b"".join(user))
    put(out, two + b"".join(kernel))
    for r in kernel + user + liars:
        put(out, one + r)
    # without sample_id_all, and the same records read raw (control bit 2)
    put(out, bytes([0]) + prefix(0x107, []) + b"".join(kernel[:6]))
    put(out, bytes([6]) + prefix(f["sample_type"], f["ids"]) + kernel[-1])
    return len(os.listdir(out))


def shrink_perf_data(b, budget, keep_bits):
    """A file-mode perf.data of at most about `budget` bytes: the header, attrs and ids as they were, the
    data section cut at a record boundary, and only the features of keep_bits."""
    import struct
    attrs, (d_off, d_size), feats = file_header(b)
    feats = [f for f in feats if f[0] in keep_bits]
    room = budget - d_off - 16 * len(feats) - sum(s for _, _, s in feats)
    data = b""
    for _, r in records(b, d_off, d_off + d_size):
        if len(data) + len(r) > room:
            break
        data += r
    head = bytearray(b[:d_off])
    struct.pack_into("<Q", head, 48, len(data))
    bitmap = [0, 0, 0, 0]
    for bit, _, _ in feats:
        bitmap[bit // 64] |= 1 << (bit % 64)
    struct.pack_into("<4Q", head, 72, *bitmap)
    at = d_off + len(data) + 16 * len(feats)
    index, payload = b"", b""
    for _, f_off, f_size in feats:
        index += struct.pack("<QQ", at + len(payload), f_size)
        payload += b[f_off:f_off + f_size]
    return bytes(head) + data + index + payload


def perf_data():
    """Seeds for perf_data: each fixture shrunk to about 4 kB (its header strings, nrcpus, total_mem, cmdline and
    event_desc kept), one with its tracing data, pipe mode cut at a record boundary, and the headers alone."""
    import struct
    out = os.path.join(HERE, "corpus", "perf_data")
    reset(out)
    small = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 17, 21}  # hostname ... event_desc, group_desc, sample_time
    for name, b in perf_files():
        if struct.unpack_from("<Q", b, 8)[0] == 16:
            cut = b[:16]
            for _, r in records(b, 16, len(b)):
                if len(cut) + len(r) > 4000:
                    break
                cut += r
            put(out, cut)
            put(out, b[:16])
            continue
        put(out, shrink_perf_data(b, 4000, small))
        put(out, shrink_perf_data(b, 1200, {12}))
        if name == "tracepoint.data":
            put(out, shrink_perf_data(b, 7000, {1, 12}))
    return len(os.listdir(out))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--events-dir", default=os.path.join(ROOT, "..", "shared", "pmu-events", "x86"))
    ap.add_argument("--perfspec", default=os.path.join(ROOT, "build", "perfspec"), help="for the decode seeds")
    ap.add_argument("--pmu-events", default=os.path.join(ROOT, "..", "shared", "pmu-events"),
                    help="every architecture's tables, for the metric_parse seeds")
    ap.add_argument("--only", choices=["metric_parse", "record_decode", "perf_data"],
                    help="regenerate these seeds alone")
    a = ap.parse_args()
    if a.only == "metric_parse":
        print("metric_parse", metrics(a.pmu_events))
        raise SystemExit(0)
    if a.only in ("record_decode", "perf_data"):
        print(a.only, {"record_decode": record_decode, "perf_data": perf_data}[a.only]())
        raise SystemExit(0)
    print("events", events(), "format", formats(), "alias", aliases(), "json", tables(a.events_dir))
    print("decode", decode(a.perfspec), "index", index(), "metric_parse", metrics(a.pmu_events))
    print("record_decode", record_decode(), "perf_data", perf_data())