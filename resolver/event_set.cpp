// SPDX-License-Identifier: MIT
// The clear() of each EventSet node lists its fields: a field added to a node must be reset there too.
// On the ABI the project builds for, these sizes fail the build until clear() has been looked at.
#include "perfspec/event_set.hpp"

#include <algorithm>

#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(perfspec::PmuPlacement) == 72, "a field was added: reset it in PmuPlacement::clear()");
static_assert(sizeof(perfspec::ResolvedEvent) == 528,
              "a field was added: reset it in ResolvedEvent::clear()");
static_assert(sizeof(perfspec::EventGroup) == 64, "a field was added: reset it in EventGroup::clear()");
#endif

namespace perfspec {

void EventSet::append(EventSet&& other) {
  const std::size_t base = events.size(), gbase = groups.size();
  // Geometric growth: a set built by appending one event at a time is linear (reserving exactly what
  // is needed would copy every event at every append).
  if (events.capacity() < base + other.events.size())
    events.reserve(std::max(base + other.events.size(), 2 * events.capacity()));
  for (auto& e : other.events) {
    e.leader += base;
    e.group += gbase;
    events.push_back(std::move(e));
  }
  for (auto& g : other.groups) {
    for (auto& m : g.members) m += base;
    groups.push_back(std::move(g));
  }
  regrouped = regrouped || other.regrouped;
  other.events.clear();
  other.groups.clear();
  other.regrouped = false;
}

}  // namespace perfspec
