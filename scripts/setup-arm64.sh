#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what the arm64 stage needs, from Debian's packages: the cross toolchain, the :arm64
# libraries and development packages perfspec builds with (multiarch, beside the amd64 ones), qemu-user
# for what the cross build runs, and QEMU's arm64 system emulator for scripts/vm-arm64.sh. Safe to run
# again: it calls apt-get only when something is missing, and never removes a package (it stops
# instead, saying which).
#
# prometheus-cpp-dev cannot be installed for two architectures: it depends on the `civetweb` program
# package, which is not Multi-Arch. Its arm64 libraries are installed; its headers and CMake files are
# unpacked (not installed) into the arm64 sysroot, PERFSPEC_ARM64_SYSROOT (default
# ~/.cache/perfspec/arm64-sysroot), which cmake/aarch64-linux-gnu.cmake searches.
set -euo pipefail
host=(g++-aarch64-linux-gnu qemu-user-static qemu-system-arm cpio)
arm64=(libfmt-dev libpfm4-dev libzstd-dev libtraceevent-dev libaudit-dev libelf-dev libdw-dev libxxhash-dev libcivetweb-dev
       libtomlplusplus-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libprometheus-cpp-push1.0
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
# prometheus-cpp-dev:arm64 of the installed libraries' version, unpacked into the sysroot.
version=$(dpkg-query -W -f='${Version}' libprometheus-cpp-core1.0:arm64)
if [ "$(cat "$sysroot/prometheus-cpp-dev.version" 2>/dev/null)" != "$version" ]; then
  echo "setup-arm64: unpacking prometheus-cpp-dev:arm64 $version into $sysroot"
  rm -rf "$sysroot"
  mkdir -p "$sysroot/download"
  (cd "$sysroot/download" && apt-get -q -o APT::Sandbox::User=root download "prometheus-cpp-dev:arm64=$version" >/dev/null)
  dpkg-deb -x "$sysroot"/download/prometheus-cpp-dev_*_arm64.deb "$sysroot"
  rm -rf "$sysroot/download"
  # Its CMake targets name the libraries by their real files, which are installed: the sysroot links
  # to them, development links included.
  for lib in /usr/lib/aarch64-linux-gnu/libprometheus-cpp-*.so.*; do
    ln -sfn "$lib" "$sysroot/usr/lib/aarch64-linux-gnu/${lib##*/}"
  done
  echo "$version" >"$sysroot/prometheus-cpp-dev.version"
fi
