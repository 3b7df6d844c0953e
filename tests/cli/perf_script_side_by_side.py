#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""perfspec script against perf 6.12's perf script, on files perf 6.12 records here and now; and
files perfspec record writes, read by perf 6.12's perf script and perf report.

Each case records a workload with `perf record` (perf-current, in its chroot), then prints the file with
`perf script -F FIELDS` and with `perfspec script -F FIELDS` and compares the two outputs byte for byte:
samples only (perf's default) and every record (perf's --show-*-events flags against perfspec's
default); and their stderr (perf's warnings about the lists), but for what perf says of kernel
symbols. The field lists include lists by event type, +field/-field and -F given again, registers
(a recording with user and interrupt registers) and memory data. Then perfspec record samples
tests/workload/workload.c (run inside perf 6.12's chroot, so that perf finds its binaries): perf
script prints the same records as perfspec script, perf report
reads the file without a word on stderr, the callchains start in the workload's own functions, and
page faults land exactly on the pages the workload touched. For recordings of sched:sched_switch,
the "fields" of perfspec's JSON samples must also be what perf's trace text says (prev_comm,
prev_pid, ... next_prio, sample by sample). Exit status 0 when all agree, 1 when one differs, 77
when perf 6.12 cannot run here.

usage: perf_script_side_by_side.py --perfspec build/perfspec [--perf ../shared/tools/perf-current]
"""
import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import struct
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHOW = ["--show-task-events", "--show-mmap-events", "--show-switch-events", "--show-namespace-events",
        "--show-lost-events", "--show-bpf-events", "--show-cgroup-events", "--show-text-poke-events"]

# name, perf record arguments (before the workload), workload
RECORDINGS = [
    ("two-events-callchain", ["-e", "task-clock,page-faults", "-g"], ["ls", "-R", "/usr/share/perl5"]),
    ("frequency", ["-e", "task-clock", "-F", "2000"], ["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"]),
    ("addr-period-1", ["-d", "-e", "page-faults", "-c", "1"], ["ls", "/"]),
    ("system-wide", ["-a", "-e", "cpu-clock", "-c", "100000"], ["sleep", "0.1"]),
    ("group-read", ["-e", "{task-clock,page-faults}:S"], ["ls", "-R", "/usr/share/perl5"]),
    ("tracepoints", ["-a", "-e", "sched:sched_switch,sched:sched_process_exec,sched:sched_process_exit"],
     ["sh", "-c", "ls / >/dev/null; sleep 0.05"]),
    ("inherit-fork", ["-e", "page-faults", "-c", "10"], ["sh", "-c", "ls / >/dev/null; ls /usr >/dev/null"]),
    ("switch-events", ["--switch-events", "-e", "task-clock"], ["sleep", "0.02"]),
    ("pipe", ["-e", "task-clock", "-c", "200000", "-o", "-"], ["ls", "-R", "/usr/share/perl5"]),
    ("compressed", ["-z", "-e", "task-clock,page-faults", "-c", "20000", "-g"], ["ls", "-R", "/usr/share"]),
    ("sched-switch", ["-a", "-e", "sched:sched_switch"], ["sleep", "0.05"]),
    ("tracepoints-pipe", ["-a", "-e", "sched:sched_switch,sched:sched_process_exec", "-o", "-"],
     ["sh", "-c", "ls / >/dev/null; sleep 0.02"]),
    # a folder: the header in data, the records in data.N (one writer thread per CPU)
    ("threads", ["--threads", "-e", "task-clock,page-faults", "-c", "100000"], ["ls", "-R", "/usr/share/perl5"]),
    # user and interrupt registers; memory data (software events have the kernel's N/A), page sizes,
    # cgroups; a software event beside tracepoints, for field lists by type
    ("regs", ["-e", "task-clock", "-c", "200000", "--user-regs=ax,bx,cx,dx,si,di,bp,sp,ip,flags,r8,r15", "-I"],
     ["ls", "-R", "/usr/share/perl5"]),
    ("mem", ["-e", "page-faults", "-c", "5", "-d", "-W", "--phys-data", "--data-page-size", "--code-page-size",
             "--all-cgroups"], ["ls", "/"]),
    ("mixed", ["-e", "page-faults/period=20/,sched:sched_process_exec,sched:sched_process_exit"],
     ["sh", "-c", "ls / >/dev/null"]),
    # --call-graph dwarf: the user stack unwound (ls and Debian's libc have no frame pointers)
    ("dwarf", ["-e", "task-clock,page-faults", "-c", "100000", "--call-graph", "dwarf"], ["ls", "-R", "/usr/share/perl5"]),
    # pipe mode with callchains: each ATTR adds ip and sym to its type's fields (perf's process_attr)
    ("pipe-callchain", ["-e", "task-clock,page-faults", "-c", "100000", "-g", "-o", "-"], ["ls", "-R", "/usr/share/perl5"]),
]
# A list of several strings is that many -F options. perf's stderr is compared too (but for what its
# loading of kernel symbols says): its warnings of fields a type cannot have, of -F given again.
FIELDS = ["comm,tid,time,event,ip", "comm,pid,tid,time,period,event", "comm,tid,cpu,time,event",
          "comm,pid,tid,cpu,time,period,event,addr,ip", "tid,time",
          # a field no type but tracepoints has (nothing for the others); a default removed; misc on every
          # record; a list again, for every type and for software events
          "trace", "-ip", "comm,tid,misc,time,event", ["comm,time,event", "tid,period,event"],
          ["comm,tid,time,event,ip", "sw:comm,tid,event"]]
# The recordings of tracepoints also print their payloads (the trace field), and perf's default fields
# (None: no -F), which for tracepoint events include the trace; and lists by type.
TRACE_FIELDS = ["comm,tid,cpu,time,event,trace", "trace", "comm,pid,tid,time,period,event,trace,ip", None,
                "+period,-cpu", ["sw:comm,tid,period,event", "trace:comm,event,trace"], ["trace:", "sw:tid,event"],
                ["comm,event", "trace:tid,trace"]]
# Symbols: perf's default lists, and lists with sym, symoff and dso, for the recordings of processes
# perf 6.12 started in its chroot (perfspec reads their binaries with --symfs ROOT). Not for the
# system-wide ones: perf reads the binaries of processes outside its chroot through their
# /proc/PID/root, which perfspec does not (docs/perf-compatibility.md).
SYM_FIELDS = [None, "comm,tid,time,event,ip,sym,symoff,dso", "ip,sym", "comm,ip,dso", "+addr", "-symoff",
              ["comm,tid,ip,sym,dso", "sw:ip,sym,symoff"]]
# perf report --stdio (and perf's stackcollapse script, for recordings with callchains) on the same
# recordings of processes in perf's chroot, against perfspec report: the rows, percentages and graphs
REPORTS = [[], ["--no-children", "--sort", "dso,sym"], ["-g", "none", "--sort", "pid,dso,sym", "-n", "--percent-limit", "1"],
           ["-g", "folded"], ["--no-children", "-g", "folded,0.1,caller"]]
STACKCOLLAPSE = "/usr/lib/perf-core/scripts/python/stackcollapse.py"


def without_tip(out):
    at = out.rfind(b"#\n# (Tip: ")
    return out[:at] if at >= 0 else out


GRAPH_BRANCH = re.compile(r"--(\d+\.\d+%)--")


def canonical_report(text):
    """The report with each callchain graph as a tree whose branches of one parent are sorted: perf
    orders branches of equal share in different binaries by where malloc put its objects for them
    (docs/perf-compatibility.md), so two right reports can differ there and nowhere else."""
    out, graph = [], []

    def flush():
        if not graph:
            return
        # each node with the column its frames after the first start in (perf writes a branch's first
        # frame after its share, the others 10 columns after the bar; a branch's bar is in the column
        # its parent's frames start in)
        root = {"frames": [], "children": []}
        stack = [(12, root)]
        for line in graph:
            m = GRAPH_BRANCH.search(line)
            head = line.find("---")
            if m:
                bar = m.start() - 1
                while len(stack) > 1 and stack[-1][0] > bar:
                    stack.pop()
                node = {"label": m.group(1), "frames": [line[m.end():]], "children": []}
                stack[-1][1]["children"].append(node)
                stack.append((bar + 11, node))
            elif head >= 0 and line[:head].strip() == "":
                node = {"label": "---", "frames": [line[head + 3:]], "children": []}
                root["children"].append(node)
                stack.append((head + 3, node))
            elif line.strip(" |"):
                col = len(line) - len(line.lstrip(" |"))
                while len(stack) > 1 and stack[-1][0] > col:
                    stack.pop()
                stack[-1][1]["frames"].append(line[col:])

        def text(node):
            kids = sorted(text(c) for c in node["children"])
            return f"{node.get('label')}:{'/'.join(node['frames'])}[{','.join(kids)}]"
        out.append(text(root))
        graph.clear()

    for line in text.decode(errors="replace").split("\n"):
        if line.startswith(" " * 12) and (line.strip().startswith(("|", "-")) or line.strip() == "" or
                                          GRAPH_BRANCH.search(line) or graph):
            if line.strip() or graph:
                graph.append(line)
                continue
        flush()
        out.append(line)
    flush()
    return unordered_folded_chains(unordered_address_rows(out))


FOLDED_CHAIN = re.compile(r"^(\d+\.\d+%) \S")


def unordered_folded_chains(lines):
    """-g folded's chains of one row with equal shares, as a set: perf prints them in its tree's order,
    which for equal shares is where malloc put them, as for the graphs' branches."""
    out, run, key = [], [], None
    for line in lines + [""]:
        m = FOLDED_CHAIN.match(line)
        if not m or m.group(1) != key:
            out.extend(sorted(run))
            run.clear()
        key = m.group(1) if m else None
        (run if m else out).append(line)
    return out[:-1]


ROW_SHARES = re.compile(r"^ +(\d+\.\d+% +)+")
ADDRESS_ROW = re.compile(r"\[[k.]\] 0x[0-9a-f]+$")


def unordered_address_rows(lines):
    """Rows of equal shares whose symbol is a bare address, as a set: perf orders them with an address
    difference taken as a signed 64-bit number, which is no order for addresses 2^63 or more apart (the
    garbage a callchain without frame pointers picks up), so they come out in its tree's insertion
    order (docs/perf-compatibility.md). Their other rows keep their order."""
    out, run, key = [], [], None

    def close():
        out.extend([l for l in run if not ADDRESS_ROW.search(l)] + sorted(l for l in run if ADDRESS_ROW.search(l)))
        run.clear()

    for line in lines:
        m = ROW_SHARES.match(line)
        if not m or m.group(0) != key:
            close()
        if m:
            key = m.group(0)
            run.append(line)
        else:
            key = None
            out.append(line)
    close()
    return out


def keep_failed(path, name):
    """A recording a comparison failed on, copied where it outlives the run (to look into it later)."""
    kept = os.path.join(tempfile.gettempdir(), "perfspec-side-by-side-failed")
    os.makedirs(kept, exist_ok=True)
    to = os.path.join(kept, name + ".data")
    if os.path.isdir(to):
        shutil.rmtree(to)
    (shutil.copytree if os.path.isdir(path) else shutil.copy)(path, to)
    return to


def compare_reports(perf, perfspec, root, name, rec, host, inside_path, pipe):
    """Returns (compared, failed)."""
    compared = failed = 0
    callchains = "-g" in rec
    runs = [(["report", "--stdio"] + a, ["report"] + a) for a in REPORTS]
    if callchains:
        runs.append((["script", "-s", STACKCOLLAPSE], ["report", "--format", "folded"]))
    for theirs, ours in runs:
        pcmd, pin = ([perf] + theirs + ["-i", "-"], host) if pipe else ([perf] + theirs + ["-i", inside_path], None)
        pst, pout, perr = run(pcmd, pin)
        sst, sout, serr = run([perfspec] + ours + ["--symfs", root, "-i", host])
        compared += 1
        label = f"{name} {' '.join(ours)}"
        # graphs asked of samples without callchains: perf's error (status 0), for any recording
        graph_refused = b"Selected -g or --branch-history." in perr
        if graph_refused and b"Selected -g or --branch-history." not in serr:
            print(f"FAIL {label}: perf says the samples have no callchains, perfspec does not: {serr[:200]!r}")
            failed += 1
            continue
        if "{" in " ".join(rec) and not graph_refused:  # group reads: refused, not printed wrong
            if sst != 2 or b"not supported yet" not in serr:
                print(f"FAIL {label}: a group read's profile is not refused: {sst} {serr[:200]!r}")
                failed += 1
            continue
        theirs_text = without_tip(pout)
        if theirs_text == sout and pst == 0 and sst == 0:
            continue
        if pst != 0 or sst != 0 or canonical_report(theirs_text) != canonical_report(sout):
            print(f"FAIL {label}: perf status {pst}, perfspec {sst} {serr.decode(errors='replace')[:200]}; "
                  f"the recording is kept as {keep_failed(host, name)}")
            show_diff(theirs_text, sout, 30)
            failed += 1
        else:
            print(f"report {label}: the same but for the order of equal shares perf leaves to its trees")
    return compared, failed


def without_comm(out, comm):
    """perf script's sample blocks (separated by blank lines) but those of `comm`."""
    return b"\n\n".join(b for b in out.split(b"\n\n") if not b.lstrip(b"\n").startswith(comm))


def host_frames_unnamed(theirs, ours):
    """`ours` with the frames perf left [unknown] where perfspec named them: the host's libc the chroot(8)
    process ran until its exec, whose build perfspec finds in the host's build-id cache and perf does
    not in its chroot's. Only a line of the same address, `[unknown]` in perf's, is taken from perf's."""
    a, b = theirs.split(b"\n"), ours.split(b"\n")
    if len(a) != len(b):
        return ours
    out = []
    for x, y in zip(a, b):
        same_ip = x.split()[:1] == y.split()[:1]
        out.append(x if x != y and same_ip and x.endswith(b" [unknown]") else y)
    return b"\n".join(out)


def ensure_addr2line(root):
    """binutils' addr2line in perf 6.12's chroot (perf's srcline runs it): installed there when absent."""
    if os.access(os.path.join(root, "usr/bin/addr2line"), os.X_OK):
        return True
    st = subprocess.run(["chroot", root, "sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                         "--no-install-recommends binutils"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if st.returncode != 0:
        print(st.stdout.decode(errors="replace")[-600:])
    return os.access(os.path.join(root, "usr/bin/addr2line"), os.X_OK)


def compare_headers(perf, perfspec, name, host, inside_path, pipe):
    """perf report --header-only, with and without -I, byte for byte (the attrs' types and configs named
    by this machine's PMUs for both). Returns (compared, failed)."""
    failed = 0
    for extra in ([], ["-I"]):
        pcmd = [perf, "report", "--header-only"] + extra
        pcmd, pin = (pcmd + ["-i", "-"], host) if pipe else (pcmd + ["-i", inside_path], None)
        pst, pout, perr = run(pcmd, pin)
        sst, sout, serr = run([perfspec, "report", "--header-only", "-i", host] + extra)
        if pst != 0 or sst != 0 or pout != sout:
            print(f"FAIL {name} report --header-only {' '.join(extra)}: perf status {pst}, perfspec {sst} "
                  f"{serr.decode(errors='replace')[:200]}")
            show_diff(pout, sout)
            failed += 1
    return 2, failed


# Lists of the recordings with registers or memory data, of software events beside tracepoints, of a
# pipe with callchains
EXTRA_FIELDS = {
    # sym, which perf adds to the lists of a pipe with callchains, removed: the rest of what it adds
    "pipe-callchain": [["comm,tid", "-sym"], ["comm,tid,time,event", "-sym"], ["sw:tid,period", "-sym"],
                       ["comm,tid", "-ip"], ["comm,tid,ip", "-sym", "sw:comm,event,ip"]],
    "mixed": ["comm,tid,time,event,trace", ["sw:comm,tid,period,event", "trace:comm,event,trace"],
              ["trace:", "sw:tid,event"], ["comm,event", "trace:tid,trace"], ["comm,tid", "trace:+trace,-tid"]],
    "regs": ["comm,pid,tid,time,event,ip,iregs,uregs", "tid,iregs", "comm,uregs,period", "sw:tid,uregs,iregs"],
    "mem": ["comm,tid,time,misc,event,addr,data_src,weight,ins_lat,retire_lat,phys_addr,data_page_size,"
            "code_page_size,cgroup", "tid,data_src,weight", "sw:comm,cgroup,data_page_size,iregs"],
}


def fields_args(fields):
    """-F options: none (perf's defaults), one, or one per string of a list."""
    if fields is None:
        return []
    return [a for f in ([fields] if isinstance(fields, str) else fields) for a in ("-F", f)]


def perf_stderr(err):
    """perf script's stderr but for what its loading of kernel symbols says (perfspec resolves none)."""
    return b"".join(l for l in err.splitlines(keepends=True) if not l.startswith(b"No kallsyms or vmlinux"))


def run(cmd, stdin=None):
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
        p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def record_types(path):
    """The type of each record in a perf.data file's data section (file mode), in order."""
    with open(path, "rb") as f:
        b = f.read()
    offset, size = struct.unpack_from("<QQ", b, 40)
    types, at = [], offset
    while at + 8 <= offset + size:
        kind, _, length = struct.unpack_from("<IHH", b, at)
        if length < 8:
            break
        types.append(kind)
        at += length
    return types


def feature_words(path, bit):
    """The u32 words of a feature section (HEADER_COMPRESSED is bit 27) of a perf.data file; () when the
    file does not have it."""
    with open(path, "rb") as f:
        b = f.read()
    offset, size = struct.unpack_from("<QQ", b, 40)
    bits = int.from_bytes(b[72:104], "little")
    if not bits >> bit & 1:
        return ()
    index = offset + size + 16 * bin(bits & ((1 << bit) - 1)).count("1")
    at, length = struct.unpack_from("<QQ", b, index)
    return struct.unpack_from("<%dI" % (length // 4), b, at)


def show_diff(theirs, ours, lines=20):
    """The first lines of a unified diff of perf's output against perfspec's, indented."""
    for i, line in enumerate(difflib.unified_diff(theirs.decode(errors="replace").splitlines(),
                                                  ours.decode(errors="replace").splitlines(), "perf", "perfspec",
                                                  lineterm="", n=1)):
        if i > lines:
            break
        print("  " + line)


def check_record(perf, perfspec, root, inside, chroot_dir):
    """perfspec record -> perf script / perf report. Returns (checks, failures)."""
    checks = failed = 0

    def fail(msg):
        nonlocal failed
        print("FAIL record: " + msg)
        failed += 1

    exe = os.path.join(inside, "workload")
    src = os.path.join(HERE, "..", "workload", "workload.c")
    st = subprocess.run(["cc", "-O0", "-fno-omit-frame-pointer", "-o", exe, src])
    if st.returncode != 0:
        fail("cannot compile tests/workload/workload.c")
        return 1, 1
    run_in = ["chroot", root, chroot_dir + "/workload"]

    def record(name, args, workload):
        path = os.path.join(inside, name + ".data")  # in perf 6.12's chroot: perf finds the binaries
        p = subprocess.run([perfspec, "record", "-q", "-o", path] + args + ["--"] + run_in + workload,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return p, path, chroot_dir + "/" + name + ".data"

    # 1. callchains: the workload's own functions first; perf reads what perfspec wrote
    p, host, inner = record("spin", ["-e", "task-clock", "-F", "1000", "-g"], ["burn", "300"])  # 300 ms of CPU, however long
    checks += 1
    if p.returncode != 0:
        fail(f"perfspec record spin failed: {p.stderr.decode(errors='replace')}")
        return checks, failed
    for fields in ["comm,tid,time,event,ip", "comm,pid,tid,time,period,event", "comm,tid,time,event,ip,sym,symoff,dso",
                   None]:
        checks += 1
        pst, pout, perr = run([perf, "script", "-i", inner] + fields_args(fields))
        sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-i", host] + fields_args(fields))
        # The samples of `chroot` before it execs the workload are of this machine's binaries, which
        # perf 6.12 reads from inside its chroot and perfspec from here (and this machine's build-id
        # cache): they are left out of the symbol lists' comparison; so is a sample taken within the
        # execve (already named `workload`, its user frame still in chroot's libc).
        if fields is None or "sym" in fields:
            keep = lambda out: b"\n\n".join(b for b in out.split(b"\n\n")
                                             if not b.lstrip().startswith(b"chroot ") and b"sys_execve" not in b)
            pout, sout = keep(pout), keep(sout)
        if pst != 0 or sst != 0 or pout != sout:
            fail(f"spin -F {fields}: perf script (status {pst}) and perfspec script (status {sst}) differ "
                 f"{perr.decode(errors='replace')[:200]}")
    checks += 1
    pst, pout, perr = run([perf, "script", "-i", inner, "-F", "comm,ip,sym"])
    blocks = [b for b in pout.decode(errors="replace").split("\n\n") if b.startswith("workload")]
    user_first = [b for b in blocks if len(b.splitlines()) > 1 and "ffffffff" not in b.splitlines()[1]]
    own = [b for b in user_first if b.splitlines()[1].split()[-1] in ("spin_inner", "spin_middle", "spin_outer")]
    stacked = [b for b in own if "spin_outer" in b and "main" in b]
    if len(user_first) < 100 or len(own) < 0.9 * len(user_first) or len(stacked) < 0.9 * len(own):
        fail(f"spin callchains: {len(blocks)} samples of the workload, {len(user_first)} in user space, "
             f"{len(own)} first in its own functions, {len(stacked)} with spin_outer and main on the stack")
    print(f"record spin: {len(blocks)} samples of the workload, {len(user_first)} in user space, {len(own)} first "
          f"in its own functions, {len(stacked)} with spin_outer and main below")
    # 1b. --call-graph dwarf of the workload built without frame pointers: perf 6.12 unwinds perfspec's
    # recording as perfspec does, down to main
    nofp = os.path.join(inside, "workload-nofp")
    if subprocess.run(["cc", "-O2", "-fomit-frame-pointer", "-o", nofp, src]).returncode != 0:
        fail("cannot compile tests/workload/workload.c without frame pointers")
    else:
        path = os.path.join(inside, "dwarf.data")
        p = subprocess.run([perfspec, "record", "-q", "-o", path, "-e", "task-clock", "-F", "1000", "--call-graph",
                            "dwarf", "--", "chroot", root, chroot_dir + "/workload-nofp", "burn", "300"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        checks += 1
        pst, pout, perr = run([perf, "script", "-i", chroot_dir + "/dwarf.data"])
        sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-i", path])
        keep = lambda out: b"\n\n".join(b for b in out.split(b"\n\n")
                                         if not b.lstrip().startswith(b"chroot ") and b"sys_execve" not in b)
        pout, sout = keep(pout), keep(sout)
        mains = pout.count(b" main+")
        if p.returncode != 0 or pst != 0 or sst != 0 or pout != sout or mains < 250:
            fail(f"--call-graph dwarf: perfspec record {p.returncode}, perf script {pst} ({mains} frames in main), "
                 f"perfspec script {sst}, {'the same' if pout == sout else 'different'}")
            show_diff(pout, sout)
        print(f"record dwarf: perf 6.12 unwinds perfspec's recording to main in {mains} samples, as perfspec does")
    # 1c. -z: the records zstd-compressed (COMPRESSED records, HEADER_COMPRESSED with the level), as
    # perf 6.12 reads them: the same lines as perfspec's
    p, host, inner = record("spin-z", ["-z3", "-e", "task-clock", "-F", "1000", "-g"], ["burn", "200"])
    checks += 1
    header = run([perf, "report", "--header-only", "-i", inner])[1].decode(errors="replace")
    compressed = record_types(host).count(81)  # PERF_RECORD_COMPRESSED
    # HEADER_COMPRESSED's version and type as perf 6.12's own -z recording has them
    run([perf, "record", "-q", "-z", "-e", "task-clock", "-o", chroot_dir + "/perf-z.data", "true"])
    theirs = feature_words(os.path.join(inside, "perf-z.data"), 27)[:2]
    ours = feature_words(host, 27)[:3]
    if (p.returncode != 0 or compressed < 1 or "# compressed : Zstd, level = 3, ratio = " not in header
            or len(theirs) != 2 or ours != theirs + (3,)):
        fail(f"record -z3: status {p.returncode}, {compressed} COMPRESSED records, HEADER_COMPRESSED "
             f"{ours} (perf's own starts {theirs}), perf's header: "
             f"{[l for l in header.splitlines() if 'compress' in l]}")
    for fields in ["comm,tid,time,event,ip", "comm,tid,time,event,ip,sym,symoff,dso"]:
        checks += 1
        pst, pout, perr = run([perf, "script", "-i", inner] + fields_args(fields))
        sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-i", host] + fields_args(fields))
        keep = lambda out: b"\n\n".join(b for b in out.split(b"\n\n")
                                         if not b.lstrip().startswith(b"chroot ") and b"sys_execve" not in b)
        pout, sout = keep(pout), keep(sout)
        lines = pout.count(b"\n")
        if pst != 0 or sst != 0 or pout != sout or lines < 100:
            fail(f"record -z3 -F {fields}: perf script (status {pst}, {lines} lines) and perfspec "
                 f"script (status {sst}) differ: {perr.decode(errors='replace')[:200]}")
            show_diff(pout, sout)
    print(f"record -z3: {compressed} COMPRESSED records, HEADER_COMPRESSED {ours} as perf 6.12's own -z "
          f"begins it; perf 6.12 prints them as perfspec does")
    # perf record's build ids: perf 6.12 lists the workload, with the build id its ELF note says
    checks += 1
    note = subprocess.run(["readelf", "-n", exe], stdout=subprocess.PIPE).stdout.decode()
    want_id = re.search(r"Build ID: ([0-9a-f]+)", note)
    bst, bout, berr = run([perf, "buildid-list", "-i", inner])
    listed = [l.split() for l in bout.decode(errors="replace").splitlines()]
    if not want_id or [want_id.group(1), chroot_dir + "/workload"] not in listed:
        fail(f"perf buildid-list of perfspec's recording: {bout.decode(errors='replace')[:300]!r} "
             f"(want {want_id.group(1) if want_id else '?'} {chroot_dir}/workload)")
    checks += 1
    rst, rout, rerr = run([perf, "report", "--stdio", "--no-children", "--sort", "sym", "-i", inner])
    top = [l for l in rout.decode(errors="replace").splitlines() if l.strip() and not l.startswith("#")]
    if rst != 0 or rerr.strip() or not top or "spin_inner" not in top[0]:
        fail(f"perf report: status {rst}, stderr {rerr.decode(errors='replace')[:300]!r}, top line {top[:1]}")

    # 1c. the header perf report shows: CPU and NUMA topology, PMU mappings and groups as perf 6.12 writes
    # them on this machine (a node's free memory moves between the two recordings)
    p, host, inner = record("header", ["-e", "{task-clock,page-faults}"], ["burn", "10"])
    pst, _, _ = run([perf, "record", "-q", "-e", "{task-clock,page-faults}", "-o", chroot_dir + "/header-perf.data",
                     "--", chroot_dir + "/workload", "burn", "10"])
    checks += 1

    def header_lines(path):
        st, out, _ = run([perf, "report", "--header-only", "-I", "-i", path])
        keep = re.compile(r"# (sibling |CPU \d+: |node\d+ |pmu mappings: |group: )")
        lines = [l for l in out.decode(errors="replace").splitlines() if keep.match(l)]
        return st, [re.sub(r"free = \d+ kB", "free = N kB", l) for l in lines]

    # and the whole header of perfspec's recording as perf 6.12 prints it
    c, f = compare_headers(perf, perfspec, "record header", host, inner, False)
    checks += c
    failed += f
    ours, theirs = header_lines(inner), header_lines(chroot_dir + "/header-perf.data")
    print(f"record header: perf 6.12 shows {len(theirs[1])} topology, NUMA, PMU and group lines for its own "
          f"recording; for perfspec's {'the same' if ours == theirs else 'others'}")
    if p.returncode != 0 or pst != 0 or ours != theirs or not any(l.startswith("# group:") for l in theirs[1]):
        fail(f"header: perfspec's {ours}, perf's {theirs}")

    # 2. page faults at period 1 with data addresses: exactly the N pages touched
    n = 64
    p, host, inner = record("touch", ["-e", "page-faults", "-c", "1", "-d"], ["touch", str(n)])
    checks += 1
    region = [l.split() for l in p.stderr.decode(errors="replace").splitlines() if l.startswith("region ")]
    if p.returncode != 0 or not region:
        fail(f"perfspec record touch failed: {p.stderr.decode(errors='replace')}")
    else:
        lo, hi = int(region[0][1], 16), int(region[0][2], 16)
        sst, sout, _ = run([perfspec, "script", "--format", "json", "-i", host])
        import json
        hits = [r for r in map(json.loads, sout.decode().splitlines()[1:])
                if r["type"] == "SAMPLE" and lo <= r.get("addr", 0) < hi]
        pages = {r["addr"] // 4096 for r in hits}
        pst, pout, _ = run([perf, "script", "-i", inner, "-F", "addr"])
        perf_hits = [int(l.split()[0], 16) for l in pout.decode().splitlines() if l.strip()]
        perf_in = [a for a in perf_hits if lo <= a < hi]
        print(f"record touch: {len(hits)} samples on the {n} pages touched ({len(pages)} distinct), perf script "
              f"{len(perf_in)}")
        if len(hits) != n or len(pages) != n or len(perf_in) != n:
            fail(f"touch {n} pages: perfspec script sees {len(hits)} samples in the region ({len(pages)} pages), "
                 f"perf script {len(perf_in)}")

    # 3. inherit across fork: the child's samples, under its own pid
    p, host, inner = record("fork", ["-e", "task-clock", "-c", "250000"], ["fork", "200"])
    checks += 1
    sst, sout, _ = run([perfspec, "script", "--samples", "-i", host, "-F", "comm,pid,tid"])
    pids = {}
    for line in sout.decode().splitlines():
        parts = line.split()
        if parts and parts[0] == "workload":
            pids[parts[1]] = pids.get(parts[1], 0) + 1
    pst, pout, _ = run([perf, "script", "-i", inner, "-F", "comm,pid,tid"])
    print(f"record fork: samples by pid {pids}")
    if p.returncode != 0 or len(pids) < 2 or max(pids.values()) < 100 or pout != sout:
        fail(f"fork: samples by pid {pids}; perf script agrees: {pout == sout}")
    # 4. tracepoints, system-wide, in file and in pipe mode: the file carries perf's tracing data, and perf
    # 6.12's perf script prints what perfspec script prints, payloads included
    tp_events = "sched:sched_switch,sched:sched_process_exec,sched:sched_process_exit"
    host = os.path.join(inside, "tracepoints.data")
    p = subprocess.run([perfspec, "record", "-q", "-o", host, "-a", "-e", tp_events, "--", "sh", "-c",
                        "ls / >/dev/null; sleep 0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pipe_host = os.path.join(inside, "tracepoints-pipe.data")
    with open(pipe_host, "wb") as f:
        pp = subprocess.run([perfspec, "record", "-q", "-o", "-", "-a", "-e", tp_events, "--", "sh", "-c",
                             "ls / >/dev/null; sleep 0.05"], stdout=f, stderr=subprocess.PIPE)
    checks += 1
    if p.returncode != 0 or pp.returncode != 0:
        fail(f"perfspec record of tracepoints failed: {p.stderr.decode(errors='replace')} "
             f"{pp.stderr.decode(errors='replace')}")
    else:
        for name, path, pipe in (("tracepoints", host, False), ("tracepoints-pipe", pipe_host, True)):
            for fields in [f for f in TRACE_FIELDS if not isinstance(f, list)] + ["comm,pid,tid,time,event"]:
                checks += 1
                f = fields_args(fields)
                pcmd = [perf, "script"] + (["-i", "-"] if pipe else ["-i", chroot_dir + "/" + os.path.basename(path)])
                pst, pout, perr = run(pcmd + f, path if pipe else None)
                sst, sout, serr = run([perfspec, "script", "--samples", "-i", path] + f)
                samples = pout.count(b"\n")
                if pst != 0 or sst != 0 or pout != sout or samples < 3:
                    fail(f"perfspec record {name} -F {fields}: perf script (status {pst}, {samples} lines) and "
                         f"perfspec script (status {sst}) differ: {perr.decode(errors='replace')[:300]}")
                    show_diff(pout, sout)
            if b"filename=/usr/bin/" not in run([perf, "script", "-F", "trace"] + (
                    ["-i", "-"] if pipe else ["-i", chroot_dir + "/" + os.path.basename(path)]),
                    path if pipe else None)[1]:
                checks += 1
                fail(f"perf script of perfspec's {name}: no sched_process_exec payload naming the program")
    print(f"record tracepoints: perf 6.12 prints perfspec's recordings (file and pipe) as perfspec does")

    # 5. perf 6.1 (Debian 12's, /usr/bin/perf) reads every file perfspec wrote: attrs no longer than its
    # 128 bytes (perf 6.12's own 136-byte attrs it refuses: "unsupported ABI")
    old_perf = shutil.which("perf") or "/usr/bin/perf"
    if not os.access(old_perf, os.X_OK):
        fail(f"no perf 6.1 at {old_perf} (scripts/setup.sh installs linux-perf)")
    else:
        for data in ["spin.data", "spin-z.data", "touch.data", "fork.data", "tracepoints.data", "tracepoints-pipe.data"]:
            checks += 1
            path = os.path.join(inside, data)
            pipe = "pipe" in data
            st, out, err = run([old_perf, "script", "-F", "comm,tid,time,event"] + (["-i", "-"] if pipe else ["-i", path]),
                               path if pipe else None)
            ours = run([perfspec, "script", "--samples", "-i", path, "-F", "tid"])[1].count(b"\n")
            theirs = out.count(b"\n")
            if st != 0 or b"unsupported ABI" in err or theirs != ours:
                fail(f"perf 6.1 script -i {data}: status {st}, {theirs} samples (perfspec: {ours}): "
                     f"{err.decode(errors='replace')[:300]}")
        print(f"record: perf 6.1 ({old_perf}) reads every file perfspec wrote")

    # 5b. source lines: the workload built with -O2 -g (inlined functions, its own line table) and
    # Debian's libraries (none), recorded with callchains by perf 6.12 and by perfspec; perf 6.12 asks
    # binutils' addr2line (installed into its chroot here: perf has no line reader of its own); with
    # frame-pointer callchains perf shows no inlined frames (5c has them)
    checks += 1
    if not ensure_addr2line(root):
        fail("no addr2line in perf 6.12's chroot, and binutils could not be installed there")
    else:
        exe_g = os.path.join(inside, "workload-g")
        st = subprocess.run(["cc", "-O2", "-g", "-fno-omit-frame-pointer", "-o", exe_g, src])
        if st.returncode != 0:
            fail("cannot compile tests/workload/workload.c with -O2 -g")
        else:
            pst, _, perr = run([perf, "record", "-q", "-g", "-c", "100000", "-e", "task-clock", "-o",
                                chroot_dir + "/lines-perf.data", "--", chroot_dir + "/workload-g", "burn", "100"])
            p = subprocess.run([perfspec, "record", "-q", "-g", "-c", "100000", "-e", "task-clock", "-o",
                                os.path.join(inside, "lines.data"), "--", "chroot", root, chroot_dir + "/workload-g",
                                "burn", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            lines = 0
            for name, ok in [("lines-perf.data", pst == 0), ("lines.data", p.returncode == 0)]:
                if not ok:
                    fail(f"recording {name} failed: {perr.decode(errors='replace')[:200]} {p.stderr[:200]!r}")
                    continue
                # perfspec's recording starts in the host's chroot(8), whose libraries perf 6.12 finds in no
                # build-id cache of its chroot (perfspec finds them in the host's ~/.debug): its samples, and
                # the frames of the exec it makes, are left out of the comparison
                for fields in ["comm,tid,ip,sym,srcline"] + (["ip,sym,symoff,dso,srcline"] if name != "lines.data" else []):
                    pst2, pout, perr2 = run([perf, "script", "-F", fields, "-i", chroot_dir + "/" + name])
                    sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-F", fields, "-i",
                                           os.path.join(inside, name)])
                    if name == "lines.data":
                        pout, sout = without_comm(pout, b"chroot "), without_comm(sout, b"chroot ")
                        sout = host_frames_unnamed(pout, sout)
                    lines += sum(1 for l in pout.splitlines() if l.startswith(b"  ") and b"[" not in l)
                    if pst2 != 0 or sst != 0 or pout != sout:
                        fail(f"srcline of {name} -F {fields}: perf status {pst2}, perfspec {sst}")
                        show_diff(pout, sout)
            print(f"record srcline: perf 6.12 (addr2line) and perfspec print {lines} source lines alike")

        # 5c. inlined frames (perf's default --inline, which asks addr2line -i): a C++ workload whose hot
        # code is templates inlined into one function, built -O2 -g, recorded by perf 6.12 with
        # --call-graph dwarf; perf's default fields, source lines, and --no-inline printed by both
        checks += 1
        exe_i = os.path.join(inside, "inline_workload")
        st = subprocess.run(["g++", "-O2", "-g", "-static-libstdc++", "-static-libgcc", "-o", exe_i,
                             os.path.join(HERE, "..", "workload", "inline_workload.cpp")])
        pst, _, perr = run([perf, "record", "-q", "--call-graph", "dwarf", "-c", "100000", "-e", "task-clock",
                            "-o", chroot_dir + "/inline.data", "--", chroot_dir + "/inline_workload", "3000"])
        if st.returncode != 0 or pst != 0:
            fail(f"inlined frames: compiling {st.returncode}, perf record {pst}: {perr.decode(errors='replace')[:200]}")
        else:
            inlined, shown = 0, b""
            for args in [[], ["-F", "ip,sym,srcline"], ["-F", "comm,tid,ip,sym,symoff,dso"], ["--no-inline"]]:
                pst2, pout, _ = run([perf, "script"] + args + ["-i", chroot_dir + "/inline.data"])
                sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root] + args +
                                      ["-i", os.path.join(inside, "inline.data")])
                if not args:
                    inlined, shown = pout.count(b" (inlined)"), pout
                if pst2 != 0 or sst != 0 or pout != sout:
                    fail(f"inlined frames, script {' '.join(args)}: perf status {pst2}, perfspec {sst}: "
                         f"{serr.decode(errors='replace')[:200]}")
                    show_diff(pout, sout)
            names = [b"calc::Acc<unsigned long>::add(unsigned long)+0x", b"unsigned long calc::mid<unsigned long>"]
            print(f"record inline: perf 6.12 (addr2line -i) and perfspec show {inlined} inlined frames alike")
            if inlined < 100 or any(n not in shown for n in names):
                fail(f"inlined frames: perf 6.12 showed {inlined} inlined frames, or not the template's names")
            compared, failed = compare_reports(perf, perfspec, root, "inline.data", ["-g"],
                                               os.path.join(inside, "inline.data"), chroot_dir + "/inline.data",
                                               False)
            if failed:
                fail(f"inlined frames: {failed} of {compared} reports differ from perf 6.12's")
            else:
                print(f"report inline: {compared} reports and the folded stacks alike with perf 6.12's")

    # 6. C++ names: perf 6.12's recording of a class template's member function and a function taking a
    # std::vector, printed with perf's default fields by both (the binary in the chroot, read by perfspec
    # through --symfs)
    cxx = os.path.join(inside, "cxx_workload")
    st = subprocess.run(["g++", "-O0", "-fno-omit-frame-pointer", "-static-libstdc++", "-static-libgcc", "-o", cxx,
                         os.path.join(HERE, "..", "workload", "cxx_workload.cpp")])
    checks += 1
    if st.returncode != 0:
        fail("cannot compile tests/workload/cxx_workload.cpp")
    else:
        pst, _, perr = run([perf, "record", "-q", "-g", "-F", "999", "-o", chroot_dir + "/cxx.data", "--",
                            chroot_dir + "/cxx_workload", "3000"])
        pst2, pout, _ = run([perf, "script", "-i", chroot_dir + "/cxx.data"])
        sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-i", os.path.join(inside, "cxx.data")])
        spins = pout.count(b"work::Box<double>::spin(int) const+0x")
        outers = pout.count(b"work::outer(std::vector<double, std::allocator<double> > const&, int)+0x")
        print(f"record C++: perf 6.12 names work::Box<double>::spin(int) const in {spins} frames, work::outer(...) "
              f"in {outers}; perfspec script {'prints the same' if pout == sout else 'differs'}")
        if pst != 0 or pst2 != 0 or sst != 0 or pout != sout or spins < 100 or outers < 100:
            fail(f"C++ names: perf record {pst}, perf script {pst2}, perfspec script {sst}: "
                 f"{serr.decode(errors='replace')[:200]}")
            show_diff(pout, sout)

    # 6b. other languages' names: a C program whose functions carry rustc's, OCaml's and Java's mangled
    # names (tests/workload/names_workload.c), perf 6.12's recording printed by both
    names = os.path.join(inside, "names_workload")
    st = subprocess.run(["gcc", "-O0", "-fno-omit-frame-pointer", "-o", names,
                         os.path.join(HERE, "..", "workload", "names_workload.c")])
    checks += 1
    if st.returncode != 0:
        fail("cannot compile tests/workload/names_workload.c")
    else:
        pst, _, _ = run([perf, "record", "-q", "-F", "999", "-o", chroot_dir + "/names.data", "--",
                         chroot_dir + "/names_workload", "2000000"])
        pst2, pout, _ = run([perf, "script", "-i", chroot_dir + "/names.data"])
        sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-i",
                               os.path.join(inside, "names.data")])
        shown = [b"core::fmt::write+0x", b"&T,*u8@()'[]~::f+0x", b"Stdlib.List.map_413+0x",
                 b"java.lang.String.hashCode()+0x", b"com.example.Foo.bar(int, long[], java.lang.Object)+0x"]
        missing = [n.decode() for n in shown if n not in pout]
        print(f"record names: perf 6.12 shows Rust, OCaml and Java names ({len(shown) - len(missing)} of "
              f"{len(shown)} looked for); perfspec script {'prints the same' if pout == sout else 'differs'}")
        if pst != 0 or pst2 != 0 or sst != 0 or pout != sout or missing:
            fail(f"names: perf record {pst}, perf script {pst2}, perfspec script {sst}, not in perf's output "
                 f"{missing}: {serr.decode(errors='replace')[:200]}")
            show_diff(pout, sout)

    # 6c. a JIT: node with --perf-basic-prof, recorded by perfspec with callchains; its /tmp/perf-PID.map
    # moved into perf 6.12's chroot's /tmp (where perf looks, and perfspec under --symfs). The frames in JIT code (those whose binary is
    # the map) must be perf's, line for line; the other frames are of this machine's binaries, which
    # perf 6.12 cannot see from its chroot.
    checks += 1
    node = shutil.which("node")
    if not node:
        fail("node is not installed (scripts/setup.sh installs nodejs)")
    else:
        data = os.path.join(inside, "jit.data")
        p = subprocess.run([perfspec, "record", "-q", "-g", "-F", "999", "-o", data, "--", node, "--perf-basic-prof",
                            os.path.join(HERE, "..", "workload", "jit_workload.js"), "3000"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=inside)  # node leaves v8 logs there
        # node's pid (the recorded command itself), then its map where perf 6.12 (in its chroot) and
        # perfspec (under --symfs) look for it
        _, pids, _ = run([perfspec, "script", "--samples", "-F", "comm,pid", "-i", data])
        node_pids = {l.split()[1] for l in pids.decode(errors="replace").splitlines() if l.split()[:1] == ["node"]}
        pid = node_pids.pop() if len(node_pids) == 1 else None
        if pid and os.path.exists(f"/tmp/perf-{pid}.map"):
            shutil.move(f"/tmp/perf-{pid}.map", os.path.join(root, "tmp", f"perf-{pid}.map"))
        pst, pout, _ = run([perf, "script", "-i", chroot_dir + "/jit.data"])
        sst, sout, serr = run([perfspec, "script", "--samples", "--symfs", root, "-i", data])
        if pid and os.path.exists(os.path.join(root, "tmp", f"perf-{pid}.map")):
            os.unlink(os.path.join(root, "tmp", f"perf-{pid}.map"))
        in_map = rb"(/tmp/perf-" + (pid or "?").encode() + rb".map)"
        theirs = [l for l in pout.splitlines() if l.endswith(in_map)]
        ours = [l for l in sout.splitlines() if l.endswith(in_map)]
        # node names its code `JS:*spinInner FILE:LINE:COLUMN` (the mark is V8's tier: *, ^ or ~)
        spins = sum(1 for l in theirs if b"spinInner " in l)
        print(f"record JIT: perf 6.12 names {len(theirs)} frames from node's perf map ({spins} in spinInner); "
              f"perfspec {'the same' if theirs == ours else 'others'}")
        if p.returncode != 0 or pst != 0 or sst != 0 or not pid or theirs != ours or spins < 50:
            fail(f"JIT: perfspec record {p.returncode}, perf script {pst}, perfspec script {sst}, map of pid {pid}: "
                 f"{(p.stderr + serr).decode(errors='replace')[:300]}")
            show_diff(b"\n".join(theirs), b"\n".join(ours))

    # 7. a breakpoint at period 1: one sample per write, each in the function that writes
    nopie = os.path.join(inside, "workload-nopie")
    subprocess.run(["cc", "-O0", "-no-pie", "-fno-omit-frame-pointer", "-o", nopie, src], check=True)
    # name -> (address, size), from the symbol table (nm -S)
    syms = {}
    for l in subprocess.run(["nm", "-S", nopie], stdout=subprocess.PIPE).stdout.decode().splitlines():
        w = l.split()
        if len(w) == 4:
            syms[w[3]] = (int(w[0], 16), int(w[1], 16))
    addr, (fn, fn_size) = syms["watched"][0], syms["write_watched"]
    k = 1000
    # Whether this machine's breakpoints fire is asked of perf 6.12, not of perfspec (which is under test):
    # :u, since the kernel's ELF loader also writes the variable's page (clearing .bss) after exec.
    probe = run([perf, "stat", "-x,", "-e", f"mem:{addr:#x}:w:u", "--", chroot_dir + "/workload-nopie", "write", str(k)])
    fires = probe[2].decode().split(",")[0] == str(k)
    checks += 1
    st = subprocess.run([perfspec, "stat", "-x,", "-e", f"mem:{addr:#x}:w:u", "--", nopie, "write", str(k)],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    counted = st.stderr.decode().split(",")[0]
    if counted != (str(k) if fires else "0"):
        fail(f"perfspec stat -e mem:{addr:#x}:w:u counts {counted!r} of {k} writes; perf 6.12 says breakpoints "
             f"{'fire' if fires else 'do not fire'} here ({probe[2].decode().strip()[:80]!r})")
    checks += 1
    p = subprocess.run([perfspec, "record", "-q", "-e", f"mem:{addr:#x}:w:u", "-c", "1", "-o",
                        os.path.join(inside, "bp.data"), "--", "chroot", root, chroot_dir + "/workload-nopie",
                        "write", str(k)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sst, sout, _ = run([perfspec, "script", "--format", "json", "-i", os.path.join(inside, "bp.data")])
    ips = [r["ip"] for r in map(json.loads, sout.decode().splitlines()[1:]) if r["type"] == "SAMPLE"]
    # each sample's ip in write_watched, as its symbol's range says (the ip after the writing instruction)
    inside_fn = [ip for ip in ips if fn <= ip < fn + fn_size]
    print(f"record breakpoint (breakpoints {'fire' if fires else 'do not fire'} here): {len(ips)} samples for "
          f"{k} writes, {len(inside_fn)} in write_watched [{fn:#x}, +{fn_size:#x})")
    want = k if fires else 0
    if p.returncode != 0 or len(ips) != want or len(inside_fn) != want:
        fail(f"breakpoint: {len(ips)} samples, {len(inside_fn)} in write_watched, for {k} writes (want {want})")
    return checks, failed
SWITCH = re.compile(rb"^ *(\d+\.\d+): prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=\S+ ==> "
                    rb"next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)$")


def switch_fields(perf_out, perfspec_json):
    """sched_switch samples as (time, prev_comm, prev_pid, prev_prio, next_comm, next_pid, next_prio):
    from perf script --ns -F time,trace, and from perfspec script --format json's "fields"."""
    theirs = []
    for line in perf_out.splitlines():
        if b": prev_comm=" not in line:
            continue  # another tracepoint's
        m = SWITCH.match(line)
        if not m:
            raise ValueError(f"perf script printed {line!r}")
        t, pc, pp, ppr, nc, np_, npr = m.groups()
        theirs.append((t.decode(), pc.decode(errors="replace"), int(pp), int(ppr), nc.decode(errors="replace"),
                       int(np_), int(npr)))
    ours = []
    for line in perfspec_json.splitlines():
        r = json.loads(line)
        if r.get("type") != "SAMPLE" or r.get("event") != "sched:sched_switch":
            continue
        f = r["fields"]
        ours.append((f"{r['time'] // 10**9}.{r['time'] % 10**9:09d}", f["prev_comm"], f["prev_pid"], f["prev_prio"],
                     f["next_comm"], f["next_pid"], f["next_prio"]))
    return sorted(theirs), sorted(ours)




# -D (--dump-raw-trace) of both tools, ordered and in file order (perfspec reads the binaries of perf's
# chroot, with --symfs, for perf script's own lines)
DUMPS = [["script", "-D", "-F", "FIELDS"], ["script", "--dump-unsorted-raw-trace", "-F", "FIELDS"],
         ["report", "-D"], ["report", "-D", "--disable-order"]]


def compare_dumps(perf, perfspec, name, host, inside_path, pipe, fields="comm,tid,time,event,ip",
                  tools=("script", "report")):
    """perf's -D against perfspec's, byte for byte (perfspec's paths written as perf's, in its chroot).
    (perf script's table of a perf stat record file's STAT_ROUND records is not perfspec's: tools.)"""
    checks = failed = 0
    for args in DUMPS:
        if args[0] not in tools:
            continue
        args = [fields if a == "FIELDS" else a for a in args]
        pcmd, pin = ([perf] + args + ["-i", "-"], host) if pipe else ([perf] + args + ["-i", inside_path], None)
        pst, pout, perr = run(pcmd, pin)
        sst, sout, serr = run([perfspec] + args + ["--symfs", os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current"),
                               "-i", host])
        if not pipe:
            sout = sout.replace(host.encode(), inside_path.encode())
        checks += 1
        label = f"{name} {' '.join(args)}"
        if pst != 0 or sst != 0:
            print(f"FAIL {label}: perf status {pst}, perfspec {sst}: {serr.decode(errors='replace')[:300]}")
            failed += 1
        elif pout != sout:
            print(f"FAIL {label}:")
            show_diff(pout, sout, 30)
            failed += 1
    return checks, failed


def record_with_perf(perf, name, rec, workload, host, inside, chroot_dir, pipe):
    """perf 6.12 records `workload` into `host` (in its chroot for a file, then copied). (status, stderr)."""
    if os.path.isdir(host):
        shutil.rmtree(host)
    if pipe:
        status, out, err = run([perf, "record", "-q"] + rec + ["--"] + workload)
        with open(host, "wb") as f:
            f.write(out)
        return status, err
    recorded = os.path.join(inside, name + ".data")
    if os.path.isdir(recorded):
        shutil.rmtree(recorded)
    status, _, err = run([perf, "record", "-q", "-o", chroot_dir + "/" + name + ".data"] + rec + ["--"] + workload)
    if status == 0:
        if os.path.isdir(recorded):
            shutil.copytree(recorded, host)
        else:
            shutil.copy2(recorded, host)  # its time too: the header's "captured on"
    return status, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--perf", default=os.path.join(HERE, "..", "..", "..", "shared", "tools", "perf-current"))
    args = ap.parse_args()
    perfspec = os.path.abspath(args.perfspec)
    root = os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current")
    if os.geteuid() != 0 or not os.access(os.path.join(root, "usr/bin/perf"), os.X_OK):
        print("perf_script_side_by_side: perf 6.12 is not installed (needs root and " + root + "): skipped")
        return 77
    work = tempfile.mkdtemp(prefix="perfspec-script-")
    inside = tempfile.mkdtemp(prefix="perfspec-script-", dir=os.path.join(root, "tmp"))
    chroot_dir = "/tmp/" + os.path.basename(inside)
    failed = compared = 0
    try:
        for name, rec, workload in RECORDINGS:
            pipe = "-o" in rec
            host = os.path.join(work, name + ".data")
            for attempt in (1, 2):
                status, err = record_with_perf(args.perf, name, rec, workload, host, inside, chroot_dir, pipe)
                if status != 0:
                    break
                # perf 6.12 reading its own recording: when it cannot (seen once, "incompatible file
                # format" on a system-wide tracepoint recording, not reproduced in 30 tries), the reference
                # is what failed; its reason is shown and the workload recorded once more
                rst, _, rerr = run([args.perf, "script", "-v", "-i", "-" if pipe else chroot_dir + "/" + name + ".data"],
                                   host if pipe else None)
                if rst == 0:
                    break
                print(f"{name}: perf 6.12 cannot read its own recording (status {rst}, attempt {attempt}): "
                      f"{rerr.decode(errors='replace')[-400:]}")
                status, err = rst, rerr
            if status != 0:
                print(f"FAIL {name}: perf record failed ({status}): {err.decode(errors='replace')[-300:]}")
                failed += 1
                continue
            if "sched:sched_switch" in " ".join(rec):
                # perfspec's JSON fields of sched_switch samples are what perf's trace text says
                pcmd = [args.perf, "script", "--ns", "-F", "time,trace"]
                pcmd, pin = (pcmd + ["-i", "-"], host) if pipe else (pcmd + ["-i", chroot_dir + "/" + name + ".data"], None)
                pst, pout, perr = run(pcmd, pin)
                sst, sout, serr = run([perfspec, "script", "--format", "json", "-i", host])
                compared += 1
                try:
                    theirs, ours = switch_fields(pout, sout)
                except (ValueError, KeyError) as e:
                    theirs, ours = None, str(e)
                if pst != 0 or sst != 0 or not theirs or theirs != ours:
                    print(f"FAIL {name}: JSON fields of sched_switch differ from perf's trace text "
                          f"({len(theirs or [])} samples from perf): {str(ours)[:300]}")
                    failed += 1
            c, f = compare_headers(args.perf, perfspec, name, host, chroot_dir + "/" + name + ".data", pipe)
            compared += c
            failed += f
            c, f = compare_dumps(args.perf, perfspec, name, host, chroot_dir + "/" + name + ".data", pipe)
            compared += c
            failed += f
            events = rec[rec.index("-e") + 1].split(",")
            tracepoints_only = all(e.startswith("sched:") for e in events)
            symbols = [] if "-a" in rec else SYM_FIELDS
            for fields in FIELDS + (TRACE_FIELDS if tracepoints_only else []) + EXTRA_FIELDS.get(name, []) + symbols:
                for every in (False, True):
                    if pipe:
                        pcmd, pin = [args.perf, "script", "-i", "-"], host
                    else:
                        pcmd, pin = [args.perf, "script", "-i", chroot_dir + "/" + name + ".data"], None
                    f = fields_args(fields)
                    pcmd += (SHOW if every else []) + f
                    scmd = [perfspec, "script", "--symfs", root, "-i", host] + f + ([] if every else ["--samples"])
                    pst, pout, perr = run(pcmd, pin)
                    sst, sout, serr = run(scmd)
                    if every:
                        # perf script has no way to show THROTTLE/UNTHROTTLE records; perfspec shows
                        # them (docs/perf-compatibility.md): they are left out of the comparison
                        # (with or without the time before them: -F lists without it print no colon)
                        sout = b"".join(line for line in sout.splitlines(keepends=True)
                                        if b"PERF_RECORD_THROTTLE " not in line and
                                        b"PERF_RECORD_UNTHROTTLE " not in line)
                    compared += 1
                    label = f"{name} {' '.join(f) or '(default)'}{' (every record)' if every else ''}"
                    if (pst == 0) != (sst == 0):
                        # perf refuses a field the samples lack with a message perfspec repeats
                        print(f"FAIL {label}: perf status {pst}, perfspec {sst}\n  perf: {perr.decode(errors='replace')[:300]}"
                              f"\n  perfspec: {serr.decode(errors='replace')[:300]}")
                        failed += 1
                    elif pout != sout:
                        print(f"FAIL {label}:")
                        show_diff(pout, sout, 30)
                        failed += 1
                    elif pst != 0 and perr.decode().strip().splitlines()[0] not in serr.decode():
                        print(f"FAIL {label}: perfspec's message is not perf's: {serr.decode()!r} vs {perr.decode()!r}")
                        failed += 1
                    elif pst == 0 and perf_stderr(perr) != serr:
                        print(f"FAIL {label}: stderr differs:\n  perf: {perf_stderr(perr).decode(errors='replace')!r}"
                              f"\n  perfspec: {serr.decode(errors='replace')!r}")
                        failed += 1
            if symbols:
                c, f = compare_reports(args.perf, perfspec, root, name, rec, host,
                                       chroot_dir + "/" + name + ".data", pipe)
                compared += c
                failed += f
        # crafted files (tests/cli/craft_perf_data.py): sequences of records no recording gives on demand
        for records in ["threads.records"]:
            crafted = os.path.join(inside, records + ".data")
            with open(os.path.join(HERE, "..", "fixtures", "perf_data", records)) as script:
                subprocess.run([sys.executable, os.path.join(HERE, "craft_perf_data.py"), crafted], stdin=script,
                               check=True)
            for fields in FIELDS:
                compared += 1
                pst, pout, perr = run([args.perf, "script", "--show-task-events"] + fields_args(fields) +
                                      ["-i", chroot_dir + "/" + os.path.basename(crafted)])
                sst, sout, serr = run([perfspec, "script"] + fields_args(fields) + ["-i", crafted])
                refused_alike = pst != 0 and sst != 0 and perr.decode().strip().splitlines()[0] in serr.decode()
                if (pst == 0) != (sst == 0) or pout != sout or (pst != 0 and not refused_alike):
                    failed += 1
                    print(f"FAIL crafted {records} -F {fields}: perf status {pst}, perfspec {sst}")
                    show_diff(pout, sout)
        # every record type perf's -D prints, in each of its forms (tests/fixtures/perf_data/dump.records)
        crafted = os.path.join(inside, "dump.data")
        with open(os.path.join(HERE, "..", "fixtures", "perf_data", "dump.records")) as script:
            subprocess.run([sys.executable, os.path.join(HERE, "craft_perf_data.py"), crafted], stdin=script, check=True)
        c, f = compare_dumps(args.perf, perfspec, "crafted dump.records", crafted, chroot_dir + "/dump.data", False,
                             fields="comm,tid,time,event")
        compared += c
        failed += f
        # perf stat record's file: no sample_id_all (delivered as read, perf's warning first), its records
        stat = os.path.join(inside, "stat.data")
        st, _, err = run([args.perf, "stat", "record", "-o", chroot_dir + "/stat.data", "-e", "task-clock,page-faults",
                          "true"])
        if st != 0:
            print(f"FAIL perf stat record: {st} {err.decode(errors='replace')[-300:]}")
            failed += 1
        else:
            c, f = compare_dumps(args.perf, perfspec, "perf stat record", stat, chroot_dir + "/stat.data", False,
                                 tools=("report",))
            compared += c
            failed += f
        c, f = check_record(args.perf, perfspec, root, inside, chroot_dir)
        compared += c
        failed += f
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(inside, ignore_errors=True)
    print(f"perf_script_side_by_side: {compared - failed}/{compared} agree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
