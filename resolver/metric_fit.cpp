// SPDX-License-Identifier: MIT
// A metric's events fitted to the machine: the core PMUs a metric is computed for on a hybrid machine,
// the counters each event may take (counter.json) and the groups that fit them, the slots of inputs,
// and whether a metric's constraint lets its events be grouped.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <iterator>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "perfspec/metric.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/tables.hpp"
#include "resolver/metric_detail.hpp"
#include "resolver/resolver.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::metric::detail {

using spec::ascii_iequal;
using spec::io::trim;

namespace {

bool is_core_pmu(const spec::Machine& machine, std::string_view name) {
  const auto& cores = machine.core_pmus();
  return std::any_of(cores.begin(), cores.end(), [&](const spec::Pmu* p) { return p->name() == name; });
}

}  // namespace

// An event of another core PMU than the one metric instance `pmu` is for: not its input.
bool other_core_pmu(const spec::Machine& machine, std::string_view pmu, std::string_view event_pmu) {
  return !pmu.empty() && event_pmu != pmu && is_core_pmu(machine, pmu) && is_core_pmu(machine, event_pmu);
}

// The core PMUs a metric of no PMU is computed for, one instance each: on a hybrid machine, those
// every identifier with events on core PMUs has events on, when one of them has events on several.
// Empty: one metric, as resolved.
std::vector<std::string> core_instances(const ResolvedMetric& m, Resolver& r, const spec::Machine& machine) {
  if (!m.definition.pmu.empty() || machine.core_pmus().size() < 2) return {};
  std::vector<std::string> ids;
  identifiers(m.expr, m.refs, ids);
  if (m.threshold) identifiers(*m.threshold, m.refs, ids);
  std::optional<std::set<std::string>> common;
  bool several = false;
  for (const auto& id : ids) {
    std::set<std::string> on;
    for (const auto& ev : r.events_of(id).events)
      if (is_core_pmu(machine, ev.pmu)) on.insert(ev.pmu);
    if (on.empty()) continue;
    several = several || on.size() > 1;
    if (!common) {
      common = std::move(on);
      continue;
    }
    std::set<std::string> both;
    std::set_intersection(common->begin(), common->end(), on.begin(), on.end(),
                          std::inserter(both, both.end()));
    common = std::move(both);
  }
  if (!several || !common || common->empty()) return {};
  // In the machine's order of its core PMUs.
  std::vector<std::string> out;
  for (const spec::Pmu* p : machine.core_pmus())
    if (common->contains(p->name())) out.push_back(p->name());
  return out;
}

namespace {

// The counters an event may be scheduled on, numbered fixed ones first (0 .. fixed-1), then generic
// ones; empty for a topdown metric event, which is read through its slots leader and takes none.
std::vector<unsigned> counters_for(const spec::Machine& machine, const spec::Machine::PmuCounters& pc,
                                   const ResolvedEvent& ev) {
  std::vector<unsigned> out;
  if (resolver::topdown_rank(machine, ev) == 1) return out;
  auto generic = [&] {
    for (unsigned g = 0; g < pc.generic; ++g) out.push_back(pc.fixed + g);
  };
  const unsigned event = static_cast<unsigned>(ev.attr.config & 0xff);
  const unsigned umask = static_cast<unsigned>((ev.attr.config >> 8) & 0xff);
  auto it =
      ev.attr.type == machine.pmu(ev.pmu)->type() ? pc.counter_of.find({event, umask}) : pc.counter_of.end();
  if (it == pc.counter_of.end()) {  // nothing known: any generic counter
    generic();
    return out;
  }
  std::string_view all = it->second;
  while (!all.empty()) {
    const std::string_view piece = all.substr(0, all.find(';'));
    all.remove_prefix(std::min(all.size(), piece.size() + 1));
    std::string_view text = trim(piece);
    if (ascii_iequal(text, "FIXED")) {
      for (unsigned f = 0; f < pc.fixed; ++f) out.push_back(f);
      continue;
    }
    if (text.starts_with("Fixed counter ")) {
      unsigned long f = std::strtoul(std::string(text.substr(14)).c_str(), nullptr, 10);
      if (f < pc.fixed) out.push_back(static_cast<unsigned>(f));
      continue;
    }
    while (!text.empty()) {
      std::string item(trim(text.substr(0, text.find(','))));
      text.remove_prefix(
          std::min(text.size(), text.find(',') == std::string_view::npos ? text.size() : text.find(',') + 1));
      char* end = nullptr;
      unsigned long g = std::strtoul(item.c_str(), &end, 10);
      if (!item.empty() && *end == '\0' && g < pc.generic) out.push_back(pc.fixed + static_cast<unsigned>(g));
    }
  }
  if (out.empty()) generic();  // a Counter field this rule does not read: any generic counter
  return out;
}

// Whether every event can have a counter of its own at once (a bipartite matching, Kuhn's algorithm:
// a few events, a few counters).
bool schedulable(const std::vector<std::vector<unsigned>>& allowed, unsigned counters) {
  std::vector<int> owner(counters, -1);
  for (std::size_t e = 0; e < allowed.size(); ++e) {
    std::vector<bool> seen(counters, false);
    std::function<bool(std::size_t)> place = [&](std::size_t x) {
      for (unsigned c : allowed[x]) {
        if (seen[c]) continue;
        seen[c] = true;
        if (owner[c] < 0 || place(static_cast<std::size_t>(owner[c]))) {
          owner[c] = static_cast<int>(x);
          return true;
        }
      }
      return false;
    };
    if (!allowed[e].empty() && !place(e)) return false;
  }
  return true;
}

}  // namespace

// The sizes of the groups `evs` (one PMU's, in order) are cut into so that each fits the PMU's counters
// as its tables describe them: one group when they fit or nothing is known, else consecutive groups
// filled in order (an event that fits nowhere alone is a group of one).
std::vector<std::size_t> counter_fit(const spec::Machine& machine, std::string_view pmu,
                                     const std::vector<const ResolvedEvent*>& evs) {
  if (evs.size() < 2) return {evs.size()};
  const spec::Machine::PmuCounters* pc = machine.pmu_counters(pmu);
  if (!pc || pc->fixed + pc->generic == 0) return {evs.size()};
  std::vector<std::size_t> sizes;
  std::vector<std::vector<unsigned>> current;
  for (const ResolvedEvent* ev : evs) {
    // a software-context member (msr's TSC) takes none of the PMU's counters
    current.push_back(ev->pmu == pmu && !resolver::software_context(machine, *ev)
                          ? counters_for(machine, *pc, *ev)
                          : std::vector<unsigned>{});
    if (current.size() > 1 && !schedulable(current, pc->fixed + pc->generic)) {
      auto last = std::move(current.back());
      current.pop_back();
      sizes.push_back(current.size());
      current.clear();
      current.push_back(std::move(last));
    }
  }
  sizes.push_back(current.size());
  return sizes;
}

// Expr::slot of each identifier and reference of `m`: its index among m.inputs and m.refs, plus one.
void assign_slots(ResolvedMetric& m) {
  std::map<std::string_view, std::uint32_t> id_slot, ref_slot;
  for (const auto& [id, events] : m.inputs)
    id_slot.emplace(id, static_cast<std::uint32_t>(id_slot.size() + 1));
  for (const auto& [name, expr] : m.refs)
    ref_slot.emplace(name, static_cast<std::uint32_t>(ref_slot.size() + 1));
  auto walk = [&](Expr& e, auto&& self) -> void {
    if (e.kind == Expr::Kind::id) {
      auto it = id_slot.find(e.name);
      e.slot = it == id_slot.end() ? 0 : it->second;
    } else if (e.kind == Expr::Kind::ref) {
      auto it = ref_slot.find(e.name);
      e.slot = it == ref_slot.end() ? 0 : it->second;
    }
    for (auto& a : e.args) self(a, self);
  };
  walk(m.expr, walk);
  if (m.threshold) walk(*m.threshold, walk);
  for (auto& [name, expr] : m.refs) walk(expr, walk);
}

// Whether a metric's events are grouped, by its MetricConstraint as perf 6.12 reads it: never with
// NO_GROUP_EVENTS, not while the NMI watchdog holds a counter with NO_GROUP_EVENTS_NMI, not with SMT on
// with NO_GROUP_EVENTS_SMT. A note says why when not.
bool grouped(ResolvedMetric& m, const spec::Machine& machine, const Options& options) {
  if (!options.group) return false;
  const std::string c(trim(m.definition.constraint));
  if (c == "NO_GROUP_EVENTS") {
    m.folded.push_back("MetricConstraint NO_GROUP_EVENTS: events not grouped");
    return false;
  }
  if (c == "NO_GROUP_EVENTS_NMI" && machine.nmi_watchdog()) {
    m.folded.push_back(
        "MetricConstraint NO_GROUP_EVENTS_NMI: events not grouped, the NMI watchdog holds a counter "
        "(echo 0 > /proc/sys/kernel/nmi_watchdog to group them)");
    return false;
  }
  if (c == "NO_GROUP_EVENTS_SMT") {
    double smt = 0;
    try {
      smt = machine.metric_literal("smt_on");
    } catch (const Error& e) {  // a tree without CPU topology: grouped, and said why
      m.folded.push_back(
          fmt::format("MetricConstraint NO_GROUP_EVENTS_SMT: grouped, SMT not known ({})", e.message()));
      return true;
    }
    if (smt != 0) {
      m.folded.push_back("MetricConstraint NO_GROUP_EVENTS_SMT: events not grouped, SMT is on");
      return false;
    }
  }
  return true;
}

}  // namespace perfspec::metric::detail
