#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scrape latency and CPU per scrape of `perfspec exporter` with 1,000+ series, against node_exporter.

The issue's target: a scrape under 5 ms, and the exporter's CPU under 1 % of a core at a 15 s interval.

What it does, for each exporter in turn (never two at once):
  1. perfspec: writes a configuration of software events and tracepoints, aggregation "cpu", that gives
     at least --series series (3 per event per CPU: count, enabled, running), and starts
     `perfspec exporter --config FILE --listen 127.0.0.1:0`; then the same events written as one group
     (`{a,b,...}`; --no-group skips it), which the kernel reads with one cross-CPU call per CPU.
     node_exporter (when found): its perf collector with the same tracepoints, its perf collector with
     enough tracepoints for as many perf series (it gives 1 series per event per CPU), and its default
     collectors.
  2. Warms up, then makes --scrapes sequential scrapes for each of these requests:
       text          Accept: text/plain;version=0.0.4
       text+gzip     the same and Accept-Encoding: gzip
       openmetrics   Accept: application/openmetrics-text;version=1.0.0
       prometheus    what Prometheus 2.x sends: OpenMetrics preferred, then text; Accept-Encoding: gzip
     once over one keep-alive connection and once with a new connection per scrape (Connection: close).
     Per scrape: wall latency at the client (request sent to last byte read). Per request kind: the
     exporter's CPU (the sum of /proc/PID/task/*/schedstat's first field, ns on CPU, before and after,
     divided by the scrapes; utime+stime from /proc/PID/stat, in clock ticks, as a cross-check).
  3. Idle: the exporter's CPU and context switches over --idle seconds with no scrape.
  4. Paced (--paced N, 0 to skip): N scrapes --interval seconds apart over one keep-alive connection with
     Prometheus' headers; the exporter's CPU over the whole N * interval window, as % of one core. This is
     the target measured directly; "computed" is CPU per scrape / interval + the idle rate.

usage: bench/exporter.py [--perfspec PATH] [--node-exporter PATH | --no-node-exporter] [--no-group]
                         [--scrapes 200] [--paced 4] [--interval 15] [--idle 10] [--json FILE]
"""
import argparse
import gzip
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"
SOFTWARE = ["task-clock", "cpu-clock", "page-faults", "minor-faults", "major-faults", "context-switches",
            "cpu-migrations", "alignment-faults", "emulation-faults"]
# Tracepoint subsystems taken first, in this order; then any others but syscalls (so that the set does
# not slow every system call down, the scraper's own included).
SUBSYSTEMS = ["sched", "irq", "timer", "kmem", "block", "writeback", "workqueue", "signal", "task", "net", "tcp",
              "sock", "skb", "vmscan", "compaction", "filemap", "power", "cgroup"]
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
REQUESTS = {
    "text": {"Accept": "text/plain;version=0.0.4"},
    "text+gzip": {"Accept": "text/plain;version=0.0.4", "Accept-Encoding": "gzip"},
    "openmetrics": {"Accept": "application/openmetrics-text;version=1.0.0"},
    "prometheus": {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"},
}
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- the machine ---

def tracefs():
    for p in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(os.path.join(p, "available_events")):
            return p
    return None


def tracepoints(n):
    root = tracefs()
    if not root:
        sys.exit("no tracefs (available_events) at /sys/kernel/tracing or /sys/kernel/debug/tracing")
    with open(os.path.join(root, "available_events")) as f:
        events = sorted({line.strip() for line in f if ":" in line})
    first = [e for s in SUBSYSTEMS for e in events if e.split(":")[0] == s]
    rest = [e for e in events if e.split(":")[0] not in SUBSYSTEMS and e.split(":")[0] != "syscalls"]
    out = (first + rest)[:n]
    if len(out) < n:
        sys.exit(f"only {len(out)} tracepoints, {n} wanted")
    return out


def cpus():
    return os.cpu_count() or 1


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# --- a process's CPU ---

def tasks(pid):
    try:
        return os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return []


def cpu_ns(pid):
    """ns on CPU of every live thread (schedstat's first field)."""
    total = 0
    for t in tasks(pid):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def cpu_ticks(pid):
    """utime + stime of the whole process (threads gone included), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rfind(")") + 2:].split()
    return int(rest[11]) + int(rest[12])


def switches(pid):
    n = 0
    for t in tasks(pid):
        try:
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return n


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Usage:
    def __init__(self, pid):
        self.pid = pid
        self.t = time.perf_counter()
        self.ns = cpu_ns(pid)
        self.ticks = cpu_ticks(pid)
        self.sw = switches(pid)

    def since(self):
        now = Usage(self.pid)
        return {"wall_s": now.t - self.t, "cpu_ms": (now.ns - self.ns) / 1e6,
                "cpu_ms_ticks": (now.ticks - self.ticks) * 1000 / CLK_TCK, "switches": now.sw - self.sw}


# --- exporters ---

def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_http(port, proc, timeout=15):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            c = http.client.HTTPConnection(HOST, port, timeout=5)
            c.request("GET", "/metrics")
            ok = c.getresponse().status == 200
            c.close()
            if ok:
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Exporter:
    """A started exporter: pid, port, and its log."""

    def __init__(self, name, cmd, port=None, env=None):
        self.name = name
        self.cmd = cmd
        self.log = tempfile.NamedTemporaryFile(prefix="perfspec-bench-exporter-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL, env=env)
        self.port = port
        if self.port is None:  # perfspec: the port is in its first line
            end = time.time() + 15
            while time.time() < end and self.port is None and self.proc.poll() is None:
                m = re.search(rb"serving 127\.0\.0\.1:(\d+)/metrics", open(self.log.name, "rb").read())
                if m:
                    self.port = int(m.group(1))
                else:
                    time.sleep(0.02)
        if self.port is None or not wait_http(self.port, self.proc):
            text = open(self.log.name, errors="replace").read()
            self.stop()
            raise RuntimeError(f"{name} did not start ({' '.join(cmd)}):\n{text[-2000:]}")
        self.pid = self.proc.pid

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)


def start_perfspec(path, config):
    return Exporter("perfspec", [path, "exporter", "--config", config, "--listen", f"{HOST}:0"])


def start_node_exporter(name, path, args):
    port = free_port()
    cmd = [path, f"--web.listen-address={HOST}:{port}"] + args
    if any(a.startswith("--collector.perf.tracepoint") for a in args) and \
            not os.path.exists("/sys/kernel/debug/tracing/events"):
        # node_exporter 1.5 reads tracepoint ids under /sys/kernel/debug/tracing only: mount debugfs in a
        # mount namespace of its own, so that the machine's mounts stay as they are.
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
               'mount -t debugfs none /sys/kernel/debug && exec "$@"', "sh"] + cmd
    return Exporter(name, cmd, port=port)


# --- scraping ---

def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, math.ceil(p / 100 * len(sorted_values)) - 1))
    return sorted_values[k]


def scrape(conn, headers):
    t0 = time.perf_counter()
    conn.request("GET", "/metrics", headers=headers)
    r = conn.getresponse()
    body = r.read()
    t1 = time.perf_counter()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}")
    return t1 - t0, body, r.getheader("Content-Encoding") or "", r.getheader("Content-Type") or ""


def series_of(text):
    """Samples in an exposition: lines that are not comments or empty."""
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


def inner_seconds(text, pattern):
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else None


def measure(exp, headers, k, keep_alive, inner):
    """k sequential scrapes; latency per scrape and the exporter's CPU over them."""
    lat, inside, reconnects = [], [], 0
    sizes = set()
    conn = http.client.HTTPConnection(HOST, exp.port, timeout=30)
    h = dict(headers)
    if not keep_alive:
        h["Connection"] = "close"
    u = Usage(exp.pid)
    bodies = []
    for i in range(k):
        if keep_alive and i and conn.sock is None:
            reconnects += 1
        dt, body, enc, ctype = scrape(conn, h)
        lat.append(dt)
        bodies.append((body, enc))
        if not keep_alive:
            conn.close()
            conn = http.client.HTTPConnection(HOST, exp.port, timeout=30)
    usage = u.since()
    conn.close()
    text = ""
    for body, enc in bodies:
        sizes.add(len(body))
        text = (gzip.decompress(body) if enc == "gzip" else body).decode()
        if inner:
            v = inner_seconds(text, inner)
            if v is not None:
                inside.append(v * 1000)
    lat.sort()
    ms = [x * 1000 for x in lat]
    return {
        "scrapes": k, "keep_alive": keep_alive, "reconnects": reconnects,
        "median_ms": statistics.median(ms), "p90_ms": percentile(ms, 90), "p99_ms": percentile(ms, 99),
        "max_ms": ms[-1], "mean_ms": statistics.fmean(ms),
        "cpu_ms_per_scrape": usage["cpu_ms"] / k, "cpu_ms_per_scrape_ticks": usage["cpu_ms_ticks"] / k,
        "switches_per_scrape": usage["switches"] / k,
        "bytes": statistics.median(sorted(len(b) for b, _ in bodies)), "bytes_min": min(sizes), "bytes_max": max(sizes),
        "decoded_bytes": len(text), "series": series_of(text), "encoding": enc or "identity",
        "content_type": ctype, "openmetrics_eof": text.endswith("# EOF\n"),
        "inner_median_ms": statistics.median(inside) if inside else None,
    }


def paced(exp, n, interval):
    """n scrapes interval seconds apart over one keep-alive connection, Prometheus' headers."""
    conn = http.client.HTTPConnection(HOST, exp.port, timeout=30)
    u = Usage(exp.pid)
    start = time.perf_counter()
    lat, reconnects = [], 0
    for i in range(n):
        wake = start + i * interval
        time.sleep(max(0.0, wake - time.perf_counter()))
        if i and conn.sock is None:
            reconnects += 1
        try:
            dt, *_ = scrape(conn, REQUESTS["prometheus"])
        except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError):
            # the server closed the idle connection and the client learned it only now: once more
            reconnects += 1
            conn.close()
            conn = http.client.HTTPConnection(HOST, exp.port, timeout=30)
            dt, *_ = scrape(conn, REQUESTS["prometheus"])
        lat.append(dt * 1000)
    time.sleep(max(0.0, start + n * interval - time.perf_counter()))
    usage = u.since()
    conn.close()
    return {"scrapes": n, "interval_s": interval, "window_s": usage["wall_s"], "cpu_ms": usage["cpu_ms"],
            "cpu_pct_core": usage["cpu_ms"] / 1000 / usage["wall_s"] * 100, "latency_ms": lat,
            "reconnects": reconnects}


def bench(exp, a, inner, perf_prefix):
    tp = [c for c in exp.cmd if c.startswith("--collector.perf.tracepoint")]
    out = {"name": exp.name, "loadavg_start": loadavg(), "perf_prefix": perf_prefix,
           "command": [c for c in exp.cmd if c not in tp] + ([f"--collector.perf.tracepoint=... ({len(tp)})"] if tp else [])}
    warm = http.client.HTTPConnection(HOST, exp.port, timeout=30)
    for _ in range(a.warmup):
        for h in REQUESTS.values():
            scrape(warm, h)
    warm.close()
    _, body, _, _ = scrape(http.client.HTTPConnection(HOST, exp.port, timeout=30), REQUESTS["text"])
    text = body.decode()
    out["series"] = series_of(text)
    out["perf_series"] = sum(1 for line in text.splitlines() if line.startswith(perf_prefix))
    out["runs"] = {}
    for kind, headers in REQUESTS.items():
        for keep in (True, False):
            out["runs"][f"{kind} {'keep-alive' if keep else 'new conn'}"] = measure(exp, headers, a.scrapes, keep, inner)
    time.sleep(0.5)
    u = Usage(exp.pid)
    time.sleep(a.idle)
    idle = u.since()
    out["idle"] = {"seconds": idle["wall_s"], "cpu_ms": idle["cpu_ms"],
                   "cpu_pct_core": idle["cpu_ms"] / 1000 / idle["wall_s"] * 100,
                   "switches_per_s": idle["switches"] / idle["wall_s"]}
    # The worse of the two: at a 15 s interval an exporter may have closed the idle connection (civetweb,
    # perfspec's server, closes it after 500 ms), so a scrape may come on a new one.
    per = max(out["runs"]["prometheus keep-alive"]["cpu_ms_per_scrape"],
              out["runs"]["prometheus new conn"]["cpu_ms_per_scrape"])
    out["computed_pct_core"] = (per / 1000 + idle["cpu_ms"] / 1000 / idle["wall_s"] * a.interval) / a.interval * 100
    if a.paced:
        out["paced"] = paced(exp, a.paced, a.interval)
    out["rss_kib"] = rss_kib(exp.pid)
    out["loadavg_end"] = loadavg()
    return out


# --- output ---

def table(results, a):
    lines = []
    for r in results:
        if "error" in r:
            lines.append(f"\n{r['name']}: {r['error']}")
            continue
        lines.append(f"\n{r['name']}: {r['series']} series ({r['perf_series']} named {r['perf_prefix']}*), "
                     f"RSS {r['rss_kib'] / 1024:.1f} MiB, load average {r['loadavg_start']} -> {r['loadavg_end']}")
        lines.append(f"  {'request':<24} {'median':>7} {'p90':>7} {'p99':>7} {'max':>7} {'CPU/scrape':>10} "
                     f"{'(ticks)':>8} {'bytes':>8} {'inner':>7}")
        for kind, m in r["runs"].items():
            inner = f"{m['inner_median_ms']:.2f}" if m["inner_median_ms"] is not None else "-"
            note = f"  {m['reconnects']} reconnects" if m["reconnects"] else ""
            lines.append(f"  {kind:<24} {m['median_ms']:7.2f} {m['p90_ms']:7.2f} {m['p99_ms']:7.2f} "
                         f"{m['max_ms']:7.2f} {m['cpu_ms_per_scrape']:10.3f} {m['cpu_ms_per_scrape_ticks']:8.2f} "
                         f"{m['bytes']:8.0f} {inner:>7}{note}")
        i = r["idle"]
        lines.append(f"  idle {i['seconds']:.1f} s: {i['cpu_ms']:.2f} ms CPU ({i['cpu_pct_core']:.4f} % of a core), "
                     f"{i['switches_per_s']:.1f} context switches/s")
        lines.append(f"  at a {a.interval:g} s interval (the worse prometheus row's CPU/scrape + idle): "
                     f"{r['computed_pct_core']:.4f} % of a core")
        if "paced" in r:
            p = r["paced"]
            lat = ", ".join(f"{x:.2f}" for x in p["latency_ms"])
            lines.append(f"  paced, {p['scrapes']} scrapes {p['interval_s']:g} s apart: {p['cpu_ms']:.2f} ms CPU over "
                         f"{p['window_s']:.1f} s = {p['cpu_pct_core']:.4f} % of a core; latencies {lat} ms"
                         + (f"; {p['reconnects']} reconnects" if p["reconnects"] else ""))
    return "\n".join(lines)


def find_node_exporter(given):
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in ("prometheus-node-exporter", "node_exporter"):
        p = shutil.which(name)
        if p:
            return p
    return "/usr/bin/prometheus-node-exporter" if os.access("/usr/bin/prometheus-node-exporter", os.X_OK) else None


def version(cmd):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        return r.stdout.decode(errors="replace").splitlines()[0].strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfspec", default="build/perfspec")
    ap.add_argument("--node-exporter", default=None, help="default: in PATH, else /usr/bin/prometheus-node-exporter")
    ap.add_argument("--no-node-exporter", action="store_true")
    ap.add_argument("--no-group", action="store_true", help="skip perfspec with the events as one group")
    ap.add_argument("--scrapes", type=int, default=200, help="scrapes per request kind and connection kind")
    ap.add_argument("--warmup", type=int, default=10, help="warm-up scrapes of each request kind")
    ap.add_argument("--series", type=int, default=1000, help="perf series wanted from each perf configuration")
    ap.add_argument("--idle", type=float, default=10, help="seconds of idle measurement")
    ap.add_argument("--paced", type=int, default=4, help="scrapes at --interval for the direct measurement; 0: skip")
    ap.add_argument("--interval", type=float, default=15, help="the scrape interval of the target, in seconds")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()

    n = cpus()
    events = math.ceil(a.series / (3 * n))
    tps = tracepoints(events - len(SOFTWARE))
    perfspec_events = SOFTWARE + tps
    results = []
    machine = {"cpus": n, "kernel": os.uname().release, "loadavg_start": loadavg(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "perfspec": version([a.perfspec, "--version"])}
    print(f"{n} CPUs, kernel {machine['kernel']}, load average {machine['loadavg_start']}; "
          f"{a.scrapes} scrapes per row, sequential; times in ms")

    with tempfile.TemporaryDirectory(prefix="perfspec-bench-exporter-") as tmp:
        # The events one by one (what a configuration usually says), then the same events as one group
        # per CPU, which the kernel reads in one go (one cross-CPU call per CPU instead of one per event).
        perfspec_configs = [(f"perfspec, {len(perfspec_events)} events", [f'  "{e}",\n' for e in perfspec_events])]
        if not a.no_group:
            perfspec_configs.append((f"perfspec, the same {len(perfspec_events)} events as one group",
                                     ['  "{' + ",".join(perfspec_events) + '}",\n']))
        for i, (name, lines) in enumerate(perfspec_configs):
            config = os.path.join(tmp, f"exporter{i}.toml")
            with open(config, "w") as f:
                f.write("[[set]]\n")
                f.write('name = "bench"\n')
                f.write("events = [\n" + "".join(lines) + "]\n")
                f.write('aggregation = "cpu"\n')
            exp = start_perfspec(a.perfspec, config)
            exp.name = name
            try:
                r = bench(exp, a, r"^perfspec_exporter_read_seconds (\S+)", "perfspec_event_")
                r["events"] = len(perfspec_events)
                r["software_events"] = len(SOFTWARE)
                r["tracepoints"] = len(tps)
                results.append(r)
            finally:
                exp.stop()

        ne = None if a.no_node_exporter else find_node_exporter(a.node_exporter)
        if a.no_node_exporter:
            print("node_exporter: skipped (--no-node-exporter)")
        elif ne is None:
            print("node_exporter: not found (apt-get install prometheus-node-exporter), skipped")
        else:
            machine["node_exporter"] = version([ne, "--version"])
            inner = r'^node_scrape_collector_duration_seconds\{collector="perf"\} (\S+)'
            # node_exporter's perf collector: 5 software counters per CPU here (its hardware and cache
            # profilers find no PMU on a VM), and 1 series per tracepoint per CPU.
            ne_sw = 5
            many = tracepoints(max(len(tps), math.ceil(a.series / n) - ne_sw))
            configs = [
                (f"node_exporter perf, the same {len(tps)} tracepoints",
                 ["--collector.disable-defaults", "--collector.perf"] +
                 [f"--collector.perf.tracepoint={t}" for t in tps], inner, "node_perf_"),
                (f"node_exporter perf, {len(many)} tracepoints",
                 ["--collector.disable-defaults", "--collector.perf"] +
                 [f"--collector.perf.tracepoint={t}" for t in many], inner, "node_perf_"),
                ("node_exporter, default collectors", [], r"^node_scrape_collector_duration_seconds\{collector=\"cpu\"\} (\S+)",
                 "node_"),
            ]
            for name, args, inner_re, prefix in configs:
                try:
                    exp = start_node_exporter(name, ne, args)
                except RuntimeError as e:
                    results.append({"name": name, "error": str(e)})
                    continue
                try:
                    r = bench(exp, a, inner_re, prefix)
                    r["tracepoints"] = sum(1 for x in args if x.startswith("--collector.perf.tracepoint"))
                    results.append(r)
                finally:
                    exp.stop()
    machine["loadavg_end"] = loadavg()
    print(table(results, a))
    print(f"\n'inner': the exporter's own figure for the read, from the body (perfspec_exporter_read_seconds; "
          f"node_scrape_collector_duration_seconds of perf, or of cpu for the defaults). "
          f"CPU/scrape: ms on CPU from schedstat; (ticks): utime+stime at {CLK_TCK} Hz. "
          f"Load average at the end {machine['loadavg_end']}.")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "options": vars(a), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
