// SPDX-License-Identifier: MIT
#pragma once
// What `perfspec stat` is asked to count, read from its options: their combinations checked, the -e
// lists and -M metrics resolved, the cgroup of each event, the target.
#include <string>
#include <vector>

#include "perfspec/event_set.hpp"
#include "perfspec/stat.hpp"
#include "perfspec/stat_counting.hpp"
#include "tools/stat.hpp"

namespace perfspec::tools {

struct StatRequest {
  EventSet set;                      ///< every -e list, then the metrics' events
  std::vector<StatPlan> plans;       ///< -M, each with where its events start in `set`
  std::vector<std::string> cgroups;  ///< per event: -G's or --for-each-cgroup's cgroup; empty: none
  std::vector<std::string> filters;  ///< per event: --filter's (empty: none)
};

/// Throws Error (usage) for options that do not go together, or CPUs (-C) that are not online.
void check_stat_options(const StatOptions& o);
/// The events and metrics asked for. 0, or the status of the error it has reported (with its caret).
int resolve_stat_request(const StatOptions& o, const spec::Machine& machine, StatRequest& out);
/// What the options count. Throws Error (usage) for a -t list that is not thread ids.
StatTarget stat_target(const StatOptions& o, const StatRequest& request);

}  // namespace perfspec::tools
