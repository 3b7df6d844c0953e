#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's test command and the Debian package on another Debian release, in a chroot:
#   scripts/test-release.sh RELEASE     (trixie: Debian 13; bookworm: Debian 12)
# 1. a root of RELEASE kept in $PERFSPEC_ROOTS/RELEASE-build (default /var/cache/perfspec/roots; made
#    by scripts/debian-root.sh on first use, then kept with the packages scripts/setup.sh installed
#    there and its ccache), holding a copy of this tree (what git tracks or would track, edits
#    included) beside ../shared;
# 2. there: scripts/test.sh (setup, release build, its tests, the examples), then scripts/package.sh;
# 3. here: that release's package installed in a clean root of it (tests/package/package_test.py).
# Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: scripts/test-release.sh RELEASE}
roots=${PERFSPEC_ROOTS:-/var/cache/perfspec/roots}
root=$roots/$release-build
shared=$(cd ../shared && pwd)
echo "== $release: the release suite in a $release root ($(date +%T))"
[ -x "$root/usr/bin/apt-get" ] || scripts/debian-root.sh make "$release" "$root"
rm -rf "$root/perfspec/main"
mkdir -p "$root/perfspec/main" "$root/perfspec/shared"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$root/perfspec/main"
# the copy has no .git: the revision the exporter reports is this tree's
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || revision=$revision-dirty
scripts/debian-root.sh run "$root" --bind "$shared:/perfspec/shared" -- env PERFSPEC_REVISION="$revision" bash -c '
  set -e
  cd /perfspec/main
  # the root starts without sudo or apt lists: setup.sh runs as root and updates them itself
  PERFSPEC_REQUIRE_ALL=1 scripts/test.sh
  echo "== '"$release"': the package ($(date +%T))"
  scripts/package.sh | tail -n 1'
deb=$(ls "$root"/perfspec/main/build-deb/perfspec_*.deb)
echo "== $release: the package in a clean $release root ($(date +%T))"
python3 tests/package/package_test.py --deb "$deb" --release "$release"
