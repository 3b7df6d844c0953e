// SPDX-License-Identifier: MIT
#pragma once
// A table's MetricExpr as perf 6.12 carries it: its build (pmu-events/jevents.py) reads each
// expression with metric.py's ParsePerfJson, simplifies it and prints it again (ToPerfJson); that text
// is what `perf list` shows and what perf stat computes.
#include <optional>
#include <string>
#include <string_view>

namespace perfspec::spec {

/// `text` (a MetricExpr as the JSON file holds it, its escapes decoded) as perf 6.12's build prints
/// it: metric.py's regular expressions make each name an event, Python reads the result (its
/// precedence, its arithmetic on numbers: `6 * 1000` is 6000), Simplify drops `x * 1`, `x + 0` and
/// `0 * x` (but slots), and ToPerfJson prints parentheses only where perf's precedence needs them,
/// numbers as Python's Decimal normalizes them in engineering notation (`1000` is `1e3`), conditionals
/// in parentheses. nullopt where perf's build would have failed on it (Python could not evaluate it).
///
/// Example: `perf_metric_expr("(UNC_M_POWER_CHANNEL_PPD / UNC_M_CLOCKTICKS) * 100")` is
/// `UNC_M_POWER_CHANNEL_PPD / UNC_M_CLOCKTICKS * 100`; `perf_metric_expr("d_ratio(a * 1000, b)")` is
/// `d_ratio(a * 1e3, b)`.
std::optional<std::string> perf_metric_expr(std::string_view text);

}  // namespace perfspec::spec
