// SPDX-License-Identifier: MIT
#pragma once
// Enumerating what a machine can count, from every source, for `perfspec list` and embedders; and
// copying a machine's PMU description for use elsewhere (`perfspec snapshot`).
#include <cstdint>
#include <functional>
#include <optional>
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

/// One entry of `perf list` as perf 6.12 makes it (the arguments of its print callbacks): an event,
/// or a metric under one of its groups. A field perf does not give is nullopt; a given one may be "".
struct PerfListEntry {
  bool metric = false;
  std::string name;
  // An event's:
  std::string type;  ///< `Software event`, `Kernel PMU event`, `Tracepoint event`, ...
  std::optional<std::string> topic, pmu_name, alias, scale_unit, desc, long_desc, encoding;
  bool deprecated = false;
  // A metric's (and desc, long_desc):
  std::optional<std::string> group, expr, threshold, unit;
};

/// The kinds of `perf list`'s keywords (`hw`, `sw`, `cache`, `pmu`, `tracepoint`, `sdt`, `metric`),
/// as bits; `raw` is `rNNN` and each PMU's raw descriptor, `breakpoint` the `mem:` form.
enum PerfListKind : unsigned {
  perf_list_hardware = 1,
  perf_list_software = 2,  ///< and the tool events
  perf_list_cache = 4,
  perf_list_pmu = 8,
  perf_list_raw = 16,
  perf_list_breakpoint = 32,
  perf_list_tracepoint = 64,
  perf_list_sdt = 128,
  perf_list_metric = 256,
  perf_list_all = 511,
};

/// What `perf list -j` lists of `kinds`, in its order and forms (every PMU instance, deprecated
/// events flagged): generic hardware, software and cache events that `opens(type, config)` (perf
/// opens each to see), tool events, each PMU's sysfs and table events (perf's names, aliases and
/// encodings, sorted and deduplicated as perf does), `rNNN` and the PMUs' raw descriptors, `mem:`,
/// tracepoints, the SDT events `sdt` names (perf's probe cache: record::cached_probe_events), and every
/// (metric group, metric) pair of the tables.
///
/// Example: `perf_list(machine, perf_list_software, [](auto, auto) { return true; })`
std::vector<PerfListEntry> perf_list(const Machine& machine, unsigned kinds,
                                     const std::function<bool(std::uint32_t, std::uint64_t)>& opens,
                                     const std::vector<std::string>& sdt = {});

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
