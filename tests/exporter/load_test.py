#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Load test of `perfspec exporter` against a real running daemon (root, tracefs, Python 3 stdlib only).

1. series: a generated config (tracepoints read from tracefs's available_events plus software events,
   aggregation = "cpu", a few sets) gives at least 1,000 sample lines in one scrape.
2. concurrency: 50 threads scrape 10 times each at once; every answer is HTTP 200, parses as
   `name{labels} value` lines, has the reference scrape's series, and no `*_total` series decreases
   between two scrapes of one thread.
3. garbage clients while scrapes go on (random bytes; a request line left unfinished for the whole test;
   100 silent connections; a 100 KB header; GET /nosuch; POST /metrics): the exporter stays up and normal
   scrapes keep being answered within a few seconds (the worst latency is printed).
4. SIGHUP while 10 threads scrape: 20 reloads alternating the config and the config plus one set; every
   scrape succeeds, reloads_total{result="success"} grows by 20, the unchanged sets' counters never go
   back; then a bad config (an unknown event) keeps the old series with last_reload_success 0 and
   config_error_info; fixing the file makes the next reload succeed.
5. fds: /proc/PID/fd and perfspec_exporter_open_fds grow by at most 2 over the whole test.
6. SIGTERM: exit status 0 within 5 s, no core, no "terminate called"/"Sanitizer" in stderr.

Usage: tests/exporter/load_test.py [--perfspec PATH] [--quick]. Exits 0 when everything holds, else 1
with a message (and the exporter's stderr). Never runs longer than 120 s.
"""
import argparse, http.client, json, math, os, random, re, signal, socket, subprocess, sys, tempfile, threading, time

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)( -?\d+)?$')
SOFTWARE = ["task-clock", "cpu-clock", "page-faults", "context-switches", "cpu-migrations", "minor-faults",
            "major-faults", "alignment-faults", "emulation-faults", "cycles"]
CAP = 120.0


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def parse(body):
    """{'name{labels}': value} of a text-format scrape; Failure on a line that is not a sample."""
    out = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        check(m, f"unparsable line: {line[:200]!r}")
        try:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
        except ValueError:
            raise Failure(f"bad value in line: {line[:200]!r}")
    return out


def scrape(port, path="/metrics", timeout=10.0):
    """(parsed samples, seconds taken); Failure unless HTTP 200 with a parsable body."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read().decode()
    except (OSError, http.client.HTTPException) as e:
        raise Failure(f"scrape failed after {time.monotonic() - start:.2f} s: {e!r}")
    finally:
        conn.close()
    check(r.status == 200, f"scrape answered HTTP {r.status}")
    return parse(body), time.monotonic() - start


def never_back(prev, cur, where, skip=lambda key: False):
    for key, v in cur.items():
        if key.split("{")[0].endswith("_total") and key in prev and v < prev[key] and not skip(key):
            raise Failure(f"{where}: counter went back: {key} {prev[key]} -> {v}")


def stable(samples):
    """The series every fresh scrape has (a stale one lacks the health series, a failed reload adds some)."""
    return {k for k in samples if not k.startswith(("perfspec_exporter_", "exposer_"))}


def in_threads(n, body):
    errors, threads = [], []
    def run(i):
        try:
            body(i)
        except Failure as e:
            errors.append(str(e))
        except Exception as e:  # noqa: BLE001 -- any surprise is a failure, with its type
            errors.append(f"{type(e).__name__}: {e}")
    for i in range(n):
        threads.append(threading.Thread(target=run, args=(i,), daemon=True))
        threads[-1].start()
    return threads, errors


def join(threads, errors, what):
    deadline = time.monotonic() + 60
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    check(not any(t.is_alive() for t in threads), f"{what}: threads still running after 60 s")
    check(not errors, f"{what}: {len(errors)} failures, first: {errors[0] if errors else ''}")


def tracefs_events(count):
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            with open(os.path.join(root, "available_events")) as f:
                names = sorted({l.strip() for l in f if re.fullmatch(r"[a-z_][a-z0-9_]*:[a-z_][a-z0-9_]*\s*", l)})
            break
        except OSError:
            continue
    else:
        raise Failure("no tracefs available_events (mount tracefs, run as root)")
    names = [n for n in names if not n.startswith(("ftrace:", "syscalls:"))]
    check(len(names) >= count, f"only {len(names)} tracepoints, {count} needed")
    step = len(names) / count  # spread over the subsystems
    return [names[int(i * step)] for i in range(count)]


def config_text(sets):
    out = []
    for name, events in sets:
        out += [f'[[set]]\nname = "{name}"', "events = [\n" + "".join(f"  {json.dumps(e)},\n" for e in events) + "]",
                'aggregation = "cpu"\nlabels = { team = "load" }\n']
    return "\n".join(out)


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)  # the exporter never reads half a file


def garbage(port, stop, held, results, silent_n):
    """The misbehaving clients; `held` gets the sockets that stay open for the whole test."""
    def connect():
        return socket.create_connection(("127.0.0.1", port), timeout=5)
    def answer(data):
        s = connect()
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            reply = s.recv(200).split(b"\r\n")[0].decode(errors="replace")
        except OSError as e:
            reply = f"({e})"
        finally:
            s.close()
        return reply
    partial = connect()
    partial.sendall(b"GET /metr")  # and never more
    held.append(partial)
    silent = [connect() for _ in range(silent_n)]
    rng = random.Random(7)
    while not stop.is_set():
        results["random"] = answer(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4096))))
        results["long header"] = answer(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 100_000 + b"\r\n\r\n")
        results["GET /nosuch"] = answer(b"GET /nosuch HTTP/1.1\r\nHost: x\r\n\r\n")
        results["POST /metrics"] = answer(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        stop.wait(0.2)
    for s in silent:
        s.close()


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfspec", default="/tmp/perfspec-helper-bin")
    ap.add_argument("--quick", action="store_true", help="fewer threads, scrapes and reloads")
    ap.add_argument("--silent", type=int, default=100, metavar="N", help="silent connections of the attack (100)")
    a = ap.parse_args()
    threads_n, scrapes_n, reloads_n, attack_s = (10, 3, 6, 3.0) if a.quick else (50, 10, 20, 6.0)
    # Each event gives 3 series (count, enabled, running) per CPU. At most 40 tracepoints: closing one
    # costs the kernel ~20 ms (its probe's unregistration), which SIGTERM's 5 s must cover; software
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
    proc = subprocess.Popen([a.perfspec, "exporter", "--config", cfg, "--listen", "127.0.0.1:0"], cwd=tmp.name,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err_lines, port_seen = [], threading.Event()
    def read_stderr():
        for line in proc.stderr:
            err_lines.append(line)
            port_seen.set() if "serving" in line else None
        port_seen.set()
    threading.Thread(target=read_stderr, daemon=True).start()
    def stderr_text():
        return "".join(err_lines)
    def count(text):
        return sum(text in l for l in err_lines)
    def watchdog():
        print(f"load_test: FAIL: over {CAP:.0f} s, killing the exporter\n--- exporter stderr ---\n{stderr_text()}",
              file=sys.stderr, flush=True)
        proc.kill()
        os._exit(1)
    timer = threading.Timer(CAP, watchdog)
    timer.daemon = True
    timer.start()
    held, started = [], time.monotonic()
    try:
        port_seen.wait(30)
        m = re.search(r"serving 127\.0\.0\.1:(\d+)/metrics", stderr_text())
        check(m, "the exporter did not start")
        port = int(m.group(1))

        # 1. at least 1,000 series.
        ref, _ = scrape(port)
        series = len(ref)
        check(series >= 1000, f"only {series} series (want >= 1000)")
        check(f'perfspec_target_up{{set="tp0",team="load",target="system"}}' in ref, "no perfspec_target_up for tp0")
        failed = sum(k.startswith("perfspec_event_failed_info") for k in ref)
        fd0, open0 = fds(proc.pid), ref["perfspec_exporter_open_fds"]
        want = stable(ref)

        # 2. concurrent scrapes.
        stale = [0]
        def scraper(i):
            prev = None
            for n in range(scrapes_n):
                cur, _ = scrape(port)
                got = stable(cur) - {"perfspec_exporter_stale"}
                stale[0] += "perfspec_exporter_stale" in cur
                check(got == want, f"thread {i} scrape {n}: series differ: missing {sorted(want - got)[:3]}, "
                                   f"extra {sorted(got - want)[:3]}")
                if prev:
                    never_back(prev, cur, f"thread {i} scrape {n}")
                prev = cur
        t0 = time.monotonic()
        join(*in_threads(threads_n, scraper), "concurrent scrapes")
        concurrent_s = time.monotonic() - t0

        # 3. garbage clients while 4 threads scrape.
        stop, latencies, replies = threading.Event(), [], {}
        def normal(i):
            while not stop.is_set():
                latencies.append(scrape(port)[1])
        attackers = in_threads(1, lambda i: garbage(port, stop, held, replies, a.silent))
        scrapers = in_threads(4, normal)
        stop.wait(attack_s)
        stop.set()
        join(*attackers, "garbage clients")
        join(*scrapers, "scrapes under attack")
        check(proc.poll() is None, f"the exporter exited under attack (status {proc.returncode})")
        worst = max(latencies) if latencies else float("inf")
        check(worst < 3.0, f"a normal scrape took {worst:.2f} s under attack")
        check(replies.get("GET /nosuch", "").startswith("HTTP/1.1 404"), f"GET /nosuch: {replies.get('GET /nosuch')}")

        # 4. SIGHUP while 10 threads scrape.
        ok0 = scrape(port)[0]['perfspec_exporter_reloads_total{result="success"}']
        def extra(key):
            return 'set="extra"' in key
        def reload_scraper(i):
            prev = None
            while not stop.is_set():
                cur, _ = scrape(port)
                missing = want - stable(cur)
                check(not missing, f"during reloads: series missing: {sorted(missing)[:3]}")
                if prev:
                    never_back(prev, cur, "during reloads", extra)
                prev = cur
        stop.clear()
        scrapers = in_threads(10, reload_scraper)
        for n in range(reloads_n):
            write(cfg, config_text(with_extra if n % 2 == 0 else base))
            done = count("reloaded")
            proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 10
            while count("reloaded") == done and time.monotonic() < deadline and not scrapers[1]:
                time.sleep(0.02)
            if scrapers[1]:
                break  # join() reports the scrapers' failure
            check(count("reloaded") > done, f"reload {n + 1} not done in 10 s ({count('reload failed')} failed)")
            time.sleep(0.1)
        stop.set()
        join(*scrapers, "scrapes during reloads")
        after = scrape(port)[0]
        ok1 = after['perfspec_exporter_reloads_total{result="success"}']
        check(ok1 - ok0 == reloads_n, f"reloads_total{{result=\"success\"}} grew by {ok1 - ok0}, not {reloads_n}")
        check(not any(extra(k) for k in after), "the extra set's series stayed after its removal")
        # A bad config keeps the old one; fixing it reloads.
        write(cfg, config_text(base[:-1] + [(base[-1][0], list(base[-1][1]) + ["cyclez"])]))
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while count("reload failed") == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        bad = scrape(port)[0]
        check(count("reload failed") == 1, "no 'reload failed' after a bad config")
        check(bad["perfspec_exporter_last_reload_success"] == 0, "last_reload_success is not 0 after a bad config")
        check(any(k.startswith("perfspec_exporter_config_error_info{") for k in bad), "no config_error_info")
        check(stable(bad) == want, "the series changed after a failed reload")
        write(cfg, config_text(base))
        done = count("reloaded")
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while count("reloaded") == done and time.monotonic() < deadline:
            time.sleep(0.02)
        fixed = scrape(port)[0]
        check(fixed["perfspec_exporter_last_reload_success"] == 1, "last_reload_success is not 1 after the fix")
        check(not any(k.startswith("perfspec_exporter_config_error_info") for k in fixed), "config_error_info stays")
        check(stable(fixed) == want, "the series after the fix are not the first config's")

        # 5. no fd growth (the held connection closed, a moment for the exporter to close its side).
        for s in held:
            s.close()
        time.sleep(1.5)
        fd1, open1 = fds(proc.pid), scrape(port)[0]["perfspec_exporter_open_fds"]
        check(fd1 - fd0 <= 2, f"/proc/{proc.pid}/fd grew from {fd0} to {fd1}")
        check(open1 - open0 <= 2, f"perfspec_exporter_open_fds grew from {open0:.0f} to {open1:.0f}")

        # 6. SIGTERM.
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(5)
        except subprocess.TimeoutExpired:
            raise Failure("no exit within 5 s of SIGTERM")
        exit_s = time.monotonic() - t0
        time.sleep(0.1)  # the stderr reader's last lines
        check(status == 0, f"exit status {status} after SIGTERM")
        for bad_text in ("terminate called", "Sanitizer", "runtime error"):
            check(bad_text not in stderr_text(), f"stderr has {bad_text!r}")
        check(not [f for f in os.listdir(tmp.name) if f.startswith("core")], "a core file was written")
    except Failure as e:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        time.sleep(0.1)
        print(f"load_test: FAIL: {e}\n--- exporter stderr ---\n{stderr_text()}", file=sys.stderr)
        return 1
    finally:
        timer.cancel()
        for s in held:
            s.close()
    print(f"load_test: ok in {time.monotonic() - started:.1f} s: {series} series ({len(tps)} tracepoints, "
          f"{len(SOFTWARE) + len(renamed)} software events, {failed} failed), {threads_n}x{scrapes_n} concurrent scrapes in {concurrent_s:.2f} s "
          f"({stale[0]} stale), worst scrape under attack {worst:.3f} s over {len(latencies)} scrapes, "
          f"{reloads_n} reloads, exit {exit_s:.2f} s, fds {fd0} -> {fd1} (open_fds {open0:.0f} -> {open1:.0f})")
    print("load_test: garbage replies: " + ", ".join(f"{k}: {v!r}" for k, v in sorted(replies.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
