#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a small perf.data file (file mode) from a list of records, for tests of what a reader does
with sequences no recording produces on demand (a pid reused, a parent never named).

One attr: a software event (task-clock) with sample_type TID|TIME|PERIOD, sample_id_all (TID and TIME
after every other record), HEADER_EVENT_DESC naming it. Records, one per line of the script (stdin):
  comm PID TID TIME NAME         PERF_RECORD_COMM
  fork PID PPID TID PTID TIME    PERF_RECORD_FORK (pid, ppid, tid, ptid, time)
  exit PID PPID TID PTID TIME    PERF_RECORD_EXIT
  sample PID TID TIME PERIOD     PERF_RECORD_SAMPLE
usage: craft_perf_data.py OUT.data < script
"""
import struct
import sys

SAMPLE_TID, SAMPLE_TIME, SAMPLE_PERIOD = 1 << 1, 1 << 2, 1 << 8


def record(rtype, body, misc=0):
    size = 8 + len(body)
    return struct.pack("<IHH", rtype, misc, size) + body


def trailer(pid, tid, time):
    return struct.pack("<IIQ", pid, tid, time)


def main():
    out = sys.argv[1]
    data = b""
    for line in sys.stdin:
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        kind, args = w[0], w[1:]
        if kind == "comm":
            pid, tid, time, name = int(args[0]), int(args[1]), int(args[2]), args[3].encode()
            s = name + b"\0"
            s += b"\0" * (-len(s) % 8)
            data += record(3, struct.pack("<II", pid, tid) + s + trailer(pid, tid, time))
        elif kind in ("fork", "exit"):
            pid, ppid, tid, ptid, time = map(int, args)
            data += record(7 if kind == "fork" else 4,
                           struct.pack("<IIIIQ", pid, ppid, tid, ptid, time) + trailer(pid, tid, time))
        elif kind == "sample":
            pid, tid, time, period = map(int, args)
            data += record(9, struct.pack("<IIQQ", pid, tid, time, period), misc=2)
        else:
            raise SystemExit(f"craft_perf_data: unknown record '{kind}'")
    attr = bytearray(64)
    struct.pack_into("<IIQQQQQ", attr, 0, 1, 64, 1, 1000, SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD, 0,
                     (1 << 18) | (1 << 21))  # flags: sample_id_all, exclude_guest
    ids_at = 104
    attrs_at = ids_at + 8
    data_at = attrs_at + 64 + 16
    name = b"task-clock\0"
    name += b"\0" * (-len(name) % 64)
    desc = struct.pack("<II", 1, 64) + bytes(attr) + struct.pack("<I", 1) + struct.pack("<I", len(name)) + name + \
        struct.pack("<Q", 1)
    index_at = data_at + len(data)
    features = struct.pack("<QQ", index_at + 16, len(desc)) + desc
    header = struct.pack("<8sQQQQQQQQ", b"PERFILE2", 104, 64 + 16, attrs_at, 64 + 16, data_at, len(data), 0, 0)
    header += struct.pack("<QQQQ", 1 << 12, 0, 0, 0)  # HEADER_EVENT_DESC
    with open(out, "wb") as f:
        f.write(header + struct.pack("<Q", 1) + bytes(attr) + struct.pack("<QQ", ids_at, 8) + data + features)


if __name__ == "__main__":
    main()
