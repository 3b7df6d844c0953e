#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 32's measure: published perf command lines (tests/perf_cli/corpus.tsv, each with where it was
published) run as written with perf 6.12 and with perfspec in perf's place, side by side.

Each runnable line is run by both in the same folder (under perf 6.12's chroot, so that both find the
same perf.data), with its placeholders filled in: {PID} and {TID} a process of this run's (a shell
that sleeps in a loop), {CMD} `sleep 0.2`, {DATA} a perf.data perf 6.12 recorded here with callchains,
{CGROUP} the root cgroup. A line that still runs after --seconds (a system-wide count, `sleep 60`)
gets SIGINT, as Ctrl-C sends it, to its whole process group. When one ends by itself and the other
was stopped, both run again with five times the time (perf's start with -a can take longer than the
command it times).

What is compared is how each ends: by itself with status 0 ("ok"), by itself with another status
("failed N"; also a line perf answers with its usage, which perf report does with status 0 for
an unknown --sort key), or still running when interrupted ("ran"). perf accepts a line when it ends ok or ran;
perfspec agrees on a line when it ends the same way. Lines of subcommands perfspec does not have
(annotate, probe, ...) are counted apart.

Exit status: 0 when at least --target percent of the lines perf accepts agree (default 0: only
report), 1 otherwise, 77 when perf 6.12 cannot run here (not root).
"""
import argparse
import concurrent.futures
import re
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "perf_cli", "corpus.tsv")
MEASURED = ["stat", "record", "report", "script", "list", "top", "trace"]

# perf 6.12 in its chroot, started in a folder of the chroot (the wrapper in ../shared/tools starts it
# at the chroot's root)
CHROOT_SH = r'''r=$0; c=$1; shift 1
mount --rbind /sys "$r/sys" && mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" || exit 1
exec chroot "$r" sh -c 'cd "$0" && exec /usr/bin/perf "$@"' "$c" "$@"'''


def read_corpus(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                raise SystemExit(f"{path}:{n}: {len(parts)} fields, 5 expected")
            source, sub, written, runnable, note = parts
            rows.append({"line": n, "source": source, "sub": sub, "written": written, "runnable": runnable,
                         "note": note})
    return rows


def words_of(runnable, fill):
    text = runnable
    for k, v in fill.items():
        text = text.replace("{" + k + "}", v)
    try:
        words = shlex.split(text)
    except ValueError as e:
        return None, f"cannot split: {e}"
    if not words or words[0] != "perf":
        return None, "not a perf command"
    return words[1:], None


def run_one(cmd, cwd, seconds):
    """How the command ended: ("ok"|"failed"|"ran", status, stderr's last lines)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds)
        how = "ok" if p.returncode == 0 else "failed"
        # perf report prints an unknown --sort key's error and its usage, and exits 0: a refusal
        if how == "ok" and re.search(rb"^ Usage: perf ", err, re.M):
            how = "failed"
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGINT)
        try:
            out, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
        how = "ran"
    tail = err.decode(errors="replace").strip().splitlines()[-2:]
    return how, p.returncode, " / ".join(tail)


def reset(folder):
    for name in os.listdir(folder):
        if name != "pristine.data":
            subprocess.run(["rm", "-rf", os.path.join(folder, name)])
    subprocess.run(["cp", "-p", os.path.join(folder, "pristine.data"), os.path.join(folder, "perf.data")])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perfspec", required=True)
    ap.add_argument("--root", default=os.environ.get("PERF_CURRENT_ROOT", "/opt/perf-current"))
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--seconds", type=float, default=1.5, help="interrupt a line still running after this")
    ap.add_argument("--target", type=float, default=0.0, help="percent of perf's accepted lines to agree on")
    ap.add_argument("--only", help="the lines whose as-written text contains this")
    ap.add_argument("--verbose", action="store_true", help="every line, not only those that differ")
    ap.add_argument("--jobs", type=int, default=1,
                    help="lines run at a time (most of a line's time is waiting: sleep, a run stopped after "
                         "--seconds), each in a folder of its own")
    args = ap.parse_args()
    if os.geteuid() != 0 or not os.access(os.path.join(args.root, "usr/bin/perf"), os.X_OK):
        print("perf 6.12's chroot cannot run here (needs root and ../shared/tools/perf-current once)")
        return 77
    perfspec = os.path.abspath(args.perfspec)
    base = f"/tmp/perfspec-corpus-{os.getpid()}"
    perf_of = lambda inside: ["unshare", "-m", "sh", "-c", CHROOT_SH, args.root, inside]
    # a perf.data of perf 6.12's, with callchains, for the lines that read one
    os.makedirs(args.root + base, exist_ok=True)
    st = subprocess.run(perf_of(base) + ["record", "-q", "-g", "-o", "perf.data", "--", "sh", "-c",
                                         "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if st.returncode != 0:
        print(f"perf 6.12 cannot record here: {st.stderr.decode(errors='replace')[-300:]}")
        return 77
    # a folder of its own for each line run at a time, each with that perf.data
    folders = queue.Queue()
    for k in range(args.jobs):
        inside = f"{base}/{k}"
        os.makedirs(args.root + inside)
        shutil.copy2(os.path.join(args.root + base, "perf.data"), os.path.join(args.root + inside, "pristine.data"))
        folders.put(inside)
    sleeper = subprocess.Popen(["sh", "-c", "while :; do sleep 0.05; done"], start_new_session=True)
    fill = {"PID": str(sleeper.pid), "TID": str(sleeper.pid), "CMD": "sleep 0.2", "DATA": "perf.data",
            "CGROUP": "/"}
    rows = read_corpus(args.corpus)
    if args.only:
        rows = [r for r in rows if args.only in r["written"]]
    runs = []  # (row, words) of the lines to run, in the corpus's order
    not_run = other = 0
    for r in rows:
        if r["runnable"] == "-":
            not_run += 1
        elif r["sub"] not in MEASURED:
            other += 1
        else:
            words, _ = words_of(r["runnable"], fill)
            if words is None:
                not_run += 1
            else:
                runs.append((r, words))

    def both(words):
        """How perf 6.12 and perfspec end on these words, each from the same folder: perf 6.12's
        perf.data and nothing a line wrote before."""
        inside = folders.get()
        folder = args.root + inside
        try:
            reset(folder)
            theirs = run_one(perf_of(inside) + words, folder, args.seconds)
            reset(folder)
            ours = run_one([perfspec] + words, folder, args.seconds)
            if {theirs[0], ours[0]} == {"ok", "ran"}:
                # one ended by itself and the other was stopped: a slow start (perf's synthesis of every
                # process with -a) is not a different ending. Both again, with time to end by themselves.
                reset(folder)
                theirs = run_one(perf_of(inside) + words, folder, args.seconds * 5)
                reset(folder)
                ours = run_one([perfspec] + words, folder, args.seconds * 5)
            return theirs, ours
        finally:
            folders.put(inside)

    by_sub = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            ends = list(pool.map(lambda run: both(run[1]), runs))
    finally:
        os.killpg(sleeper.pid, signal.SIGKILL)
        sleeper.wait()
        subprocess.run(["rm", "-rf", args.root + base])
    for (r, words), (theirs, ours) in zip(runs, ends):
        accepted = theirs[0] in ("ok", "ran")
        same = theirs[0] == ours[0]
        s = by_sub.setdefault(r["sub"], {"lines": 0, "accepted": 0, "agree": 0})
        s["lines"] += 1
        s["accepted"] += accepted
        s["agree"] += accepted and same
        if args.verbose or (accepted and not same):
            mark = "same  " if same else "DIFFER"
            print(f"{mark} {r['sub']:7} perf {theirs[0]} {theirs[1]}, perfspec {ours[0]} {ours[1]}: "
                  f"{' '.join(words)[:150]}  [{r['source']}]")
            if not same and ours[2]:
                print(f"         perfspec: {ours[2][:200]}")
    total = {k: sum(s[k] for s in by_sub.values()) for k in ("lines", "accepted", "agree")}
    for sub in MEASURED:
        if sub in by_sub:
            s = by_sub[sub]
            print(f"{sub:8} perfspec agrees on {s['agree']:3} of the {s['accepted']:3} lines perf 6.12 accepts "
                  f"({s['lines']} run)")
    share = 100.0 * total["agree"] / total["accepted"] if total["accepted"] else 0.0
    print(f"perf_cli_corpus: perfspec agrees on {total['agree']} of the {total['accepted']} published lines perf "
          f"6.12 accepts ({share:.1f} %); {not_run} lines cannot run here, {other} are of other subcommands")
    return 0 if share >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
