# SPDX-License-Identifier: MIT
# The Debian package: everything `cmake --install` puts in place (the CLI, the library and its
# headers, CMake and pkg-config files, the man page, completions, perf's event tables, the exporter's
# configuration under /etc/perfspec and its systemd unit naming the installed paths), made by CPack's
# DEB generator. Its dependencies are what dpkg-shlibdeps reads off the binaries (no list kept here);
# the version carries the Debian release it was built on (0.1.0-1~deb12), since a package is built
# on, and for, one release. scripts/package.sh builds it; tests/package/run.sh installs it with apt
# in a clean root of that release.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME perfspec)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "perfspec developers <perfspec@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "perf event strings, counting, sampling and a Prometheus exporter")
# the long description: CPack indents its lines and writes an empty one as " ."
set(CPACK_PACKAGE_DESCRIPTION "perfspec reads perf's event strings (cpu/event=0x2,inv/u, {cycles,instructions}:u,
mem_load_retired.l1_miss:pp, sched:sched_switch) against the PMUs this machine's sysfs
describes and perf's own event tables, and counts, samples and records them.

This package holds the perfspec command (resolve, stat, list, record, report, script,
trace, top, exporter), the C++ and C library with its headers, perf's event tables,
and the exporter's systemd unit with an example configuration in /etc/perfspec.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/perfspec/perfspec")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, linux-perf")
# Libraries opened with dlopen (libpfm4's provider, debuginfod's downloads) are invisible to
# dpkg-shlibdeps: recommended, by the package that owns the file this build found (its name differs
# between releases: libdebuginfod1, libdebuginfod1t64).
set(perfspec_dlopened "")
find_library(perfspec_debuginfod_so NAMES libdebuginfod.so.1)
foreach(lib IN ITEMS "${PFM_REAL}" "${perfspec_debuginfod_so}")
  if(lib AND EXISTS "${lib}")
    get_filename_component(lib "${lib}" REALPATH)
    execute_process(COMMAND dpkg-query -S "${lib}" OUTPUT_VARIABLE owner ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REGEX REPLACE "^([^:,]+).*" "\\1" owner "${owner}")
    if(owner)
      list(APPEND perfspec_dlopened "${owner}")
    endif()
  endif()
endforeach()
list(JOIN perfspec_dlopened ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libperfspec.so.0's own shlibs file, so that packages linking it depend on this one
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Installed with DESTDIR, so that install(CODE) sees the real prefix (/usr, whose configuration is in
# /etc) and writes it into the unit.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The release the package is for, from the build machine's os-release: ~deb12, ~deb13.
set(perfspec_debian "")
if(EXISTS /etc/os-release)
  file(STRINGS /etc/os-release perfspec_os_id REGEX "^ID=")
  file(STRINGS /etc/os-release perfspec_os_version REGEX "^VERSION_ID=")
  string(REGEX REPLACE "^VERSION_ID=\"?([0-9]+).*" "\\1" perfspec_os_version "${perfspec_os_version}")
  if(perfspec_os_id STREQUAL "ID=debian" AND perfspec_os_version MATCHES "^[0-9]+$")
    set(perfspec_debian "~deb${perfspec_os_version}")
  endif()
endif()
set(CPACK_DEBIAN_PACKAGE_RELEASE "1${perfspec_debian}")
# The configuration files dpkg keeps when an administrator has edited them (conffiles), and the
# maintainer scripts that enable and start the exporter's unit as debhelper's would.
GNUInstallDirs_get_absolute_install_dir(perfspec_etc CMAKE_INSTALL_SYSCONFDIR SYSCONFDIR)
file(WRITE ${CMAKE_BINARY_DIR}/debian/conffiles
     "${perfspec_etc}/default/perfspec-exporter\n${perfspec_etc}/perfspec/exporter.toml\n")
# ldconfig run once dpkg is done, for libperfspec.so.0 (what dh_makeshlibs adds)
file(WRITE ${CMAKE_BINARY_DIR}/debian/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/conffiles ${CMAKE_BINARY_DIR}/debian/triggers
    ${CMAKE_CURRENT_LIST_DIR}/../dist/debian/postinst ${CMAKE_CURRENT_LIST_DIR}/../dist/debian/prerm
    ${CMAKE_CURRENT_LIST_DIR}/../dist/debian/postrm)
include(CPack)
