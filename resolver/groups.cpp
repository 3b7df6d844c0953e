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

// A written group split as perf 6.12 splits it (parse_events__sort_events_and_fix_groups): events in
// order of the PMU they group under (group_pmu_names, by name as strcmp orders them), within one PMU
// topdown's slots first then its metric events (arch_evlist__cmp), events with the `R` modifier last,
// else as written; each run of one PMU is a group, its first event the leader. Reorders
// events[first, first + slot.size()) (and `from` with them); `slot` gets each event's group. Returns
// the number of groups.
std::size_t order_by_pmu(const Machine& machine, Events& events, std::size_t first,
                         std::vector<const ast::Event*>& from, const ast::Modifiers& group_modifiers,
                         std::vector<std::size_t>& slot) {
  const std::size_t produced = slot.size();
  std::vector<const ResolvedEvent*> evs(produced);
  for (std::size_t i = 0; i < produced; ++i) evs[i] = &events[first + i];
  std::vector<std::string_view> pmu = group_pmu_names(machine, evs);
  std::vector<int> rank(produced);
  const bool group_R = has_letter(group_modifiers, 'R');
  for (std::size_t i = 0; i < produced; ++i)
    rank[i] = topdown_rank(machine, *evs[i]) * 2 + (group_R || has_letter(from[i]->modifiers, 'R') ? 1 : 0);
  std::vector<std::size_t> perm(produced);
  for (std::size_t i = 0; i < produced; ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    if (pmu[a] != pmu[b]) return pmu[a] < pmu[b];
    return rank[a] < rank[b];
  });
  std::size_t groups = 0;
  for (std::size_t k = 0; k < produced; ++k) {
    if (k > 0 && pmu[perm[k]] != pmu[perm[k - 1]]) ++groups;
    slot[k] = groups;
  }
  if (!std::is_sorted(perm.begin(), perm.end())) {
    // std::string_views into the events: copied before the events move
    std::vector<ResolvedEvent> moved;
    std::vector<const ast::Event*> origin;
    moved.reserve(produced);
    for (std::size_t i : perm) {
      moved.push_back(std::move(events[first + i]));
      origin.push_back(from[i]);
    }
    for (std::size_t i = 0; i < produced; ++i) events[first + i] = std::move(moved[i]);
    from = std::move(origin);
  }
  return groups + 1;
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

bool aux_tracer(std::string_view pmu) {
  // perf marks these PMUs auxtrace (tools/perf/arch/*/util/pmu.c, auxtrace.c)
  return pmu == "intel_pt" || pmu == "intel_bts" || pmu == "cs_etm" || pmu.starts_with("arm_spe") ||
         pmu.starts_with("hisi_ptt");
}

bool software_context(const Machine& machine, const ResolvedEvent& e) {
  if (e.tool != ToolEvent::none) return true;  // perf 6.12 opens tool events as software ones
  const Pmu* pmu = machine.pmu(e.pmu);
  if (!pmu)  // a legacy hardware or cache event without a core PMU, or a fixture without the folder
    return e.attr.type == spec::type_software || e.attr.type == spec::type_tracepoint ||
           e.attr.type == spec::type_breakpoint;
  if (pmu->is_core() || pmu->is_uncore() || aux_tracer(pmu->name())) return false;
  switch (pmu->type()) {
    case spec::type_software:
    case spec::type_tracepoint:
    case spec::type_breakpoint: return true;
    case spec::type_hardware:
    case spec::type_hw_cache:
    case spec::type_raw: return false;
    default: return pmu->name() == "kprobe" || pmu->name() == "msr" || pmu->name() == "uprobe";
  }
}

std::vector<std::string_view> group_pmu_names(const Machine& machine,
                                              const std::vector<const ResolvedEvent*>& events) {
  std::vector<std::string_view> out;
  out.reserve(events.size());
  if (events.empty()) return out;
  const ResolvedEvent& leader = *events.front();
  const bool leader_software = software_context(machine, leader);
  const bool aux_leader = aux_tracer(leader.pmu);
  // The group's PMU for its software events: the leader's, else its first member of another context.
  std::optional<std::string_view> host;
  if (!leader_software)
    host = leader.pmu;
  else if (events.size() > 1)
    for (std::size_t i = 1; i < events.size() && !host; ++i)
      if (!software_context(machine, *events[i])) host = events[i]->pmu;
  // perf 6.12 names a tool event's PMU "software" (it opens them as software events)
  auto own = [](const ResolvedEvent& e) -> std::string_view {
    return e.tool != ToolEvent::none ? std::string_view("software") : std::string_view(e.pmu);
  };
  for (const ResolvedEvent* e : events)
    out.push_back((aux_leader || software_context(machine, *e)) && host ? *host : own(*e));
  return out;
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
  std::vector<const ast::Event*> written = from;
  const std::size_t slots = order_by_pmu(machine_, events, first, from, item.modifiers, slot);
  if (slots > 1 || from != written) regrouped_ = true;
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

void Resolver::group_lone_topdown(EventSet& set) {
  // perf 6.12 (parse_events__sort_events_and_fix_groups with arch_evsel__must_be_in_group): the kernel
  // reads topdown metric events only in a group led by slots, so events of that kind written alone are
  // moved to where the first of them stands and grouped there, per PMU: slots first, then the metric
  // events, each as written.
  const std::size_t n = set.events.size();
  auto lone_topdown = [&](std::size_t i) {
    const ResolvedEvent& e = set.events[i];
    return set.groups[e.group].members.size() == 1 && topdown_rank(machine_, e) < 2;
  };
  // Counted before anything is allocated: almost every set has none, and this runs on each resolve.
  std::size_t count = 0;
  for (std::size_t i = 0; i < n && count < 2; ++i) count += lone_topdown(i);
  if (count < 2) return;
  std::vector<char> forced(n, 0);
  for (std::size_t i = 0; i < n; ++i) forced[i] = lone_topdown(i);
  std::vector<std::size_t> lone;  // the forced events, as perf sorts them
  for (std::size_t i = 0; i < n; ++i)
    if (forced[i]) lone.push_back(i);
  const std::size_t first = lone.front();
  std::stable_sort(lone.begin(), lone.end(), [&](std::size_t a, std::size_t b) {
    const ResolvedEvent &x = set.events[a], &y = set.events[b];
    if (x.pmu != y.pmu) return x.pmu < y.pmu;
    int rx = topdown_rank(machine_, x) * 2 + x.retire_latency,
        ry = topdown_rank(machine_, y) * 2 + y.retire_latency;
    return rx < ry;
  });
  std::vector<std::size_t> order;  // new position -> old index
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i == first) order.insert(order.end(), lone.begin(), lone.end());
    if (!forced[i]) order.push_back(i);
  }
  std::vector<std::size_t> now(n);  // old index -> new position
  for (std::size_t k = 0; k < n; ++k) now[order[k]] = k;
  std::vector<ResolvedEvent> events;
  events.reserve(n);
  for (std::size_t k : order) events.push_back(std::move(set.events[k]));
  // The groups again in the order of their first events; the forced ones a group per PMU.
  std::vector<std::size_t> old_group(n);
  for (std::size_t k = 0; k < n; ++k) old_group[k] = events[k].group;
  std::vector<EventGroup> groups;
  for (std::size_t k = 0; k < n; ++k) {
    ResolvedEvent& e = events[k];
    const std::size_t old = order[k];
    if (forced[old]) {
      if (k > 0 && forced[order[k - 1]] && events[k - 1].pmu == e.pmu) {
        EventGroup& g = groups.back();
        g.members.push_back(k);
        g.braces = true;
        e.group = groups.size() - 1;
        e.leader = g.members.front();
        continue;
      }
      EventGroup g = set.groups[old_group[k]];
      g.members = {k};
      e.group = groups.size();
      e.leader = k;
      groups.push_back(std::move(g));
      continue;
    }
    const EventGroup& was = set.groups[old_group[k]];
    if (now[was.members.front()] != k) continue;  // a member: its group was made with its leader
    EventGroup g = was;
    for (auto& m : g.members) m = now[m];
    for (std::size_t m : g.members) {
      events[m].group = groups.size();
      events[m].leader = g.members.front();
    }
    groups.push_back(std::move(g));
  }
  set.events = std::move(events);
  set.groups = std::move(groups);
  regrouped_ = true;
}

void Resolver::run(EventSet& set) {
  Events events(set.events);
  GroupSlots groups(set.groups);
  regrouped_ = pmu_wildcard_ = false;
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
  group_lone_topdown(set);
  set.regrouped = regrouped_ && !pmu_wildcard_;
}

}  // namespace perfspec::resolver
