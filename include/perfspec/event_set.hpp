// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "perfspec/attr.hpp"
#include "perfspec/error.hpp"

namespace perfspec {

/// Where the event's PMU lets it be opened, taken from the machine the event was resolved against,
/// so that opening it reads nothing from sysfs itself.
struct PmuPlacement {
  std::string cpumask;   ///< uncore PMU: the CPUs it counts on (one per package); empty: any CPU
  std::string cpus;      ///< core PMU of a hybrid or arm machine: the CPUs it serves; empty: all
  bool missing = false;  ///< the machine has no such PMU (`cycles` where there is no `cpu` PMU)
  friend bool operator==(const PmuPlacement&, const PmuPlacement&) = default;
  /// Back to default-constructed, keeping the strings' storage.
  void clear() {
    cpumask.clear();
    cpus.clear();
    missing = false;
  }
};

/// perf's tool events: counted by the program that counts (perfspec stat), not by the kernel.
enum class ToolEvent : std::uint8_t {
  none,
  duration_time,  ///< wall time of the count, ns
  user_time,      ///< user CPU time of what is counted, ns
  system_time,    ///< system CPU time of what is counted, ns
};

/// One encoded event, ready for perf_event_open(2).
struct ResolvedEvent {
  Attr attr;
  std::string name;        ///< display name: the text as written, or `name=`
  std::string pmu;         ///< the PMU it encodes for (`cpu`, `software`, `uncore_imc_0`, ...)
  std::string tracepoint;  ///< a tracepoint's `sys:name` (whatever its display name), else empty
  PmuPlacement placement;  ///< that PMU's cpumask and cpus
  std::size_t group = 0;   ///< index into EventSet::groups
  std::size_t leader = 0;  ///< index into EventSet::events of this event's group leader
  Span span;               ///< the text of the event
  double scale = 1.0;      ///< from alias metadata
  std::string unit;
  bool per_pkg = false;
  bool snapshot = false;
  bool bpf_counter = false;     ///< `b` modifier
  bool retire_latency = false;  ///< `R` modifier
  bool precise_max = false;     ///< `P` modifier
  std::string metric_id;
  std::string driver_config;  ///< `@cfg` terms, comma-joined
  std::string cpus;           ///< `cpu=` term
  bool percore = false;
  /// `nr=` term: how many of its samples perf trace prints before it closes the event (0: no limit).
  std::uint64_t max_events = 0;
  /// A tool event (`duration_time`, ...): runtime::Counters opens nothing for it and reports it not
  /// supported; `perfspec stat` fills in its value. Its attr is a software dummy (type 1, config 9).
  ToolEvent tool = ToolEvent::none;
  /// Back to default-constructed, keeping the strings' storage (for a set filled again). Inline and
  /// field by field: a reset by assignment cost resolving a named event a third of its time.
  void clear() {
    attr = Attr{};
    name.clear();
    pmu.clear();
    tracepoint.clear();
    placement.clear();
    group = leader = 0;
    span = Span{};
    scale = 1.0;
    unit.clear();
    per_pkg = snapshot = bpf_counter = retire_latency = precise_max = false;
    metric_id.clear();
    driver_config.clear();
    cpus.clear();
    percore = false;
    max_events = 0;
    tool = ToolEvent::none;
  }
};

struct EventGroup {
  std::string name;                  ///< `name{...}` or empty
  std::vector<std::size_t> members;  ///< indices into EventSet::events, leader first
  bool braces = false;               ///< written as `{...}` (a lone event is a group of one)
  bool weak = false;                 ///< `:W`
  /// Back to default-constructed, keeping the storage of the name and the member list.
  void clear() {
    name.clear();
    members.clear();
    braces = weak = false;
  }
};

struct EventSet {
  std::vector<ResolvedEvent> events;
  std::vector<EventGroup> groups;
  /// A written group was split by PMU or reordered, as perf 6.12 regroups it; `perf stat` and `perf
  /// record` then warn "WARNING: events were regrouped to match PMUs" (not when a PMU name matched
  /// several PMUs, as `uncore_imc/...` does: the split is expected there).
  bool regrouped = false;
  /// Move `other`'s events and groups after these, renumbering its leaders, groups and members: the
  /// set of several event lists (`-e A -e B`) as one.
  ///
  /// Example: `EventSet all; for (auto& text : lists) all.append(resolve(text, machine));`
  void append(EventSet&& other);
};

}  // namespace perfspec
