// SPDX-License-Identifier: MIT
#pragma once
// One configured set inside the exporter: what it resolved to, and once opened its counters and its
// metric window; and the helpers the layer's files share (series, units, targets).
#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>

#include "exporter/exporter.hpp"
#include "perfspec/metric.hpp"
#include "perfspec/runtime.hpp"

namespace perfspec::exporter {

using Labels = std::vector<prometheus::ClientMetric::Label>;
using Clock = std::chrono::steady_clock;

// One event's numbers summed over the places of a unit.
struct Acc {
  std::uint64_t raw = 0, enabled = 0, running = 0;
  bool here = false;  // opened at one place of the unit at least
};

// A unit of a set's aggregation (a CPU, a core, a socket, or everything) and its sums.
struct Unit {
  Labels labels;
  std::vector<Acc> events;
};
using Units = std::map<std::string, Unit>;  // by a key of the labels, in label order

struct SetState {
  SetConfig config;
  EventSet set;
  std::size_t user_events = 0;  // the first events of `set` are the file's; then the metrics' inputs
  struct PlanAt {
    metric::Plan plan;
    std::size_t offset = 0;
  };
  std::vector<PlanAt> plans;
  std::string cgroup_path;  // the cgroup's directory
  std::vector<int> cpus;    // empty: every online CPU

  // Open state.
  // One Counters per CPU (a system-wide or cgroup set, so that each CPU's counters are read on that
  // CPU: reading a counter that counts on another CPU costs an interrupt of that CPU, per event), or
  // one (a process).
  std::vector<runtime::Counters> counters;
  std::vector<int> counter_cpu;  // the CPU of each (-1: a process's)
  bool is_open() const { return !counters.empty(); }
  ino_t cgroup_inode = 0;
  int pid = -1;
  bool up = false;
  bool nothing_opened = false;  // open for its target, but none of its events opened (then not up)
  std::string down;             // why not up
  Clock::time_point opened{};

  // The metric window: the sums at its start, and the values computed over the last one.
  Clock::time_point base_time{};
  Units base;
  std::map<std::string, std::vector<metric::Value>> values;  // by unit key
  bool computed = false;

  std::vector<std::vector<runtime::PlaceCounts>> places;  // per Counters: its last read
  // Per event, found at open: why it could not be opened (the first Counters' reason), and whether it
  // opened anywhere.
  std::vector<std::optional<runtime::Failure>> failures;
  std::vector<char> opened_anywhere;
  std::uint64_t read_errors = 0;

  // What decides the counters this set opens (its target and every event's attr and group): equal
  // keys across a reload keep the counters open. Made once by prepare(), never changed.
  std::string key;
  std::string make_key() const;
};

/// A family without series, and a series added to one (a counter's or a gauge's value).
prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type);
void add(prometheus::MetricFamily& f, Labels labels, double value);

/// "system", "cgroup PATH", "pid N", "command NAME": the target label.
std::string target_text(const SetConfig& s);
/// What perfspec stat says of an event that could not be opened: the reason for this machine (the
/// errno's hint), else the errno's meaning, and the detail.
std::string failure_reason(const runtime::Failure& f);
/// The unit a place falls in, by the set's aggregation: its key and labels.
std::pair<std::string, Labels> unit_of(const runtime::Place& p, Grouping g,
                                       const std::vector<spec::CpuTopology>& topology);

/// Open `s` for its target now (again, when its process or cgroup came back); what cannot be counted
/// is said to `log`.
/// File descriptors kept for serving (sockets of the HTTP threads, /proc files): a set whose counters
/// would leave fewer than this many under RLIMIT_NOFILE is not opened (down, saying so).
inline constexpr std::size_t fds_for_serving = 64;
/// The file descriptors this process has open.
std::size_t open_fds();
void open_set(SetState& s, const Log& log);
/// Whether the target of an open set is still there (reopened when it came back); when it is gone,
/// why.
void check_target(SetState& s, const Log& log);

}  // namespace perfspec::exporter
