#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Debian package installed as an administrator installs it: `apt-get install ./perfspec_*.deb` in a
clean root of the release it was built for (scripts/debian-root.sh: debootstrap's minbase), then used
there.

1. apt installs it with the dependencies dpkg-shlibdeps named (nothing else is in the root); dpkg lists
   /etc/perfspec/exporter.toml and /etc/default/perfspec-exporter as conffiles; ldconfig knows
   libperfspec.so.0; the unit is enabled (deb-systemd-helper) and names /usr/bin/perfspec.
2. `perfspec stat` counts a command; perf's event tables resolve a vendor name with no --events-dir;
   `perfspec exporter --check` passes on the example configuration.
3. The exporter of the package, as its unit runs it (an unprivileged user with CAP_PERFMON), serves
   /metrics over TLS with basic authentication and client certificates (tests/fixtures/tls) to this
   machine's Prometheus, with the package's rules loaded: scraped (up 1, the example's series stored),
   refused with a wrong password, and the PerfspecExporterDown alert fires for that job.
4. `systemd-analyze verify` passes on the installed unit (systemd and man-db installed after the
   package, as every real system has them); the package is purged: its files and configuration gone.

Exit 0: passed; 77: skipped (not root, no Prometheus); else failed.
usage: package_test.py --deb build-deb/perfspec_0.1.0-1~deb12_amd64.deb --release bookworm [--root DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "exporter"))
import prometheus_test as pt  # noqa: E402  (Prometheus, tls_job, wait_for, check)

DEBIAN_ROOT = os.path.join(REPO, "scripts", "debian-root.sh")
TLS = os.path.join(REPO, "tests", "fixtures", "tls")
FIXTURES = os.path.join(REPO, "tests", "fixtures")
SKIPPED = 1 if os.environ.get("PERFSPEC_REQUIRE_ALL") == "1" else 77
# the unit's user: DynamicUser with CAP_PERFMON and CAP_SYS_PTRACE (dist/perfspec-exporter.service.in)
AS_THE_UNIT = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               "--inh-caps=+perfmon,+sys_ptrace", "--ambient-caps=+perfmon,+sys_ptrace"]


def run_in(root, *cmd, binds=()):
    """CMD inside the root; (status, stdout, stderr)."""
    argv = [DEBIAN_ROOT, "run", root]
    for b in binds:
        argv += ["--bind", b]
    st = subprocess.run(argv + ["--"] + list(cmd), capture_output=True, text=True)
    return st.returncode, st.stdout, st.stderr


def apt(root, *args):
    return run_in(root, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-y", "-q", *args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deb", required=True)
    ap.add_argument("--release", required=True, help="the Debian release the package is for: bookworm, trixie")
    ap.add_argument("--root", help="where the root is made (default /var/tmp/perfspec-package-RELEASE)")
    ap.add_argument("--prometheus", default=shutil.which("prometheus") or "/usr/bin/prometheus")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: a Debian root needs root (debootstrap, chroot)")
        return SKIPPED
    if not os.path.exists(args.prometheus):
        print(f"SKIP: no Prometheus server at {args.prometheus} (Debian package 'prometheus')")
        return SKIPPED
    deb = os.path.abspath(args.deb)
    root = args.root or f"/var/tmp/perfspec-package-{args.release}"
    subprocess.run([DEBIAN_ROOT, "make", args.release, root], check=True)
    name = os.path.basename(deb)
    shutil.copy(deb, os.path.join(root, "tmp", name))

    # 1. installed by apt, the dependencies fetched from the release's archive
    with open(os.path.join(root, "etc", "os-release")) as f:
        version_id = re.search(r'(?m)^VERSION_ID="?(\d+)', f.read()).group(1)
    pt.check(f"~deb{version_id}_" in name, f"{name} is for Debian {version_id} ({args.release})")
    st, out, err = apt(root, "update")
    pt.check(st == 0, f"apt-get update in the {args.release} root: {err.strip()[-300:]}")
    st, out, err = apt(root, "install", f"/tmp/{name}")
    pt.check(st == 0, f"apt-get install ./{name}: status {st} {err.strip()[-500:]}")
    if st != 0:
        print(out[-2000:])
        return 1
    _, status, _ = run_in(root, "dpkg-query", "-W", "-f=${Status} ${Version}\n${Conffiles}\n", "perfspec")
    lines = status.splitlines()
    pt.check(lines[0].startswith("install ok installed 0.1.0-1~deb"), f"dpkg: {lines[0]}")
    conffiles = sorted(l.split()[0] for l in lines[1:] if l.strip())
    pt.check(conffiles == ["/etc/default/perfspec-exporter", "/etc/perfspec/exporter.toml"],
             f"conffiles: {conffiles}")
    _, cache, _ = run_in(root, "ldconfig", "-p")
    pt.check("libperfspec.so.0 " in cache, "ldconfig's cache has libperfspec.so.0 (the trigger ran)")
    unit = os.path.join(root, "usr/lib/systemd/system/perfspec-exporter.service")
    with open(unit) as f:
        text = f.read()
    pt.check("ExecStart=/usr/bin/perfspec exporter --config /etc/perfspec/exporter.toml $ARGS\n" in text,
             "the unit names /usr/bin/perfspec and /etc/perfspec/exporter.toml")
    pt.check(os.path.islink(os.path.join(root, "etc/systemd/system/multi-user.target.wants/perfspec-exporter.service")),
             "the unit is enabled (multi-user.target.wants)")
    pt.check(any(os.path.exists(os.path.join(root, "usr/share/man/man1", m)) for m in ("perfspec.1", "perfspec.1.gz")),
             "the man page is installed")

    # 2. the command works there
    st, out, err = run_in(root, "perfspec", "stat", "-x,", "-e", "task-clock,page-faults", "--", "true")
    counts = {l.split(",")[2]: l.split(",")[0] for l in err.splitlines() if l.count(",") >= 3}
    pt.check(st == 0 and float(counts.get("task-clock", 0)) > 0 and int(counts.get("page-faults", 0)) > 0,
             f"perfspec stat -e task-clock,page-faults -- true: {counts} (status {st})")
    st, out, err = run_in(root, "perfspec", "resolve", "--sysfs", "/fixtures/intel_skx", "--cpuid",
                          "GenuineIntel-6-55-4", "--no-libpfm4", "mem_load_retired.l1_miss",
                          binds=[f"{FIXTURES}:/fixtures"])
    config = re.search(r"(?m)^  config +(\S+)$", out)
    pt.check(st == 0 and config is not None and config.group(1) == "0x8d1",
             f"mem_load_retired.l1_miss resolves from the installed tables: config "
             f"{config.group(1) if config else (out + err).strip()[-300:]}")
    st, out, err = run_in(root, "perfspec", "exporter", "--check", "--config", "/etc/perfspec/exporter.toml")
    pt.check(st == 0 and re.fullmatch(r"/etc/perfspec/exporter\.toml: \d+ sets, \d+ events, \d+ metrics\n", out),
             f"perfspec exporter --check on the example configuration: {out.strip()} {err.strip()}")

    # 3. served over TLS with basic authentication, as the unit runs it, to Prometheus. The certificates
    # in /etc/perfspec/tls; the private key where systemd's LoadCredential= puts it for the unit's dynamic
    # user (docs/exporter.md), readable by that user alone.
    work = tempfile.mkdtemp(prefix="perfspec-package-")
    etc_tls = os.path.join(root, "etc/perfspec/tls")
    creds = os.path.join(root, "run/credentials/perfspec-exporter.service")
    os.makedirs(etc_tls, exist_ok=True)
    os.makedirs(creds, exist_ok=True)
    for f in ("ca.crt", "server.crt"):
        shutil.copy(os.path.join(TLS, f), etc_tls)
    shutil.copy(os.path.join(TLS, "server.key"), creds)
    os.chown(os.path.join(creds, "server.key"), 65534, 65534)
    os.chmod(os.path.join(creds, "server.key"), 0o400)
    with open(os.path.join(TLS, "web.yml")) as f, open(os.path.join(etc_tls, "web.yml"), "w") as out:
        out.write(f.read().replace("key_file: server.key",
                                   "key_file: /run/credentials/perfspec-exporter.service/server.key"))
    log = open(os.path.join(work, "exporter.log"), "w+")
    exporter = subprocess.Popen(
        [DEBIAN_ROOT, "run", root, "--"] + AS_THE_UNIT +
        ["perfspec", "exporter", "--config", "/etc/perfspec/exporter.toml", "--listen", "127.0.0.1:0",
         "--web.config.file", "/etc/perfspec/tls/web.yml"], stdout=log, stderr=log)
    prom = None
    try:
        def port():
            log.seek(0)
            m = re.search(r"(?m)^perfspec exporter: serving 127\.0\.0\.1:(\d+)/metrics over TLS", log.read())
            if m:
                return int(m.group(1))
            if exporter.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the exporter exited {exporter.returncode}: {log.read()}")
            return None
        target = f"127.0.0.1:{pt.wait_for('the packaged exporter', port)}"
        jobs = pt.tls_job("perfspec-packaged", target, "secret") + pt.tls_job("perfspec-packaged-wrong", target, "wrong")
        prom = pt.Prometheus(args.prometheus, None, work, jobs,
                             rules_file=os.path.join(root, "usr/share/perfspec/prometheus/perfspec-rules.yml"))
        up = pt.wait_for("Prometheus to scrape the packaged exporter",
                         lambda: (lambda s: s if s and s[2] == 1 else None)(prom.sample('up{job="perfspec-packaged"}')), 60)
        pt.check(up[2] == 1, f"Prometheus scrapes the packaged exporter over TLS with basic auth at {target}")
        series = pt.wait_for("the example's series", lambda: prom.query(
            'perfspec_event_total{job="perfspec-packaged",set="system",event="context-switches"}') or None, 30)
        pt.check(len(series) >= 1, f"the example configuration's series stored: {len(series)} of context-switches "
                                   f"(one a CPU)")
        info = prom.query('perfspec_exporter_build_info{job="perfspec-packaged"}')
        pt.check(bool(info) and info[0]["metric"].get("version") == "0.1.0",
                 f"perfspec_exporter_build_info: {info[0]['metric'] if info else None}")
        down = pt.wait_for("the wrong password's scrape",
                           lambda: (lambda s: s if s and s[2] == 0 else None)(prom.sample('up{job="perfspec-packaged-wrong"}')), 60)
        pt.check(down[2] == 0, "a wrong password is refused (target down)")
        alert = prom.firing("PerfspecExporterDown", job="perfspec-packaged-wrong")
        pt.check(bool(alert), f"the package's rules loaded: PerfspecExporterDown fires for the job refused")
    finally:
        if prom:
            prom.stop()
        exporter.terminate()
        try:
            exporter.wait(10)
        except subprocess.TimeoutExpired:
            exporter.kill()
    pt.check(exporter.returncode == 0, f"the exporter ends at SIGTERM with status 0 ({exporter.returncode})")

    # 4. the unit checked by systemd, then the package purged
    st, out, err = apt(root, "install", "--no-install-recommends", "systemd", "man-db")
    pt.check(st == 0, f"systemd and man-db installed: {err.strip()[-300:]}")
    st, out, err = run_in(root, "systemd-analyze", "verify", "/usr/lib/systemd/system/perfspec-exporter.service")
    pt.check(st == 0 and not (out + err).strip(), f"systemd-analyze verify: status {st} {(out + err).strip()}")
    st, out, err = apt(root, "purge", "perfspec")
    gone = [p for p in ("usr/bin/perfspec", "etc/perfspec/exporter.toml", "etc/default/perfspec-exporter",
                        "usr/lib/systemd/system/perfspec-exporter.service", "usr/share/perfspec")
            if os.path.lexists(os.path.join(root, p))]
    pt.check(st == 0 and not gone, f"apt-get purge perfspec: status {st}, left {gone}")
    if not pt.failures:
        shutil.rmtree(work, ignore_errors=True)
    print(f"package ({args.release}): {'passed' if not pt.failures else f'{len(pt.failures)} failed'}")
    return 1 if pt.failures else 0


if __name__ == "__main__":
    sys.exit(main())
