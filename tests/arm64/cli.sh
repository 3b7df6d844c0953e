#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CLI suite (tests/cli/run.sh) on the arm64 build, inside scripts/vm-arm64.sh's guest (started with
# --with-source --userland: the source tree at its own path, Debian's bash, coreutils and python3):
#   bash cli.sh BUILD_DIR SOURCE_DIR
# As ctest runs it on the host (tests/CMakeLists.txt), with the installed perfspec, as root, on the
# guest's own PMUs: real counting, sampling and tracefs run here as they do there.
set -u
build=${1:?build folder}
src=${2:?source folder}
mkdir -p /tmp/perfspec-cache
# A controller enabled below the cgroup2 root, as systemd does at boot: without one the kernel gives
# new cgroups no perf_event state (tests/arm64/run.sh checks what perfspec says then).
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
# record and top under a kernel limit below perf's default frequency, as the emulated kernel lowers it
# itself (tests/cli/sample_rate.sh; status 77 when the kernel moved the limit during it)
PERFSPEC=/usr/bin/perfspec bash "$src/tests/cli/sample_rate.sh"
[ $? = 1 ] && sample_rate_failed=1
# Then no more lowering: the emulated CPU's sampling interrupts are slow enough for the kernel to lower
# kernel.perf_event_max_sample_rate under the suite (to 3250 in one CI run), and its checks of exact
# standard error assume perf's default 4000 Hz (perf_cpu_time_max_percent 0 turns the heuristic off).
# The limit is put at the kernel's default first (it cannot be written once the heuristic is off).
echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
# No address-space randomization: QEMU 7.2 finds code it translated by its virtual address too, so that
# with a new layout at each start every program's libraries are translated anew (the suite starts some
# 3,000 programs; in this guest it took 499 s with randomization and 386 s without). The host's suite
# runs randomized, and a position-independent program still loads at a base of its own here.
echo 0 >/proc/sys/kernel/randomize_va_space
echo "== arm64 CLI suite"
# The pprof reader (Debian's golang-go, 100 MB) is not in the guest's userland: the host's suite reads
# the same profile, which the arm64 build writes by the same code.
PERFSPEC=/usr/bin/perfspec PERFSPEC_WORKLOAD=$build/tests/perfspec_workload PERFSPEC_CACHE_DIR=/tmp/perfspec-cache \
  PERFSPEC_EVENTS_DIR= PERFSPEC_NO_GO="not in the arm64 guest's userland" bash "$src/tests/cli/run.sh"
status=$?
[ -z "${sample_rate_failed:-}" ] || status=1
exit $status
