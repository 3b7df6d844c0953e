#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure and build one configuration: scripts/build.sh [release|debug|sanitize|tsan|arm64] [TARGET...]
# (default release, every target). arm64 is a cross build (cmake/aarch64-linux-gnu.cmake; its packages:
# scripts/setup-arm64.sh).
# The sanitizer builds leave out the installed event tables (PERFSPEC_EVENT_TABLES=OFF): their tests do
# not use them, and taking them out of the kernel tarball costs each build folder about 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
  release)  dir=build;          flags=(-DCMAKE_BUILD_TYPE=Release -DPERFSPEC_BENCHMARKS=ON) ;;
  debug)    dir=build-debug;    flags=(-DCMAKE_BUILD_TYPE=Debug) ;;
  sanitize) dir=build-sanitize; flags=(-DCMAKE_BUILD_TYPE=Debug -DPERFSPEC_SANITIZE=ON -DPERFSPEC_EVENT_TABLES=OFF) ;;
  tsan)     dir=build-tsan;     flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFSPEC_TSAN=ON -DPERFSPEC_EVENT_TABLES=OFF) ;;
  arm64)    dir=build-arm64;    flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=$PWD/cmake/aarch64-linux-gnu.cmake
                                   -DPERFSPEC_BENCHMARKS=ON) ;;
  *) echo "usage: scripts/build.sh [release|debug|sanitize|tsan|arm64]" >&2; exit 2 ;;
esac
# ccache (scripts/setup.sh installs it) keeps each compiled object: a build of sources compiled before,
# in this clone or another (paths are taken relative to the clone), is a lookup. The debug information
# of such an object names the folder it was first compiled in. PERFSPEC_CCACHE=0 compiles everything.
launcher=()
if command -v ccache >/dev/null && [ "${PERFSPEC_CCACHE:-1}" = 1 ]; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
cmake -S . -B "$dir" "${flags[@]}" "${launcher[@]}" -DPERFSPEC_WERROR=ON >/dev/null
shift || true
cmake --build "$dir" -j"$(nproc)" ${1:+--target "$@"}
echo "$dir"
