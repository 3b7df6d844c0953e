// SPDX-License-Identifier: MIT
// Folding a metric's expression against the machine: literals become the machine's facts, the
// metrics it names are inlined once each, constants are folded so that only the branch an `if` takes
// opens events, and what remains are the identifiers of events.
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

// Where a table metric's expression is written (its file's line and column), for errors.
Origin located(const Definition& def) {
  if (def.origin.file.empty() || def.origin.line) return def.origin;
  return spec::table_metric_origin(def.origin.file, def.name, def.expr).value_or(def.origin);
}

namespace {

// A metric on the chain being folded, for as long as it is folded.
class Folding {
 public:
  Folding(std::unordered_set<std::string>& set, std::string name) : set_(set), name_(std::move(name)) {
    fresh_ = set_.insert(name_).second;
  }
  ~Folding() {
    if (fresh_) set_.erase(name_);
  }
  Folding(const Folding&) = delete;
  Folding& operator=(const Folding&) = delete;

 private:
  std::unordered_set<std::string>& set_;
  std::string name_;
  bool fresh_ = false;
};

}  // namespace

// Indexed by the groups in_group() matches: each of MetricGroup's (trimmed), and the
// DefaultMetricgroupName.
void Definitions::add(Definition d) {
  const Definition& in = all.emplace_back(std::move(d));
  by_name[spec::ascii_lowered(in.name)].push_back(&in);
  std::vector<std::string> groups;
  for (const auto& g : groups_of(in)) groups.push_back(spec::ascii_lowered(trim(g)));
  if (!in.default_group.empty()) groups.push_back(spec::ascii_lowered(in.default_group));
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  for (const auto& g : groups) by_group[g].push_back(&in);
}

std::vector<const Definition*> Definitions::named(std::string_view name, const Definition* adhoc) const {
  std::vector<const Definition*> out;
  if (adhoc && ascii_iequal(adhoc->name, name)) out.push_back(adhoc);
  if (auto it = by_name.find(spec::ascii_lowered(name)); it != by_name.end())
    out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

const std::vector<const Definition*>& Definitions::in_group(std::string_view group) const {
  static const std::vector<const Definition*> none;
  auto it = by_group.find(spec::ascii_lowered(trim(group)));
  return it == by_group.end() ? none : it->second;
}

ResolvedMetric Resolver::resolve(const Definition& def) {
  ResolvedMetric m;
  m.definition = def;
  m.scale = parse_scale_unit(def.scale_unit);
  folded_ = &m.folded;
  Frame top{&def, nullptr};
  m.expr = parsed(def);
  {
    Folding on(folding_, spec::ascii_lowered(def.name));
    fold(m.expr, top);
  }
  if (options_.thresholds && !def.threshold.empty()) {
    // A threshold that cannot be resolved (it names an event this machine lacks) only loses the mark.
    try {
      // Its own frame, so that the metric it names (itself, usually) is a reference, not a cycle.
      Definition t = def;
      t.name = def.name + " (threshold)";
      t.expr = def.threshold;
      Expr e = parsed(t);
      Frame frame{&t, nullptr};
      Folding on(folding_, spec::ascii_lowered(t.name));
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

const EventSet& Resolver::events_of(const std::string& id) {
  auto it = events_.find(id);
  if (it == events_.end()) it = events_.emplace(id, perfspec::resolve(id, machine_)).first;
  return it->second;
}

void Resolver::fail(const Error& e, const Frame& at) const {
  throw MetricError(e, at.def->name, at.def->expr, located(*at.def));
}

Expr Resolver::parsed(const Definition& def) const {
  try {
    return parse(def.expr);
  } catch (const Error& e) {
    throw MetricError(e, def.name, def.expr, located(def));
  }
}

const Definition* Resolver::metric_named(std::string_view name, std::string_view pmu) const {
  const Definition* any = nullptr;
  if (adhoc_ && ascii_iequal(adhoc_->name, name)) {
    if (adhoc_->pmu == pmu) return adhoc_;
    any = adhoc_;
  }
  auto it = defs_.by_name.find(spec::ascii_lowered(name));
  if (it == defs_.by_name.end()) return any;
  for (const Definition* d : it->second) {
    if (d->pmu == pmu) return d;
    if (!any) any = d;
  }
  return any;
}

std::string Resolver::identifier(const Expr& e) const {
  std::string out;
  for (char c : e.name) {
    if (c == '?')
      out += std::to_string(options_.parameter);
    else
      out += c;
  }
  return out;
}

void Resolver::note(std::string text) {
  if (std::find(folded_->begin(), folded_->end(), text) == folded_->end())
    folded_->push_back(std::move(text));
}

void Resolver::fold(Expr& e, const Frame& at) {
  using K = Expr::Kind;
  if (depth_ >= max_fold_depth) fail(nests_too_deeply(e.span), at);
  ++depth_;
  peak_ = std::max(peak_, depth_);
  struct Leave {
    unsigned& depth;
    ~Leave() { --depth; }
  } leave{depth_};
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
      if (e.args[0].kind == K::number && e.args[2].kind == K::number && e.args[0].number == e.args[2].number)
        e = number(e.args[0].number, e.span);
      return;
    }
    case K::call: return fold_call(e, at);
  }
}

void Resolver::fold_call(Expr& e, const Frame& at) {
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

void Resolver::fold_id(Expr& e, const Frame& at) {
  std::string id = identifier(e);
  // Another metric's name refers to that metric (perf looks for metrics first), inlined.
  if (const Definition* other = metric_named(id, at.def->pmu); other && !is_tool_name(id)) {
    std::string lowered = spec::ascii_lowered(other->name);
    if (folding_.contains(lowered)) {
      std::string chain = other->name;
      for (const Frame* f = &at; f; f = f->outer) {
        chain = f->def->name + " -> " + chain;
        if (ascii_iequal(f->def->name, other->name)) break;
      }
      fail(Error(ErrorKind::bad_value, fmt::format("metric '{}' refers to itself: {}", other->name, chain),
                 e.span),
           at);
    }
    if (!refs_.contains(other)) {
      Folding on(folding_, std::move(lowered));
      // Folded on its own: its notes are its own, and any metric that uses it gets them.
      Folded f;
      std::vector<std::string>* outer = folded_;
      folded_ = &f.notes;
      f.expr = parsed(*other);
      Frame frame{other, &at};
      const unsigned outer_peak = peak_;
      peak_ = depth_;
      try {
        fold(f.expr, frame);
      } catch (...) {
        folded_ = outer;
        peak_ = outer_peak;
        throw;
      }
      folded_ = outer;
      f.height = peak_ - depth_;
      peak_ = std::max(outer_peak, peak_);
      refs_.emplace(other, std::move(f));
    } else {
      // Folded before (for another metric, or another plan): as deep here as when it was folded.
      const unsigned height = refs_.at(other).height;
      if (depth_ + height > max_fold_depth) fail(nests_too_deeply(e.span), at);
      peak_ = std::max(peak_, depth_ + height);
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
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                   text[end] == '.' || text[end] == '-'))
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

}  // namespace perfspec::metric::detail
