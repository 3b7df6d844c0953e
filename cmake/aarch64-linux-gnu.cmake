# SPDX-License-Identifier: MIT
# Cross build for arm64 with Debian's cross toolchain (g++-aarch64-linux-gnu) and the multiarch :arm64
# development packages (libfmt-dev:arm64, ...) installed beside the amd64 ones: scripts/setup-arm64.sh
# installs both, scripts/build.sh arm64 uses this file. What the build runs (the event-table index)
# and ctest run under qemu-user (qemu-aarch64-static), with the arm64 libraries of the multiarch
# folders.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# GCC's note that std::pair<double, double> is passed as GCC 10.1 changed it: it matters only beside
# objects built by an older GCC, which a build with one compiler has none of.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
# find_package and find_library look in <prefix>/lib/aarch64-linux-gnu, never in the amd64 folders.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# prometheus-cpp-dev:arm64, unpacked by scripts/setup-arm64.sh (it cannot be installed beside amd64's).
if(DEFINED ENV{PERFSPEC_ARM64_SYSROOT})
  set(PERFSPEC_ARM64_SYSROOT $ENV{PERFSPEC_ARM64_SYSROOT})
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(PERFSPEC_ARM64_SYSROOT $ENV{XDG_CACHE_HOME}/perfspec/arm64-sysroot)
else()
  set(PERFSPEC_ARM64_SYSROOT $ENV{HOME}/.cache/perfspec/arm64-sysroot)
endif()
list(APPEND CMAKE_PREFIX_PATH ${PERFSPEC_ARM64_SYSROOT}/usr)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# The loader and libc of libc6:arm64 are in /lib; qemu-user takes them from there (-L /).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /)
