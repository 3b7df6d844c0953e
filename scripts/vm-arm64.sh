#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An emulated arm64 machine with a real PMU driver (QEMU's Arm PMUv3 under TCG) and perfspec inside.
#
#   scripts/vm-arm64.sh [OPTIONS] -- COMMAND ARGS...   run COMMAND in the guest as root, with perfspec on
#                                                      PATH; its output is printed, its status returned
#   scripts/vm-arm64.sh [OPTIONS] --tests              the arm64 suites in the guest: tests/arm64 on
#                                                      QEMU's default machine and under -icount, then
#                                                      the unit suite and the CLI suite
#
# Options: --cpu MODEL (neoverse-n1), --smp N (2), --mem MB (1024), --icount SHIFT (QEMU's -icount:
# the virtual clock advances 2^SHIFT ns an instruction, and the PMU counts instructions),
# --timeout SECONDS (900), --no-build (use build-arm64 as it is), --perf (Debian's arm64 perf in the
# guest too, a reference on the same PMU: bookworm's 6.1 as /usr/bin/perf, trixie's 6.12 as
# /usr/bin/perf-6.12), --with-source (the source tree's
# tests/, docs/ and completions/, ../shared/pmu-events, build-arm64/tests and build-arm64/bench at
# their own paths: what the suites read, and the benchmarks), --userland (Debian's arm64 bash, dash,
# coreutils, python3, util-linux and the rest of what tests/cli/run.sh runs, over busybox's applets).
#
# On first use it installs its packages (scripts/setup-arm64.sh) and fetches Debian's arm64 cloud
# kernel and busybox with apt into a cache outside the repository (PERFSPEC_VM_CACHE, default
# ~/.cache/perfspec/vm-arm64). The guest has no network and no disk: the arm64 build (installed as
# /usr), its libraries, the tests and the command are in its initramfs. Standard output and standard
# error come back on two virtio serial ports, the exit status on a third; the kernel's console goes to
# a log, printed when the guest fails to report a status. Statuses of its own: 124 on the timeout,
# 125 when the guest reported nothing, 2 on bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cpu=neoverse-n1 smp=2 mem=1024 icount="" timeout=900 build=1 perf=0 with_source=0 userland=0 mode=""
usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu=${2:?--cpu needs a model}; shift 2 ;;
    --smp) smp=${2:?--smp needs a number}; shift 2 ;;
    --mem) mem=${2:?--mem needs megabytes}; shift 2 ;;
    --icount) icount=${2:?--icount needs a shift}; shift 2 ;;
    --timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
    --no-build) build=0; shift ;;
    --perf) perf=1; shift ;;
    --with-source) with_source=1; shift ;;
    --userland) userland=1; shift ;;
    --tests) mode=tests; shift ;;
    --) shift; mode=${mode:-command}; break ;;
    -h|--help) usage ;;
    *) echo "vm-arm64: unknown option '$1'" >&2; usage ;;
  esac
done
case "$mode" in
  command) [ $# -gt 0 ] || { echo "vm-arm64: no command after --" >&2; usage; } ;;
  tests)
    # Two machines: QEMU's default (the cycle counter follows the host's clock, no inst_retired) and
    # -icount shift=0 on one CPU (deterministic: a cycle is an instruction, inst_retired exists).
    [ $build = 1 ] && flock /tmp/perfspec-build.lock "$root/scripts/build.sh" arm64 >/dev/null
    status=0
    # Each stage's output is kept too: what failed is said again at the end, where a log cut to its
    # last lines (CI's report) still shows it.
    log=$(mktemp)
    stage() { "$0" "$@" 2>&1 | tee -a "$log"; }
    echo "== arm64 tests: $cpu, $smp CPUs ($(date +%T))" >&2
    # With Debian's arm64 perf 6.1 and 6.12 as references (tests/arm64/run.sh compares attrs and counts).
    inner=(--no-build --cpu "$cpu" --mem "$mem" --timeout "$timeout")
    stage "${inner[@]}" --perf --smp "$smp" -- sh /opt/perfspec-tests/run.sh || status=1
    echo "== arm64 tests: $cpu, 1 CPU, -icount shift=0 ($(date +%T))" >&2
    stage "${inner[@]}" --perf --smp 1 --icount 0 -- sh /opt/perfspec-tests/run.sh || status=1
    echo "== arm64 tests: the unit suite in the guest, $smp CPUs ($(date +%T))" >&2
    stage "${inner[@]}" --smp "$smp" --with-source --mem 2048 -- sh /opt/perfspec-tests/unit.sh "$root/build-arm64" "$root" ||
      status=1
    echo "== arm64 tests: the CLI suite in the guest, $smp CPUs ($(date +%T))" >&2
    # (its 800 checks under emulation passed 900 s on a slower CI machine: twice the time given)
    stage "${inner[@]}" --timeout $((timeout * 2)) --smp "$smp" --with-source --userland --mem 2048 -- \
      bash /opt/perfspec-tests/cli.sh "$root/build-arm64" "$root" || status=1
    if [ $status != 0 ]; then
      # doctest's failed checks (the test case, the check, its values) and the suites' FAIL lines
      echo "== arm64 tests: what failed"
      awk '/^TEST CASE:/ { tc = $0 } /ERROR:/ { if (tc != "") print tc; tc = ""; print }
           /^  values:|^FAIL |^not ok|timed out/ { print }' "$log" | head -n 60
    fi
    rm -f "$log"
    exit $status
    ;;
  *) usage ;;
esac
for v in "$smp" "$mem" "$timeout" ${icount:+"$icount"}; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "vm-arm64: '$v' is not a number" >&2; exit 2; }
done

"$root/scripts/setup-arm64.sh"

# Debian's arm64 cloud kernel (virtio and the PMU driver built in or as modules) and a static busybox.
cache=${PERFSPEC_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/perfspec/vm-arm64}
fetch() {
  local dl=$cache/download
  rm -rf "$dl" "$cache/x"
  mkdir -p "$dl"
  echo "vm-arm64: fetching Debian's arm64 kernel and busybox into $cache" >&2
  (cd "$dl" && apt-get -q -o APT::Sandbox::User=root download linux-image-cloud-arm64:arm64 busybox-static:arm64 >/dev/null)
  # The metapackage names the versioned image it depends on.
  local image
  image=$(dpkg-deb -f "$dl"/linux-image-cloud-arm64_*.deb Depends | grep -o 'linux-image-[^ ,]*-cloud-arm64' | head -n 1)
  (cd "$dl" && apt-get -q -o APT::Sandbox::User=root download "$image:arm64" >/dev/null)
  dpkg-deb -x "$dl/${image}"_*.deb "$cache/x"
  dpkg-deb -x "$dl"/busybox-static_*.deb "$cache/x"
  echo "$image $(dpkg-deb -f "$dl/${image}"_*.deb Version)" >"$cache/kernel-version"
  rm -rf "$dl"
}
[ -s "$cache/kernel-version" ] && [ -x "$cache/x/bin/busybox" ] || fetch
kernel=$(ls "$cache"/x/boot/vmlinuz-* | head -n 1)
# unpack DEST [APT-OPTION...] -- PACKAGE...: the packages and the libraries of their dependency
# closure (its lib* and zlib1g packages), downloaded with apt and unpacked into DEST, never installed
# (the host has its own); DEST/version is the first package's version. Without options: the host's
# apt, whose arm64 architecture scripts/setup-arm64.sh added (name the packages :arm64).
unpack() {
  local dest=$1 o=() libs
  shift
  while [ "$1" != -- ]; do o+=("$1"); shift; done
  shift
  local dl=$dest.download
  rm -rf "$dl" "$dest"
  mkdir -p "$dl"
  libs=$(apt-cache "${o[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
           --no-replaces --no-enhances "$@" | sed -n 's/^\(\(lib[^ ]*\|zlib1g\)\(:arm64\)\{0,1\}\)$/\1/p' | sort -u)
  (cd "$dl" && apt-get "${o[@]}" -q -o APT::Sandbox::User=root download "$@" $libs >/dev/null)
  for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$dest"; done
  dpkg-deb -f "$dl/${1%:*}"_*.deb Version >"$dest/version"
  rm -rf "$dl"
}
# Debian's arm64 perf 6.1 (bookworm's, as the host's apt has it).
if [ $perf = 1 ] && [ ! -s "$cache/perf/version" ]; then
  echo "vm-arm64: fetching Debian's arm64 perf and its libraries into $cache/perf" >&2
  unpack "$cache/perf" -- linux-perf:arm64
fi
# perf 6.12, the project's reference: Debian trixie's arm64 linux-perf, through apt with a source list
# and state of its own (the host's apt is not touched). Trixie's C library is newer than the guest's,
# so it runs with its own loader and libraries from /opt/perf-6.12, as /usr/bin/perf-6.12.
if [ $perf = 1 ] && [ ! -s "$cache/perf-6.12/version" ]; then
  echo "vm-arm64: fetching Debian trixie's arm64 perf 6.12 and its libraries into $cache/perf-6.12" >&2
  apt=$cache/apt-trixie
  rm -rf "$apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
  echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    >"$apt/sources.list"
  trixie=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt/lists" -o Dir::State::Status=/dev/null -o "Dir::Cache=$apt/cache"
          -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Sandbox::User=root)
  apt-get "${trixie[@]}" -q update >/dev/null
  unpack "$cache/perf-6.12" "${trixie[@]}" -- linux-perf
  rm -rf "$apt"
fi
# What the CLI suite runs beside perfspec, from Debian's arm64 packages. The list is the suite's: a
# change of it is a change of this line.
userland_pkgs=(bash dash coreutils diffutils findutils grep sed mawk procps util-linux groff-base curl python3-minimal
               python3.11-minimal libpython3.11-minimal libpython3.11-stdlib)
if [ $userland = 1 ] && [ "$(cat "$cache/userland/packages" 2>/dev/null)" != "${userland_pkgs[*]}" ]; then
  echo "vm-arm64: fetching Debian's arm64 ${userland_pkgs[*]} into $cache/userland" >&2
  unpack "$cache/userland" -- "${userland_pkgs[@]/%/:arm64}"
  rm -rf "$cache/userland/usr/share/"{doc,man,info,locale,lintian,bash-completion}
  echo "${userland_pkgs[*]}" >"$cache/userland/packages"
fi
modules=$(ls -d "$cache"/x/lib/modules/* | head -n 1)/kernel/drivers

# The arm64 build: the CLI, the library, the event tables, the arm64 tests.
bdir=$root/build-arm64
if [ $build = 1 ]; then
  flock /tmp/perfspec-build.lock "$root/scripts/build.sh" arm64 >/dev/null
fi
[ -x "$bdir/perfspec" ] || { echo "vm-arm64: no arm64 build in $bdir (run scripts/build.sh arm64)" >&2; exit 2; }

# The guest's file system, laid out as Debian installs it (/bin, /sbin and /lib in /usr), with every
# shared library its programs need.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/root
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib/modules,usr/lib/aarch64-linux-gnu,dev,proc,sys,tmp,root,opt/perfspec-tests,job}
for d in bin sbin lib; do ln -s "usr/$d" "$stage/$d"; done
# The targets CMake relinks for installation (their build-tree RPATH differs from the installed one)
# are relinked first: `cmake --install` only copies (the Makefile generator's preinstall step).
if grep -q '^preinstall:' "$bdir/Makefile" 2>/dev/null; then
  flock /tmp/perfspec-build.lock cmake --build "$bdir" --target preinstall >/dev/null
fi
DESTDIR=$stage cmake --install "$bdir" --prefix /usr >/dev/null
cp "$cache/x/bin/busybox" "$stage/bin/"
# Debian's programs and python's library, where the init's `busybox --install` leaves them (it never
# replaces a file); the libraries they load come with perfspec's below.
if [ $userland = 1 ]; then
  for d in bin sbin usr/bin usr/sbin usr/lib/python3.11 usr/share etc; do
    mkdir -p "$stage/$d"
    cp -a "$cache/userland/$d/." "$stage/$d/"
  done
  ln -s mawk "$stage/usr/bin/awk"  # Debian's awk alternative, which unpacking does not make
fi
for m in virtio/virtio_ring virtio/virtio virtio/virtio_mmio char/virtio_console; do
  cp "$modules/$m.ko" "$stage/lib/modules/"
done
cp "$root"/tests/arm64/*.sh "$stage/opt/perfspec-tests/"
for t in perfspec_arm64_tests perfspec_arm64_spin; do
  if [ -x "$bdir/tests/$t" ]; then cp "$bdir/tests/$t" "$stage/opt/perfspec-tests/"; fi
done
if [ $with_source = 1 ]; then
  mkdir -p "$stage$root" "$stage$bdir"
  cp -a "$root/tests" "$root/docs" "$root/completions" "$stage$root/"
  if [ -d "$root/../shared/pmu-events" ]; then
    shared=$(cd "$root/../shared" && pwd)
    mkdir -p "$stage$shared"
    cp -a "$shared/pmu-events" "$stage$shared/"
  fi
  for d in tests bench; do
    mkdir -p "$stage$bdir/$d"
    [ ! -d "$bdir/$d" ] || find "$bdir/$d" -maxdepth 1 -type f -executable -exec cp {} "$stage$bdir/$d/" \;
  done
fi
needed() { aarch64-linux-gnu-readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
# stage_libs DEST LIBDIR... -- FILE...: every shared library the ELF files FILE need, and those need,
# from the first LIBDIR that has it, copied into DEST once; one already in the guest stays where it is.
stage_libs() {
  local dest=$1 dirs=() queue=() f lib d found
  shift
  while [ "$1" != -- ]; do dirs+=("$1"); shift; done
  shift
  queue=("$@")
  local -A have=()
  while [ ${#queue[@]} -gt 0 ]; do
    f=${queue[0]}
    queue=("${queue[@]:1}")
    for lib in $(needed "$f"); do
      [ -n "${have[$lib]:-}" ] && continue
      have[$lib]=1
      found=""
      for d in "${dirs[@]}"; do
        [ -e "$d/$lib" ] && { found=$d/$lib; break; }
      done
      [ -n "$found" ] || { echo "vm-arm64: $f needs $lib, found in none of ${dirs[*]}" >&2; exit 2; }
      [[ "$found" == "$stage"/* ]] && continue
      cp -L "$found" "$dest/$lib"
      queue+=("$dest/$lib")
    done
  done
}
libdirs=("$stage/usr/lib" "$stage/usr/lib/aarch64-linux-gnu" /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
if [ $perf = 1 ]; then
  cp "$cache/perf/usr/bin/perf" "$stage/usr/bin/perf"
  libdirs+=("$cache/perf/lib/aarch64-linux-gnu" "$cache/perf/usr/lib/aarch64-linux-gnu")
fi
[ $userland = 0 ] || libdirs+=("$cache/userland/lib/aarch64-linux-gnu" "$cache/userland/usr/lib/aarch64-linux-gnu")
# libpfm4 is opened with dlopen by its provider: no program names it.
cp -L /lib/aarch64-linux-gnu/libpfm.so.4 "$stage/usr/lib/aarch64-linux-gnu/"
elves=()
while IFS= read -r f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && elves+=("$f")
done < <(find "$stage/usr/bin" "$stage/opt" -type f; find "$stage/usr/lib" -maxdepth 2 -type f -name '*.so*'
          [ $userland = 0 ] || find "$stage/usr/sbin" "$stage/usr/lib/python3.11/lib-dynload" -type f
          [ $with_source = 0 ] || find "$stage$bdir/tests" "$stage$bdir/bench" -type f)
stage_libs "$stage/usr/lib/aarch64-linux-gnu" "${libdirs[@]}" -- "${elves[@]}"
cp -L /lib/ld-linux-aarch64.so.1 "$stage/lib/"
# perf 6.12 with trixie's own loader and libraries, apart from the guest's.
if [ $perf = 1 ]; then
  mkdir -p "$stage/opt/perf-6.12/lib"
  cp "$cache/perf-6.12/usr/bin/perf" "$stage/opt/perf-6.12/perf"
  cp -L "$cache/perf-6.12/usr/lib/ld-linux-aarch64.so.1" "$stage/opt/perf-6.12/lib/"
  stage_libs "$stage/opt/perf-6.12/lib" "$cache/perf-6.12/usr/lib/aarch64-linux-gnu" -- "$stage/opt/perf-6.12/perf"
  printf '#!/bin/sh\nexec /opt/perf-6.12/lib/ld-linux-aarch64.so.1 --library-path /opt/perf-6.12/lib /opt/perf-6.12/perf "$@"\n' \
    >"$stage/usr/bin/perf-6.12"
  chmod +x "$stage/usr/bin/perf-6.12"
fi

cat >"$stage/init" <<'EOF'
#!/bin/busybox sh
# The guest's first and only process tree: mount, find the ports, run /job/cmd, report, power off.
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
ln -s /proc/self/fd /dev/fd
for n in 0:stdin 1:stdout 2:stderr; do ln -s "/proc/self/fd/${n%%:*}" "/dev/${n#*:}"; done
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
echo 1 >/proc/sys/kernel/printk
# The loopback interface up, as every init brings it up (tests serve HTTP on 127.0.0.1).
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null || :
for m in virtio_ring virtio virtio_mmio virtio_console; do insmod /lib/modules/$m.ko; done
i=0
while [ "$(cat /sys/class/virtio-ports/*/name 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 1000 ]; do
  usleep 10000
  i=$((i + 1))
done
for p in /sys/class/virtio-ports/*; do ln -s "/dev/${p##*/}" "/dev/port-$(cat "$p/name")"; done
cd /root
sh /job/cmd </dev/null >/dev/port-stdout 2>/dev/port-stderr
echo $? >/dev/port-status
sync
poweroff -f
EOF
chmod +x "$stage/init"
# The command, each argument single-quoted for the guest's shell.
{
  printf 'exec'
  for a in "$@"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done
  printf '\n'
} >"$stage/job/cmd"
(cd "$stage" && find . | cpio -o -H newc --quiet) >"$work/initrd"

out=$work/stdout err=$work/stderr status=$work/status console=$work/console
: >"$out"
: >"$err"
args=(-M virt -cpu "$cpu" -smp "$smp" -m "$mem" -display none -no-reboot -net none
      -kernel "$kernel" -initrd "$work/initrd" -append "console=ttyAMA0 quiet panic=-1"
      -serial "file:$console" -device virtio-serial-device
      -chardev "file,id=out,path=$out" -device virtserialport,chardev=out,name=stdout
      -chardev "file,id=err,path=$err" -device virtserialport,chardev=err,name=stderr
      -chardev "file,id=st,path=$status" -device virtserialport,chardev=st,name=status)
[ -n "$icount" ] && args+=(-icount "shift=$icount")
timeout "$timeout" qemu-system-aarch64 "${args[@]}" &
qpid=$!
tail -c +1 -f --pid=$qpid "$out" &
tpid1=$!
tail -c +1 -f --pid=$qpid "$err" >&2 &
tpid2=$!
set +e
wait $qpid
qrc=$?
wait $tpid1 $tpid2
set -e
if [ $qrc = 124 ]; then
  echo "vm-arm64: the guest did not finish in ${timeout} s; its console said:" >&2
  tail -n 30 "$console" >&2
  exit 124
fi
rc=$(tr -dc 0-9 <"$status" 2>/dev/null || true)
if [ -z "$rc" ]; then
  echo "vm-arm64: the guest reported no exit status (qemu exited with $qrc); its console said:" >&2
  tail -n 30 "$console" >&2
  exit 125
fi
exit "$rc"
