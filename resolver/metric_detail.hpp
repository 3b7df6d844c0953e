// SPDX-License-Identifier: MIT
#pragma once
// What the resolver's metric files share (the metric language's planning, REFERENCE.md section 10):
// metric.cpp reads requests and makes plans, metric_fold.cpp folds expressions against the machine,
// metric_fit.cpp fits events to counters and groups, metric_eval.cpp computes values.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <string_view>
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

class Resolver {
 public:
  Resolver(const spec::Machine& machine, const Options& options, const std::vector<Definition>& defs)
      : machine_(machine), options_(options), defs_(defs) {}

  // Resolves `def` (the metric asked for): parse, fold, the metrics it refers to folded once each.
  ResolvedMetric resolve(const Definition& def);

  // The events resolved for an identifier (cached).
  const EventSet& events_of(const std::string& id);

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
