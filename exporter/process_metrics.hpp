// SPDX-License-Identifier: MIT
#pragma once
// The series every Prometheus client library gives of its own process (client_golang's and
// client_python's process collector, by their names and types), and the exporter's build, as
// `<name>_build_info` with the build in its labels and the value 1.
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

namespace perfspec::exporter {

/// process_cpu_seconds_total (user and system time), process_resident_memory_bytes,
/// process_virtual_memory_bytes, process_start_time_seconds (Unix time), process_open_fds,
/// process_max_fds (the soft limit): from `proc`/`self`/stat, fd/ and limits, and `proc`/stat's boot
/// time. A file that cannot be read or parsed leaves its series out (never a wrong value).
void process_series(std::vector<prometheus::MetricFamily>& out, const std::string& proc = "/proc",
                    const std::string& self = "self");

/// perfspec_exporter_build_info{version, revision, compiler, arch} 1.
void build_info_series(std::vector<prometheus::MetricFamily>& out);

}  // namespace perfspec::exporter
