// SPDX-License-Identifier: MIT
#pragma once
// A source of named events (sysfs aliases, perf's JSON tables, libpfm4) behind one interface. A
// spec::Machine keeps its sources as an ordered list; every client that asks for names (the resolver,
// decode, list, suggestions, and next the metrics of the tables) asks them through it.
#include <string>
#include <string_view>
#include <vector>

#include "perfspec/spec.hpp"

namespace perfspec::spec {

/// One event as `perfspec list` shows it.
struct ListedEvent {
  std::string name;
  std::string pmu;       ///< "cpu" for built-in hardware/cache, "software", "tracepoint", or the PMU
  std::string encoding;  ///< terms (`event=0xd1,umask=0x8`) or `type:config` for built-ins
  std::string description;
  std::string topic;  ///< table topic ("cache"), "hardware", "software", "cache", tracepoint system
  std::string unit;
  double scale = 1.0;
  Source source = Source::builtin;
  bool deprecated = false;
};

struct ListFilter {
  std::string pattern;       ///< glob if it has * ? [, else a case-insensitive substring of the name
  std::string pmu;           ///< glob or exact PMU name ("" = any)
  std::string topic;         ///< exact topic ("" = any)
  std::string source;        ///< "sysfs", "json", "builtin", "tracepoint" ("" = any)
  bool tracepoints = false;  ///< include tracepoints (there are thousands)
  bool deprecated = false;   ///< include deprecated table events

  /// Whether an event passes the filter (source, topic, deprecated, PMU, name).
  bool passes(const ListedEvent& e) const;
  /// Whether events of PMU `pmu` may pass: either side may be the pattern, so `--pmu uncore_imc` lists
  /// uncore_imc_0's aliases and `--pmu uncore_imc_0` the table events of the `uncore_imc` unit.
  bool passes_pmu(std::string_view pmu) const;
  /// Whether a name passes the pattern.
  bool passes_name(std::string_view name) const;
};

/// Something a source could not use: a sysfs event file, a table entry or file, with why.
struct SourceDiagnostic {
  std::string text;  ///< one line naming the file (and entry) and the reason
};

/// A source of named events on a Machine's PMUs.
///
/// Example: the names each source has for the core PMU, in the Machine's lookup order:
/// ```
/// for (const spec::EventSource* s : machine.sources()) {
///   std::vector<std::string> names;
///   s->names(*machine.core_pmus().front(), names, false);
///   std::printf("%s: %zu\n", std::string(s->label()).c_str(), names.size());
/// }
/// ```
class EventSource {
 public:
  virtual ~EventSource() = default;
  /// What kind of source it is (Source::json for the model's tables and for the `sys` tables).
  virtual Source kind() const = 0;
  /// A short name: "sysfs", "tables", "sys tables", "libpfm4".
  virtual std::string_view label() const = 0;
  /// Asked for a bare name only when no other source has the name on any PMU (libpfm4).
  virtual bool fallback() const { return false; }
  /// The event `name` (case-insensitive) on `pmu` as this source alone defines it, or nullptr. Throws
  /// perfspec::Error when the source holds the name but cannot read it (a dangling sysfs file).
  virtual const Alias* find(const Pmu& pmu, std::string_view name) const = 0;
  /// Appends the names of this source's events on `pmu` (with deprecated table events when asked):
  /// for "did you mean" on a PMU and for decoding an attr back to a name.
  virtual void names(const Pmu& pmu, std::vector<std::string>& out, bool deprecated) const = 0;
  /// Appends every name this source has on the machine, cheaply (no encoding is parsed), for "did you
  /// mean" on a bare name. The views stay valid as long as the Machine.
  virtual void all_names(std::vector<std::string_view>& out) const = 0;
  /// Appends its events on the machine that pass `filter`, with descriptions where it has them.
  virtual void list(const ListFilter& filter, std::vector<ListedEvent>& out) const = 0;
  /// What it had to leave out, and why.
  virtual std::vector<SourceDiagnostic> diagnostics() const = 0;
  /// Why `name`, which this source has, is on no PMU of the machine ("" when it does not have the
  /// name): the help of the error for a name found nowhere.
  virtual std::string unplaced(std::string_view /*name*/) const { return {}; }
};

}  // namespace perfspec::spec
