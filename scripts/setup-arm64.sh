#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what the arm64 stage needs, from Debian's packages: the cross toolchain, the :arm64
# libraries and development packages perfspec builds with (multiarch, beside the amd64 ones), qemu-user
# for what the cross build runs, and QEMU's arm64 system emulator for scripts/vm-arm64.sh. Safe to run
# again: it calls apt-get only when something is missing, and never removes a package (it stops
# instead, saying which).
#
# prometheus-cpp-dev and libyaml-cpp-dev cannot be installed for two architectures (the first depends
# on the `civetweb` program package, the second is not Multi-Arch). Their arm64 libraries are
# installed; their headers and CMake files are unpacked (not installed) into the arm64 sysroot,
# PERFSPEC_ARM64_SYSROOT (default ~/.cache/perfspec/arm64-sysroot), which cmake/aarch64-linux-gnu.cmake
# searches.
set -euo pipefail
# the release's yaml-cpp library package (libyaml-cpp0.7 in Debian 12, 0.8 in 13)
yaml_cpp=$(apt-cache show libyaml-cpp-dev 2>/dev/null | sed -n 's/^Depends: .*\(libyaml-cpp0\.[0-9]*\).*/\1/p' | head -n 1)
host=(g++-aarch64-linux-gnu qemu-user-static qemu-system-arm cpio)
arm64=(libfmt-dev libpfm4-dev libzstd-dev libtraceevent-dev libaudit-dev libelf-dev libdw-dev libxxhash-dev libcivetweb-dev
       libtomlplusplus-dev libssl-dev libcrypt-dev  # the exporter's configuration, TLS, bcrypt
       "$yaml_cpp"  # its web configuration (libyaml-cpp-dev is unpacked into the sysroot)
       libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libprometheus-cpp-push1.0
       libcurl4-openssl-dev zlib1g-dev  # what prometheus-cpp's CMake files look for
       libbenchmark-dev)                # bench/ in the guest (BENCHMARKS.md's arm64 figures)
sysroot=${PERFSPEC_ARM64_SYSROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/perfspec/arm64-sysroot}
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup-arm64: adding the arm64 architecture to dpkg"
  $sudo dpkg --add-architecture arm64
  $sudo apt-get update -qq
  updated=1
fi
missing=()
for p in "${host[@]}" "${arm64[@]/%/:arm64}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ $updated = 1 ] || $sudo apt-get update -qq
  removed=$(apt-get install -s --no-install-recommends "${missing[@]}" | sed -n 's/^Remv \([^ ]*\).*/\1/p')
  if [ -n "$removed" ]; then
    echo "setup-arm64: installing ${missing[*]} would remove $(echo $removed); stopping" >&2
    exit 1
  fi
  echo "setup-arm64: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# A -dev package that cannot be installed for two architectures, of its installed library's version,
# unpacked into the sysroot: unpack_dev DEV LIBRARY-PACKAGE LIBRARY-FILES.
unpack_dev() {
  local dev=$1 library=$2 files=$3 version lib
  version=$(dpkg-query -W -f='${Version}' "$library:arm64")
  [ "$(cat "$sysroot/$dev.version" 2>/dev/null)" = "$version" ] && return
  echo "setup-arm64: unpacking $dev:arm64 $version into $sysroot"
  mkdir -p "$sysroot/download"
  (cd "$sysroot/download" && apt-get -q -o APT::Sandbox::User=root download "$dev:arm64=$version" >/dev/null)
  dpkg-deb -x "$sysroot"/download/"${dev}"_*_arm64.deb "$sysroot"
  rm -rf "$sysroot/download"
  # Its CMake targets name the libraries by their real files, which are installed: the sysroot links
  # to them, development links included.
  for lib in /usr/lib/aarch64-linux-gnu/$files; do
    ln -sfn "$lib" "$sysroot/usr/lib/aarch64-linux-gnu/${lib##*/}"
  done
  echo "$version" >"$sysroot/$dev.version"
}
unpack_dev prometheus-cpp-dev libprometheus-cpp-core1.0 'libprometheus-cpp-*.so.*'
unpack_dev libyaml-cpp-dev "$yaml_cpp" 'libyaml-cpp.so.*'
