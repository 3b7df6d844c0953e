# SPDX-License-Identifier: MIT
# cmake -DSOURCE=... -DOUT=... -DNOTE=... -P stage_event_tables.cmake (run by cmake/EventTables.cmake):
# lays out in OUT perf's event tables as they are installed: the architecture folders of
# tools/perf/pmu-events/arch taken from SOURCE (a kernel source tarball, only those members extracted;
# or such an arch folder, copied), the kernel's license texts beside them, and NOTE as README.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${OUT} ${OUT}.tmp)
set(licenses COPYING LICENSES/preferred/GPL-2.0 LICENSES/exceptions/Linux-syscall-note)
if(IS_DIRECTORY ${SOURCE})
  file(COPY ${SOURCE}/ DESTINATION ${OUT})
  get_filename_component(root ${SOURCE}/../../../.. ABSOLUTE)  # the kernel tree, if it is one
else()
  # linux-source-6.1.tar.xz holds linux-source-6.1/...
  get_filename_component(name ${SOURCE} NAME)
  string(REGEX REPLACE "\\.(tar(\\.[A-Za-z0-9]+)?|tgz|txz)$" "" top ${name})
  set(members ${top}/tools/perf/pmu-events/arch)
  foreach(l ${licenses})
    list(APPEND members ${top}/${l})
  endforeach()
  file(ARCHIVE_EXTRACT INPUT ${SOURCE} DESTINATION ${OUT}.tmp PATTERNS ${members})
  if(NOT EXISTS ${OUT}.tmp/${top}/tools/perf/pmu-events/arch)
    message(FATAL_ERROR "${SOURCE} has no ${top}/tools/perf/pmu-events/arch")
  endif()
  file(RENAME ${OUT}.tmp/${top}/tools/perf/pmu-events/arch ${OUT})
  set(root ${OUT}.tmp/${top})
endif()
foreach(l ${licenses})
  if(EXISTS ${root}/${l})
    get_filename_component(dir ${OUT}/${l} DIRECTORY)
    file(COPY ${root}/${l} DESTINATION ${dir})
  else()
    message(WARNING "perfspec: no ${l} beside the event tables of ${SOURCE}: the installed tables are "
                    "without the kernel's license text")
  endif()
endforeach()
file(COPY_FILE ${NOTE} ${OUT}/README)
file(REMOVE_RECURSE ${OUT}.tmp)
