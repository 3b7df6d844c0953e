#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package of this machine's release: scripts/package.sh [BUILD-DIR] (default build-deb).
# A release build for the prefix /usr (the package's paths), without tests or benchmarks, then CPack's
# DEB generator (cmake/Package.cmake). Prints the .deb's path last.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-deb}
launcher=()
if command -v ccache >/dev/null && [ "${PERFSPEC_CCACHE:-1}" = 1 ]; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
# the event tables are required: a package without them would resolve no vendor event name
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
  -DPERFSPEC_EVENT_TABLES=ON -DPERFSPEC_WERROR=ON "${launcher[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
rm -f "$dir"/perfspec_*.deb
(cd "$dir" && cpack -G DEB >/dev/null) || { echo "package: cpack failed (see $dir/_CPack_Packages)" >&2; exit 1; }
ls "$PWD/$dir"/perfspec_*.deb
