// SPDX-License-Identifier: MIT
// Metrics resolved against a machine (REFERENCE.md section 10): identifiers become events, other
// metrics (inlined) or tool events, literals machine facts; constants are folded before events are
// chosen, so that only the branch an `if` takes is opened; each metric's events are weak groups per
// PMU, a group another metric already opens being reused. And the evaluation of what was counted.
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

namespace perfspec::metric {

using namespace detail;
using spec::ascii_iequal;
using spec::io::trim;

namespace {

// The items of a request: names split at commas, each with its span.
std::vector<std::pair<std::string, Span>> request_items(std::string_view request) {
  std::vector<std::pair<std::string, Span>> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= request.size(); ++i) {
    if (i < request.size() && request[i] != ',') continue;
    std::string_view item = request.substr(start, i - start);
    std::string_view t = trim(item);
    std::size_t begin = start + (t.empty() ? 0 : static_cast<std::size_t>(t.data() - item.data()));
    if (t.empty())
      throw Error(ErrorKind::syntax, "expected a metric or metric group name",
                  Span{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(begin + 1)});
    out.emplace_back(std::string(t),
                     Span{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(begin + t.size())});
    start = i + 1;
  }
  return out;
}

// Where an unescaped '=' makes the request an ad hoc `NAME = EXPR`.
std::size_t definition_sign(std::string_view request) {
  for (std::size_t i = 0; i < request.size(); ++i) {
    if (request[i] == '\\') {
      ++i;
      continue;
    }
    if (request[i] == '=') return i;
  }
  return std::string_view::npos;
}

}  // namespace

bool in_group(const Definition& d, std::string_view group) {
  for (const auto& g : groups_of(d))
    if (ascii_iequal(trim(g), group)) return true;
  return !d.default_group.empty() && ascii_iequal(d.default_group, group);
}

std::vector<std::string> groups_of(const Definition& metric) {
  std::vector<std::string> out;
  std::string_view g = metric.groups;
  while (!g.empty()) {
    auto semi = g.find(';');
    if (auto one = g.substr(0, semi); !one.empty()) out.emplace_back(one);
    if (semi == std::string_view::npos) break;
    g.remove_prefix(semi + 1);
  }
  return out;
}

ScaleUnit parse_scale_unit(std::string_view text) {
  ScaleUnit s;
  std::string t(trim(text));
  if (t.empty()) return s;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str()) {
    s.unit = t;
    return s;
  }
  s.factor = v;
  s.unit = std::string(trim(end));
  return s;
}

std::vector<Definition> machine_metrics(const spec::Machine& machine) {
  std::vector<Definition> out;
  for (const auto& m : machine.table_metrics()) {
    Definition d;
    d.name = m.name;
    d.expr = m.expr;
    d.groups = m.groups;
    d.threshold = m.threshold;
    d.scale_unit = m.scale_unit;
    d.constraint = m.constraint;
    d.description = m.description;
    d.default_group = m.default_group;
    d.no_group = m.no_group;
    d.aggregation = m.aggregation;
    d.pmu = m.pmu;
    d.compat = m.compat;
    d.origin = Origin{m.origin, 0, 0};
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const Definition& a, const Definition& b) {
    return spec::ascii_lowered(a.name) < spec::ascii_lowered(b.name);
  });
  return out;
}

namespace {

// An event of a metric: the identifier it was resolved for, and its index among that one's events.
using Which = std::pair<std::string, std::size_t>;

// A group (or groups, when the counters need more) opened for the plan: its events in plan.events,
// parallel to the identifiers' events they are.
struct Opened {
  std::vector<std::size_t> events;
  std::vector<Which> which;
};

}  // namespace

// What the plans of one Planner share: the definitions, and the resolvers (each with the metrics it
// folded and the events it resolved), one per value of `?`.
struct Planner::Shared {
  Shared(const spec::Machine& m, const Options& o) : machine(m), options(o) {
    for (const auto& d : options.extra) defs.add(d);
    for (auto& d : machine_metrics(machine))
      if (options.pmu.empty() || d.pmu == options.pmu) defs.add(std::move(d));
  }
  const spec::Machine& machine;
  const Options options;
  Definitions defs;
  std::map<int, Resolver> resolvers;

  // The resolver for `parameter` (-1: the options' own): for a request with an ad hoc definition, one
  // of its own (`adhoc` shadows a metric of its name, for this request only).
  Resolver& resolver(int parameter, std::optional<Resolver>& adhoc_resolver, const Definition* adhoc) {
    if (adhoc) {
      if (!adhoc_resolver) adhoc_resolver.emplace(machine, options, defs, adhoc);
      if (parameter < 0 || parameter == options.parameter) return *adhoc_resolver;
    }
    int key = parameter < 0 ? options.parameter : parameter;
    auto it = resolvers.find(key);
    if (it == resolvers.end()) {
      Options other = options;
      other.parameter = key;
      it = resolvers.try_emplace(key, machine, other, defs, nullptr).first;
    }
    return it->second;
  }
};

namespace {

// One plan: the request read into the metrics wanted, each resolved (once per value of `?`, once per
// core PMU on a hybrid machine), then their events grouped per metric and PMU, sharing groups.
class Planning {
 public:
  explicit Planning(Planner::Shared& shared)
      : shared_(shared), machine_(shared.machine), options_(shared.options), defs_(shared.defs) {}

  Plan run(std::string_view request) {
    want_request(request);
    resolve_wanted();
    order_by_size();
    find_ungrouped();
    for (std::size_t which : order_) group_metric(which);
    return std::move(out_);
  }

 private:
  Planner::Shared& shared_;
  const spec::Machine& machine_;
  const Options& options_;
  const Definitions& defs_;
  std::optional<Definition> adhoc_;         // the request's `NAME = EXPR`
  std::optional<Resolver> adhoc_resolver_;  // the resolver that sees it
  Resolver* r_ = &shared_.resolver(-1, adhoc_resolver_, nullptr);
  std::vector<Definition> wanted_;  // what was asked for, in order, each metric once
  std::vector<char> wanted_alone_;  // asked for by a name its MetricgroupNoGroup lists
  std::set<std::pair<std::string, std::string>> wanted_names_;  // each wanted metric's name and PMU
  Plan out_;
  std::vector<char> alone_by_request_;                    // parallel to out_.metrics
  std::vector<std::vector<std::string>> ids_of_;          // each metric's identifiers
  std::vector<std::size_t> order_;                        // the metrics, the most identifiers first
  std::vector<char> alone_of_;                            // not grouped
  std::map<std::string, std::vector<Which>> topdown_of_;  // the ungrouped metrics' topdown events, per PMU
  std::vector<Opened> opened_;

  void want(const Definition& d, std::string_view item = {}) {
    if (!wanted_names_.insert({spec::ascii_lowered(d.name), d.pmu}).second) return;
    wanted_.push_back(d);
    Definition names;
    names.groups = d.no_group;
    const auto listed = groups_of(names);
    wanted_alone_.push_back(std::any_of(listed.begin(), listed.end(),
                                        [&](const std::string& g) { return ascii_iequal(trim(g), item); }));
  }

  // The metrics a request names: an ad hoc `NAME = EXPR`, or metric and group names. An error in the
  // request itself (no such metric, no expression after '=') is drawn under it.
  void want_request(std::string_view request) {
    try {
      if (auto sign = definition_sign(request); sign != std::string_view::npos)
        want_definition(request, sign);
      else
        want_names(request);
    } catch (const Error& e) {
      throw MetricError(e, "", std::string(request), Origin{});
    }
  }

  void want_definition(std::string_view request, std::size_t sign) {
    std::string_view name = trim(request.substr(0, sign));
    std::string_view expr = trim(request.substr(sign + 1));
    if (name.empty())
      throw Error(ErrorKind::syntax, "expected the metric's name before '='",
                  Span{0, static_cast<std::uint32_t>(std::max<std::size_t>(sign, 1))});
    Definition d;
    d.name = std::string(name);
    d.expr = std::string(expr);
    if (d.expr.empty())
      throw Error(ErrorKind::syntax, fmt::format("expected the expression of metric '{}' after '='", d.name),
                  Span{static_cast<std::uint32_t>(sign), static_cast<std::uint32_t>(sign + 1)});
    adhoc_ = std::move(d);
    r_ = &shared_.resolver(-1, adhoc_resolver_, &*adhoc_);
    want(*adhoc_);
  }

  void want_names(std::string_view request) {
    for (const auto& [item, span] : request_items(request)) {
      bool found = false;
      for (const Definition* d : defs_.named(item)) want(*d, item), found = true;
      if (!found)
        for (const Definition* d : defs_.in_group(item)) want(*d, item), found = true;
      if (!found)
        throw Error(ErrorKind::unknown_name, fmt::format("unknown metric or metric group '{}'", item), span,
                    !options_.pmu.empty()
                        ? fmt::format("only the metrics of PMU '{}' are looked up (--cputype){}",
                                      options_.pmu, defs_.all.empty() ? ", and the tables have none" : "")
                    : defs_.all.empty() ? "this machine has no metric tables (see --events-dir)"
                                        : "see perfspec list --metrics");
    }
  }

  // Each metric wanted, resolved: once per value of `?` when the machine has them (a resolver per
  // value), and on a hybrid machine once per core PMU its events are on.
  void resolve_wanted() {
    std::vector<std::pair<const Definition*, int>> todo;  // each metric, with `?`'s value when it has one
    for (const auto& w : wanted_) {
      if (w.expr.find('?') == std::string::npos) {
        todo.emplace_back(&w, -1);
        continue;
      }
      const auto count = machine_.metric_runtime_parameters(w.aggregation);
      if (!count) todo.emplace_back(&w, options_.parameter);
      for (unsigned j = 0; j < count.value_or(0); ++j) todo.emplace_back(&w, static_cast<int>(j));
    }
    for (const auto& [def, parameter] : todo) {
      const std::size_t w = static_cast<std::size_t>(def - wanted_.data());
      Resolver& resolver = shared_.resolver(parameter, adhoc_resolver_, adhoc_ ? &*adhoc_ : nullptr);
      ResolvedMetric m = resolver.resolve(*def);
      m.parameter = parameter;
      // On a hybrid machine a metric not written for one core PMU (an ad hoc one, or a table's without
      // Unit) is one metric per core PMU its events are on: `instructions / cycles` is the IPC of the
      // P-cores and that of the E-cores, not a ratio of their sums. Each instance counts only its own
      // PMU's events (Definition::pmu says which).
      std::vector<std::string> instances = core_instances(m, *r_, machine_);
      if (instances.empty()) {
        out_.metrics.push_back(std::move(m));
        alone_by_request_.push_back(wanted_alone_[w]);
        continue;
      }
      for (const auto& pmu : instances) {
        ResolvedMetric one = m;
        one.definition.pmu = pmu;
        out_.metrics.push_back(std::move(one));
        alone_by_request_.push_back(wanted_alone_[w]);
      }
    }
  }

  // The metrics with the most identifiers (tool events not counted) first, as perf sorts them, so that
  // a smaller metric finds its events in a group a bigger one opened.
  void order_by_size() {
    ids_of_.resize(out_.metrics.size());
    order_.resize(out_.metrics.size());
    auto hardware_ids = [](const std::vector<std::string>& ids) {
      return std::count_if(ids.begin(), ids.end(), [](const std::string& id) { return !is_tool_name(id); });
    };
    for (std::size_t i = 0; i < out_.metrics.size(); ++i) {
      const auto& m = out_.metrics[i];
      identifiers(m.expr, m.refs, ids_of_[i]);
      if (m.threshold) identifiers(*m.threshold, m.refs, ids_of_[i]);
      order_[i] = i;
    }
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
      return hardware_ids(ids_of_[a]) > hardware_ids(ids_of_[b]);
    });
  }

  // Which metrics are not grouped, and the topdown events of all of those per PMU: perf opens the
  // ungrouped metrics' events as one list, where its topdown events become one group behind slots.
  void find_ungrouped() {
    alone_of_.resize(out_.metrics.size());
    for (std::size_t which : order_) {
      ResolvedMetric& m = out_.metrics[which];
      // A metric that folded to a constant still opens an event to be shown beside: perf's placeholder,
      // duration_time.
      if (ids_of_[which].empty()) {
        ids_of_[which].push_back("duration_time");
        m.folded.push_back("no event left: duration_time opened to show it beside");
      }
      bool alone = !grouped(m, machine_, options_);
      if (!alone && alone_by_request_[which]) {
        m.folded.push_back("MetricgroupNoGroup: events not grouped when asked for by this group");
        alone = true;
      }
      alone_of_[which] = alone;
      if (alone) note_topdown(m, ids_of_[which]);
    }
  }

  void note_topdown(const ResolvedMetric& m, const std::vector<std::string>& ids) {
    for (const auto& id : ids) {
      const EventSet& set = r_->events_of(id);
      for (std::size_t k = 0; k < set.events.size(); ++k) {
        const auto& ev = set.events[k];
        if (ev.tool != ToolEvent::none || other_core_pmu(machine_, m.definition.pmu, ev.pmu) ||
            resolver::topdown_rank(machine_, ev) == 2)
          continue;
        auto& members = topdown_of_[ev.pmu];
        if (std::find(members.begin(), members.end(), Which{id, k}) == members.end())
          members.emplace_back(id, k);
      }
    }
  }

  // The events of each identifier of a metric, by the PMU each groups under, in the order the metric
  // names them: perf writes them as one group `{...}:W` (tool events outside it) and splits it as it
  // splits any written group (resolver::group_pmu_names), so that the software-context ones (msr's TSC,
  // ...) stay with the events they are measured against. Not grouped, each event is alone; but topdown
  // events stay a group with their slots leader, the only way the kernel counts them (perf regroups
  // them so too).
  std::vector<std::pair<std::string, std::vector<Which>>> groups_of_metric(std::size_t which) {
    const ResolvedMetric& m = out_.metrics[which];
    const std::vector<std::string>& ids = ids_of_[which];
    const bool alone = alone_of_[which];
    std::vector<const ResolvedEvent*> in_group;
    for (const auto& id : ids)
      for (const auto& ev : r_->events_of(id).events)
        if (!other_core_pmu(machine_, m.definition.pmu, ev.pmu) && ev.tool == ToolEvent::none)
          in_group.push_back(&ev);
    const std::vector<std::string_view> group_pmu_of = resolver::group_pmu_names(machine_, in_group);
    std::size_t next_in_group = 0;
    std::vector<std::pair<std::string, std::vector<Which>>> by_pmu;
    for (const auto& id : ids) {
      const EventSet& set = r_->events_of(id);
      for (std::size_t k = 0; k < set.events.size(); ++k) {
        const auto& ev = set.events[k];
        if (other_core_pmu(machine_, m.definition.pmu, ev.pmu)) continue;
        std::string key = ev.tool != ToolEvent::none ? "tool" : std::string(group_pmu_of[next_in_group++]);
        if (alone && key != "tool" && resolver::topdown_rank(machine_, ev) < 2)
          key += "#topdown";
        else if (alone || key == "tool")
          key += "#" + id + "#" + std::to_string(k);
        auto it = std::find_if(by_pmu.begin(), by_pmu.end(), [&](const auto& p) { return p.first == key; });
        if (it == by_pmu.end()) it = by_pmu.insert(by_pmu.end(), {key, {}});
        it->second.emplace_back(id, k);
      }
    }
    return by_pmu;
  }

  // Groups: per metric and PMU, its events as one weak group (perf's `{...}:W`), unless the metric
  // says not to group them; a group holding every event this one needs is reused.
  void group_metric(std::size_t which) {
    ResolvedMetric& m = out_.metrics[which];
    const bool alone = alone_of_[which];
    for (auto& [key, members] : groups_of_metric(which)) {
      const Opened* reuse = reusable(key, members, alone);
      if (!reuse) {
        // The ungrouped metrics' topdown events on this PMU: one group holding all of them.
        const bool topdown = options_.merge && key.ends_with("#topdown");
        reuse = &open(m, key, topdown ? topdown_of_.at(key.substr(0, key.size() - 8)) : members);
      }
      for (const auto& w : members) {
        auto at = std::find(reuse->which.begin(), reuse->which.end(), w) - reuse->which.begin();
        m.inputs[w.first].push_back(reuse->events[static_cast<std::size_t>(at)]);
      }
    }
    assign_slots(m);
  }

  // A group opened already that holds all of `members`.
  const Opened* reusable(const std::string& key, const std::vector<Which>& members, bool alone) const {
    if (!options_.merge) return nullptr;
    for (const auto& o : opened_) {
      bool all = std::all_of(members.begin(), members.end(), [&](const auto& w) {
        return std::find(o.which.begin(), o.which.end(), w) != o.which.end();
      });
      if (all && (members.size() == o.which.size() || !alone || key.ends_with("#topdown"))) return &o;
    }
    return nullptr;
  }

  // `members` opened as the groups the PMU's counters need (one, unless the tables say it has too few),
  // topdown events as the kernel takes them: slots leads, the metric events follow it.
  const Opened& open(ResolvedMetric& m, const std::string& key, std::vector<Which> members) {
    std::stable_sort(members.begin(), members.end(), [&](const auto& a, const auto& b) {
      return resolver::topdown_rank(machine_, r_->events_of(a.first).events[a.second]) <
             resolver::topdown_rank(machine_, r_->events_of(b.first).events[b.second]);
    });
    std::vector<const ResolvedEvent*> evs;
    for (const auto& [id, k] : members) evs.push_back(&r_->events_of(id).events[k]);
    const std::string_view group_pmu = std::string_view(key).substr(0, key.find('#'));
    std::vector<std::size_t> sizes = counter_fit(machine_, group_pmu, evs);
    if (sizes.size() > 1)
      m.folded.push_back(
          fmt::format("{} events on {} in {} groups: the PMU has {} generic and {} fixed "
                      "counters (counter.json)",
                      members.size(), group_pmu, sizes.size(), machine_.pmu_counters(group_pmu)->generic,
                      machine_.pmu_counters(group_pmu)->fixed));
    Opened o;
    std::size_t next = 0;
    for (std::size_t size : sizes) {
      EventGroup g;
      g.braces = size > 1;
      g.weak = size > 1;
      const std::size_t group_index = out_.events.groups.size();
      for (std::size_t n = 0; n < size; ++n, ++next) {
        const auto& [id, k] = members[next];
        ResolvedEvent ev = *evs[next];
        ev.group = group_index;
        ev.leader = g.members.empty() ? out_.events.events.size() : g.members.front();
        if (ev.metric_id.empty()) ev.metric_id = id;
        g.members.push_back(out_.events.events.size());
        o.events.push_back(out_.events.events.size());
        o.which.emplace_back(id, k);
        out_.events.events.push_back(std::move(ev));
      }
      out_.events.groups.push_back(std::move(g));
    }
    opened_.push_back(std::move(o));
    return opened_.back();
  }
};

}  // namespace

Planner::Planner(const spec::Machine& machine, const Options& options)
    : shared_(std::make_unique<Shared>(machine, options)) {}
Planner::Planner(Planner&&) noexcept = default;
Planner& Planner::operator=(Planner&&) noexcept = default;
Planner::~Planner() = default;

Plan Planner::plan(std::string_view request) { return Planning(*shared_).run(request); }

Plan plan(std::string_view request, const spec::Machine& machine, const Options& options) {
  return Planner(machine, options).plan(request);
}

}  // namespace perfspec::metric
