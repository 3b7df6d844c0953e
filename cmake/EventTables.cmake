# SPDX-License-Identifier: MIT
# perf's JSON event tables, installed with perfspec so that vendor event names resolve without
# --events-dir (spec::default_events_dir). They come from Debian's linux-source-X.Y package (the newest
# installed: 6.1 on Debian 12, 6.12 on Debian 13), which ships the kernel tree as
# /usr/src/linux-source-X.Y.tar.xz: the build takes only tools/perf/pmu-events/arch
# (and the kernel's license texts) out of it, once, then compiles their index
# (tools/index_tables.cpp), which is installed with them, so that no user's first run builds it.
#
# PERFSPEC_EVENT_TABLES:
#   auto   (default) the Debian tarball when it is there, else a build without tables (sysfs, built-in
#          and libpfm4 names only)
#   ON     the Debian tarball, and its absence is an error
#   OFF    no tables
#   PATH   a kernel source tarball (its top folder named as the file: linux-source-6.1.tar.xz holds
#          linux-source-6.12/), or a tools/perf/pmu-events/arch folder (copied, never written to)
set(PERFSPEC_EVENT_TABLES auto CACHE STRING
    "perf's event tables to install: auto, ON, OFF, or a kernel source tarball or pmu-events/arch folder")
# the newest of Debian's kernel tarballs installed (linux-source-6.12.tar.xz before linux-source-6.1.tar.xz)
file(GLOB perfspec_kernel_tarballs /usr/src/linux-source-*.tar.xz)
list(SORT perfspec_kernel_tarballs COMPARE NATURAL ORDER DESCENDING)
if(perfspec_kernel_tarballs)
  list(GET perfspec_kernel_tarballs 0 PERFSPEC_DEBIAN_KERNEL_SOURCE)
else()
  set(PERFSPEC_DEBIAN_KERNEL_SOURCE /usr/src/linux-source-X.Y.tar.xz)
endif()
get_filename_component(perfspec_kernel_package ${PERFSPEC_DEBIAN_KERNEL_SOURCE} NAME)
string(REPLACE ".tar.xz" "" perfspec_kernel_package ${perfspec_kernel_package})

string(TOUPPER "${PERFSPEC_EVENT_TABLES}" tables_mode)
set(tables_source "")
if(tables_mode MATCHES "^(OFF|NO|FALSE|N|0|)$")
  message(STATUS "perfspec: event tables off (PERFSPEC_EVENT_TABLES=${PERFSPEC_EVENT_TABLES})")
elseif(tables_mode MATCHES "^(AUTO|ON|YES|TRUE|Y|1)$")
  if(EXISTS ${PERFSPEC_DEBIAN_KERNEL_SOURCE})
    set(tables_source ${PERFSPEC_DEBIAN_KERNEL_SOURCE})
    execute_process(COMMAND dpkg-query -W -f=\${Version} ${perfspec_kernel_package} OUTPUT_VARIABLE tables_version
                    ERROR_QUIET)
    set(tables_origin "Debian's ${perfspec_kernel_package} package")
    if(tables_version)
      string(APPEND tables_origin " (version ${tables_version})")
    endif()
    string(APPEND tables_origin ", file ${tables_source}")
  elseif(tables_mode STREQUAL "AUTO")
    message(STATUS "perfspec: no /usr/src/linux-source-*.tar.xz (Debian package linux-source): "
                   "no event tables installed")
  else()
    message(FATAL_ERROR "PERFSPEC_EVENT_TABLES=${PERFSPEC_EVENT_TABLES}: no /usr/src/linux-source-*.tar.xz. "
                        "Install Debian's linux-source package (scripts/setup.sh does), or set "
                        "PERFSPEC_EVENT_TABLES to a kernel source tarball, to a pmu-events/arch folder, or to "
                        "OFF.")
  endif()
else()
  get_filename_component(tables_source "${PERFSPEC_EVENT_TABLES}" ABSOLUTE)
  if(NOT EXISTS "${tables_source}")
    message(FATAL_ERROR "PERFSPEC_EVENT_TABLES: '${PERFSPEC_EVENT_TABLES}' does not exist")
  endif()
  if(IS_DIRECTORY "${tables_source}")
    set(tables_origin "the folder ${tables_source}")
  else()
    set(tables_origin "the kernel source tarball ${tables_source}")
  endif()
endif()

if(tables_source)
  message(STATUS "perfspec: event tables from ${tables_source}, installed in "
                 "${CMAKE_INSTALL_FULL_DATADIR}/perfspec/events")
  # Laid out as installed: one folder per architecture, the kernel's license texts, the note.
  set(PERFSPEC_TABLES_STAGE ${CMAKE_BINARY_DIR}/event-tables)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/event-tables-note.txt ${CMAKE_BINARY_DIR}/event-tables-note.txt
                 @ONLY)
  # Extraction reads the whole tarball (about 10 s): it runs again only when the source or the
  # staging changes, with a stamp as its output.
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/event-tables.staged
    COMMAND ${CMAKE_COMMAND} -DSOURCE=${tables_source} -DOUT=${PERFSPEC_TABLES_STAGE}
            -DNOTE=${CMAKE_BINARY_DIR}/event-tables-note.txt -P ${CMAKE_CURRENT_LIST_DIR}/stage_event_tables.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/event-tables.staged
    DEPENDS ${tables_source} ${CMAKE_CURRENT_LIST_DIR}/stage_event_tables.cmake
            ${CMAKE_BINARY_DIR}/event-tables-note.txt
    COMMENT "Taking perf's event tables (tools/perf/pmu-events/arch) from ${tables_source}"
    VERBATIM)
  # The compiled index of every model, made by the library's own code (not installed).
  add_executable(perfspec_index_tables tools/index_tables.cpp)
  target_link_libraries(perfspec_index_tables PRIVATE perfspec_static fmt::fmt perfspec_warnings)
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/event-tables.indexed
    COMMAND perfspec_index_tables ${PERFSPEC_TABLES_STAGE}
    COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/event-tables.indexed
    DEPENDS ${CMAKE_BINARY_DIR}/event-tables.staged perfspec_index_tables
    COMMENT "Compiling the index of the event tables"
    VERBATIM)
  add_custom_target(perfspec_event_tables ALL DEPENDS ${CMAKE_BINARY_DIR}/event-tables.indexed)
  install(DIRECTORY ${PERFSPEC_TABLES_STAGE}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/perfspec/events)
  # Where spec::default_events_dir() looks: relative to the installed programs, then the prefix's.
  file(RELATIVE_PATH tables_from_bindir ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR}/perfspec/events)
  set_source_files_properties(
    spec/installed_tables.cpp
    PROPERTIES COMPILE_DEFINITIONS
               "PERFSPEC_TABLES_FROM_BINDIR=\"${tables_from_bindir}\";PERFSPEC_TABLES_DIR=\"${CMAKE_INSTALL_FULL_DATADIR}/perfspec/events\"")
endif()
