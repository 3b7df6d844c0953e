#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Clean Debian roots (debootstrap --variant=minbase) for the package and release tests on other Debian
# releases, and commands run inside them.
#   scripts/debian-root.sh make RELEASE DIR    a fresh root of RELEASE (bookworm, trixie) in DIR: a copy
#                                              of a pristine one kept in $PERFSPEC_ROOTS (default
#                                              /var/cache/perfspec/roots; debootstrapped on first use,
#                                              3 to 5 minutes, then seconds)
#   scripts/debian-root.sh run DIR [--bind HOST:GUEST]... -- CMD...
#                                              CMD as root in DIR, with /proc, /sys, /dev and /dev/pts
#                                              of this machine, its resolv.conf, and each folder bound,
#                                              in a mount namespace of its own (nothing is left mounted)
# Needs root. The archive is the first Debian one this machine's apt uses.
set -euo pipefail
roots=${PERFSPEC_ROOTS:-/var/cache/perfspec/roots}
die() { echo "debian-root: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount)"

mirror() {  # the first Debian archive apt uses here (a deb822 URIs: line or a one-line deb entry)
  cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null |
    sed -nE 's/^URIs:[[:space:]]*(https?:[^ ]*\/debian)\/?$/\1/p; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?:[^ ]*\/debian)\/?[[:space:]].*/\2/p' |
    head -n 1
}

pristine() {  # pristine RELEASE: the kept root, made whole or not at all (a folder renamed into place)
  local release=$1 base=$roots/$1
  if [ ! -x "$base/usr/bin/apt-get" ]; then
    command -v debootstrap >/dev/null ||
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    mkdir -p "$roots"
    rm -rf "$base.partial"
    echo "debian-root: debootstrapping $release into $base (first use only)" >&2
    debootstrap --variant=minbase "$release" "$base.partial" "$(mirror)" >"$base.log" 2>&1 ||
      { tail -n 20 "$base.log" >&2; die "debootstrap $release failed, see $base.log"; }
    mv "$base.partial" "$base"
  fi
  echo "$base"
}

case "${1:-}" in
  make)
    [ $# -eq 3 ] || die "usage: debian-root.sh make RELEASE DIR"
    base=$(pristine "$2")
    rm -rf "$3"
    mkdir -p "$(dirname "$3")"
    cp -a "$base" "$3"
    ;;
  run)
    [ $# -ge 2 ] || die "usage: debian-root.sh run DIR [--bind HOST:GUEST]... -- CMD..."
    dir=$(cd "$2" && pwd); shift 2
    binds=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
      [ "$1" = "--bind" ] && [ $# -ge 2 ] || die "run: expected --bind HOST:GUEST or --, got '$1'"
      binds+=("$2"); shift 2
    done
    [ "${1:-}" = "--" ] && [ $# -ge 2 ] || die "run: no command after --"
    shift
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    # shellcheck disable=SC2016
    exec unshare -m --propagation private bash -c '
      set -e
      r=$1; n=$2; shift 2
      # the root a mount point of its own, so that unshare -m and mount --make-rprivate work inside
      mount --bind "$r" "$r"
      mount -t proc proc "$r/proc"
      mount --rbind /sys "$r/sys"
      mount --rbind /dev "$r/dev"
      for ((i = 0; i < n; i++)); do
        host=${1%%:*}; guest=${1#*:}; shift
        mkdir -p "$r$guest"
        mount --bind "$host" "$r$guest"
      done
      exec chroot "$r" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 TERM="${TERM:-dumb}" "$@"' bash "$dir" "${#binds[@]}" "${binds[@]}" "$@"
    ;;
  *) die "usage: debian-root.sh make RELEASE DIR | run DIR [--bind HOST:GUEST]... -- CMD..." ;;
esac
