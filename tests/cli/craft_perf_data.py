#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a small perf.data file (file mode) from a list of records, for tests of what a reader does
with sequences and values no recording produces on demand (a pid reused, a parent never named, a
data_src of a memory level this machine has no PMU to report).

By default one attr: a software event (task-clock) with sample_type TID|TIME|PERIOD, sample_id_all
(TID and TIME after every other record), HEADER_EVENT_DESC naming it. Lines of the script (stdin):
  event NAME KEY=VALUE...          an attr instead of the default one (several: the first is event 0):
                                   type, config, period, sample_type (names joined by '|': ip|tid|time|
                                   addr|cpu|period|weight|weight_struct|data_src|phys_addr|cgroup|
                                   data_page_size|code_page_size|regs_user|regs_intr|callchain|raw|
                                   branch_stack), regs_user and regs_intr (the attr's register masks),
                                   branch_sample_type. With several
                                   events every one has IDENTIFIER too, and its ids are 1, 2, ...
  arch NAME                        HEADER_ARCH (uname's machine: x86_64, aarch64, ...)
  comm PID TID TIME NAME           PERF_RECORD_COMM
  fork PID PPID TID PTID TIME      PERF_RECORD_FORK (pid, ppid, tid, ptid, time)
  exit PID PPID TID PTID TIME      PERF_RECORD_EXIT
  cgroup ID PATH TIME              PERF_RECORD_CGROUP
  sample PID TID TIME PERIOD [KEY=VALUE...]
                                   PERF_RECORD_SAMPLE of event 0, or of event=N; the other fields of
                                   its sample_type from KEY=VALUE (0 when not given): ip, addr, cpu,
                                   weight, data_src, phys_addr, cgroup, data_page_size, code_page_size,
                                   misc (the header's, 2 by default: user), uregs and iregs as
                                   ABI:V1,V2,... (one value per bit of the mask; ABI 0: none), callchain
                                   as V1,V2,..., raw as hex bytes, branches as FROM/TO/FLAGS,... (and
                                   hw_idx with branch_sample_type HW_INDEX)
  raw TYPE MISC HEX [PID TID TIME] any record: its body as hex bytes ("-": none), and
                                   for a kernel type (< 64) event 0's sample_id of PID, TID and TIME
The non-sample records carry event 0's sample_id (its TID, TIME, CPU and IDENTIFIER bits).
usage: craft_perf_data.py OUT.data < script
"""
import struct
import sys

BITS = {"ip": 1 << 0, "tid": 1 << 1, "time": 1 << 2, "addr": 1 << 3, "cpu": 1 << 7, "period": 1 << 8,
        "callchain": 1 << 5, "raw": 1 << 10, "branch_stack": 1 << 11, "regs_user": 1 << 12, "weight": 1 << 14,
        "data_src": 1 << 15, "identifier": 1 << 16, "regs_intr": 1 << 18, "phys_addr": 1 << 19,
        "cgroup": 1 << 21, "data_page_size": 1 << 22, "code_page_size": 1 << 23, "weight_struct": 1 << 24}
ATTR_SIZE = 136  # PERF_ATTR_SIZE_VER8, as perf 6.12 writes


def num(text):
    return int(text, 0)


def record(rtype, body, misc=0):
    size = 8 + len(body)
    return struct.pack("<IHH", rtype, misc, size) + body


class Event:
    def __init__(self, name, keys):
        self.name = name
        self.type = num(keys.pop("type", "1"))
        self.config = num(keys.pop("config", "1"))
        self.period = num(keys.pop("period", "1000"))
        self.sample_type = 0
        for bit in keys.pop("sample_type", "tid|time|period").split("|"):
            self.sample_type |= BITS[bit]
        self.regs_user = num(keys.pop("regs_user", "0"))
        self.regs_intr = num(keys.pop("regs_intr", "0"))
        self.branch_sample_type = num(keys.pop("branch_sample_type", "0"))
        if keys:
            raise SystemExit(f"craft_perf_data: unknown event keys {sorted(keys)}")

    def attr(self):
        a = bytearray(ATTR_SIZE)
        # flags: sample_id_all (bit 18), exclude_guest (bit 21)
        struct.pack_into("<IIQQQQQ", a, 0, self.type, ATTR_SIZE, self.config, self.period, self.sample_type, 0,
                         (1 << 18) | (1 << 21))
        struct.pack_into("<Q", a, 72, self.branch_sample_type)
        struct.pack_into("<Q", a, 80, self.regs_user)
        struct.pack_into("<Q", a, 96, self.regs_intr)
        return bytes(a)

    def trailer(self, pid, tid, time, ident):
        """sample_id_all: TID, TIME, (ID, STREAM_ID,) CPU, IDENTIFIER, in that order."""
        t = b""
        if self.sample_type & BITS["tid"]:
            t += struct.pack("<II", pid, tid)
        if self.sample_type & BITS["time"]:
            t += struct.pack("<Q", time)
        if self.sample_type & BITS["cpu"]:
            t += struct.pack("<II", 0, 0)
        if self.sample_type & BITS["identifier"]:
            t += struct.pack("<Q", ident)
        return t


def regs(text):
    abi, _, values = text.partition(":")
    out = struct.pack("<Q", num(abi))
    if num(abi):
        out += b"".join(struct.pack("<Q", num(v)) for v in values.split(",") if v)
    return out


def sample(ev, ident, pid, tid, time, period, keys):
    st = ev.sample_type
    v = lambda k: num(keys.get(k, "0"))
    b = b""
    if st & BITS["identifier"]:
        b += struct.pack("<Q", ident)
    if st & BITS["ip"]:
        b += struct.pack("<Q", v("ip"))
    if st & BITS["tid"]:
        b += struct.pack("<II", pid, tid)
    if st & BITS["time"]:
        b += struct.pack("<Q", time)
    if st & BITS["addr"]:
        b += struct.pack("<Q", v("addr"))
    if st & BITS["cpu"]:
        b += struct.pack("<II", v("cpu"), 0)
    if st & BITS["period"]:
        b += struct.pack("<Q", period)
    if st & BITS["callchain"]:
        chain = [num(x) for x in keys.get("callchain", "").split(",") if x]
        b += struct.pack("<Q", len(chain)) + b"".join(struct.pack("<Q", x) for x in chain)
    if st & BITS["raw"]:
        raw = bytes.fromhex(keys.get("raw", ""))
        raw += b"\0" * (-(len(raw) + 4) % 8)
        b += struct.pack("<I", len(raw)) + raw
    if st & BITS["branch_stack"]:
        entries = [[num(x) for x in e.split("/")] for e in keys.get("branches", "").split(",") if e]
        b += struct.pack("<Q", len(entries))
        if ev.branch_sample_type & (1 << 17):  # PERF_SAMPLE_BRANCH_HW_INDEX
            b += struct.pack("<Q", num(keys.get("hw_idx", "0")))
        b += b"".join(struct.pack("<QQQ", *e) for e in entries)
    if st & BITS["regs_user"]:
        b += regs(keys.get("uregs", "0"))
    if st & (BITS["weight"] | BITS["weight_struct"]):
        b += struct.pack("<Q", v("weight"))
    if st & BITS["data_src"]:
        b += struct.pack("<Q", v("data_src"))
    if st & BITS["regs_intr"]:
        b += regs(keys.get("iregs", "0"))
    for name in ("phys_addr", "cgroup", "data_page_size", "code_page_size"):
        if st & BITS[name]:
            b += struct.pack("<Q", v(name))
    return record(9, b, misc=num(keys.get("misc", "2")))


def header_string(text):
    s = text.encode() + b"\0"
    s += b"\0" * (-len(s) % 64)
    return struct.pack("<I", len(s)) + s


def main():
    out = sys.argv[1]
    lines = [line.split() for line in sys.stdin if line.split() and not line.startswith("#")]
    events, arch = [], None
    for w in lines:
        if w[0] == "event":
            events.append(Event(w[1], dict(kv.split("=", 1) for kv in w[2:])))
        elif w[0] == "arch":
            arch = w[1]
    if not events:
        events = [Event("task-clock", {})]
    if len(events) > 1:
        for ev in events:
            ev.sample_type |= BITS["identifier"]
    first = events[0]
    data = b""
    for w in lines:
        kind, args = w[0], w[1:]
        if kind in ("event", "arch"):
            continue
        if kind == "comm":
            pid, tid, time, name = int(args[0]), int(args[1]), int(args[2]), args[3].encode()
            s = name + b"\0"
            s += b"\0" * (-len(s) % 8)
            data += record(3, struct.pack("<II", pid, tid) + s + first.trailer(pid, tid, time, 1))
        elif kind in ("fork", "exit"):
            pid, ppid, tid, ptid, time = map(int, args)
            data += record(7 if kind == "fork" else 4,
                           struct.pack("<IIIIQ", pid, ppid, tid, ptid, time) + first.trailer(pid, tid, time, 1))
        elif kind == "cgroup":
            ident, path, time = num(args[0]), args[1].encode(), int(args[2])
            s = path + b"\0"
            s += b"\0" * (-len(s) % 8)
            data += record(19, struct.pack("<Q", ident) + s + first.trailer(0, 0, time, 1))
        elif kind == "sample":
            pid, tid, time, period = map(int, args[:4])
            keys = dict(kv.split("=", 1) for kv in args[4:])
            index = int(keys.pop("event", "0"))
            data += sample(events[index], index + 1, pid, tid, time, period, keys)
        elif kind == "raw":
            body = bytes.fromhex(args[2]) if args[2] != "-" else b""
            if len(args) > 3:
                body += first.trailer(int(args[3]), int(args[4]), int(args[5]), 1)
            data += record(num(args[0]), body, misc=num(args[1]))
        else:
            raise SystemExit(f"craft_perf_data: unknown record '{kind}'")
    # header (104 bytes), each event's ids, the attrs section, the data, the feature index and sections
    ids_at = 104
    attrs_at = ids_at + 8 * len(events)
    entry = ATTR_SIZE + 16
    data_at = attrs_at + entry * len(events)
    attrs = b"".join(ev.attr() + struct.pack("<QQ", ids_at + 8 * i, 8) for i, ev in enumerate(events))
    desc = struct.pack("<II", len(events), ATTR_SIZE)
    for i, ev in enumerate(events):
        name = ev.name.encode() + b"\0"
        name += b"\0" * (-len(name) % 64)
        desc += ev.attr() + struct.pack("<I", 1) + struct.pack("<I", len(name)) + name + struct.pack("<Q", i + 1)
    sections = ([header_string(arch)] if arch else []) + [desc]  # by feature bit: ARCH (6), EVENT_DESC (12)
    index_at = data_at + len(data)
    at = index_at + 16 * len(sections)
    index = b""
    for s in sections:
        index += struct.pack("<QQ", at, len(s))
        at += len(s)
    features = (1 << 12) | ((1 << 6) if arch else 0)
    header = struct.pack("<8sQQQQQQQQ", b"PERFILE2", 104, entry, attrs_at, entry * len(events), data_at, len(data),
                         0, 0)
    header += struct.pack("<QQQQ", features, 0, 0, 0)
    ids = b"".join(struct.pack("<Q", i + 1) for i in range(len(events)))
    with open(out, "wb") as f:
        f.write(header + ids + attrs + data + index + b"".join(sections))


if __name__ == "__main__":
    main()
