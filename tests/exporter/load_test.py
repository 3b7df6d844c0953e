#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load test of `perfspec exporter` against a real running daemon (root, tracefs, Python 3 stdlib only).

1. series: a generated config (tracepoints from tracefs's available_events, software events, aggregation
   "cpu", a few sets) gives at least 1,000 sample lines in one scrape.
2. concurrency: 50 threads scrape 10 times each at once, half of them asking for OpenMetrics as
   Prometheus does; every answer is HTTP 200 (OpenMetrics when asked, ending `# EOF`), parses as
   `name{labels} value` lines, has the reference scrape's series, and no `*_total` series decreases
   between two scrapes of one thread.
3. garbage clients while 4 threads scrape (random bytes; a request line left unfinished; 10 silent
   connections; a 100 KB header; GET /nosuch; POST /metrics; 8 keep-alive clients asking every 0.45 s):
   the exporter stays up and answers every
   normal scrape within the bound its design gives: each connection holds one of the exporter's HTTP
   threads (8) until it sends a request or 2 s pass, so a scrape waits at most 2 s per round of threads
   the held connections fill, plus read_timeout (0.5 s) for the counters, plus its own read, which
   phase 2 measured: twice the worst of those is allowed (--silent 100 shows how long scrapes wait).
4. SIGHUP while 10 threads scrape: 20 reloads alternating the config and the config plus one set; every
   scrape succeeds, reloads_total{result="success"} grows by 20, the unchanged sets' counters never go
   back. Then a bad config (an unknown event) keeps the old series, with last_reload_success 0 and
   config_error_info, as do metrics 20,000 deep, 20 metrics of 990 nested levels, a link to /dev/zero
   and a FIFO as the file; fixing the file makes the next reload succeed.
5. fds: /proc/PID/fd and process_open_fds grow by at most 2 over the whole test.
6. SIGTERM: exit status 0 (within 60 s: a hang detector), no core file, no "terminate called"/"Sanitizer" in stderr.

--tls: the same phases against the exporter serving TLS as a deployment does (docs/exporter.md, "TLS,
authentication, headers: the web configuration"): `--web.config.file` names a web.yml written to the
exporter's temporary directory from tests/fixtures/tls/web.yml, its certificate, key and CA given by
absolute paths as /etc/perfspec/web.yml gives them (TLS, client certificates of the fixtures' CA
required, basic authentication prometheus:secret, a header). Every client meant to be served is a
Prometheus: TLS with an ssl.SSLContext verifying the server against ca.crt by the address it connects
to (127.0.0.1, which the server certificate names with localhost), client.crt presented, and the
Authorization header sent; scrapes go through http.client.HTTPSConnection. What changes:
3. the attacks are TLS's: random bytes and plain HTTP sent to the TLS port (refused before civetweb:
   `handshake`, and `plain_http` answered with Go's 400); 10 TCP connections that never start a
   handshake; a ClientHello never followed by the rest; a ClientHello fed a byte every 0.5 s; a request
   answered and then followed by a byte every 0.5 s; no client certificate, another CA's, an expired one;
   and after completed handshakes the HTTP garbage above (the unfinished request line, the 100 KB header,
   GET /nosuch -> 404, POST /metrics -> 405, with the right credentials) plus a wrong password, an
   unknown user and no credentials (401); the 8 keep-alive clients ask over TLS. The bound follows from
   the TLS front (exporter/tls_front.cpp): each of its threads (--threads, 8) serves one connection from
   its handshake to its close; a handshake has 2 s, a relayed request civetweb's 2 s, and the close waits
   up to 1 s for the client's own. So the held connections (the silent ones, the unfinished handshake,
   the drip-fed one, the drip after an answer, the unfinished request) hold a thread 2 s each, the
   unfinished request 2 s + 1 s: a scrape behind them waits at most 2 s per round of 8 they fill plus 1 s
   (one connection 1 s longer moves every later start by at most 1 s), then read_timeout and the slack as
   in plain mode. civetweb's threads (as many) are never the ones waited for: each relayed connection
   holds one front thread. The drip-fed handshake must be closed within that wait + 2 s (+ two drips to
   see it, + the slack), the drip after an answer within 1 s (+ two drips, + the slack); the connections
   that never finished a handshake must each be closed by the server (a timeout) before the test closes
   them.
4. SIGHUP reloads the web configuration too: web_config_reloads_total{result="success"} counts each one.
5. the exporter's sockets at the end are those it had after phase 1 (every relay closed), and
   perfspec_exporter_tls_refused_total{reason} and perfspec_exporter_auth_refused_total{reason} are
   exactly the refusals the test caused: plain_http the plain requests, handshake the random bytes,
   timeout the connections that never finished a handshake (the silent ones, the unfinished and the
   drip-fed handshake), no/bad/expired certificate and wrong_password, unknown_user, no_credentials
   their clients, san_not_allowed 0. Exact: nothing else in the test may be refused (a
   Prometheus client refused fails its scrape, and the keep-alive clients must not fail either).

Usage: tests/exporter/load_test.py [--perfspec PATH] [--tls] [--quick] [--silent N] [--latency-bound S].
Exits 0 when everything holds, 77 when it cannot count system-wide (not root), else 1 with a message and
the exporter's stderr; never runs longer than 300 s.
"""
import argparse, base64, collections, http.client, itertools, json, math, os, random, re, signal, socket
import ssl, subprocess, sys, tempfile, threading, time

# 77 tells ctest the test was skipped (what it needs is not here); where CI has installed everything
# (PERFSPEC_REQUIRE_ALL=1, .ci/run), a skip is a failure.
SKIPPED = 1 if os.environ.get("PERFSPEC_REQUIRE_ALL") == "1" else 77

LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"'
SAMPLE = re.compile(rf"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{{(?:{LABEL},?)*\}})? (\S+)( -?\d+)?$")
VALUE = re.compile(r"[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+|Inf|NaN|Nan)")  # prometheus-cpp writes Nan
SOFTWARE = ["task-clock", "cpu-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults",
            "major-faults", "alignment-faults", "emulation-faults", "cycles"]
CAP = 300.0  # seconds for the whole test: a hang detector, far above what a loaded machine takes
THREADS = 8  # the exporter's HTTP threads by default (perfspec exporter --help)
LATE = 10.0  # seconds a normal scrape may take under attack before it counts as failed
REQUEST_S = 2.0  # civetweb's request_timeout_ms (exporter/server.cpp), and the TLS front's handshake_seconds
CLOSE_S = 1.0  # the TLS front's close waits this long for the client's own (close_gracefully)
READ_TIMEOUT = 0.5  # a scrape waiting longer for another one's read answers the last read
DRIP = 0.5  # seconds between a slow client's bytes: shorter than any per-read timeout, so only a bound in all ends it
HOST = "127.0.0.1"  # where the exporter listens; the server certificate names it (and localhost)
FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "tls"))


class Failure(Exception):
    """A check that does not hold."""


def check(cond, message):
    if not cond:
        raise Failure(message)


def parse(body):
    """{'name{labels}': value} of a text-format scrape; Failure on a line that is not a sample."""
    out = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            m = SAMPLE.match(line)
            check(m and VALUE.fullmatch(m.group(3)), f"unparsable line: {line[:200]!r}")
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def authorization(user, password):
    """The header line of basic authentication."""
    return "Authorization: Basic " + base64.b64encode(f"{user}:{password}".encode()).decode() + "\r\n"


def tls_context(cert=None):
    """A client's TLS: the server verified against the fixtures' CA and by name; `cert`: the fixture whose
    certificate and key it presents (client, stranger: another CA's, expired-client), or none."""
    context = ssl.create_default_context(cafile=os.path.join(FIXTURES, "ca.crt"))
    if cert:
        context.load_cert_chain(os.path.join(FIXTURES, cert + ".crt"), os.path.join(FIXTURES, cert + ".key"))
    return context


class Client:
    """How every client of the test reaches the exporter: plain TCP, or (tls) as the Prometheus of the web
    configuration: TLS with the client certificate, and basic authentication."""

    def __init__(self, port, tls):
        self.port = port
        self.context = tls_context("client") if tls else None
        self.auth = authorization("prometheus", "secret") if tls else ""  # a header line, or nothing
        self.headers = dict([self.auth.strip().split(": ", 1)]) if tls else {}
        # Over TLS a client waiting for its handshake must outlast the held connections, as a scrape does
        # (LATE): one that gave up would be counted as a refused handshake.
        self.timeout = LATE if tls else 5.0

    def connect(self, raw=False, context=None):
        """A connected socket: TCP, with TLS over it (the handshake done) when the test runs over TLS, unless
        `raw`; `context`: another client's TLS (another certificate, or none)."""
        s = socket.create_connection((HOST, self.port), timeout=self.timeout)
        tls = None if raw else context or self.context
        try:
            return tls.wrap_socket(s, server_hostname=HOST) if tls else s
        except BaseException:
            s.close()
            raise

    def http(self, timeout):
        """An http.client connection, HTTPS when the test runs over TLS."""
        if self.context is None:
            return http.client.HTTPConnection(HOST, self.port, timeout=timeout)
        return http.client.HTTPSConnection(HOST, self.port, timeout=timeout, context=self.context)

    def hello(self):
        """The first bytes of a TLS handshake of this client: its ClientHello, to send by hand."""
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        try:
            self.context.wrap_bio(incoming, outgoing, server_hostname=HOST).do_handshake()
        except ssl.SSLWantReadError:  # the server's answer is wanted next
            pass
        return outgoing.read()


def scrape(client, timeout=10.0, openmetrics=False):
    """(parsed samples, seconds taken); Failure unless HTTP 200 with a parsable body. `openmetrics`:
    ask as Prometheus does, and want OpenMetrics (its samples are written as the text format's)."""
    start = time.monotonic()
    conn = client.http(timeout)
    try:
        headers = {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"} \
            if openmetrics else {}
        conn.request("GET", "/metrics", headers=headers | client.headers)
        r = conn.getresponse()
        body = r.read().decode()
    except (OSError, http.client.HTTPException) as e:
        raise Failure(f"scrape failed after {time.monotonic() - start:.2f} s: {e!r}")
    finally:
        conn.close()
    check(r.status == 200, f"scrape answered HTTP {r.status}")
    if openmetrics:
        check(r.getheader("Content-Type") == OPENMETRICS and body.endswith("# EOF\n"),
              f"OpenMetrics asked for: {r.getheader('Content-Type')}, ends {body[-20:]!r}")
    return parse(body), time.monotonic() - start


def never_back(prev, cur, where, skip=lambda key: False):
    for key, v in cur.items():
        if key.split("{")[0].endswith("_total") and key in prev and v < prev[key] and not skip(key):
            raise Failure(f"{where}: counter went back: {key} {prev[key]} -> {v}")


def stable(samples):
    """The series every scrape has (a stale one lacks the health series, a failed reload adds some)."""
    return {k for k in samples if not k.startswith(("perfspec_exporter_", "process_"))}


def in_threads(n, body):
    errors, threads = [], []
    def run(i):
        try:
            body(i)
        except Exception as e:  # noqa: BLE001 -- a Failure, or a surprise such as a missing series
            errors.append(str(e) if isinstance(e, Failure) else f"{type(e).__name__}: {e}")
    for i in range(n):
        threads.append(threading.Thread(target=run, args=(i,), daemon=True))
        threads[-1].start()
    return threads, errors


def join(threads, errors, what):
    deadline = time.monotonic() + 60
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    check(not any(t.is_alive() for t in threads), f"{what}: threads still running after 60 s")
    check(not errors, f"{what}: {len(errors)} failures, first: {errors[:1]}")


def tracefs_events(count):
    """`count` tracepoints of this machine, spread over the subsystems."""
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            with open(os.path.join(root, "available_events")) as f:
                names = sorted({n for n in f.read().split() if re.fullmatch(r"[a-z_]\w*:[a-z_]\w*", n)})
            break
        except OSError:
            continue
    else:
        raise Failure("no tracefs available_events (mount tracefs, run as root)")
    names = [n for n in names if not n.startswith(("ftrace:", "syscalls:"))]  # perf cannot open ftrace's
    check(len(names) >= count, f"only {len(names)} tracepoints, {count} needed")
    return [names[int(i * len(names) / count)] for i in range(count)]


def config_text(sets):
    out = []
    for name, events in sets:
        lines = "".join(f"  {json.dumps(e)},\n" for e in events)
        out.append(f'[[set]]\nname = "{name}"\nevents = [\n{lines}]\naggregation = "cpu"\n'
                   'labels = { team = "load" }\n')
    return "\n".join(out)


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)  # the exporter never reads half a file


def write_web_config(path):
    """The fixtures' web.yml as a deployment writes its own: the certificate, key and CA by absolute paths."""
    with open(os.path.join(FIXTURES, "web.yml")) as f:
        text, n = re.subn(r"(?m)^(\s*\w+_file: *)(\S+)$",
                          lambda m: m.group(1) + os.path.join(FIXTURES, m.group(2)), f.read())
    check(n == 3, f"{FIXTURES}/web.yml: {n} files named, not cert_file, key_file and client_ca_file")
    write(path, text)


def closed_by_server(s, deadline):
    """Whether the server closes `s` (an end or a reset, after what it sends) before `deadline` (monotonic)."""
    try:
        while True:
            s.settimeout(max(0.001, deadline - time.monotonic()))
            if not s.recv(65536):
                return True
    except socket.timeout:
        return False
    except OSError:
        return True


def garbage(client, stop, held, results, sent, silent_n, within):
    """The misbehaving clients (`sent` counts them by kind); `held` gets the socket that stays open until
    the fd check. Over TLS, the connections that never finish a handshake must each be closed by the
    server within `within` s of being made."""
    tls = client.context is not None
    def answer(what, data, raw=False, context=None):
        """`data` sent on a new connection (the first line of the answer, or the error, in results)."""
        try:
            s = client.connect(raw, context)
        except ssl.SSLError as e:  # a client certificate refused in the handshake (TLS 1.2; 1.3 refuses it after)
            results[what], sent[what] = f"({e})", sent[what] + 1
            return
        sent[what] += 1
        try:
            s.sendall(data)
            if not isinstance(s, ssl.SSLSocket):  # (an SSLSocket's shutdown drops its TLS)
                s.shutdown(socket.SHUT_WR)
            reply = s.recv(200).split(b"\r\n")[0].decode(errors="replace")
        except OSError as e:
            reply = f"({e})"
        finally:
            s.close()
        results[what] = reply
    partial = client.connect()
    partial.sendall(b"GET /metr")  # and never more (over TLS, after the handshake)
    held.append(partial)
    silent = [client.connect(raw=True) for _ in range(silent_n)]  # over TLS: no handshake ever started
    if tls:  # a handshake started and never finished
        silent.append(client.connect(raw=True))
        silent[-1].sendall(client.hello())
    opened = time.monotonic()
    rng, request = random.Random(7), "{} {} HTTP/1.1\r\nHost: x\r\n{}\r\n".format
    auth = client.auth
    refused = [("no certificate", tls_context()), ("another CA", tls_context("stranger")),
               ("expired certificate", tls_context("expired-client"))] if tls else []
    try:
        while not stop.is_set():
            answer("random", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096))), raw=True)
            answer("100 KB header", request("GET", "/metrics", f"{auth}X-Long: {'a' * 100_000}\r\n").encode())
            answer("GET /nosuch", request("GET", "/nosuch", auth).encode())
            post = request("POST", "/metrics", f"{auth}Content-Length: 2\r\n") + "{}"
            answer("POST /metrics", post.encode())
            if tls:
                answer("plain HTTP", request("GET", "/metrics", auth).encode(), raw=True)
                for what, context in refused:
                    answer(what, request("GET", "/metrics", auth).encode(), context=context)
                for what, line in (("wrong password", authorization("prometheus", "guess")),
                                   ("unknown user", authorization("admin", "secret")), ("no credentials", "")):
                    answer(what, request("GET", "/metrics", line).encode())
            stop.wait(0.2)
        # each refused (its handshake's time up) before it is closed here: the timeouts are counted exactly
        kept = [s for s in silent if not closed_by_server(s, opened + within)] if tls else []
        check(not kept, f"{len(kept)} of the {len(silent)} connections that never finished a handshake still "
                        f"open {within:.1f} s after they were made")
    finally:
        for s in silent:
            s.close()


def dripper(client, what, limit, holds):
    """A slow client over TLS sending a byte every DRIP s (faster than any per-read timeout would end it)
    until the server closes the connection or `limit` s pass: a ClientHello (what "handshake", timed from
    the connection), or anything after a request was answered ("after an answer", timed from the answer).
    holds[what]: the seconds the server kept the connection (until a send failed), inf past `limit`."""
    if what == "handshake":
        s = client.connect(raw=True)
        hello = client.hello()
        drips = (hello[i:i + 1] for i in range(len(hello)))
    else:
        s = client.connect()
        s.sendall(f"GET /-/healthy HTTP/1.1\r\nHost: x\r\n{client.auth}\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            more = s.recv(4096)
            check(more, f"slow client ({what}): no answer to its request")
            head += more
        drips = itertools.repeat(b"x")
    start, holds[what] = time.monotonic(), math.inf
    try:
        for byte in drips:  # the server's close is seen as the next send's reset, or the one after
            if time.monotonic() - start > limit:
                break
            try:
                s.sendall(byte)
            except OSError:
                holds[what] = time.monotonic() - start
                break
            time.sleep(DRIP)
    finally:
        s.close()


def keeper(client, stop, failures):
    """A keep-alive client asking every 0.45 s on one connection, as long as the server keeps it (it
    connects again when the server closes): 8 of them once held every HTTP thread for good. `failures`
    gets its errors (over TLS, where the server closes after each answer, there must be none)."""
    s = None
    while not stop.is_set():
        try:
            if s is None:
                s = client.connect()
            s.sendall(f"GET /metrics HTTP/1.1\r\nHost: x\r\n{client.auth}Connection: keep-alive\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                more = s.recv(65536)
                if not more:
                    raise OSError("closed")
                data += more
            head, body = data.split(b"\r\n\r\n", 1)
            m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            left = int(m.group(1)) - len(body) if m else 0
            while left > 0:  # the answer's end: the connection is kept for the next request
                more = s.recv(min(left, 65536))
                if not more:
                    raise OSError("closed")
                left -= len(more)
            if not m or re.search(rb"(?i)\r\nconnection: *close", head):
                s.close()
                s = None
        except OSError as e:
            failures.append(f"{type(e).__name__}: {e}")
            if s is not None:
                s.close()
            s = None
        stop.wait(0.45)
    if s is not None:
        s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfspec", default="build/perfspec")
    ap.add_argument("--quick", action="store_true", help="fewer threads, scrapes and reloads")
    ap.add_argument("--tls", action="store_true",
                    help="serve TLS with client certificates and basic authentication (tests/fixtures/tls)")
    ap.add_argument("--silent", type=int, default=10, metavar="N", help="silent connections (10)")
    ap.add_argument("--latency-bound", type=float, default=None, metavar="S",
                    help="seconds a normal scrape may take under attack (default: from the design and phase 2's "
                         "worst scrape, see above)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        paranoid = open("/proc/sys/kernel/perf_event_paranoid").read().strip()
        if int(paranoid) > -1:
            print(f"SKIP: counting every CPU's tracepoints needs root or perf_event_paranoid -1 (it is {paranoid})")
            return SKIPPED
    perfspec = os.path.abspath(a.perfspec)  # it runs in the temporary directory
    check(os.access(perfspec, os.X_OK), f"{a.perfspec} is not an executable (give --perfspec PATH)")
    threads_n, scrapes_n, reloads_n, attack_s = (10, 3, 6, 3.0) if a.quick else (50, 10, 20, 6.0)
    # Each event gives 3 series (count, enabled, running) per CPU. At most 40 tracepoints: closing one
    # costs the kernel ~25 ms (its probe's unregistration), which SIGTERM's 5 s must cover; software
    # events renamed with name= make up the rest.
    need = math.ceil(1100 / (3 * (os.cpu_count() or 1))) + 5
    tps = tracefs_events(min(40, need))
    renamed = [f"{e}/name={e}-{i}/" for i in range(max(0, need - len(tps) - len(SOFTWARE)) // 4 + 1)
               for e in ("page-faults", "context-switches", "cpu-migrations", "minor-faults")]
    base = [("sys", SOFTWARE), ("renamed", renamed)] + [(f"tp{i}", tps[i::3]) for i in range(3)]
    with_extra = base + [("extra", ["sched:sched_wakeup", "task-clock", "page-faults"])]

    tmp = tempfile.TemporaryDirectory(prefix="perfspec-load-")
    cfg = os.path.join(tmp.name, "exporter.toml")
    write(cfg, config_text(base))
    web = []
    if a.tls:
        web = ["--web.config.file", os.path.join(tmp.name, "web.yml")]
        write_web_config(web[1])
    proc = subprocess.Popen([perfspec, "exporter", "--config", cfg, "--listen", "127.0.0.1:0"] + web,
                            cwd=tmp.name, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err_lines, port_seen = [], threading.Event()
    def read_stderr():
        for line in proc.stderr:
            err_lines.append(line)
            if "serving" in line:
                port_seen.set()
        port_seen.set()
    threading.Thread(target=read_stderr, daemon=True).start()
    stderr_text = lambda: "".join(err_lines)  # noqa: E731
    count = lambda text: sum(text in line for line in err_lines)  # noqa: E731
    hups = []
    def hup(what, give_up=lambda: False):
        """SIGHUP, then wait (60 s at most: a hang detector) for one more stderr line saying `what`."""
        done = count(what)
        proc.send_signal(signal.SIGHUP)
        hups.append(what)
        deadline = time.monotonic() + 60
        while count(what) == done and time.monotonic() < deadline and not give_up():
            time.sleep(0.02)
        return count(what) > done
    def watchdog():
        print(f"load_test: FAIL: over {CAP:.0f} s, killing the exporter\n--- exporter stderr ---\n"
              f"{stderr_text()}", file=sys.stderr, flush=True)
        proc.kill()
        os._exit(1)
    timer = threading.Timer(CAP, watchdog)
    timer.daemon = True
    timer.start()
    held, started = [], time.monotonic()
    fd_count = lambda: len(os.listdir(f"/proc/{proc.pid}/fd"))  # noqa: E731
    def sockets():
        out = 0
        for fd in os.listdir(f"/proc/{proc.pid}/fd"):
            try:
                out += os.readlink(f"/proc/{proc.pid}/fd/{fd}").startswith("socket:")
            except FileNotFoundError:  # closed meanwhile
                pass
        return out
    try:
        port_seen.wait(30)
        m = re.search(r"serving 127\.0\.0\.1:(\d+)/metrics( over TLS)?", stderr_text())
        check(m and bool(m.group(2)) == a.tls, "the exporter did not start" + " over TLS" * a.tls)
        client = Client(int(m.group(1)), a.tls)

        # 1. At least 1,000 series.
        ref, _ = scrape(client)
        check(len(ref) >= 1000, f"only {len(ref)} series (want >= 1000)")
        check('perfspec_target_up{set="tp0",team="load",target="system"}' in ref, "no target_up for tp0")
        failed = sum(k.startswith("perfspec_event_failed_info") for k in ref)
        if a.tls:
            time.sleep(1.5)  # the scrape's relay closed (the front's close waits for the client's)
            sockets0 = sockets()
        fd0, open0 = fd_count(), ref["process_open_fds"]
        want = stable(ref)

        # 2. Concurrent scrapes.
        stale, took = [], []
        def scraper(i):
            prev = None
            for n in range(scrapes_n):
                cur, seconds = scrape(client, openmetrics=i % 2 == 1)  # half as Prometheus asks
                took.append(seconds)
                stale.extend(["stale"] if "perfspec_exporter_stale" in cur else [])
                got = stable(cur)
                check(got == want, f"thread {i} scrape {n}: series differ: missing "
                                   f"{sorted(want - got)[:3]}, extra {sorted(got - want)[:3]}")
                if prev:
                    never_back(prev, cur, f"thread {i} scrape {n}")
                prev = cur
        t0 = time.monotonic()
        join(*in_threads(threads_n, scraper), "concurrent scrapes")
        concurrent_s = time.monotonic() - t0

        # 3. Garbage clients while 4 threads scrape. The bound (see above): the held connections (the
        # silent ones and the unfinished request; over TLS also the unfinished handshake and the two slow
        # clients) in rounds of THREADS, 2 s each, over TLS 1 s more for the unfinished request's close;
        # read_timeout for the counters; twice phase 2's worst scrape for the scrape's own work (slack).
        held_n, slack = a.silent + (4 if a.tls else 1), 2 * max(took, default=0.0)
        wait = REQUEST_S * math.ceil(held_n / THREADS) + (CLOSE_S if a.tls else 0.0)
        bound = a.latency_bound if a.latency_bound is not None else wait + READ_TIMEOUT + slack
        stop, latencies, late, replies, sent = threading.Event(), [], [], {}, collections.Counter()
        holds, keeper_failures = {}, []
        def normal(i):
            while not stop.is_set():
                try:
                    latencies.append(scrape(client, timeout=LATE)[1])
                except Failure as e:
                    latencies.append(LATE)
                    late.append(str(e))
        attackers = in_threads(1, lambda i: garbage(client, stop, held, replies, sent, a.silent,
                                                    wait + REQUEST_S + slack))
        # the slow clients (over TLS): closed 2 s after a thread takes the handshake, 1 s after the answer
        limits = {"handshake": wait + REQUEST_S + 2 * DRIP + slack, "after an answer": CLOSE_S + 2 * DRIP + slack}
        slow_kinds = list(limits) if a.tls else []
        slow = in_threads(len(slow_kinds), lambda i: dripper(client, slow_kinds[i], limits[slow_kinds[i]], holds))
        keepers = in_threads(THREADS, lambda i: keeper(client, stop, keeper_failures))
        scrapers = in_threads(4, normal)
        stop.wait(attack_s)
        stop.set()
        join(*attackers, "garbage clients")
        join(*slow, "slow clients")
        join(*keepers, "keep-alive clients")
        join(*scrapers, "scrapes under attack")
        check(proc.poll() is None, f"the exporter exited under attack (status {proc.returncode})")
        worst = max(latencies, default=float("inf"))
        check(worst < bound and not late,
              f"normal scrapes under attack ({a.silent} silent connections): worst {worst:.2f} s (at most "
              f"{bound:.2f} s), {len(late)} of {len(latencies)} failed: {late[:1]}")
        check(replies.get("GET /nosuch", "").startswith("HTTP/1.1 404"), f"GET /nosuch: {replies}")
        if a.tls:
            answers = {"plain HTTP": "HTTP/1.0 400", "POST /metrics": "HTTP/1.1 405",
                       "wrong password": "HTTP/1.1 401", "unknown user": "HTTP/1.1 401",
                       "no credentials": "HTTP/1.1 401"}
            for what, status in answers.items():
                check(replies.get(what, "").startswith(status), f"{what}: {replies.get(what)!r}, not {status}")
            for what in ("no certificate", "another CA", "expired certificate"):
                check(not replies.get(what, "HTTP/").startswith("HTTP/"), f"{what}: answered {replies.get(what)!r}")
            check(not keeper_failures, f"keep-alive clients over TLS: {len(keeper_failures)} failed connections, "
                                       f"first: {keeper_failures[:1]}")
            check(holds["handshake"] < math.inf,
                  f"a handshake fed a byte every {DRIP} s was still open after {limits['handshake']:.1f} s (a "
                  f"thread within {wait:.1f} s, then 2 s for a handshake)")
            check(holds["after an answer"] < math.inf,
                  f"a connection still open {limits['after an answer']:.1f} s after its answer while its client "
                  f"sent a byte every {DRIP} s (the close waits 1 s for the client)")

        # 4. SIGHUP while 10 threads scrape: the unchanged sets keep counting.
        before = scrape(client)[0]
        extra = lambda key: 'set="extra"' in key  # noqa: E731 -- that set comes and goes
        def reload_scraper(i):
            prev = None
            while not stop.is_set():
                cur, _ = scrape(client, openmetrics=i % 2 == 1)
                missing = sorted(want - stable(cur))
                check(not missing, f"during reloads: series missing: {missing[:3]}")
                if prev:
                    never_back(prev, cur, "during reloads", extra)
                prev = cur
        stop.clear()
        scrapers = in_threads(10, reload_scraper)
        for n in range(reloads_n):
            write(cfg, config_text(with_extra if n % 2 == 0 else base))
            reloaded = hup("reloaded", lambda: scrapers[1])
            if scrapers[1]:
                break  # join() reports the scrapers' failure
            check(reloaded, f"reload {n + 1} not done in 10 s ({count('reload failed')} failed)")
            time.sleep(0.1)
        stop.set()
        join(*scrapers, "scrapes during reloads")
        after = scrape(client)[0]
        ok = 'perfspec_exporter_reloads_total{result="success"}'
        check(after[ok] - before[ok] == reloads_n, f"{ok} grew by {after[ok] - before[ok]}, not {reloads_n}")
        check(not any(extra(k) for k in after), "the extra set's series stayed after its removal")
        never_back(before, after, "across the reloads", extra)
        # A bad config keeps the running one; fixing the file reloads.
        write(cfg, config_text(base[:-1] + [(base[-1][0], base[-1][1] + ["cyclez"])]))
        check(hup("reload failed"), "no 'reload failed' after a bad config")
        bad = scrape(client)[0]
        check(bad["perfspec_exporter_last_reload_success"] == 0, "last_reload_success not 0 after bad config")
        check(any(k.startswith("perfspec_exporter_config_error_info{") for k in bad), "no config_error_info")
        check(stable(bad) == want, "the series changed after a failed reload")
        # Files that once killed the daemon or held its signal thread (issue 34): metrics that refer
        # to each other 20,000 deep; 20 metrics of 990 nested levels, each using the one before; a link
        # to /dev/zero; a FIFO. Each is a failed reload, the series stay.
        chain = ['[[metric]]\nname = "m0"\nexpr = "task\\\\-clock"\n'] + [
            f'[[metric]]\nname = "m{i}"\nexpr = "m{i - 1} + 1"\n' for i in range(1, 20000)]
        nested = ['[[metric]]\nname = "n0"\nexpr = "' + "(1+" * 990 + 'task\\\\-clock' + ")" * 990 + '"\n'] + [
            f'[[metric]]\nname = "n{i}"\nexpr = "' + "(1+" * 990 + f"n{i - 1}" + ")" * 990 + '"\n'
            for i in range(1, 20)]
        hostile = [("20,000 chained metrics", lambda: write(cfg, "".join(chain) + config_text(base).replace(
                       'aggregation = "cpu"', 'aggregation = "cpu"\nmetrics = ["m19999"]', 1))),
                   ("20 deeply nested metrics", lambda: write(cfg, "".join(nested) + config_text(base).replace(
                       'aggregation = "cpu"', 'aggregation = "cpu"\nmetrics = ["n19"]', 1))),
                   ("a link to /dev/zero", lambda: (os.remove(cfg), os.symlink("/dev/zero", cfg))),
                   ("a FIFO", lambda: (os.remove(cfg), os.mkfifo(cfg)))]
        for what, make in hostile:
            make()
            check(hup("reload failed", give_up=lambda: proc.poll() is not None),
                  f"no 'reload failed' after {what} (exit status {proc.poll()})")
            check(stable(scrape(client)[0]) == want, f"the series changed after {what}")
        os.remove(cfg)
        write(cfg, config_text(base))
        check(hup("reloaded"), "no reload after fixing the config")
        fixed = scrape(client)[0]
        check(fixed["perfspec_exporter_last_reload_success"] == 1, "last_reload_success not 1 after the fix")
        check(not any(k.startswith("perfspec_exporter_config_error_info") for k in fixed), "error_info stays")
        check(stable(fixed) == want, "the series after the fix are not the first config's")
        if a.tls:  # each SIGHUP loaded the (unchanged) web configuration again
            loads = {r: fixed[f'perfspec_exporter_web_config_reloads_total{{result="{r}"}}']
                     for r in ("success", "failure")}
            check(loads == {"success": len(hups), "failure": 0}
                  and fixed["perfspec_exporter_web_config_last_reload_success"] == 1,
                  f"{len(hups)} SIGHUPs: web_config_reloads_total {loads}")

        # 5. No fd growth (the held connection closed, a moment for the exporter to close its side).
        for s in held:
            s.close()
        time.sleep(1.5)
        fd1, sockets1 = fd_count(), sockets()
        final = scrape(client)[0]
        open1 = final["process_open_fds"]
        check(fd1 - fd0 <= 2, f"/proc/{proc.pid}/fd grew from {fd0} to {fd1}")
        check(open1 - open0 <= 2, f"process_open_fds grew from {open0:.0f} to {open1:.0f}")
        refusals = {}
        if a.tls:
            check(sockets1 == sockets0, f"the exporter had {sockets0} sockets after phase 1, {sockets1} at the end")
            # every refusal the test caused, by its reason, exactly (see above)
            caused = {"tls": {"plain_http": sent["plain HTTP"], "handshake": sent["random"],
                              "timeout": a.silent + 2,
                              "no_certificate": sent["no certificate"], "bad_certificate": sent["another CA"],
                              "expired_certificate": sent["expired certificate"], "san_not_allowed": 0},
                      "auth": {"no_credentials": sent["no credentials"], "unknown_user": sent["unknown user"],
                               "wrong_password": sent["wrong password"]}}
            refusals = {(kind, why): final.get(f'perfspec_exporter_{kind}_refused_total{{reason="{why}"}}')
                        for kind, reasons in caused.items() for why in reasons}
            wrong = [f"{kind} {why} {n} (caused {caused[kind][why]})" for (kind, why), n in refusals.items()
                     if n != caused[kind][why]]
            check(not wrong, "refusals counted otherwise than caused: " + ", ".join(wrong))

        # 6. SIGTERM.
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(60)  # a hang detector: closing ~40 tracepoints waits on RCU, longer when loaded
        except subprocess.TimeoutExpired:
            raise Failure("no exit within 60 s of SIGTERM")
        exit_s = time.monotonic() - t0
        time.sleep(0.1)  # the stderr reader's last lines
        check(status == 0, f"exit status {status} after SIGTERM")
        for text in ("terminate called", "Sanitizer", "runtime error"):
            check(text not in stderr_text(), f"stderr has {text!r}")
        check(not [f for f in os.listdir(tmp.name) if f.startswith("core")], "a core file was written")
    except Exception as e:  # noqa: BLE001 -- a Failure, or a surprise such as a missing series (KeyError)
        what = str(e) if isinstance(e, Failure) else f"{type(e).__name__}: {e}"
        print(f"load_test: FAIL: {what}\n--- exporter stderr ---\n{stderr_text()}", file=sys.stderr)
        return 1
    finally:
        timer.cancel()
        for s in held:
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"load_test: ok in {time.monotonic() - started:.1f} s: {len(ref)} series ({len(tps)} tracepoints, "
          f"{len(SOFTWARE) + len(renamed)} software events, {failed} failed); {threads_n}x{scrapes_n} "
          f"concurrent scrapes in {concurrent_s:.2f} s ({len(stale)} stale); worst scrape under attack "
          f"{worst:.3f} s of {len(latencies)}; {reloads_n} reloads; exit {exit_s:.2f} s; fds {fd0} -> {fd1}, "
          f"open_fds {open0:.0f} -> {open1:.0f}")
    print("load_test: garbage replies: " + ", ".join(f"{k}: {v!r}" for k, v in sorted(replies.items())))
    if a.tls:
        print(f"load_test: over TLS: sockets {sockets0} -> {sockets1}; slow clients held "
              + ", ".join(f"{k} {v:.2f} s" for k, v in holds.items()) + f"; {len(hups)} web configuration reloads; "
              "refusals counted: " + ", ".join(f"{kind} {why} {n:.0f}" for (kind, why), n in refusals.items()))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:  # before the exporter starts
        sys.exit(f"load_test: FAIL: {e}")
