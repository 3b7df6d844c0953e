// SPDX-License-Identifier: MIT
#pragma once
// What the resolver's metric files share (the metric language's planning, REFERENCE.md section 10):
// metric.cpp reads requests and makes plans, metric_fold.cpp folds expressions against the machine,
// metric_fit.cpp fits events to counters and groups, metric_eval.cpp computes values.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "perfspec/metric.hpp"
#include "perfspec/resolve.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::metric::detail {

inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// The tool events perf counts itself: duration_time, user_time, system_time.
inline bool is_tool_name(std::string_view name) {
  return name == "duration_time" || name == "user_time" || name == "system_time";
}
// A number node at `span`.
inline Expr number(double v, Span span) {
  Expr e;
  e.kind = Expr::Kind::number;
  e.number = v;
  e.span = span;
  return e;
}
// The arithmetic of one operator, as perf's but that NaN (an input not counted) stays NaN through
// the logical and comparison operators too.
inline double apply(Expr::Op op, double a, double b) {
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
// d_ratio, min and max.
inline double call(Expr::Fn fn, double a, double b) {
  using Fn = Expr::Fn;
  switch (fn) {
    case Fn::d_ratio: return b == 0 ? 0 : (std::isnan(a) || std::isnan(b) ? nan : a / b);
    case Fn::min: return std::isnan(a) || std::isnan(b) ? nan : std::min(a, b);
    case Fn::max: return std::isnan(a) || std::isnan(b) ? nan : std::max(a, b);
    default: return nan;
  }
}
// Where a table metric's expression is written (its file's line and column), for errors.
Origin located(const Definition& def);

// A metric being folded: its definition (for errors) and the metrics it was reached through.
struct Frame {
  const Definition* def;
  const Frame* outer;
};

// The metrics a plan can name, in order (Options::extra first, then the machine's tables), with their
// names and groups indexed (ASCII lowercase): a request or a reference finds its metrics in constant
// time, however many there are. `all` is a deque: what is added never moves.
struct Definitions {
  std::deque<Definition> all;
  std::unordered_map<std::string, std::vector<const Definition*>> by_name, by_group;
  void add(Definition d);
  // The metrics named `name` (an ad hoc definition first, as it shadows the others), in order.
  std::vector<const Definition*> named(std::string_view name, const Definition* adhoc = nullptr) const;
  // The metrics of group `group` (MetricGroup, or the DefaultMetricgroupName), in order.
  const std::vector<const Definition*>& in_group(std::string_view group) const;
};

// How deep folding may go: the syntax trees of a metric and of the metrics it refers to, one inside the
// other, as many levels as the parser lets one tree have (perf's tables nest a few tens). Folding,
// computing and listing identifiers recurse over this, so it bounds the stack they take (about 0.75 KB
// a level in a release build).
inline constexpr unsigned max_fold_depth = 1000;
// The error of an expression deeper than that, at `span`.
inline Error nests_too_deeply(Span span) {
  return Error(ErrorKind::bad_value,
               "the expression nests too deeply with the metrics it refers to (more than " +
                   std::to_string(max_fold_depth) + " levels)",
               span);
}

class Resolver {
 public:
  // `adhoc`: a request's ad hoc `NAME = EXPR`, which shadows any metric of that name.
  Resolver(const spec::Machine& machine, const Options& options, const Definitions& defs,
           const Definition* adhoc = nullptr)
      : machine_(machine), options_(options), defs_(defs), adhoc_(adhoc) {}

  // Resolves `def` (the metric asked for): parse, fold, the metrics it refers to folded once each.
  ResolvedMetric resolve(const Definition& def);

  // The events resolved for an identifier (cached).
  const EventSet& events_of(const std::string& id);

 private:
  const spec::Machine& machine_;
  const Options options_;  // a copy: a resolver per value of `?` has its own
  const Definitions& defs_;
  const Definition* adhoc_;
  unsigned depth_ = 0;  // of fold()
  unsigned peak_ = 0;   // the deepest fold() reached (with the heights of references already folded)
  // The metrics being folded (lowercase names), from the one asked for to the innermost: a metric
  // that refers to one of them is a cycle.
  std::unordered_set<std::string> folding_;
  std::map<std::string, EventSet, std::less<>> events_;
  // Each metric referred to, folded once, with what folding it found.
  struct Folded {
    Expr expr;
    std::vector<std::string> notes;
    unsigned height = 0;  // the levels of fold() below the reference to it (its references' included)
  };
  std::map<const Definition*, Folded> refs_;
  std::vector<std::string>* folded_ = nullptr;

  [[noreturn]] void fail(const Error& e, const Frame& at) const;

  Expr parsed(const Definition& def) const;

  // The metric a name in a metric of `pmu` refers to: of the same PMU (a hybrid machine's tables
  // define a metric once per core PMU, as perf matches them), else the first of that name.
  const Definition* metric_named(std::string_view name, std::string_view pmu) const;

  std::string identifier(const Expr& e) const;

  void note(std::string text);

  // Folds `e` in place: afterwards it holds only numbers, operators and the identifiers of events.
  void fold(Expr& e, const Frame& at);

  void fold_call(Expr& e, const Frame& at);

  void fold_id(Expr& e, const Frame& at);
};

// The identifiers of `e` (through the references in `refs`), each once, in order.
void identifiers(const Expr& e, const std::map<std::string, Expr, std::less<>>& refs,
                 std::vector<std::string>& out);

// An event of another core PMU than the one metric instance `pmu` is for: not its input.
bool other_core_pmu(const spec::Machine& machine, std::string_view pmu, std::string_view event_pmu);
// The core PMUs a metric of no PMU is computed for, one instance each (empty: one metric).
std::vector<std::string> core_instances(const ResolvedMetric& m, Resolver& r, const spec::Machine& machine);
// The sizes of the groups one PMU's events are cut into so that each fits its counters.
std::vector<std::size_t> counter_fit(const spec::Machine& machine, std::string_view pmu,
                                     const std::vector<const ResolvedEvent*>& evs);
// Expr::slot of each identifier and reference of `m`.
void assign_slots(ResolvedMetric& m);
// Whether a metric's events are grouped, by its MetricConstraint (a note says why when not).
bool grouped(ResolvedMetric& m, const spec::Machine& machine, const Options& options);

}  // namespace perfspec::metric::detail
