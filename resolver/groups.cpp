// SPDX-License-Identifier: MIT
// The items of an event list into groups: a lone event's results each a group of one, a written
// group split into one group per PMU, modifiers applied where each event ends up.
#include <algorithm>

#include <fmt/format.h>

#include "resolver/modifiers.hpp"
#include "resolver/resolver.hpp"

namespace perfspec::resolver {

namespace {

// A modifier letter is there (modifiers are a few letters: a loop, not a memchr call).
bool has_letter(const ast::Modifiers& m, char c) {
  return std::find(m.letters.begin(), m.letters.end(), c) != m.letters.end();
}

// Software-context events (software, tracepoint, breakpoint) may join a group on any PMU.
bool any_pmu_can_host(const ResolvedEvent& e) {
  return e.attr.type == spec::type_software || e.attr.type == spec::type_tracepoint ||
         e.attr.type == spec::type_breakpoint;
}

// The kernel schedules a group on one PMU. A written group whose events landed on several PMUs (a
// hybrid machine's `{cycles,instructions}`, or a wildcard over uncore PMUs) is split into one group
// per PMU in order of first appearance, as perf does; software-context events stay with the first
// group. Reorders events[first, first + slot.size()) (and `from` with them) so that each group's
// events are together, keeping their order within it; `slot` gets each event's group. Returns the
// number of groups.
std::size_t order_by_pmu(Events& events, std::size_t first, std::vector<const ast::Event*>& from,
                         std::vector<std::size_t>& slot) {
  const std::size_t produced = slot.size();
  std::vector<const std::string*> order;
  for (std::size_t i = 0; i < produced; ++i) {
    const ResolvedEvent& e = events[first + i];
    if (any_pmu_can_host(e)) continue;
    auto it = std::find_if(order.begin(), order.end(), [&](const std::string* p) { return *p == e.pmu; });
    slot[i] = static_cast<std::size_t>(it - order.begin());
    if (it == order.end()) order.push_back(&e.pmu);
  }
  if (std::is_sorted(slot.begin(), slot.end())) return std::max<std::size_t>(order.size(), 1);
  std::vector<std::size_t> perm(produced);
  for (std::size_t i = 0; i < produced; ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return slot[a] < slot[b]; });
  std::vector<ResolvedEvent> moved;
  std::vector<const ast::Event*> origin;
  std::vector<std::size_t> slots_sorted;
  for (std::size_t i : perm) {
    moved.push_back(std::move(events[first + i]));
    origin.push_back(from[i]);
    slots_sorted.push_back(slot[i]);
  }
  for (std::size_t i = 0; i < produced; ++i) events[first + i] = std::move(moved[i]);
  from = std::move(origin);
  slot = std::move(slots_sorted);
  return std::max<std::size_t>(order.size(), 1);
}

}  // namespace

int topdown_rank(const Machine& machine, const ResolvedEvent& event) {
  const std::uint64_t config = event.attr.config;
  const bool slots = config == 0x400;
  const bool metric = (config & 0xff) == 0 && (config & 0xff00) >= 0x8000 && (config & 0xff00) <= 0x8700 &&
                      (config >> 16) == 0;
  if (!slots && !metric) return 2;
  const Pmu* pmu = machine.pmu(event.pmu);
  if (!pmu || !pmu->is_core() || event.attr.type != pmu->type() || !pmu->alias("slots")) return 2;
  return slots ? 0 : 1;
}

void Resolver::add_lone(const ast::Item& item, Events& events, GroupSlots& groups) {
  // A lone event: each event it resolves to (a wildcard gives several) is a group of one.
  std::size_t first = events.size();
  const ast::Event& ev = item.events.front();
  resolve_event(ev, events);
  if (events.size() == first)
    throw Error(ErrorKind::unknown_name, fmt::format("'{}' matched no event", text(ev.span)), ev.span);
  for (std::size_t index = first; index < events.size(); ++index) {
    ResolvedEvent& e = events[index];
    e.group = groups.size();
    e.leader = index;
    unsigned max_precise = has_letter(ev.modifiers, 'P') ? max_precise_for(e) : 0;
    apply_modifiers(e, ev.modifiers, nullptr, Placement{true, false}, max_precise);
    EventGroup& g = groups.emplace_back();
    g.name = item.group_name;
    g.members.push_back(index);
  }
}

void Resolver::add_braced(const ast::Item& item, Events& events, GroupSlots& groups) {
  std::size_t first = events.size();
  std::vector<const ast::Event*> from;  // the written event of each produced one
  for (const auto& ev : item.events) {
    std::size_t before = events.size();
    resolve_event(ev, events);
    if (events.size() == before)
      throw Error(ErrorKind::unknown_name, fmt::format("'{}' matched no event", text(ev.span)), ev.span);
    from.resize(events.size() - first, &ev);
  }
  const std::size_t produced = events.size() - first;
  std::vector<std::size_t> slot(produced, 0);
  const std::size_t slots = order_by_pmu(events, first, from, slot);
  const bool group_P = has_letter(item.modifiers, 'P');
  for (std::size_t s = 0, i = 0; s < slots; ++s) {
    std::size_t group_index = groups.size();
    EventGroup& g = groups.emplace_back();
    g.braces = true;
    g.name = item.group_name;
    g.weak = has_letter(item.modifiers, 'W');
    std::size_t leader = first + i;
    std::size_t size = 0;
    while (i + size < produced && slot[i + size] == s) ++size;
    // Topdown events: slots first, then the metric events, as the kernel accepts them.
    // (Checked without allocating first: almost no group holds one.)
    bool topdown = false;
    for (std::size_t k = 0; k < size && !topdown; ++k)
      topdown = topdown_rank(machine_, events[first + i + k]) < 2;
    std::vector<int> rank;
    if (topdown)
      for (std::size_t k = 0; k < size; ++k) rank.push_back(topdown_rank(machine_, events[first + i + k]));
    if (topdown && !std::is_sorted(rank.begin(), rank.end())) {
      std::vector<std::size_t> perm(size);
      for (std::size_t k = 0; k < size; ++k) perm[k] = k;
      std::stable_sort(perm.begin(), perm.end(),
                       [&](std::size_t a, std::size_t b) { return rank[a] < rank[b]; });
      std::vector<ResolvedEvent> moved;
      std::vector<const ast::Event*> origin;
      for (std::size_t k : perm) {
        moved.push_back(std::move(events[first + i + k]));
        origin.push_back(from[i + k]);
      }
      for (std::size_t k = 0; k < size; ++k) {
        events[first + i + k] = std::move(moved[k]);
        from[i + k] = origin[k];
      }
    }
    g.members.reserve(size);
    for (std::size_t k = 0; k < size; ++k, ++i) {
      std::size_t index = first + i;
      ResolvedEvent& e = events[index];
      e.group = group_index;
      e.leader = leader;
      bool wants_max = has_letter(from[i]->modifiers, 'P') || group_P;
      apply_modifiers(e, from[i]->modifiers, &item.modifiers, Placement{index == leader, size > 1},
                      wants_max ? max_precise_for(e) : 0);
      g.members.push_back(index);
    }
  }
}

void Resolver::run(EventSet& set) {
  Events events(set.events);
  GroupSlots groups(set.groups);
  std::size_t written = 0;
  for (const auto& item : list_.items) written += item.events.size();
  events.reserve(written);
  groups.reserve(list_.items.size());
  for (const auto& item : list_.items) {
    if (item.braces)
      add_braced(item, events, groups);
    else
      add_lone(item, events, groups);
  }
  events.finish();
  groups.finish();
}

}  // namespace perfspec::resolver
