#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scrape latency and CPU per scrape of `perfspec exporter` with 1,000+ series, against node_exporter.

The issue's target: a scrape under 5 ms, and the exporter's CPU under 1 % of a core at a 15 s interval.

What it does, for each exporter in turn (never two at once):
  1. perfspec: writes a configuration of software events and tracepoints, aggregation "cpu", that gives
     at least --series series (3 per event per CPU: count, enabled, running), and starts
     `perfspec exporter --config FILE --listen 127.0.0.1:0`; then the same events written as one group
     (`{a,b,...}`; --no-group skips it), which the kernel reads with one cross-CPU call per CPU. The
     kernel takes at most about 1,000 events in a group that reads with ids (a larger one fails with
     E2BIG), so more events than GROUP_MAX are written as several groups of at most GROUP_MAX.
     node_exporter (when found): its perf collector with the same tracepoints, its perf collector with
     enough tracepoints for as many perf series (it gives 1 series per event per CPU), and its default
     collectors. Where the machine has fewer tracepoints (syscalls left out) than a configuration
     wants (e.g. --series 10000), it takes all there are and says so: the series actually served are in
     the table, with the CPU per scrape per 1,000 series, so that the exporters compare per series. When
     both perf collector configurations come out the same, node_exporter's runs once.
  2. Warms up, then makes --scrapes sequential scrapes for each of these requests:
       text          Accept: text/plain;version=0.0.4
       text+gzip     the same and Accept-Encoding: gzip
       openmetrics   Accept: application/openmetrics-text;version=1.0.0
       prometheus    what Prometheus 2.x sends: OpenMetrics preferred, then text; Accept-Encoding: gzip
     once over one keep-alive connection and once with a new connection per scrape (Connection: close).
     With --tls, both exporters serve HTTPS with a web configuration file in exporter-toolkit's format
     (`--web.config.file FILE`: tls_server_config with tests/fixtures/tls/server.crt and server.key, no
     client certificates, no basic authentication), and the client verifies the server with
     tests/fixtures/tls/ca.crt (name 127.0.0.1, in the certificate's SANs); the "new conn" rows then
     include a full TLS handshake per scrape (no session resumption), the keep-alive rows one for all
     where the exporter keeps the connection (node_exporter). perfspec keeps none (no keep-alive, by
     design: each answer closes its connection), so its keep-alive rows reconnect on every scrape (the
     "reconnects" note) and, with --tls, include a handshake per scrape as well.
     Per scrape: wall latency at the client (request sent to last byte read). Per request kind: the
     exporter's CPU (the sum of /proc/PID/task/*/schedstat's first field, ns on CPU, before and after,
     divided by the scrapes; utime+stime from /proc/PID/stat, in clock ticks, as a cross-check).
  3. Idle: the exporter's CPU and context switches over --idle seconds with no scrape.
  4. Paced (--paced N, 0 to skip): N scrapes --interval seconds apart over one keep-alive connection with
     Prometheus' headers; the exporter's CPU over the whole N * interval window, as % of one core. This is
     the target measured directly; "computed" is CPU per scrape / interval + the idle rate.
  5. At the end, per request kind and connection kind: each perfspec configuration's CPU per scrape per
     1,000 series divided by that of node_exporter's perf collector with as many perf series (or all the
     tracepoints there are); below 1, perfspec costs less per series.

usage: bench/exporter.py [--perfspec PATH] [--node-exporter PATH | --no-node-exporter] [--no-group]
                         [--tls] [--series 1000] [--scrapes 200] [--warmup 10] [--paced 4] [--interval 15]
                         [--idle 10] [--json FILE]
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
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HOST = "127.0.0.1"
TLS_DIR = os.path.join(os.path.dirname(HERE), "tests", "fixtures", "tls")
# The kernel checks a group's read size against 16 KiB: with PERF_FORMAT_GROUP | ID | TOTAL_TIME_ENABLED |
# TOTAL_TIME_RUNNING (perfspec's) that is 1,022 events; a group is written with at most this many.
GROUP_MAX = 1000
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
    """The first n tracepoints (syscalls left out), or all there are when there are fewer."""
    root = tracefs()
    if not root:
        sys.exit("no tracefs (available_events) at /sys/kernel/tracing or /sys/kernel/debug/tracing")
    with open(os.path.join(root, "available_events")) as f:
        events = sorted({line.strip() for line in f if ":" in line})
    first = [e for s in SUBSYSTEMS for e in events if e.split(":")[0] == s]
    rest = [e for e in events if e.split(":")[0] not in SUBSYSTEMS and e.split(":")[0] != "syscalls"]
    return (first + rest)[:max(0, n)]


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


# --- connections ---

# The client's TLS context with --tls (verifying with the fixtures' CA), None for plain HTTP.
TLS_CONTEXT = None


def client_tls_context(ca):
    if not os.path.exists(ca):
        sys.exit(f"--tls: {ca} not found")
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    ctx.check_hostname = True  # HOST, 127.0.0.1, is an IP address SAN of the fixtures' server certificate
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def connection(port, timeout=30):
    """A new connection to an exporter: HTTPS verified with the fixtures' CA with --tls, else HTTP."""
    if TLS_CONTEXT is not None:
        return http.client.HTTPSConnection(HOST, port, timeout=timeout, context=TLS_CONTEXT)
    return http.client.HTTPConnection(HOST, port, timeout=timeout)


def write_web_config(directory):
    """exporter-toolkit's web configuration: TLS with the fixtures' server certificate, nothing else."""
    cert, key = os.path.join(TLS_DIR, "server.crt"), os.path.join(TLS_DIR, "server.key")
    for f in (cert, key):
        if not os.path.exists(f):
            sys.exit(f"--tls: {f} not found")
    path = os.path.join(directory, "web.yml")
    with open(path, "w") as f:
        f.write("tls_server_config:\n")
        f.write(f"  cert_file: {json.dumps(cert)}\n")
        f.write(f"  key_file: {json.dumps(key)}\n")
    return path


# --- exporters ---

def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_http(port, proc, timeout=15):
    """True once GET /metrics answers 200; else False, and the last error in wait_http.error."""
    wait_http.error = None
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            c = connection(port, timeout=5)
            c.request("GET", "/metrics")
            status = c.getresponse().status
            c.close()
            if status == 200:
                return True
            wait_http.error = f"HTTP {status}"
        except OSError as e:  # ssl.SSLError (a failed handshake) included
            wait_http.error = repr(e)
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
            last = f"\nlast error: {wait_http.error}" if self.port is not None and wait_http.error else ""
            raise RuntimeError(f"{name} did not start ({' '.join(cmd)}):\n{text[-2000:]}{last}")
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


def start_perfspec(path, config, web_config=None):
    web = ["--web.config.file", web_config] if web_config else []
    return Exporter("perfspec", [path, "exporter", "--config", config, "--listen", f"{HOST}:0"] + web)


def start_node_exporter(name, path, args, web_config=None):
    port = free_port()
    web = ["--web.config.file", web_config] if web_config else []
    # node_exporter's own arguments (under unshare below, these stay its own)
    cmd = [path, f"--web.listen-address={HOST}:{port}"] + web + args
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
    conn = connection(exp.port)
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
            conn = connection(exp.port)
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
    series = series_of(text)
    return {
        "scrapes": k, "keep_alive": keep_alive, "reconnects": reconnects,
        "median_ms": statistics.median(ms), "p90_ms": percentile(ms, 90), "p99_ms": percentile(ms, 99),
        "max_ms": ms[-1], "mean_ms": statistics.fmean(ms),
        "cpu_ms_per_scrape": usage["cpu_ms"] / k, "cpu_ms_per_scrape_ticks": usage["cpu_ms_ticks"] / k,
        "cpu_ms_per_1000_series": usage["cpu_ms"] / k / series * 1000 if series else None,
        "switches_per_scrape": usage["switches"] / k,
        "bytes": statistics.median(sorted(len(b) for b, _ in bodies)), "bytes_min": min(sizes), "bytes_max": max(sizes),
        "decoded_bytes": len(text), "series": series, "encoding": enc or "identity",
        "content_type": ctype, "openmetrics_eof": text.endswith("# EOF\n"),
        "inner_median_ms": statistics.median(inside) if inside else None,
    }


def paced(exp, n, interval):
    """n scrapes interval seconds apart over one keep-alive connection, Prometheus' headers."""
    conn = connection(exp.port)
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
        except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError, ssl.SSLEOFError,
                ssl.SSLZeroReturnError):
            # the server closed the idle connection and the client learned it only now (over TLS without
            # close_notify: an unexpected EOF): once more
            reconnects += 1
            conn.close()
            conn = connection(exp.port)
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
    warm = connection(exp.port)
    for _ in range(a.warmup):
        for h in REQUESTS.values():
            scrape(warm, h)
    warm.close()
    once = connection(exp.port)
    _, body, _, _ = scrape(once, REQUESTS["text"])
    once.close()
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
                     f"{'(ticks)':>8} {'CPU/1k':>7} {'series':>6} {'bytes':>8} {'inner':>7}")
        for kind, m in r["runs"].items():
            inner = f"{m['inner_median_ms']:.2f}" if m["inner_median_ms"] is not None else "-"
            per_k = f"{m['cpu_ms_per_1000_series']:.3f}" if m["cpu_ms_per_1000_series"] is not None else "-"
            note = f"  {m['reconnects']} reconnects" if m["reconnects"] else ""
            lines.append(f"  {kind:<24} {m['median_ms']:7.2f} {m['p90_ms']:7.2f} {m['p99_ms']:7.2f} "
                         f"{m['max_ms']:7.2f} {m['cpu_ms_per_scrape']:10.3f} {m['cpu_ms_per_scrape_ticks']:8.2f} "
                         f"{per_k:>7} {m['series']:6d} {m['bytes']:8.0f} {inner:>7}{note}")
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


def comparison(results):
    """Per request and connection kind: each perfspec configuration's CPU per scrape per 1,000 series divided by
    that of node_exporter's perf collector with as many perf series (role "node_perf_many"); None without it."""
    ne = next((r for r in results if "error" not in r and "node_perf_many" in r.get("roles", ())), None)
    ours = [r for r in results if "error" not in r and "perfspec" in r.get("roles", ())]
    if ne is None or not ours:
        return None
    out = {"node_exporter": ne["name"], "node_exporter_series": ne["series"],
           "node_exporter_perf_series": ne["perf_series"], "perfspec": []}
    for r in ours:
        ratios = {}
        for kind, m in r["runs"].items():
            x, y = m["cpu_ms_per_1000_series"], ne["runs"][kind]["cpu_ms_per_1000_series"]
            ratios[kind] = x / y if x is not None and y else None
        out["perfspec"].append({"name": r["name"], "series": r["series"], "ratios": ratios})
    return out


def comparison_table(c):
    lines = [f"\nCPU per scrape per 1,000 series, perfspec / {c['node_exporter']} ({c['node_exporter_series']} series, "
             f"{c['node_exporter_perf_series']} of perf); below 1, perfspec costs less per series:"]
    labels = [chr(ord("A") + i) for i in range(len(c["perfspec"]))]
    for label, p in zip(labels, c["perfspec"]):
        lines.append(f"  {label}: {p['name']} ({p['series']} series)")
    head = "".join(f" {label + ' ' + conn:>14}" for label in labels for conn in ("keep-alive", "new conn"))
    lines.append(f"  {'request':<12}{head}")
    for kind in REQUESTS:
        cells = ""
        for p in c["perfspec"]:
            for conn in ("keep-alive", "new conn"):
                v = p["ratios"].get(f"{kind} {conn}")
                cells += f" {v:14.2f}" if v is not None else f" {'-':>14}"
        lines.append(f"  {kind:<12}{cells}")
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
    ap.add_argument("--tls", action="store_true",
                    help="serve over TLS (--web.config.file with tests/fixtures/tls/server.crt) and scrape over HTTPS")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()

    global TLS_CONTEXT
    if a.tls:
        TLS_CONTEXT = client_tls_context(os.path.join(TLS_DIR, "ca.crt"))
    n = cpus()
    events = math.ceil(a.series / (3 * n))
    tps = tracepoints(events - len(SOFTWARE))
    perfspec_events = SOFTWARE + tps
    results = []
    machine = {"cpus": n, "kernel": os.uname().release, "loadavg_start": loadavg(),
               "date": time.strftime("%Y-%m-%d %H:%M:%S"), "perfspec": version([a.perfspec, "--version"]),
               "tls": a.tls}
    print(f"{n} CPUs, kernel {machine['kernel']}, load average {machine['loadavg_start']}; "
          f"{a.scrapes} scrapes per row, sequential; times in ms"
          + (f"; over TLS (web configuration with {os.path.join(TLS_DIR, 'server.crt')})" if a.tls else ""))
    if len(tps) < events - len(SOFTWARE):
        print(f"perfspec: {len(tps)} tracepoints (all there are but syscalls), {events - len(SOFTWARE)} wanted: "
              f"about {3 * n * len(perfspec_events)} perf series instead of {a.series}")

    with tempfile.TemporaryDirectory(prefix="perfspec-bench-exporter-") as tmp:
        web = write_web_config(tmp) if a.tls else None
        # The events one by one (what a configuration usually says), then the same events as one group
        # per CPU, which the kernel reads in one go (one cross-CPU call per CPU instead of one per event);
        # as several groups of at most GROUP_MAX events when there are more (the kernel's limit).
        perfspec_configs = [(f"perfspec, {len(perfspec_events)} events", [f'  "{e}",\n' for e in perfspec_events],
                             ["perfspec"])]
        if not a.no_group:
            chunks = [perfspec_events[i:i + GROUP_MAX] for i in range(0, len(perfspec_events), GROUP_MAX)]
            perfspec_configs.append((f"perfspec, the same {len(perfspec_events)} events as "
                                     + ("one group" if len(chunks) == 1 else f"{len(chunks)} groups"),
                                     ['  "{' + ",".join(c) + '}",\n' for c in chunks], ["perfspec", "perfspec_group"]))
        for i, (name, lines, roles) in enumerate(perfspec_configs):
            config = os.path.join(tmp, f"exporter{i}.toml")
            with open(config, "w") as f:
                f.write("[[set]]\n")
                f.write('name = "bench"\n')
                f.write("events = [\n" + "".join(lines) + "]\n")
                f.write('aggregation = "cpu"\n')
            try:
                exp = start_perfspec(a.perfspec, config, web)
            except RuntimeError as e:
                results.append({"name": name, "error": str(e), "roles": roles})
                continue
            exp.name = name
            try:
                r = bench(exp, a, r"^perfspec_exporter_read_seconds (\S+)", "perfspec_event_")
                r["roles"] = roles
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
            wanted = max(len(tps), math.ceil(a.series / n) - ne_sw)
            many = tracepoints(wanted)
            if len(many) < wanted:
                print(f"node_exporter: {len(many)} tracepoints (all there are but syscalls), {wanted} wanted: "
                      f"about {n * (len(many) + ne_sw)} perf series instead of {a.series}")
            perf_args = ["--collector.disable-defaults", "--collector.perf"]
            if many == tps:  # the machine has no more: both configurations are one
                configs = [(f"node_exporter perf, the same {len(tps)} tracepoints (all there are)",
                            perf_args + [f"--collector.perf.tracepoint={t}" for t in tps], inner, "node_perf_",
                            ["node_perf_same", "node_perf_many"])]
            else:
                configs = [
                    (f"node_exporter perf, the same {len(tps)} tracepoints",
                     perf_args + [f"--collector.perf.tracepoint={t}" for t in tps], inner, "node_perf_",
                     ["node_perf_same"]),
                    (f"node_exporter perf, {len(many)} tracepoints",
                     perf_args + [f"--collector.perf.tracepoint={t}" for t in many], inner, "node_perf_",
                     ["node_perf_many"]),
                ]
            configs.append(("node_exporter, default collectors", [],
                            r"^node_scrape_collector_duration_seconds\{collector=\"cpu\"\} (\S+)", "node_",
                            ["node_defaults"]))
            for name, args, inner_re, prefix, roles in configs:
                try:
                    exp = start_node_exporter(name, ne, args, web)
                except RuntimeError as e:
                    results.append({"name": name, "error": str(e), "roles": roles})
                    continue
                try:
                    r = bench(exp, a, inner_re, prefix)
                    r["roles"] = roles
                    r["tracepoints"] = sum(1 for x in args if x.startswith("--collector.perf.tracepoint"))
                    results.append(r)
                finally:
                    exp.stop()
    machine["loadavg_end"] = loadavg()
    print(table(results, a))
    compared = comparison(results)
    if compared:
        print(comparison_table(compared))
    print(f"\n'inner': the exporter's own figure for the read, from the body (perfspec_exporter_read_seconds; "
          f"node_scrape_collector_duration_seconds of perf, or of cpu for the defaults). "
          f"CPU/scrape: ms on CPU from schedstat; (ticks): utime+stime at {CLK_TCK} Hz; CPU/1k: CPU/scrape per "
          f"1,000 series served (series: the samples in that row's last body). "
          + ("Over TLS: each 'new conn' scrape includes a TLS handshake, and so does each of perfspec's "
             "'keep-alive' ones (it closes every connection after its answer: the reconnects). " if a.tls else "")
          + f"Load average at the end {machine['loadavg_end']}.")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "options": vars(a), "results": results, "comparison": compared},
                      f, indent=1)


if __name__ == "__main__":
    main()
