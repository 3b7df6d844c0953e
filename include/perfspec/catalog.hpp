// SPDX-License-Identifier: MIT
#pragma once
// Enumerating what a machine can count, from every source, for `perfspec list` and embedders; and
// copying a machine's PMU description for use elsewhere (`perfspec snapshot`).
#include <string>
#include <vector>

#include "perfspec/event_source.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::spec {

struct ListedPmu {
  std::string name;
  std::uint32_t type = 0;
  std::vector<std::string> formats;  ///< `event=config:0-7`
  std::string cpumask, cpus;
  bool core = false;
};

/// Every named event of the machine that passes the filter: built-in symbols and cache events, sysfs
/// aliases, the JSON tables of its CPU id (with descriptions), tracepoints when asked. Sorted by
/// source, PMU, name. Throws perfspec::Error for malformed sysfs or tables.
///
/// Example: `list_events(machine, {.pattern = "*l1_miss", .source = "json"})`
std::vector<ListedEvent> list_events(const Machine& machine, const ListFilter& filter);
/// The PMUs, sorted, with their formats.
///
/// Example: `for (const auto& p : list_pmus(machine, {})) std::printf("%s %u\n", p.name.c_str(), p.type);`
std::vector<ListedPmu> list_pmus(const Machine& machine, const ListFilter& filter);

struct SnapshotOptions {
  bool tracepoints = false;  ///< also copy tracepoint ids (kernel/tracing/events/*/*/id)
};
struct SnapshotReport {
  std::size_t pmus = 0, files = 0, tracepoints = 0;
  std::vector<std::string> skipped;  ///< files that could not be read (e.g. root-only), with why
  std::string cpuid;  ///< the CPU id recorded with it; "" when none was known for the tree (a fixture without
                      ///< --cpuid)
};
/// Copy the PMU description under `root` (type, format/, events/ with metadata, caps/, cpumask,
/// cpus of every PMU; tracepoint ids optionally), the CPU topology (`devices/system/cpu`: online,
/// present, possible, smt/, each CPU's package, die and core id) and the CPU id into the folder
/// `out`, and when `root` is this host's /sys what metrics read elsewhere (`perfspec-snapshot/`
/// nmi_watchdog and system_tsc_freq), so that `--sysfs out` resolves events and metrics as on this
/// machine. `out` must not exist or be empty.
///
/// Example: `snapshot(spec::Machine{}, "/tmp/this-machine", {.tracepoints = true});`
SnapshotReport snapshot(const Machine& machine, const std::string& out, const SnapshotOptions& options);

}  // namespace perfspec::spec
