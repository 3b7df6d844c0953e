// SPDX-License-Identifier: MIT
#pragma once
// perf's metric language (the MetricExpr of its tables, REFERENCE.md section 10): the syntax tree and
// the parser. Every node keeps the byte span of the text it came from, so that resolution and
// evaluation point their errors at the user's characters, as event strings do.
//
// Example:
// ```
// auto e = perfspec::metric::parse("instructions / cycles if #smt_on else 0");
// // e.kind == Expr::Kind::select; e.args[0] is `instructions / cycles`, e.args[1] `#smt_on`, e.args[2] `0`
// ```
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/error.hpp"
#include "perfspec/event_set.hpp"
#include "perfspec/spec.hpp"

namespace perfspec::metric {

/// One node of a metric expression.
struct Expr {
  enum class Kind : std::uint8_t {
    number,   ///< `1e3`, `100`, `.5`; `number` holds it
    nan,      ///< `NaN`
    literal,  ///< `#smt_on`: `name` holds it without the '#', as written (perf compares ignoring case)
    id,       ///< an event, another metric or a tool event: `name` and `text`
    negate,   ///< `-x`: args[0]
    binary,   ///< `a OP b`: args[0] OP args[1]
    select,   ///< `a if c else b`: args[0] (taken when args[1] is non-zero), args[1], args[2]
    call,     ///< `fn(...)`: its arguments in args (see Fn)
    /// Only in what metric::plan resolved: another metric, by `name`; its folded expression is in
    /// ResolvedMetric::refs (so a metric used many times is held and computed once).
    ref,
  };
  /// Binary operators, loosest first as perf binds them: `|`, `^`, `&`, `<` `>`, `+` `-`, `*` `/` `%`.
  enum class Op : std::uint8_t {
    logical_or,
    logical_xor,
    logical_and,
    less,
    greater,
    add,
    sub,
    mul,
    div,
    mod
  };
  /// Functions. d_ratio, min, max take two expressions; source_count, has_event and strcmp_cpuid_str
  /// take one identifier (args[0] of Kind::id; strcmp_cpuid_str's is the CPU id to compare, e.g.
  /// `0x410fd493`).
  enum class Fn : std::uint8_t { d_ratio, min, max, source_count, has_event, strcmp_cpuid_str };

  Kind kind = Kind::number;
  Op op = Op::add;  ///< Kind::binary
  Fn fn = Fn::min;  ///< Kind::call
  /// Kind::id and Kind::ref in what metric::plan resolved: 1 + the identifier's index among
  /// ResolvedMetric::inputs (a ref's among ResolvedMetric::refs), in their order, so that evaluate()
  /// finds values without looking names up; 0 (a tree parsed or built by hand): found by name.
  std::uint32_t slot = 0;
  double number = 0;
  /// Kind::id: the identifier as an event string: escapes dropped (`\,` is `,`), `@` as `/`; a `?`
  /// (the runtime parameter) is kept for resolution to replace. Kind::literal: the name after '#'.
  std::string name;
  /// Kind::id, Kind::literal: the characters as written (a literal's with its '#'). A tree built by
  /// hand may leave it empty: to_string then writes `name` back in the language's form.
  std::string text;
  /// The whole node: a parenthesized node's span takes in its parentheses, and none takes in the
  /// blanks around it.
  Span span;
  std::vector<Expr> args;
};

/// Parse a metric expression. Throws perfspec::Error (ErrorKind::syntax) with the span of the first
/// offending character. Blanks (spaces, tabs, carriage returns, newlines) separate tokens and are
/// otherwise ignored. Tokens are perf 6.12's, the longest match winning as in its lexer: `iffy` and
/// `NaNs` are identifiers, `0x81` an identifier, `1e3` a number. Besides perf's syntax errors, a number
/// a double cannot hold (`1e999`, `1e-999`) is an error rather than inf or 0, and so is an expression
/// that nests more than 1000 levels deep (parentheses, calls, unary minus and `else` branches, or the
/// tree itself: a chain of 1000 `+`), which keeps the parse's recursion and the tree's bounded. An
/// empty or blank text is an error at offset 0.
///
/// Example: `parse("d_ratio(cpu@INST_RETIRED.ANY@, cycles)").args[0].name == "cpu/INST_RETIRED.ANY/"`.
Expr parse(std::string_view text);

/// The canonical text of an expression: single spaces around binary operators and `if`/`else`,
/// parentheses only where perf's precedence needs them, identifiers as written, numbers in the shortest
/// form that reads back as the same double (`1000`, `1e20`, `0.1`). Parsing it gives the same tree
/// (spans differ). A tree built by hand reads back the same as long as its numbers are finite and not
/// negative (`-2` reads back as the negation of 2) and its nodes have their arguments.
///
/// Example: `to_string(parse("(a+b)*c if(#smt_on)else 0"))` is `(a + b) * c if #smt_on else 0`.
std::string to_string(const Expr& expr);

/// Render an error about a metric perf-style, the caret under the metric's text, the metric's name on
/// the line that shows it. Example:
/// ```
/// metric 'ipc': 'instructions / cyclez'
///                               \___ unknown event 'cyclez'
/// ```
/// followed by a `help:` line when the error has one. With an origin (where the expression's text
/// starts in its file), a first line `skx/metrics.json:12:35: error: unknown event 'cyclez'` names the
/// file position of the offending character, as perfspec::render does. An error without a position is
/// one line, `error: metric 'ipc': MESSAGE`. With no name, the text is a request for metrics and the
/// line that shows it starts `metrics: `.
std::string render(const Error& error, std::string_view metric_name, std::string_view expr,
                   const Origin& origin = {});

/// A metric as defined: by a table entry (MetricName, MetricExpr, ...) or ad hoc (`name = expr`).
struct Definition {
  std::string name;
  std::string expr;
  std::string groups;         ///< MetricGroup: `;`-separated group names
  std::string threshold;      ///< MetricThreshold: an expression over this metric and others
  std::string scale_unit;     ///< ScaleUnit: `100%`, `1per_instr`, `1GHz`
  std::string constraint;     ///< MetricConstraint: `NO_GROUP_EVENTS`, `NO_GROUP_EVENTS_NMI`, ...
  std::string aggregation;    ///< AggregationMode: `PerChip`, `PerCore` (what `?` counts over)
  std::string description;    ///< BriefDescription
  std::string default_group;  ///< DefaultMetricgroupName
  /// MetricgroupNoGroup: `;`-separated names of groups; asked for by one of them (`-M TopdownL1`), its
  /// events are not grouped, as perf does
  std::string no_group;
  std::string pmu, compat;  ///< Unit and Compat of a `sys` metric (uncore, matched by identifier)
  Origin origin;            ///< where `expr` is written (a table file; line 0 when not known)
};

/// A metric's MetricGroup split at `;` (empty names dropped).
std::vector<std::string> groups_of(const Definition& metric);
/// Whether `metric` is in `group` as -M matches groups: one of its MetricGroup names, or its
/// DefaultMetricgroupName, compared ignoring ASCII case.
bool in_group(const Definition& metric, std::string_view group);

/// The metrics this machine's tables define: its model's (on arm64 with the standard metrics their
/// ArchStdEvent names), and of the `sys` folders those whose Compat matches a PMU of the machine.
/// Sorted by name; empty without tables.
std::vector<Definition> machine_metrics(const spec::Machine& machine);

/// A ScaleUnit split: `100%` is {100, "%"}, `1per_instr` {1, "per_instr"}, "" {1, ""}.
struct ScaleUnit {
  double factor = 1;
  std::string unit;
};
ScaleUnit parse_scale_unit(std::string_view text);

/// An error in a metric: where (the metric and its text, which may be another metric than the one
/// asked for, reached through a reference) and what (perfspec::Error, positioned in that text).
class MetricError : public Error {
 public:
  MetricError(const Error& error, std::string metric, std::string expr, Origin origin)
      : Error(error), metric_(std::move(metric)), expr_(std::move(expr)), origin_(std::move(origin)) {}
  const std::string& metric() const noexcept { return metric_; }
  const std::string& expr() const noexcept { return expr_; }
  const Origin& origin() const noexcept { return origin_; }
  /// render() of this error.
  std::string rendered() const { return render(*this, metric_, expr_, origin_); }

 private:
  std::string metric_, expr_;
  Origin origin_;
};

/// How to resolve metrics.
struct Options {
  spec::Machine::MetricTarget target;  ///< for #core_wide
  /// What `?` in identifiers stands for (perf's runtime parameter) when the machine does not say how
  /// many there are; see plan().
  int parameter = 0;
  bool group = true;       ///< a metric's events as weak groups (false: each alone, as --metric-no-group)
  bool merge = true;       ///< a group another metric opens reused when it holds these events (false: as
                           ///< --metric-no-merge, every metric its own groups)
  bool thresholds = true;  ///< resolve MetricThreshold too, its events opened (false: --metric-no-threshold)
  std::vector<Definition> extra;  ///< metrics besides the machine's (a config file's); these win
  /// perf stat --cputype: only the tables' metrics of this PMU (Definition::pmu equal to it, as perf
  /// looks metrics up by their table's PMU: a core metric of a machine that is not hybrid belongs to
  /// no PMU by name, perf's `default_core`); "" = every metric.
  std::string pmu;
};

/// A metric resolved against a machine: its expression with the constants folded and only the
/// identifiers of events left, and where in the plan's events each identifier is counted.
struct ResolvedMetric {
  Definition definition;
  /// What `?` stood for in this instance, when the expression has one (perf's runtime parameter: the
  /// chip or core of a powerpc hv_24x7 metric); -1 when it has none.
  int parameter = -1;
  Expr expr;                        ///< folded: literals, has_event, strcmp_cpuid_str, source_count, if
  std::optional<Expr> threshold;    ///< folded; true (non-zero) where perf marks the value
  ScaleUnit scale;                  ///< applied to the value by evaluate()
  std::vector<std::string> folded;  ///< what was folded, for explaining: `#smt_on = 1`, `has_event(x) = 0`
  std::vector<std::string> uses;    ///< the metrics it refers to, directly or not
  /// The folded expressions of the metrics expr and threshold refer to (Kind::ref), directly or not,
  /// by name.
  std::map<std::string, Expr, std::less<>> refs;
  /// Per identifier left in expr, threshold and refs (Expr::name after `?`): the events of
  /// Plan::events summed for it, in the groups this metric opens.
  std::map<std::string, std::vector<std::size_t>, std::less<>> inputs;
};

/// What to open for a list of metrics, and how to compute each from the counts.
struct Plan {
  EventSet events;  ///< each metric's events in weak groups per PMU; shared groups opened once
  std::vector<ResolvedMetric> metrics;
};

/// Resolve `request`: metric names and metric groups, comma-separated (case-insensitive, as perf's -M),
/// or one ad hoc metric `NAME = EXPR`. A metric whose expression holds `?` is planned once per value of
/// perf's runtime parameter, as perf does: 0 to N-1 with N from the hv_24x7 PMU's
/// `interface/sockets` (AggregationMode PerChip) or `interface/coresperchip` (otherwise) under the
/// root, or once with Options::parameter when the machine has no such file. Throws MetricError: for a metric
/// that does not resolve, positioned in its text; for a request that does not (a name that is neither a
/// metric nor a group, ErrorKind::unknown_name), positioned in the request, with an empty metric().
///
/// Example: `auto plan = metric::plan("ipc = instructions / cycles", machine);`
Plan plan(std::string_view request, const spec::Machine& machine, const Options& options = {});

/// Many requests planned against one machine with the same options, as plan() plans each, sharing the
/// work: the metrics they can name are gathered and indexed once, and each metric one of them refers
/// to is folded and each event resolved once for all. Planning N requests is linear in what they
/// name, where N calls of plan() each read every definition again. `machine` must outlive it.
///
/// Example: `metric::Planner planner(machine, options); for (auto& r : requests)
/// plans.push_back(planner.plan(r));`
class Planner {
 public:
  Planner(const spec::Machine& machine, const Options& options = {});
  Planner(Planner&&) noexcept;
  Planner& operator=(Planner&&) noexcept;
  ~Planner();
  /// As plan(request, machine, options). Throws MetricError as it does.
  Plan plan(std::string_view request);
  struct Shared;  ///< (internal) what its plans share: the definitions and the resolvers' caches

 private:
  std::unique_ptr<Shared> shared_;
};

/// A metric's value: NaN with `why` when an input it needed was not counted (never a made-up number),
/// or when the arithmetic has none (a division by zero).
struct Value {
  double value = std::numeric_limits<double>::quiet_NaN();  ///< scaled by the ScaleUnit
  std::string why;                                          ///< empty when computed
  std::optional<bool> over_threshold;  ///< the MetricThreshold's verdict, when there is one and it computed
};

/// Evaluate every metric of `plan` from one value per event of plan.events: counts scaled for
/// multiplexing (not by an alias's .scale: metrics apply their own factors), NaN for an event not
/// counted with `why[i]` saying why when given; a tool event's ns, which metrics see in seconds as in
/// perf (`duration_time`).
std::vector<Value> evaluate(const Plan& plan, std::span<const double> event_values,
                            std::span<const std::string> why = {});

/// Evaluate one folded expression, identifiers taken from `value_of` (NaN: not counted) and metric
/// references from `refs`. For tests and for thresholds. A reference in a cycle among `refs` is NaN;
/// a tree (with its references) nesting more than 1000 levels throws Error (bad_value).
double evaluate(const Expr& expr, const std::map<std::string, double, std::less<>>& value_of,
                const std::map<std::string, Expr, std::less<>>& refs = {});

}  // namespace perfspec::metric
