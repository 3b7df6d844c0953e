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
#include "resolver/resolver.hpp"
#include "spec/ascii.hpp"
#include "spec/sysfs_io.hpp"

namespace perfspec::metric {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

using spec::ascii_iequal;
using spec::io::trim;

bool is_tool_name(std::string_view name) {
  return name == "duration_time" || name == "user_time" || name == "system_time";
}

Expr number(double v, Span span) {
  Expr e;
  e.kind = Expr::Kind::number;
  e.number = v;
  e.span = span;
  return e;
}

// The arithmetic of one operator, as perf's but that NaN (an input not counted) stays NaN through
// the logical and comparison operators too.
double apply(Expr::Op op, double a, double b) {
  using Op = Expr::Op;
  if (std::isnan(a) || std::isnan(b)) return nan;
  switch (op) {
    case Op::logical_or: return (a != 0 || b != 0) ? 1 : 0;
    case Op::logical_xor: return ((a != 0) != (b != 0)) ? 1 : 0;
    case Op::logical_and: return (a != 0 && b != 0) ? 1 : 0;
    case Op::less: return a < b ? 1 : 0;
    case Op::greater: return a > b ? 1 : 0;
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::div: return b == 0 ? nan : a / b;
    case Op::mod: {
      auto x = static_cast<long long>(a), y = static_cast<long long>(b);
      return y == 0 ? nan : static_cast<double>(x % y);
    }
  }
  return nan;
}

double call(Expr::Fn fn, double a, double b) {
  using Fn = Expr::Fn;
  switch (fn) {
    case Fn::d_ratio: return b == 0 ? 0 : (std::isnan(a) || std::isnan(b) ? nan : a / b);
    case Fn::min: return std::isnan(a) || std::isnan(b) ? nan : std::min(a, b);
    case Fn::max: return std::isnan(a) || std::isnan(b) ? nan : std::max(a, b);
    default: return nan;
  }
}

// Where a table metric's expression is written (its file's line and column), for errors.
Origin located(const Definition& def) {
  if (def.origin.file.empty() || def.origin.line) return def.origin;
  return spec::table_metric_origin(def.origin.file, def.name, def.expr).value_or(def.origin);
}

// A metric being folded: its definition (for errors) and the metrics it was reached through.
struct Frame {
  const Definition* def;
  const Frame* outer;
};

class Resolver {
 public:
  Resolver(const spec::Machine& machine, const Options& options, const std::vector<Definition>& defs)
      : machine_(machine), options_(options), defs_(defs) {}

  // Resolves `def` (the metric asked for): parse, fold, the metrics it refers to folded once each.
  ResolvedMetric resolve(const Definition& def) {
    ResolvedMetric m;
    m.definition = def;
    m.scale = parse_scale_unit(def.scale_unit);
    folded_ = &m.folded;
    Frame top{&def, nullptr};
    m.expr = parsed(def);
    fold(m.expr, top);
    if (options_.thresholds && !def.threshold.empty()) {
      // A threshold that cannot be resolved (it names an event this machine lacks) only loses the mark.
      try {
        // Its own frame, so that the metric it names (itself, usually) is a reference, not a cycle.
        Definition t = def;
        t.name = def.name + " (threshold)";
        t.expr = def.threshold;
        Expr e = parsed(t);
        Frame frame{&t, nullptr};
        fold(e, frame);
        m.threshold = std::move(e);
      } catch (const Error& e) {
        m.folded.push_back(fmt::format("threshold not used: {}", e.message()));
      }
    }
    // The metrics referred to, transitively, with what folding them found.
    // Each with the PMU of the metric it is written in, which picks the metric a name refers to.
    std::vector<std::pair<const Expr*, const std::string*>> todo{{&m.expr, &def.pmu}};
    if (m.threshold) todo.emplace_back(&*m.threshold, &def.pmu);
    while (!todo.empty()) {
      auto [e, pmu] = todo.back();
      todo.pop_back();
      if (e->kind == Expr::Kind::ref && !m.refs.contains(e->name)) {
        const Definition* other = metric_named(e->name, *pmu);
        const Folded& f = refs_.at(other);
        m.refs.emplace(e->name, f.expr);
        m.uses.push_back(e->name);
        for (const auto& n : f.notes)
          if (std::find(m.folded.begin(), m.folded.end(), n) == m.folded.end()) m.folded.push_back(n);
        todo.emplace_back(&m.refs.at(e->name), &other->pmu);
        continue;
      }
      for (const auto& a : e->args) todo.emplace_back(&a, pmu);
    }
    std::sort(m.uses.begin(), m.uses.end());
    return m;
  }

  // The events resolved for an identifier (cached).
  const EventSet& events_of(const std::string& id) {
    auto it = events_.find(id);
    if (it == events_.end()) it = events_.emplace(id, perfspec::resolve(id, machine_)).first;
    return it->second;
  }

 private:
  const spec::Machine& machine_;
  const Options options_;  // a copy: a resolver per value of `?` has its own
  const std::vector<Definition>& defs_;
  std::map<std::string, EventSet, std::less<>> events_;
  // Each metric referred to, folded once, with what folding it found.
  struct Folded {
    Expr expr;
    std::vector<std::string> notes;
  };
  std::map<const Definition*, Folded> refs_;
  std::vector<std::string>* folded_ = nullptr;

  [[noreturn]] void fail(const Error& e, const Frame& at) const {
    throw MetricError(e, at.def->name, at.def->expr, located(*at.def));
  }

  Expr parsed(const Definition& def) const {
    try {
      return parse(def.expr);
    } catch (const Error& e) {
      throw MetricError(e, def.name, def.expr, located(def));
    }
  }

  // The metric a name in a metric of `pmu` refers to: of the same PMU (a hybrid machine's tables
  // define a metric once per core PMU, as perf matches them), else the first of that name.
  const Definition* metric_named(std::string_view name, std::string_view pmu) const {
    const Definition* any = nullptr;
    for (const auto& d : defs_)
      if (ascii_iequal(d.name, name)) {
        if (d.pmu == pmu) return &d;
        if (!any) any = &d;
      }
    return any;
  }

  std::string identifier(const Expr& e) const {
    std::string out;
    for (char c : e.name) {
      if (c == '?')
        out += std::to_string(options_.parameter);
      else
        out += c;
    }
    return out;
  }

  void note(std::string text) {
    if (std::find(folded_->begin(), folded_->end(), text) == folded_->end())
      folded_->push_back(std::move(text));
  }

  // Folds `e` in place: afterwards it holds only numbers, operators and the identifiers of events.
  void fold(Expr& e, const Frame& at) {
    using K = Expr::Kind;
    switch (e.kind) {
      case K::number:
      case K::nan:
      case K::ref: return;
      case K::literal: {
        double v = 0;
        try {
          v = machine_.metric_literal(e.name, options_.target);
        } catch (const Error& err) {
          fail(Error(err.kind(), err.message(), e.span, err.help()), at);
        }
        note(fmt::format("#{} = {}", e.name, v));
        e = number(v, e.span);
        return;
      }
      case K::id: return fold_id(e, at);
      case K::negate:
        fold(e.args[0], at);
        if (e.args[0].kind == K::number) e = number(-e.args[0].number, e.span);
        return;
      case K::binary:
        fold(e.args[0], at);
        fold(e.args[1], at);
        if (e.args[0].kind == K::number && e.args[1].kind == K::number)
          e = number(apply(e.op, e.args[0].number, e.args[1].number), e.span);
        return;
      case K::select: {
        fold(e.args[1], at);
        if (e.args[1].kind == K::number) {
          // A known condition: only the branch taken is resolved (its events alone are opened).
          Expr taken = std::move(e.args[e.args[1].number != 0 ? 0 : 2]);
          fold(taken, at);
          e = std::move(taken);
          return;
        }
        fold(e.args[0], at);
        fold(e.args[2], at);
        if (e.args[0].kind == K::number && e.args[2].kind == K::number &&
            e.args[0].number == e.args[2].number)
          e = number(e.args[0].number, e.span);
        return;
      }
      case K::call: return fold_call(e, at);
    }
  }

  void fold_call(Expr& e, const Frame& at) {
    using F = Expr::Fn;
    switch (e.fn) {
      case F::d_ratio:
        fold(e.args[1], at);
        if (e.args[1].kind == Expr::Kind::number && e.args[1].number == 0) {
          e = number(0, e.span);  // perf: a ratio over a constant 0 is 0, and needs no event
          return;
        }
        [[fallthrough]];
      case F::min:
      case F::max:
        fold(e.args[0], at);
        fold(e.args[1], at);
        if (e.args[0].kind == Expr::Kind::number && e.args[1].kind == Expr::Kind::number)
          e = number(call(e.fn, e.args[0].number, e.args[1].number), e.span);
        return;
      case F::has_event: {
        std::string id = identifier(e.args[0]);
        bool has = true;
        try {
          has = !events_of(id).events.empty();
        } catch (const Error&) {
          has = false;
        }
        note(fmt::format("has_event({}) = {}", id, has ? 1 : 0));
        e = number(has ? 1 : 0, e.span);
        return;
      }
      case F::source_count: {
        std::string id = identifier(e.args[0]);
        std::size_t n = 0;
        try {
          n = events_of(id).events.size();
        } catch (const Error& err) {
          fail(Error(err.kind(), err.message(), e.args[0].span, err.help()), at);
        }
        note(fmt::format("source_count({}) = {}", id, n));
        e = number(static_cast<double>(n), e.span);
        return;
      }
      case F::strcmp_cpuid_str: {
        const std::string& want = e.args[0].name;
        const std::string& cpuid = machine_.cpuid();
        bool arm = spec::table_arch(machine_.tables_folder(), cpuid) == spec::TableArch::arm64;
        bool match =
            !cpuid.empty() && (arm ? spec::midr_matches(want, cpuid) : spec::cpuid_matches(want, cpuid));
        note(fmt::format("strcmp_cpuid_str({}) = {}", want, match ? 1 : 0));
        e = number(match ? 1 : 0, e.span);
        return;
      }
    }
  }

  void fold_id(Expr& e, const Frame& at) {
    std::string id = identifier(e);
    // Another metric's name refers to that metric (perf looks for metrics first), inlined.
    if (const Definition* other = metric_named(id, at.def->pmu); other && !is_tool_name(id)) {
      std::string chain = other->name;
      for (const Frame* f = &at; f; f = f->outer) {
        chain = f->def->name + " -> " + chain;
        if (ascii_iequal(f->def->name, other->name))
          fail(Error(ErrorKind::bad_value,
                     fmt::format("metric '{}' refers to itself: {}", other->name, chain), e.span),
               at);
      }
      if (!refs_.contains(other)) {
        // Folded on its own: its notes are its own, and any metric that uses it gets them.
        Folded f;
        std::vector<std::string>* outer = folded_;
        folded_ = &f.notes;
        f.expr = parsed(*other);
        Frame frame{other, &at};
        try {
          fold(f.expr, frame);
        } catch (...) {
          folded_ = outer;
          throw;
        }
        folded_ = outer;
        refs_.emplace(other, std::move(f));
      }
      Expr ref;
      ref.kind = Expr::Kind::ref;
      ref.name = other->name;
      ref.text = e.text;
      ref.span = e.span;
      e = std::move(ref);
      return;
    }
    try {
      const EventSet& set = events_of(id);
      if (set.events.empty())
        throw Error(ErrorKind::unknown_name, fmt::format("'{}' names no event of this machine", id));
    } catch (const Error& err) {
      std::string message = err.message();
      // The event string's own error, when it does not say which identifier it is about.
      if (message.find("'" + id + "'") == std::string::npos)
        message = fmt::format("{} (in event '{}')", message, id);
      std::string help = err.help();
      // `page-faults` in a metric is `page` minus `faults`: perf's metrics escape the dash.
      std::string_view text = at.def->expr;
      if (e.span.end < text.size() && text[e.span.end] == '-') {
        std::size_t end = e.span.end + 1;
        while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                     text[end] == '_' || text[end] == '.' || text[end] == '-'))
          ++end;
        std::string whole(text.substr(e.span.begin, end - e.span.begin));
        std::string escaped;
        for (char c : whole) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
        help = fmt::format("in a metric '-' subtracts; an event named '{}' is written '{}'", whole, escaped);
      }
      fail(Error(err.kind(), message, e.span, help), at);
    }
    e.name = id;  // the `?` replaced: the key of the plan's inputs
  }
};

void identifiers(const Expr& e, const std::map<std::string, Expr, std::less<>>& refs,
                 std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::id) {
    if (std::find(out.begin(), out.end(), e.name) == out.end()) out.push_back(e.name);
    return;
  }
  if (e.kind == Expr::Kind::ref) {
    if (auto it = refs.find(e.name); it != refs.end()) identifiers(it->second, refs, out);
    return;
  }
  for (const auto& a : e.args) identifiers(a, refs, out);
}

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

bool is_core_pmu(const spec::Machine& machine, std::string_view name) {
  const auto& cores = machine.core_pmus();
  return std::any_of(cores.begin(), cores.end(), [&](const spec::Pmu* p) { return p->name() == name; });
}

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

}  // namespace

Plan plan(std::string_view request, const spec::Machine& machine, const Options& options) {
  std::vector<Definition> defs = options.extra;
  for (auto& d : machine_metrics(machine)) defs.push_back(std::move(d));

  // What was asked for, in order, each metric once.
  std::vector<Definition> wanted;
  std::vector<char> wanted_alone;  // asked for by a name its MetricgroupNoGroup lists
  auto want = [&](const Definition& d, std::string_view item = {}) {
    for (const auto& w : wanted)
      if (ascii_iequal(w.name, d.name) && w.pmu == d.pmu) return;
    wanted.push_back(d);
    Definition names;
    names.groups = d.no_group;
    const auto listed = groups_of(names);
    wanted_alone.push_back(std::any_of(listed.begin(), listed.end(),
                                       [&](const std::string& g) { return ascii_iequal(trim(g), item); }));
  };
  // An error in the request itself (no such metric, no expression after '=') is drawn under it.
  try {
    if (auto sign = definition_sign(request); sign != std::string_view::npos) {
      std::string_view name = trim(request.substr(0, sign));
      std::string_view expr = trim(request.substr(sign + 1));
      if (name.empty())
        throw Error(ErrorKind::syntax, "expected the metric's name before '='",
                    Span{0, static_cast<std::uint32_t>(std::max<std::size_t>(sign, 1))});
      Definition d;
      d.name = std::string(name);
      d.expr = std::string(expr);
      if (d.expr.empty())
        throw Error(ErrorKind::syntax,
                    fmt::format("expected the expression of metric '{}' after '='", d.name),
                    Span{static_cast<std::uint32_t>(sign), static_cast<std::uint32_t>(sign + 1)});
      defs.insert(defs.begin(), d);
      want(d);
    } else {
      for (const auto& [item, span] : request_items(request)) {
        bool found = false;
        for (const auto& d : defs)
          if (ascii_iequal(d.name, item)) want(d, item), found = true;
        if (!found)
          for (const auto& d : defs)
            if (in_group(d, item)) want(d, item), found = true;
        if (!found)
          throw Error(ErrorKind::unknown_name, fmt::format("unknown metric or metric group '{}'", item), span,
                      defs.empty() ? "this machine has no metric tables (see --events-dir)"
                                   : "see perfspec list --metrics");
      }
    }

  } catch (const Error& e) {
    throw MetricError(e, "", std::string(request), Origin{});
  }

  Plan out;
  Resolver r(machine, options, defs);
  std::vector<char> alone_by_request;                   // parallel to out.metrics
  std::vector<std::pair<const Definition*, int>> todo;  // each metric, with `?`'s value when it has one
  for (std::size_t w = 0; w < wanted.size(); ++w) {
    if (wanted[w].expr.find('?') == std::string::npos) {
      todo.emplace_back(&wanted[w], -1);
      continue;
    }
    const auto count = machine.metric_runtime_parameters(wanted[w].aggregation);
    if (!count) todo.emplace_back(&wanted[w], options.parameter);
    for (unsigned j = 0; j < count.value_or(0); ++j) todo.emplace_back(&wanted[w], static_cast<int>(j));
  }
  std::map<int, Resolver> with_parameter;  // a resolver per value of `?`
  for (const auto& [def, parameter] : todo) {
    const std::size_t w = static_cast<std::size_t>(def - wanted.data());
    const Definition& d = *def;
    Resolver* resolver = &r;
    if (parameter >= 0 && parameter != options.parameter) {
      auto it = with_parameter.find(parameter);
      if (it == with_parameter.end()) {
        Options other = options;
        other.parameter = parameter;
        it = with_parameter.try_emplace(parameter, machine, other, defs).first;
      }
      resolver = &it->second;
    }
    ResolvedMetric m = resolver->resolve(d);
    m.parameter = parameter;
    // On a hybrid machine a metric not written for one core PMU (an ad hoc one, or a table's without
    // Unit) is one metric per core PMU its events are on: `instructions / cycles` is the IPC of the
    // P-cores and that of the E-cores, not a ratio of their sums. Each instance counts only its own
    // PMU's events (Definition::pmu says which).
    std::vector<std::string> instances = core_instances(m, r, machine);
    if (instances.empty()) {
      out.metrics.push_back(std::move(m));
      alone_by_request.push_back(wanted_alone[w]);
      continue;
    }
    for (const auto& pmu : instances) {
      ResolvedMetric one = m;
      one.definition.pmu = pmu;
      out.metrics.push_back(std::move(one));
      alone_by_request.push_back(wanted_alone[w]);
    }
  }

  // Groups: per metric and PMU, its events as one weak group (perf's `{...}:W`), unless the metric
  // says not to group them; a group holding every event this one needs is reused.
  struct Opened {
    std::vector<std::size_t> events;                         // of out.events, parallel to the pairs below
    std::vector<std::pair<std::string, std::size_t>> which;  // identifier, its k-th event
  };
  std::vector<Opened> opened;
  // The metrics with the most identifiers (tool events not counted) first, as perf sorts them, so that
  // a smaller metric finds its events in a group a bigger one opened.
  std::vector<std::vector<std::string>> ids_of(out.metrics.size());
  std::vector<std::size_t> order(out.metrics.size());
  auto hardware_ids = [](const std::vector<std::string>& ids) {
    return std::count_if(ids.begin(), ids.end(), [](const std::string& id) { return !is_tool_name(id); });
  };
  for (std::size_t i = 0; i < out.metrics.size(); ++i) {
    const auto& m = out.metrics[i];
    identifiers(m.expr, m.refs, ids_of[i]);
    if (m.threshold) identifiers(*m.threshold, m.refs, ids_of[i]);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return hardware_ids(ids_of[a]) > hardware_ids(ids_of[b]);
  });
  // Which metrics are not grouped, and the topdown events of all of those per PMU: perf opens the
  // ungrouped metrics' events as one list, where its topdown events become one group behind slots.
  std::vector<char> alone_of(out.metrics.size());
  std::map<std::string, std::vector<std::pair<std::string, std::size_t>>> topdown_of;
  for (std::size_t which : order) {
    ResolvedMetric& m = out.metrics[which];
    // A metric that folded to a constant still opens an event to be shown beside: perf's placeholder,
    // duration_time.
    if (ids_of[which].empty()) {
      ids_of[which].push_back("duration_time");
      m.folded.push_back("no event left: duration_time opened to show it beside");
    }
    bool alone = !grouped(m, machine, options);
    if (!alone && alone_by_request[which]) {
      m.folded.push_back("MetricgroupNoGroup: events not grouped when asked for by this group");
      alone = true;
    }
    alone_of[which] = alone;
    if (!alone) continue;
    for (const auto& id : ids_of[which]) {
      const EventSet& set = r.events_of(id);
      for (std::size_t k = 0; k < set.events.size(); ++k) {
        const auto& ev = set.events[k];
        if (ev.tool != ToolEvent::none || other_core_pmu(machine, m.definition.pmu, ev.pmu) ||
            resolver::topdown_rank(machine, ev) == 2)
          continue;
        auto& members = topdown_of[ev.pmu];
        if (std::find(members.begin(), members.end(), std::pair{id, k}) == members.end())
          members.emplace_back(id, k);
      }
    }
  }
  for (std::size_t which : order) {
    ResolvedMetric& m = out.metrics[which];
    const std::vector<std::string>& ids = ids_of[which];
    const bool alone = alone_of[which];
    // The events of each identifier, by the PMU each groups under, in the order the metric names them:
    // perf writes them as one group `{...}:W` (tool events outside it) and splits it as it splits any
    // written group (resolver::group_pmu_names), so that the software-context ones (msr's TSC, ...) stay
    // with the events they are measured against.
    std::vector<const ResolvedEvent*> in_group;
    for (const auto& id : ids) {
      const EventSet& set = r.events_of(id);
      for (const auto& ev : set.events)
        if (!other_core_pmu(machine, m.definition.pmu, ev.pmu) && ev.tool == ToolEvent::none)
          in_group.push_back(&ev);
    }
    const std::vector<std::string_view> group_pmu_of = resolver::group_pmu_names(machine, in_group);
    std::size_t next_in_group = 0;
    std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::size_t>>>> by_pmu;
    for (const auto& id : ids) {
      const EventSet& set = r.events_of(id);
      for (std::size_t k = 0; k < set.events.size(); ++k) {
        const auto& ev = set.events[k];
        if (other_core_pmu(machine, m.definition.pmu, ev.pmu)) continue;
        std::string key = ev.tool != ToolEvent::none ? "tool" : std::string(group_pmu_of[next_in_group++]);
        // Not grouped, each event is alone; but topdown events stay a group with their slots leader,
        // the only way the kernel counts them (perf regroups them so too).
        if (alone && key != "tool" && resolver::topdown_rank(machine, ev) < 2)
          key += "#topdown";
        else if (alone || key == "tool")
          key += "#" + id + "#" + std::to_string(k);
        auto it = std::find_if(by_pmu.begin(), by_pmu.end(), [&](const auto& p) { return p.first == key; });
        if (it == by_pmu.end()) it = by_pmu.insert(by_pmu.end(), {key, {}});
        it->second.emplace_back(id, k);
      }
    }
    for (auto& [key, members] : by_pmu) {
      // Reuse a group that holds all of these.
      const Opened* reuse = nullptr;
      for (const auto& o : opened) {
        if (!options.merge) break;
        bool all = std::all_of(members.begin(), members.end(), [&](const auto& w) {
          return std::find(o.which.begin(), o.which.end(), w) != o.which.end();
        });
        if (all && (members.size() == o.which.size() || !alone || key.ends_with("#topdown"))) {
          reuse = &o;
          break;
        }
      }
      // The ungrouped metrics' topdown events on this PMU: one group holding all of them.
      const auto own = members;
      if (!reuse && options.merge && key.ends_with("#topdown"))
        members = topdown_of.at(key.substr(0, key.size() - 8));
      if (!reuse) {
        // Topdown events as the kernel takes them: slots leads, the metric events follow it.
        std::stable_sort(members.begin(), members.end(), [&](const auto& a, const auto& b) {
          return resolver::topdown_rank(machine, r.events_of(a.first).events[a.second]) <
                 resolver::topdown_rank(machine, r.events_of(b.first).events[b.second]);
        });
        Opened o;
        // As many groups as the PMU's counters need (one, unless the tables say it has too few).
        std::vector<const ResolvedEvent*> evs;
        for (const auto& [id, k] : members) evs.push_back(&r.events_of(id).events[k]);
        const std::string_view group_pmu = std::string_view(key).substr(0, key.find('#'));
        std::vector<std::size_t> sizes = counter_fit(machine, group_pmu, evs);
        if (sizes.size() > 1)
          m.folded.push_back(
              fmt::format("{} events on {} in {} groups: the PMU has {} generic and {} fixed "
                          "counters (counter.json)",
                          members.size(), group_pmu, sizes.size(), machine.pmu_counters(group_pmu)->generic,
                          machine.pmu_counters(group_pmu)->fixed));
        std::size_t next = 0;
        for (std::size_t size : sizes) {
          EventGroup g;
          g.braces = size > 1;
          g.weak = size > 1;
          const std::size_t group_index = out.events.groups.size();
          for (std::size_t n = 0; n < size; ++n, ++next) {
            const auto& [id, k] = members[next];
            ResolvedEvent ev = *evs[next];
            ev.group = group_index;
            ev.leader = g.members.empty() ? out.events.events.size() : g.members.front();
            if (ev.metric_id.empty()) ev.metric_id = id;
            g.members.push_back(out.events.events.size());
            o.events.push_back(out.events.events.size());
            o.which.emplace_back(id, k);
            out.events.events.push_back(std::move(ev));
          }
          out.events.groups.push_back(std::move(g));
        }
        opened.push_back(std::move(o));
        reuse = &opened.back();
      }
      for (const auto& w : own) {
        auto at = std::find(reuse->which.begin(), reuse->which.end(), w) - reuse->which.begin();
        m.inputs[w.first].push_back(reuse->events[static_cast<std::size_t>(at)]);
      }
    }
    assign_slots(m);
  }
  return out;
}

namespace {

// Whether plan() gave `m`'s identifiers and references their slots (Expr::slot).
bool indexed(const ResolvedMetric& m) {
  auto any_id = [](const Expr& e, auto&& self) -> int {
    if (e.kind == Expr::Kind::id || e.kind == Expr::Kind::ref) return e.slot != 0 ? 1 : -1;
    for (const auto& a : e.args)
      if (int r = self(a, self); r != 0) return r;
    return 0;
  };
  return any_id(m.expr, any_id) >= 0;
}

struct Evaluator {
  const std::map<std::string, double, std::less<>>& value_of;
  const std::map<std::string, Expr, std::less<>>& refs;
  std::map<std::string, double, std::less<>> memo{};  // each referred metric computed once
  // A planned metric's values by slot (Expr::slot - 1), and its references' once computed.
  std::span<const double> slots{};
  std::vector<const Expr*> ref_at{};
  std::vector<double> ref_value{};
  std::vector<char> ref_done{};

  double operator()(const Expr& e) {
    using K = Expr::Kind;
    switch (e.kind) {
      case K::number: return e.number;
      case K::nan:
      case K::literal: return nan;  // literals are folded away by plan()
      case K::id: {
        if (e.slot != 0 && e.slot <= slots.size()) return slots[e.slot - 1];
        auto it = value_of.find(e.name);
        return it == value_of.end() ? nan : it->second;
      }
      case K::ref: {
        if (e.slot != 0 && e.slot <= ref_at.size()) {
          const std::size_t k = e.slot - 1;
          if (!ref_done[k]) {
            ref_value[k] = (*this)(*ref_at[k]);
            ref_done[k] = 1;
          }
          return ref_value[k];
        }
        if (auto m = memo.find(e.name); m != memo.end()) return m->second;
        auto it = refs.find(e.name);
        double v = it == refs.end() ? nan : (*this)(it->second);
        memo.emplace(e.name, v);
        return v;
      }
      case K::negate: return -(*this)(e.args[0]);
      case K::binary: {
        double a = (*this)(e.args[0]);
        return apply(e.op, a, (*this)(e.args[1]));
      }
      case K::select: {
        double c = (*this)(e.args[1]);
        if (std::isnan(c)) return nan;
        return (*this)(e.args[c != 0 ? 0 : 2]);
      }
      case K::call:
        switch (e.fn) {
          case Expr::Fn::d_ratio:
          case Expr::Fn::min:
          case Expr::Fn::max: {
            double a = (*this)(e.args[0]);
            return call(e.fn, a, (*this)(e.args[1]));
          }
          default: return nan;  // has_event, source_count, strcmp_cpuid_str: folded by plan()
        }
    }
    return nan;
  }
};

}  // namespace

double evaluate(const Expr& e, const std::map<std::string, double, std::less<>>& value_of,
                const std::map<std::string, Expr, std::less<>>& refs) {
  return Evaluator{value_of, refs}(e);
}

std::vector<Value> evaluate(const Plan& plan, std::span<const double> event_values,
                            std::span<const std::string> why) {
  std::vector<Value> out;
  out.reserve(plan.metrics.size());
  static const std::map<std::string, double, std::less<>> by_name;  // every identifier has a slot
  std::vector<double> slots;
  for (const auto& m : plan.metrics) {
    slots.clear();
    std::string missing;
    for (const auto& [id, events] : m.inputs) {
      double sum = 0;
      for (std::size_t i : events) {
        double v = i < event_values.size() ? event_values[i] : nan;
        // A tool event is counted in ns; metrics take it in seconds, as perf gives it to them.
        if (i < plan.events.events.size() && plan.events.events[i].tool != ToolEvent::none) v *= 1e-9;
        if (std::isnan(v) && missing.empty())
          missing = fmt::format("'{}' was not counted{}", id,
                                i < why.size() && !why[i].empty() ? ": " + why[i] : std::string{});
        sum += v;
      }
      slots.push_back(sum);
    }
    Value v;
    Evaluator eval{by_name, m.refs};
    eval.slots = slots;
    eval.ref_at.reserve(m.refs.size());
    for (const auto& [name, expr] : m.refs) eval.ref_at.push_back(&expr);
    eval.ref_value.assign(m.refs.size(), nan);
    eval.ref_done.assign(m.refs.size(), 0);
    // A metric not indexed by plan() (built by hand) finds its identifiers by name.
    const bool by_slot = indexed(m);
    std::map<std::string, double, std::less<>> values;
    if (!by_slot) {
      std::size_t k = 0;
      for (const auto& [id, events] : m.inputs) values[id] = slots[k++];
      eval.slots = {};
    }
    Evaluator by_names{values, m.refs};
    Evaluator& use = by_slot ? eval : by_names;
    double raw = use(m.expr);
    if (std::isnan(raw)) {
      v.why = !missing.empty() ? missing : "no number: the expression divides by zero or is NaN";
    } else {
      v.value = raw * m.scale.factor;
    }
    if (m.threshold) {
      double t = use(*m.threshold);
      if (!std::isnan(t)) v.over_threshold = t != 0;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace perfspec::metric
