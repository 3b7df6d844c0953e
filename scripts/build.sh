#!/usr/bin/env bash
# Configure and build one configuration: scripts/build.sh [release|debug|sanitize] (default release).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
  release)  dir=build;          flags=(-DCMAKE_BUILD_TYPE=Release -DPERFSPEC_BENCHMARKS=ON) ;;
  debug)    dir=build-debug;    flags=(-DCMAKE_BUILD_TYPE=Debug) ;;
  sanitize) dir=build-sanitize; flags=(-DCMAKE_BUILD_TYPE=Debug -DPERFSPEC_SANITIZE=ON) ;;
  *) echo "usage: scripts/build.sh [release|debug|sanitize]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" -DPERFSPEC_WERROR=ON >/dev/null
cmake --build "$dir" -j"$(nproc)"
echo "$dir"
