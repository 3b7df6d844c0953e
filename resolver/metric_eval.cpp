// SPDX-License-Identifier: MIT
// A metric plan's values from what was counted: the expression evaluated with perf's arithmetic (NaN
// for an input not counted, and why), the threshold's verdict, scale and unit.
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
  std::vector<char> ref_done{};  // 1: computed; 2: being computed (a reference to it is a cycle: NaN)
  unsigned depth = 0;

  double operator()(const Expr& e) {
    using K = Expr::Kind;
    // plan()'s metrics nest at most max_fold_depth levels, references included; a tree built by hand
    // may not.
    if (depth >= max_fold_depth) throw nests_too_deeply(e.span);
    ++depth;
    struct Leave {
      unsigned& depth;
      ~Leave() { --depth; }
    } leave{depth};
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
            ref_done[k] = 2;
            ref_value[k] = (*this)(*ref_at[k]);
            ref_done[k] = 1;
          }
          return ref_value[k];
        }
        if (auto m = memo.find(e.name); m != memo.end()) return m->second;
        auto it = refs.find(e.name);
        if (it == refs.end()) return nan;
        memo.emplace(e.name, nan);  // until computed: a cycle among `refs` is NaN
        double v = (*this)(it->second);
        memo[e.name] = v;
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
