#pragma once
// Enumerating what a machine can count, from every source, for `perfspec list` and embedders; and
// copying a machine's PMU description for use elsewhere (`perfspec snapshot`).
#include <string>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::spec {

struct ListedEvent {
  std::string name;
  std::string pmu;          ///< "cpu" for built-in hardware/cache, "software", "tracepoint", or the PMU
  std::string encoding;     ///< terms (`event=0xd1,umask=0x8`) or `type:config` for built-ins
  std::string description;
  std::string topic;        ///< table topic ("cache"), "hardware", "software", "cache", tracepoint system
  std::string unit;
  double scale = 1.0;
  Source source = Source::builtin;
  bool deprecated = false;
};

struct ListedPmu {
  std::string name;
  std::uint32_t type = 0;
  std::vector<std::string> formats;  ///< `event=config:0-7`
  std::string cpumask, cpus;
  bool core = false;
};

struct ListFilter {
  std::string pattern;      ///< glob if it has * ? [, else a case-insensitive substring of the name
  std::string pmu;          ///< glob or exact PMU name ("" = any)
  std::string topic;        ///< exact topic ("" = any)
  std::string source;       ///< "sysfs", "json", "builtin", "tracepoint" ("" = any)
  bool tracepoints = false; ///< include tracepoints (there are thousands)
  bool deprecated = false;  ///< include deprecated table events
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
};
/// Copy the PMU description under `root` (type, format/, events/ with metadata, caps/, cpumask,
/// cpus of every PMU; tracepoint ids optionally) and the CPU id into the folder `out`, so that
/// `--sysfs out` resolves as on this machine. `out` must not exist or be empty.
///
/// Example: `snapshot(spec::Machine{}, "/tmp/this-machine", {.tracepoints = true});`
SnapshotReport snapshot(const Machine& machine, const std::string& out, const SnapshotOptions& options);

}  // namespace perfspec::spec
