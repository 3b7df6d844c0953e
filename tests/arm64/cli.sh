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
echo "== arm64 CLI suite"
# The pprof reader (Debian's golang-go, 100 MB) is not in the guest's userland: the host's suite reads
# the same profile, which the arm64 build writes by the same code.
PERFSPEC=/usr/bin/perfspec PERFSPEC_WORKLOAD=$build/tests/perfspec_workload PERFSPEC_CACHE_DIR=/tmp/perfspec-cache \
  PERFSPEC_EVENTS_DIR= PERFSPEC_NO_GO="not in the arm64 guest's userland" bash "$src/tests/cli/run.sh"
